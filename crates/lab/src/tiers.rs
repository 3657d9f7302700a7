//! The storage tiers of the lab: one slow "cloud disk" and two fast "local SSDs".
//!
//! Kernel mode (root, loop devices, cgroup v1 blkio): each tier is a sparse image file under
//! the work dir, attached with `losetup --direct-io=on`, formatted ext4 and mounted; a blkio
//! cgroup caps each loop device with `blkio.throttle.{read,write}_iops_device`, and every
//! server (and fio probe) is started inside that cgroup by a tiny `sh` wrapper that writes
//! its own PID to `cgroup.procs` and then `exec`s the real program. Images are kept between
//! runs (that is what makes prepared datasets reusable); mounts, loop devices and the cgroup
//! are torn down at the end, on Ctrl-C and on failure.
//!
//! In-process mode (anything missing): the tiers are plain directories and tierdb's own
//! throttle flags stand in; other programs (MariaDB, fio) run unthrottled.
//!
//! Owns: creating/destroying loop devices, mounts and the cgroup; the throttle values.
//! Must never: leave a mount, loop device or cgroup behind; throttle anything but its own
//! loop devices.

use crate::cleanup::{self, Guard};
use crate::util::{run, run_text, which, TIER_TOOLS};
use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BLKIO: &str = "/sys/fs/cgroup/blkio";
const SLOW_IMAGE_SIZE: u64 = 32 << 30;
const FAST_IMAGE_SIZE: u64 = 8 << 30;

/// One kernel tier: an image file on a loop device, mounted.
#[derive(Clone, Debug)]
pub struct Dev {
    pub role: String,
    pub loopdev: String,
    pub majmin: String,
    pub image: PathBuf,
    pub mount: PathBuf,
}

pub enum Mode {
    Kernel { cgroup: PathBuf, devs: Vec<Dev> },
    InProcess { reason: String },
}

pub struct Tiers {
    pub mode: Mode,
    /// Directory on the slow tier (data files, redo, binlog).
    pub slow: PathBuf,
    /// Directories on the fast tiers (BPE devices).
    pub fast: Vec<PathBuf>,
    pub slow_iops: u32,
    pub fast_iops: u32,
    guards: Vec<Guard>,
}

impl Tiers {
    /// Builds kernel tiers when possible, else in-process tiers (with the reason).
    pub fn build(
        work: &Path,
        slow_iops: u32,
        fast_iops: u32,
        force_in_process: bool,
    ) -> Result<Tiers> {
        fs::create_dir_all(work)?;
        let reason = if force_in_process {
            Some("--tier-mode in-process was given".to_string())
        } else {
            match kernel_available() {
                Ok(()) => None,
                Err(e) => Some(format!("{e:#}")),
            }
        };
        if reason.is_none() {
            match Self::build_kernel(work, slow_iops, fast_iops) {
                Ok(t) => return Ok(t),
                Err(e) => {
                    eprintln!("tierdb-lab: kernel tiers failed ({e:#}); falling back to in-process throttles");
                    return Self::build_in_process(
                        work,
                        slow_iops,
                        fast_iops,
                        format!("building kernel tiers failed: {e:#}"),
                    );
                }
            }
        }
        Self::build_in_process(work, slow_iops, fast_iops, reason.unwrap_or_default())
    }

    fn build_in_process(
        work: &Path,
        slow_iops: u32,
        fast_iops: u32,
        reason: String,
    ) -> Result<Tiers> {
        let base = work.join("inproc");
        let slow = base.join("slow");
        let fast = vec![base.join("fast0"), base.join("fast1")];
        for d in std::iter::once(&slow).chain(&fast) {
            fs::create_dir_all(d)?;
        }
        Ok(Tiers {
            mode: Mode::InProcess { reason },
            slow,
            fast,
            slow_iops,
            fast_iops,
            guards: Vec::new(),
        })
    }

