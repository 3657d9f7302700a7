//! `tierdb serve` configuration: built-in defaults, then `--config FILE` (TOML), then flags.
//!
//! Owns: every server setting, declared once in the `settings!` list below — that one entry
//! gives the field, its default, its TOML key, its `--flag` (key with `-` for `_`), its help
//! text and its line in `--print-config`; sizes with K/M/G suffixes (`ByteSize`); user
//! accounts; validation (e.g. a non-loopback bind needs `allow_remote = true`).
//! Must never: silently ignore an unknown key (it is an error naming the key); print a
//! plaintext password.

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A size in bytes, written as plain bytes or with a K/M/G/T suffix (powers of 1024).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<ByteSize, String> {
        let t = s.trim();
        let upper = t.to_ascii_uppercase();
        let digits_end = upper
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(upper.len());
        let (num, suffix) = upper.split_at(digits_end);
        let n: u64 = num.parse().map_err(|_| {
            format!("invalid size '{s}': expected e.g. 134217728, 512K, 128M or 2G")
        })?;
        let shift = match suffix.trim() {
            "" | "B" => 0,
            "K" | "KB" | "KIB" => 10,
            "M" | "MB" | "MIB" => 20,
            "G" | "GB" | "GIB" => 30,
            "T" | "TB" | "TIB" => 40,
            _ => {
                return Err(format!(
                    "invalid size '{s}': unknown suffix (use K, M, G or T)"
                ))
            }
        };
        n.checked_mul(1u64 << shift)
            .map(ByteSize)
            .ok_or_else(|| format!("size '{s}' is too large"))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (shift, suffix) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
            if n != 0 && n.is_multiple_of(1u64 << shift) {
                return write!(f, "{}{}", n >> shift, suffix);
            }
        }
        write!(f, "{n}")
    }
}

impl Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ByteSize, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(ByteSize(n)),
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// One account (`[[users]]` in the config file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    pub name: String,
    /// Plaintext password; "" or absent (with no `password_hash`) means no password.
    #[serde(default, skip_serializing)]
    pub password: Option<String>,
    /// MySQL's `PASSWORD()` form: `*` + 40 hex digits of SHA1(SHA1(password)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_hash: Option<String>,
}

impl User {
    /// SHA1(SHA1(password)), or None for an account without a password.
    pub fn native_hash(&self) -> Result<Option<[u8; 20]>, String> {
        match (&self.password, &self.password_hash) {
            (Some(_), Some(_)) => Err(format!(
                "user '{}': give either password or password_hash, not both",
                self.name
            )),
            (Some(p), None) if !p.is_empty() => {
                Ok(Some(crate::protocol::handshake::native_hash(p.as_bytes())))
            }
            (_, Some(h)) => {
                let hex = h.strip_prefix('*').unwrap_or(h);
                if hex.len() != 40 {
                    return Err(format!(
                        "user '{}': password_hash must be '*' followed by 40 hex digits",
                        self.name
                    ));
                }
                let mut out = [0u8; 20];
                for (i, b) in out.iter_mut().enumerate() {
                    *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| {
                        format!("user '{}': password_hash is not hexadecimal", self.name)
                    })?;
                }
                Ok(Some(out))
            }
            _ => Ok(None),
        }
    }

    /// The same account as `--print-config` shows it: the hash instead of the password.
    fn printable(&self) -> User {
        let hash = self.native_hash().ok().flatten().map(|h| {
            let hex: String = h.iter().map(|b| format!("{b:02X}")).collect();
            format!("*{hex}")
        });
        User {
            name: self.name.clone(),
            password: None,
            password_hash: hash,
        }
    }
}

fn default_users() -> Vec<User> {
    vec![User {
        name: "root".into(),
        password: Some(String::new()),
        password_hash: None,
    }]
}

