//! The memory cgroup of a cage: a limit on what all its processes use
//! together, set outside the cage; its OOM kills counted.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// The most memory a cage's processes may use together, without swap (a
/// memory cgroup of its own, `Memory`), the pages of the files they write
/// in their trial's tmpfs included. A correct implementation uses a few MiB;
/// PrairieLearn gives a whole grading job 2 GiB; with the default 4 trials
/// at once per core, 2 cores hold at most 8 GiB of caged memory.
pub const MEMORY: u64 = 1 << 30;

/// The variable that tells a judge the memory cgroup (`Memory::adopt`) its
/// implementation's cage goes in: made and removed by fencelab's runner,
/// which outlives the judge.
pub const MEMORY_ENV: &str = "FENCELAB_MEMORY_CGROUP";

/// A memory cgroup of a cage's own, nested under fencelab's own cgroup: what
/// every process of the cage uses together (memory, and the pages of files it
/// writes on a tmpfs, such as its trial's `Space`) is bounded by `MEMORY`,
/// without swap, root included. The limit is set outside the cage, and
/// nothing in it can reach `/sys`. Its child writes itself into it before
/// anything untrusted runs (`enter`); what it starts inherits it. The OOM
/// killer then kills only in this cgroup, and counts what it killed
/// (`ran_out`). Removed when dropped, after whatever is still in it has been
/// killed.
#[derive(Debug)]
pub struct Memory {
    dir: PathBuf,
    /// `cgroup.procs`, opened for writing by the parent (the kernel checks
    /// the opener's rights), written by the child.
    procs: OwnedFd,
    v2: bool,
    /// Whether dropping it removes it (not when a judge was handed it).
    owned: bool,
}

/// Whether this machine gives fencelab a writable memory cgroup: one made
/// and removed, asked once per process (`Layers::probe` reports it).
pub(crate) fn available() -> bool {
    static MADE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MADE.get_or_init(|| Memory::create().is_ok())
}

impl Memory {
    /// A memory cgroup for one cage where this machine has a writable one
    /// (`available`), `None` where it has none; an error where it has
    /// one and it could not be made.
    pub fn for_cage() -> std::io::Result<Option<Memory>> {
        if !available() {
            return Ok(None);
        }
        Memory::create().map(Some)
    }

    /// A memory cgroup for a build of untrusted code (a cargo run and every
    /// compiler it starts), limited to `limit`, where this machine has one.
    pub fn for_build(limit: u64) -> std::io::Result<Option<Memory>> {
        if !available() {
            return Ok(None);
        }
        Memory::limited_to(limit).map(Some)
    }

    /// The descriptor of its `cgroup.procs`: a child that writes "0" to it
    /// joins it (in a `pre_exec` hook: one system call).
    pub fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// A new memory cgroup under this process's own, limited to `MEMORY`.
    pub(crate) fn create() -> std::io::Result<Memory> {
        Memory::limited_to(MEMORY)
    }

    /// A new memory cgroup under this process's own, limited to `limit`.
    fn limited_to(limit: u64) -> std::io::Result<Memory> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let (parent, v2) = own_memory_cgroup()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no memory cgroup"))?;
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep(&parent));
        let dir = parent.join(format!(
            "fencelab-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        let limits = || -> std::io::Result<OwnedFd> {
            let limit = limit.to_string();
            if v2 {
                std::fs::write(dir.join("memory.max"), &limit)?;
                let _ = std::fs::write(dir.join("memory.swap.max"), "0");
                let _ = std::fs::write(dir.join("memory.oom.group"), "1");
            } else {
                std::fs::write(dir.join("memory.limit_in_bytes"), &limit)?;
                // Without swap accounting, there is no swap to bound.
                let memsw = dir.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    std::fs::write(memsw, &limit)?;
                }
            }
            let procs = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))?;
            Ok(OwnedFd::from(procs))
        };
        match limits() {
            Ok(procs) => Ok(Memory {
                dir,
                procs,
                v2,
                owned: true,
            }),
            Err(err) => {
                let _ = std::fs::remove_dir(&dir);
                Err(err)
            }
        }
    }

    /// The memory cgroup at `dir`, made by fencelab for this process's cage
    /// (`MEMORY_ENV`): joined, never removed here.
    pub fn adopt(dir: &Path) -> std::io::Result<Memory> {
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))?;
        Ok(Memory {
            dir: dir.to_path_buf(),
            procs: OwnedFd::from(procs),
            v2: dir.join("memory.max").exists(),
            owned: false,
        })
    }

    /// Where it is (for `MEMORY_ENV`).
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Whether the OOM killer killed a process of it: the cage ran out of
    /// memory. The process killed may be the cage's watcher or init, which
    /// ends the cage all the same.
    pub fn ran_out(&self) -> bool {
        let (file, field) = if self.v2 {
            ("memory.events", "oom_kill ")
        } else {
            ("memory.oom_control", "oom_kill ")
        };
        std::fs::read_to_string(self.dir.join(file))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix(field))
            .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
    }

    /// Whether `pid` is in it.
    #[cfg(test)]
    fn holds(&self, pid: u32) -> bool {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .any(|l| l.trim() == pid.to_string())
    }
}

