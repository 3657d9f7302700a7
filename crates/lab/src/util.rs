//! Small helpers shared by the lab: running external commands with useful errors, checking
//! that the tools the lab needs are installed (naming the Debian package when not), sizes,
//! free TCP ports, dates, and waiting for a SQL server to answer.
//!
//! Owns: process-spawning conventions and the tool → package table.
//! Must never: install anything or touch devices (callers decide).

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd`, returns its output; fails (with the command line and its stderr) on non-zero exit.
pub fn run(cmd: &mut Command) -> Result<Output> {
    let desc = describe(cmd);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start `{desc}`"))?;
    if !out.status.success() {
        bail!(
            "`{desc}` failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            String::from_utf8_lossy(&out.stdout).trim()
        );
    }
    Ok(out)
}

/// Runs `cmd` and returns its trimmed stdout.
pub fn run_text(cmd: &mut Command) -> Result<String> {
    Ok(String::from_utf8_lossy(&run(cmd)?.stdout)
        .trim()
        .to_string())
}

/// Shell-like rendering of a command, for logs and the report.
pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().to_string();
    for a in cmd.get_args() {
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$;&|".contains(c)) {
            s.push_str(&format!(" '{}'", a.replace('\'', "'\\''")));
        } else {
            s.push(' ');
            s.push_str(&a);
        }
    }
    s
}

/// Tools the lab calls, with the Debian package that provides each.
pub const TOOLS: &[(&str, &str)] = &[
    ("sysbench", "sysbench"),
    ("mariadbd", "mariadb-server"),
    ("mariadb-install-db", "mariadb-server"),
    ("fio", "fio"),
];
/// Tools needed only for kernel tiers.
pub const TIER_TOOLS: &[(&str, &str)] = &[
    ("losetup", "mount"),
    ("mount", "mount"),
    ("umount", "mount"),
    ("mkfs.ext4", "e2fsprogs"),
];
pub const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join(tool)).find(|p| p.is_file())
}

/// Fails with one clear message naming every missing tool and its package.
pub fn check_tools(tools: &[(&str, &str)], need_font: bool) -> Result<()> {
    let mut missing: Vec<String> = tools
        .iter()
        .filter(|(t, _)| which(t).is_none())
        .map(|(t, p)| format!("`{t}` (Debian package {p})"))
        .collect();
    if need_font && !Path::new(FONT).exists() {
        missing.push(format!(
            "the font {FONT} (Debian package fonts-dejavu-core)"
        ));
    }
    if !missing.is_empty() {
        let pkgs: Vec<&str> = tools
            .iter()
            .filter(|(t, _)| which(t).is_none())
            .map(|(_, p)| *p)
            .chain(
                need_font
                    .then_some("fonts-dejavu-core")
                    .filter(|_| !Path::new(FONT).exists()),
            )
            .collect();
        bail!(
            "missing: {}\ninstall with: apt-get install -y {}",
            missing.join(", "),
            pkgs.join(" ")
        );
    }
    Ok(())
}

/// Parses `128M`, `2G`, `4096`, `16K` (powers of 1024) into bytes.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.trim_end_matches("IB").trim_end_matches('B');
    let (num, mul) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        Some('T') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let n: f64 = num.trim().parse().map_err(|_| anyhow!("bad size `{s}`"))?;
    Ok((n * mul as f64) as u64)
}

pub fn fmt_size(b: u64) -> String {
    if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
        format!("{}G", b >> 30)
    } else if b >= 1 << 20 {
        format!("{}M", b >> 20)
    } else {
        format!("{}K", b >> 10)
    }
}

/// A TCP port on 127.0.0.1 nobody listens on right now.
pub fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Today's date as YYYY-MM-DD (UTC), without a date crate.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Opens a mysql connection to 127.0.0.1:port as root without a password.
pub fn connect(port: u16, db: Option<&str>) -> Result<mysql::Conn> {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("root"))
        .db_name(db)
        .tcp_connect_timeout(Some(Duration::from_secs(5)))
        .prefer_socket(false);
    Ok(mysql::Conn::new(opts)?)
}

/// Waits until the server on `port` answers `SELECT 1`, or `timeout` passes, or `alive` says
/// the process died.
pub fn wait_sql(port: u16, timeout: Duration, mut alive: impl FnMut() -> bool) -> Result<()> {
    use mysql::prelude::Queryable;
    let start = Instant::now();
    loop {
        if let Ok(mut c) = connect(port, None) {
            if c.query_drop("SELECT 1").is_ok() {
                return Ok(());
            }
        }
        if !alive() {
            bail!("the server on port {port} exited while starting");
        }
        if start.elapsed() > timeout {
            bail!("the server on port {port} did not answer within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The workspace root (two levels above this crate's manifest).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}