/// Declares every setting once: `doc, key: Type = default;`. Optional `[clap args]` after
/// the type pass extra attributes to the flag.
macro_rules! settings {
    ($( $(#[doc = $doc:literal])* $key:ident : $ty:ty $([$($arg:tt)*])? = $default:expr ; )*) => {
        /// The effective server configuration.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct Config {
            $( $(#[doc = $doc])* pub $key: $ty, )*
            /// Accounts that may log in (`[[users]]`).
            pub users: Vec<User>,
        }

        /// What a config file may contain; every key optional, unknown keys refused.
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ConfigFile {
            $( $key: Option<$ty>, )*
            users: Option<Vec<User>>,
        }

        /// One flag per setting, named like its key.
        #[derive(Clone, Debug, Default, clap::Args)]
        pub struct ConfigFlags {
            $( $(#[doc = $doc])* #[arg(long, help_heading = "Settings (override the config file)" $(, $($arg)*)?)] pub $key: Option<$ty>, )*
        }

        impl Default for Config {
            fn default() -> Config {
                Config { $( $key: $default, )* users: default_users() }
            }
        }

        impl Config {
            fn apply_file(&mut self, f: ConfigFile) {
                $( if let Some(v) = f.$key { self.$key = v; } )*
                if let Some(u) = f.users { self.users = u; }
            }
            /// Overrides settings with the flags that were given.
            pub fn apply_flags(&mut self, f: &ConfigFlags) {
                $( if let Some(v) = &f.$key { self.$key = v.clone(); } )*
            }
        }

        /// Every setting's key and documentation, in declaration order (for CONFIG.md).
        pub const KEYS: &[(&str, &str)] = &[ $( (stringify!($key), concat!($($doc, "\n"),*)), )* ];
    };
}

settings! {
    /// Address to listen on. Anything but a loopback address needs `allow_remote = true`.
    bind: IpAddr = IpAddr::from([127, 0, 0, 1]);
    /// TCP port to listen on.
    port: u16 = 3306;
    /// Allow binding a non-loopback address (clients from other machines).
    allow_remote: bool [num_args = 0..=1, default_missing_value = "true"] = false;
    /// Folder of the data file and the catalog.
    data_dir: PathBuf = PathBuf::from("./tierdb-data/data");
    /// Folder of the redo log (put it on the durable disk).
    redo_dir: PathBuf = PathBuf::from("./tierdb-data/redo");
    /// DRAM buffer pool size (bytes, or with K/M/G suffix).
    buffer_pool_size: ByteSize = ByteSize(128 << 20);
    /// Like innodb_flush_log_at_trx_commit: 1 = fsync at every commit, 2 = write at commit and fsync once a second, 0 = write and fsync once a second.
    flush_log_at_trx_commit: u8 = 1;
    /// Seconds a statement waits for a row lock before error 1205.
    lock_wait_timeout: u64 = 50;
    /// Most DRAM (bytes or K/M/G) for the row history that open REPEATABLE READ transactions still need; past it the oldest one is released (its next read fails); 0 = no limit.
    read_view_history_limit: ByteSize = ByteSize(1 << 30);
    /// Most DRAM (bytes or K/M/G) all running transactions may hold for row locks, undo and binary-log changes; past it the big transaction growing gets error 1206 and is rolled back; 0 = automatic (half the memory beyond the buffer pool, at least 256M).
    transaction_memory_limit: ByteSize = ByteSize(0);
    /// Relocating page writes: dirty pages go in batches to adjacent free slots of the data file (one I/O per batch on an IOPS-capped disk), a page map (tierdb.map, made durable by each checkpoint) says where each page is; false = each page written in place. A data folder once written with it on needs it on.
    relocating_writes: bool [num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set] = true;
    /// With relocating writes: free slots the data file may hold beyond its live pages, in percent of them (10..400); more room = longer runs of free slots = fewer write I/Os, at the cost of disk space.
    relocating_free_space: u64 = 50;
    /// Most client connections at once; one more gets error 1040.
    max_connections: u32 = 1024;
    /// Largest packet a client may send (bytes or K/M/G); larger gets error 1153 and the connection is closed.
    max_allowed_packet: ByteSize = ByteSize(64 << 20);
    /// Seconds a new connection has to complete its login.
    connect_timeout: u64 = 10;
    /// Seconds an idle authenticated connection is kept open.
    wait_timeout: u64 = 28_800;
    /// Stack size of each connection thread (bytes or K/M/G).
    thread_stack_size: ByteSize = ByteSize(4 << 20);
    /// Seconds shutdown waits for running statements to finish before closing anyway.
    shutdown_timeout: u64 = 30;
    /// Buffer Pool Extension on or off at start (it can be switched online with SET GLOBAL bpe_enabled).
    bpe_enabled: bool [num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set] = true;
    /// Total BPE size over all its devices (bytes or K/M/G); 0 = 4 x buffer_pool_size.
    bpe_size: ByteSize = ByteSize(0);
    /// BPE device files, comma-separated on the command line (put each on a different fast disk); empty = one file `bpe/bpe0.cache` next to data_dir.
    bpe_devices: Vec<PathBuf> [value_delimiter = ','] = Vec::new();
    /// BPE region size: the unit written sequentially and evicted FIFO (bytes or K/M/G, 1M..32M;
    /// 0 = automatic: 16M, or bpe_size / 64 (at least 1M) for a BPE smaller than 1G).
    bpe_region_size: ByteSize = ByteSize(0);
    /// BPE admission policy: always (every clean page leaving DRAM) or second_touch (only pages evicted before, resists one-off scans).
    bpe_admission: String = String::from("always");
    /// In-process emulation of a slow cloud data disk: read IOPS cap of the data file (0 = none). For labs without kernel throttling.
    data_read_iops: u32 = 0;
    /// In-process emulation: write IOPS cap of the data file (0 = none).
    data_write_iops: u32 = 0;
    /// In-process emulation: IOPS cap of the data file shared by reads and writes, as most cloud disks sell IOPS (0 = none).
    data_iops: u32 = 0;
    /// In-process emulation: added latency per data-file I/O in microseconds (0 = none).
    data_latency_us: u32 = 0;
    /// In-process emulation of the fast devices: read IOPS cap of each BPE device (0 = none).
    bpe_read_iops: u32 = 0;
    /// In-process emulation: write IOPS cap of each BPE device (0 = none).
    bpe_write_iops: u32 = 0;
    /// Binary log on or off: every committed change of a table (row-based, MariaDB's format, readable by mariadb-binlog) and each DDL statement, made durable by the redo log (no fsync of its own).
    log_bin: bool [num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set] = false;
    /// Folder of the binary log files (put it on the durable disk); empty = `binlog` next to data_dir.
    log_bin_dir: PathBuf = PathBuf::new();
    /// Binary log file names: <log_bin_basename>.000001, ... and <log_bin_basename>.index.
    log_bin_basename: String = String::from("tierdb-bin");
    /// A binary log file is closed and the next one started once a transaction would take it past this size (bytes or K/M/G, 4K..1G).
    max_binlog_size: ByteSize = ByteSize(1 << 30);
    /// This server's id, written into every binary log event (1..4294967295).
    server_id: u32 = 1;
    /// LOAD DATA LOCAL INFILE (the client's file) allowed at start; SET GLOBAL local_infile changes it.
    local_infile: bool [num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set] = true;
    /// The only folder server-side files may be in (LOAD DATA INFILE, LOAD_FILE, SELECT ... INTO OUTFILE / DUMPFILE); empty = any path the server can reach (MariaDB's default). LOAD DATA LOCAL is not limited by it.
    secure_file_priv: PathBuf = PathBuf::new();
    /// Log filter (tracing env-filter syntax, e.g. "info" or "tierdb_server=debug"); the RUST_LOG environment variable overrides it.
    log: String = String::from("info");
}

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid setting: {0}")]
    Invalid(String),
}

impl Config {
    /// Defaults, then `file` (if any), then `flags`; validated.
    pub fn load(file: Option<&Path>, flags: &ConfigFlags) -> Result<Config, ConfigError> {
        let mut cfg = Config::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.into(),
                source,
            })?;
            cfg.apply_toml(&text)
                .map_err(|message| ConfigError::Parse {
                    path: path.into(),
                    message,
                })?;
        }
        cfg.apply_flags(flags);
        cfg.validate()?;
        Ok(cfg)
    }

    /// Applies the settings of a TOML document (errors name the offending key).
    pub fn apply_toml(&mut self, text: &str) -> Result<(), String> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| e.to_string())?;
        self.apply_file(file);
        Ok(())
    }

    /// Checks values that parse but make no sense together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        if !self.bind.is_loopback() && !self.allow_remote {
            return bad(format!(
                "bind = {} is not a loopback address; set allow_remote = true (or --allow-remote) to accept remote clients",
                self.bind
            ));
        }
        if self.flush_log_at_trx_commit > 2 {
            return bad(format!(
                "flush_log_at_trx_commit = {}: must be 0, 1 or 2",
                self.flush_log_at_trx_commit
            ));
        }
        if self.max_connections == 0 {
            return bad("max_connections must be at least 1".into());
        }
        if !(10..=400).contains(&self.relocating_free_space) {
            return bad(format!(
                "relocating_free_space = {}: must be between 10 and 400 (percent)",
                self.relocating_free_space
            ));
        }
        if self.max_allowed_packet.0 < 1024 || self.max_allowed_packet.0 > 1 << 30 {
            return bad(format!(
                "max_allowed_packet = {}: must be between 1K and 1G",
                self.max_allowed_packet
            ));
        }
        if self.buffer_pool_size.0 < 1 << 20 {
            return bad(format!(
                "buffer_pool_size = {}: must be at least 1M",
                self.buffer_pool_size
            ));
        }
        if self.thread_stack_size.0 < 256 << 10 {
            return bad(format!(
                "thread_stack_size = {}: must be at least 256K",
                self.thread_stack_size
            ));
        }
        if self.max_binlog_size.0 < 4096 || self.max_binlog_size.0 > 1 << 30 {
            return bad(format!(
                "max_binlog_size = {}: must be between 4K and 1G",
                self.max_binlog_size
            ));
        }
        if self.log_bin && self.server_id == 0 {
            return bad("server_id = 0: a binary log needs a server id of at least 1".into());
        }
        if self.log_bin_basename.is_empty()
            || self.log_bin_basename.contains('/')
            || self.log_bin_basename.starts_with('.')
        {
            return bad(format!(
                "log_bin_basename = {:?}: must be a plain file name",
                self.log_bin_basename
            ));
        }
        if let Err(e) = self.bpe_admission.parse::<tierdb_engine::BpeAdmission>() {
            return bad(format!("bpe_admission: {e}"));
        }
        if self.bpe_region_size.0 != 0 && self.bpe_region_size.0 < 1 << 20
            || self.bpe_region_size.0 > 32 << 20
            || !self.bpe_region_size.0.is_multiple_of(16 << 10)
        {
            return bad(format!(
                "bpe_region_size = {}: must be 0 (automatic) or a multiple of 16K between 1M and 32M",
                self.bpe_region_size
            ));
        }
        if self.users.is_empty() {
            return bad("no [[users]]: nobody could log in".into());
        }
        let mut seen = std::collections::HashSet::new();
        for u in &self.users {
            if !seen.insert(u.name.as_str()) {
                return bad(format!("user '{}' is listed twice", u.name));
            }
            u.native_hash().map_err(ConfigError::Invalid)?;
        }
        Ok(())
    }

    /// The effective configuration as TOML (passwords shown as `password_hash`).
    pub fn to_toml(&self) -> String {
        let printable = Config {
            users: self.users.iter().map(User::printable).collect(),
            ..self.clone()
        };
        toml::to_string(&printable).unwrap_or_else(|e| format!("# cannot render config: {e}\n"))
    }

    /// The binary log's settings; None when `log_bin` is off.
    pub fn binlog_config(&self) -> Option<tierdb_binlog::log::BinlogConfig> {
        if !self.log_bin {
            return None;
        }
        let dir = if self.log_bin_dir.as_os_str().is_empty() {
            self.data_dir
                .parent()
                .unwrap_or(Path::new("."))
                .join("binlog")
        } else {
            self.log_bin_dir.clone()
        };
        let mut c = tierdb_binlog::log::BinlogConfig::new(dir);
        c.basename = self.log_bin_basename.clone();
        c.server_id = self.server_id;
        c.max_size = self.max_binlog_size.0;
        Some(c)
    }

    /// The engine's part of the configuration.
    pub fn engine_config(&self) -> tierdb_engine::EngineConfig {
        let mut e = tierdb_engine::EngineConfig::under("./tierdb-data");
        e.data_dir = self.data_dir.clone();
        e.redo_dir = self.redo_dir.clone();
        e.buffer_pool_size_bytes = self.buffer_pool_size.0;
        e.flush_log_at_trx_commit = self.flush_log_at_trx_commit;
        e.lock_wait_timeout = std::time::Duration::from_secs(self.lock_wait_timeout);
        e.read_view_history_limit = self.read_view_history_limit.0;
        e.transaction_memory_limit = self.transaction_memory_limit.0;
        e.relocating_writes = self.relocating_writes;
        e.relocating_free_space_pct = self.relocating_free_space;
        let throttle = |r: u32, w: u32, total: u32, lat: u32| {
            (r > 0 || w > 0 || total > 0 || lat > 0).then_some(tierdb_engine::ThrottleConfig {
                read_iops: r,
                write_iops: w,
                total_iops: total,
                latency_us: lat,
                jitter_us: 0,
            })
        };
        e.data_throttle = throttle(
            self.data_read_iops,
            self.data_write_iops,
            self.data_iops,
            self.data_latency_us,
        );
        let devices = if self.bpe_devices.is_empty() {
            let base = self.data_dir.parent().unwrap_or(Path::new("."));
            vec![base.join("bpe").join("bpe0.cache")]
        } else {
            self.bpe_devices.clone()
        };
        let bpe_size = if self.bpe_size.0 == 0 {
            4 * self.buffer_pool_size.0
        } else {
            self.bpe_size.0
        };
        e.bpe = Some(tierdb_engine::BpeConfig {
            enabled: self.bpe_enabled,
            size_bytes: bpe_size,
            devices,
            region_size_bytes: match self.bpe_region_size.0 {
                0 => effective_region_size(DEFAULT_REGION_SIZE, bpe_size),
                explicit => explicit,
            },
            admission: self.bpe_admission.parse().unwrap_or_default(),
            throttle: throttle(self.bpe_read_iops, self.bpe_write_iops, 0, 0),
            ..tierdb_engine::BpeConfig::default()
        });
        e
    }
}