impl Drop for Memory {
    /// Removes it once nothing runs in it: what still does (a cage's init
    /// killed with its watcher is still dying) is killed, for up to 10 s.
    /// Processes that held a gigabyte take a while to give it back on a
    /// loaded machine (the attack suite's memory bomb across processes, at a
    /// load of 90, was still dying after 2 s, the limit before): nothing of a
    /// run may outlive it, so this waits rather than leave the cgroup to the
    /// next run's sweep.
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut pause = std::time::Duration::from_micros(200);
        loop {
            match std::fs::remove_dir(&self.dir) {
                Err(err) if err.raw_os_error() == Some(libc::EBUSY) => {}
                _ => return,
            }
            if std::time::Instant::now() >= deadline {
                return;
            }
            let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs
                .lines()
                .filter_map(|l| l.trim().parse::<u32>().ok())
                .filter_map(|pid| rustix::process::Pid::from_raw(pid.try_into().ok()?))
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(20));
        }
    }
}

/// Removes the memory cgroups under `parent` that a fencelab process which
/// is gone left behind (killed before it could: SIGKILL, Ctrl-C). Only
/// those of a process that no longer exists: a live one's may be in use.
fn sweep(parent: &Path) {
    for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("fencelab-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok()?.try_into().ok())
            .and_then(rustix::process::Pid::from_raw);
        let Some(pid) = pid else { continue };
        // Signal 0 only asks whether the process exists.
        let gone = rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH);
        if gone {
            // Fails, and stays, while anything still runs in it.
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// The directory of this process's own memory cgroup, and whether it is
/// cgroup v2: v1's memory hierarchy where it is mounted, else v2's where its
/// memory controller is delegated to our children; `None` where neither.
fn own_memory_cgroup() -> Option<(PathBuf, bool)> {
    let cgroups = crate::proc::read_text("/proc/self/cgroup")?;
    let mounts = crate::proc::read_text("/proc/self/mountinfo")?;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "memory") {
            let memory = |kind: &str, options: &str| {
                kind == "cgroup" && options.split(',').any(|o| o == "memory")
            };
            return cgroup_dir(&mounts, memory, path).map(|dir| (dir, false));
        }
    }
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = cgroup_dir(&mounts, |kind, _| kind == "cgroup2", path)?;
    let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    delegated
        .split_whitespace()
        .any(|c| c == "memory")
        .then_some((dir, true))
}

/// Where the cgroup `path` of the hierarchy mounted as `is` (its type and
/// super options, from `/proc/self/mountinfo`) is.
fn cgroup_dir(mounts: &str, is: impl Fn(&str, &str) -> bool, path: &str) -> Option<PathBuf> {
    mounts.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut fs = right.split_whitespace();
        let (kind, _source, options) = (fs.next()?, fs.next()?, fs.next().unwrap_or(""));
        if !is(kind, options) {
            return None;
        }
        let fields: Vec<&str> = left.split_whitespace().collect();
        let (root, at) = (fields.get(3)?, fields.get(4)?);
        let inside = Path::new(path).strip_prefix(root).ok()?;
        Some(Path::new(at).join(inside))
    })
}

/// Puts this process (the watcher, before anything untrusted runs; all it
/// starts inherits it) in the cage's memory cgroup.
pub(crate) fn join_memory(cgroup: Option<RawFd>) -> std::io::Result<()> {
    let Some(fd) = cgroup else { return Ok(()) };
    // "0": the writer itself.
    if rustix::io::write(crate::descriptors::borrowed(fd), b"0")? != 1 {
        return Err(std::io::Error::from(std::io::ErrorKind::WriteZero));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