    fn build_kernel(work: &Path, slow_iops: u32, fast_iops: u32) -> Result<Tiers> {
        let mut guards = Vec::new();
        let mut devs = Vec::new();
        for (role, size) in [
            ("slow", SLOW_IMAGE_SIZE),
            ("fast0", FAST_IMAGE_SIZE),
            ("fast1", FAST_IMAGE_SIZE),
        ] {
            let image = work.join("img").join(format!("{role}.img"));
            let mount = work.join("mnt").join(role);
            fs::create_dir_all(image.parent().unwrap())?;
            fs::create_dir_all(&mount)?;
            release_stale(&image, &mount);
            let fresh = !image.exists();
            if fresh {
                let f = fs::File::create(&image)?;
                f.set_len(size)?; // sparse
            }
            let loopdev = run_text(
                Command::new("losetup")
                    .args(["--direct-io=on", "-f", "--show"])
                    .arg(&image),
            )?;
            let ld = loopdev.clone();
            guards.push(cleanup::register(
                format!("losetup -d {loopdev}"),
                move || {
                    let _ = Command::new("losetup").args(["-d", &ld]).status();
                },
            ));
            let name = loopdev.trim_start_matches("/dev/").to_string();
            let majmin = fs::read_to_string(format!("/sys/block/{name}/dev"))?
                .trim()
                .to_string();
            let mkfs = |dev: &str| {
                run(Command::new("mkfs.ext4").args([
                    "-q",
                    "-F",
                    "-N",
                    "65536",
                    "-E",
                    "lazy_itable_init=0,lazy_journal_init=1,nodiscard",
                    dev,
                ]))
            };
            if fresh {
                mkfs(&loopdev)?;
            }
            let mnt = || {
                run(Command::new("mount")
                    .args(["-o", "noatime"])
                    .arg(&loopdev)
                    .arg(&mount))
            };
            if mnt().is_err() {
                // An image from an interrupted first run: format it again.
                mkfs(&loopdev)?;
                mnt()?;
            }
            let m = mount.clone();
            guards.push(cleanup::register(
                format!("umount {}", mount.display()),
                move || {
                    if Command::new("umount")
                        .arg(&m)
                        .status()
                        .map(|s| !s.success())
                        .unwrap_or(true)
                    {
                        let _ = Command::new("umount").arg("-l").arg(&m).status();
                    }
                },
            ));
            devs.push(Dev {
                role: role.into(),
                loopdev: name,
                majmin,
                image,
                mount,
            });
        }
        // The cgroup.
        let probe = Path::new(BLKIO).join("blkio.throttle.read_iops_device");
        if !probe.exists() {
            fs::create_dir_all(BLKIO).ok();
            run(Command::new("mount").args(["-t", "cgroup", "-o", "blkio", "none", BLKIO]))
                .context("mounting the cgroup v1 blkio controller")?;
            guards.push(cleanup::register(format!("umount {BLKIO}"), || {
                let _ = Command::new("umount").arg(BLKIO).status();
            }));
        }
        let cgroup = Path::new(BLKIO).join(format!("tierdb-lab-{}", std::process::id()));
        fs::create_dir_all(&cgroup).with_context(|| format!("mkdir {}", cgroup.display()))?;
        let cg = cgroup.clone();
        guards.push(cleanup::register(
            format!("rmdir {}", cgroup.display()),
            move || {
                // Move any straggler back to the root group, then remove ours.
                if let Ok(p) = fs::read_to_string(cg.join("cgroup.procs")) {
                    for pid in p.split_whitespace() {
                        let _ = fs::write(Path::new(BLKIO).join("cgroup.procs"), pid);
                    }
                }
                for _ in 0..50 {
                    if fs::remove_dir(&cg).is_ok() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            },
        ));
        let slow = devs[0].mount.clone();
        let fast = vec![devs[1].mount.clone(), devs[2].mount.clone()];
        let t = Tiers {
            mode: Mode::Kernel { cgroup, devs },
            slow,
            fast,
            slow_iops,
            fast_iops,
            guards,
        };
        t.set_throttle(true)?;
        Ok(t)
    }

    pub fn is_kernel(&self) -> bool {
        matches!(self.mode, Mode::Kernel { .. })
    }

    pub fn devs(&self) -> &[Dev] {
        match &self.mode {
            Mode::Kernel { devs, .. } => devs,
            Mode::InProcess { .. } => &[],
        }
    }

    /// Applies (`on`) or lifts the kernel IOPS caps. No-op in in-process mode (there the caps
    /// are server flags, see [`Tiers::tierdb_throttle_flags`]).
    pub fn set_throttle(&self, on: bool) -> Result<()> {
        if let Mode::Kernel { cgroup, devs } = &self.mode {
            for d in devs {
                let iops = if !on {
                    0
                } else if d.role == "slow" {
                    self.slow_iops
                } else {
                    self.fast_iops
                };
                for f in [
                    "blkio.throttle.read_iops_device",
                    "blkio.throttle.write_iops_device",
                ] {
                    fs::write(cgroup.join(f), format!("{} {}\n", d.majmin, iops))
                        .with_context(|| format!("writing {f} for {}", d.loopdev))?;
                }
            }
        }
        Ok(())
    }

    /// tierdb flags that emulate the tiers in-process (empty in kernel mode).
    pub fn tierdb_throttle_flags(&self, latency_us: u32) -> Vec<String> {
        if self.is_kernel() {
            return Vec::new();
        }
        let s = self.slow_iops.to_string();
        let f = self.fast_iops.to_string();
        let mut v = vec![
            "--data-read-iops",
            &s,
            "--data-write-iops",
            &s,
            "--bpe-read-iops",
            &f,
            "--bpe-write-iops",
            &f,
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        v.extend(["--data-latency-us".to_string(), latency_us.to_string()]);
        v
    }

    /// A command that runs `program args…` inside the throttled cgroup (plain in in-process mode).
    pub fn command(&self, program: &Path) -> Command {
        match &self.mode {
            Mode::Kernel { cgroup, .. } => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg("echo $$ > \"$0/cgroup.procs\" && exec \"$@\"")
                    .arg(cgroup)
                    .arg(program);
                c
            }
            Mode::InProcess { .. } => Command::new(program),
        }
    }

    /// Names of the kernel loop devices (slow, fast0, fast1), empty in in-process mode.
    pub fn loop_names(&self) -> Vec<String> {
        self.devs().iter().map(|d| d.loopdev.clone()).collect()
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        match &self.mode {
            Mode::Kernel { cgroup, devs } => format!(
                "kernel: loop devices with direct I/O + ext4 + cgroup v1 blkio throttle ({}); slow {} ({}) = {} IOPS read / {} write, fast {} and {} = {} IOPS each",
                cgroup.display(),
                devs[0].loopdev,
                devs[0].image.display(),
                self.slow_iops,
                self.slow_iops,
                devs[1].loopdev,
                devs[2].loopdev,
                self.fast_iops
            ),
            Mode::InProcess { reason } => format!(
                "IN-PROCESS FALLBACK ({reason}): tierdb's own throttles (data {} IOPS, each BPE device {} IOPS); MariaDB and fio run UNTHROTTLED on the host disk, so tierdb-vs-MariaDB ratios are NOT comparable",
                self.slow_iops, self.fast_iops
            ),
        }
    }
}

impl Drop for Tiers {
    fn drop(&mut self) {
        while let Some(g) = self.guards.pop() {
            drop(g);
        }
    }
}

/// Completed (reads, writes) per device, from /sys/block/<name>/stat.
pub fn read_dev_stats(names: &[String]) -> Vec<(u64, u64)> {
    names
        .iter()
        .map(|n| {
            let s = fs::read_to_string(format!("/sys/block/{n}/stat")).unwrap_or_default();
            let f: Vec<u64> = s
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (
                f.first().copied().unwrap_or(0),
                f.get(4).copied().unwrap_or(0),
            )
        })
        .collect()
}

fn kernel_available() -> Result<()> {
    if unsafe { libc::geteuid() } != 0 {
        bail!("not running as root");
    }
    for (t, p) in TIER_TOOLS {
        if which(t).is_none() {
            bail!("`{t}` is missing (Debian package {p})");
        }
    }
    run(Command::new("losetup").arg("-f")).context("no free loop device (`losetup -f`)")?;
    let has_blkio = fs::read_to_string("/proc/cgroups")
        .map(|s| s.lines().any(|l| l.starts_with("blkio")))
        .unwrap_or(false);
    if !has_blkio {
        bail!("the kernel has no cgroup v1 blkio controller");
    }
    Ok(())
}

/// Unmounts and detaches what an interrupted earlier run may have left on `image`.
fn release_stale(image: &Path, mount: &Path) {
    let mounted = fs::read_to_string("/proc/mounts")
        .map(|m| {
            m.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(&*mount.to_string_lossy()))
        })
        .unwrap_or(false);
    if mounted {
        let _ = Command::new("umount").arg(mount).status();
    }
    if let Ok(out) = Command::new("losetup").arg("-j").arg(image).output() {
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some(dev) = line.split(':').next() {
                let _ = Command::new("losetup").args(["-d", dev]).status();
            }
        }
    }
}