/// Region size of `bpe_region_size = 0` (automatic) for a BPE of at least 1G.
pub const DEFAULT_REGION_SIZE: u64 = 16 << 20;

/// The automatic region size: `configured`, made smaller for a BPE of fewer than
/// [`MIN_BPE_REGIONS`] regions (size / 64, a multiple of 16K, at least 1M). FIFO eviction
/// drops a whole region and two regions are kept free, so a BPE of a handful of huge regions
/// would hold far fewer pages than its size (and buffer two regions in DRAM).
pub fn effective_region_size(configured: u64, bpe_size: u64) -> u64 {
    let fine = (bpe_size / MIN_BPE_REGIONS) / (16 << 10) * (16 << 10);
    configured.min(fine.max(1 << 20))
}

/// Fewest regions a BPE is cut into when its size allows 1M regions.
pub const MIN_BPE_REGIONS: u64 = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_bpe_gets_small_regions() {
        assert_eq!(effective_region_size(16 << 20, 64 << 20), 1 << 20);
        assert_eq!(effective_region_size(16 << 20, 512 << 20), 8 << 20);
        assert_eq!(effective_region_size(16 << 20, 4 << 30), 16 << 20);
        assert_eq!(effective_region_size(2 << 20, 4 << 30), 2 << 20);
        assert_eq!(effective_region_size(16 << 20, 1 << 20), 1 << 20);
        let odd = effective_region_size(16 << 20, 100 << 20);
        assert_eq!(odd % (16 << 10), 0);
        assert!((1 << 20..=16 << 20).contains(&odd));
    }

    #[test]
    fn sizes_parse_with_and_without_suffixes() {
        assert_eq!("134217728".parse::<ByteSize>(), Ok(ByteSize(128 << 20)));
        assert_eq!("128M".parse::<ByteSize>(), Ok(ByteSize(128 << 20)));
        assert_eq!("128mb".parse::<ByteSize>(), Ok(ByteSize(128 << 20)));
        assert_eq!("512K".parse::<ByteSize>(), Ok(ByteSize(512 << 10)));
        assert_eq!("2G".parse::<ByteSize>(), Ok(ByteSize(2 << 30)));
        assert_eq!("2GiB".parse::<ByteSize>(), Ok(ByteSize(2 << 30)));
        assert!("12X".parse::<ByteSize>().is_err());
        assert!("M".parse::<ByteSize>().is_err());
        assert!("99999999999999999999G".parse::<ByteSize>().is_err());
        assert_eq!(ByteSize(128 << 20).to_string(), "128M");
        assert_eq!(ByteSize(1000).to_string(), "1000");
    }

    #[test]
    fn toml_sizes_accept_integers_and_strings() {
        let mut c = Config::default();
        c.apply_toml("buffer_pool_size = 1048576\nmax_allowed_packet = \"16M\"")
            .unwrap();
        assert_eq!(c.buffer_pool_size, ByteSize(1 << 20));
        assert_eq!(c.max_allowed_packet, ByteSize(16 << 20));
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let e = Config::default()
            .apply_toml("buffer_pool_sise = \"1G\"")
            .unwrap_err();
        assert!(e.contains("buffer_pool_sise"), "{e}");
        let e = Config::default()
            .apply_toml("[[users]]\nname = \"a\"\npasword = \"x\"")
            .unwrap_err();
        assert!(e.contains("pasword"), "{e}");
    }

    #[test]
    fn non_loopback_bind_needs_allow_remote() {
        let mut c = Config {
            bind: "0.0.0.0".parse().unwrap(),
            ..Config::default()
        };
        assert!(matches!(c.validate(), Err(ConfigError::Invalid(m)) if m.contains("allow_remote")));
        c.allow_remote = true;
        c.validate().unwrap();
        Config {
            bind: "::1".parse().unwrap(),
            ..Config::default()
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn print_config_round_trips_and_hides_passwords() {
        let mut c = Config::default();
        c.apply_toml("port = 3307\n[[users]]\nname = \"app\"\npassword = \"s3cret\"\n")
            .unwrap();
        let text = c.to_toml();
        assert!(!text.contains("s3cret"), "{text}");
        let mut back = Config::default();
        back.apply_toml(&text).unwrap();
        assert_eq!(back.port, 3307);
        assert_eq!(back.users[0].native_hash(), c.users[0].native_hash());
        assert_eq!(KEYS.len(), 37);
    }
}

#[cfg(test)]
mod doc_tests {
    /// CONFIG.md documents every key (pair check: declared here, read there).
    #[test]
    fn config_md_documents_every_key() {
        let doc = include_str!("../CONFIG.md");
        for (key, _) in super::KEYS {
            assert!(
                doc.contains(&format!("| `{key}` |")),
                "CONFIG.md lacks a row for `{key}`"
            );
        }
    }
}
