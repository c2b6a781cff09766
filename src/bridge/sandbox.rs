//! The cage untrusted code runs in: an implementation's server, and a learner's
//! tests. It is set up between fork and exec, so it holds before any of the
//! untrusted code runs, constructors included. The parent prepares everything
//! the child needs (`Cage::new`): between fork and exec only system calls run.
//!
//! Its layers are namespaces, Landlock, limits, a memory cgroup (`Memory`) and
//! the trial's space (`Space`). Each holds where the kernel allows it
//! (`Layers::probe`). DESIGN.md's "The cage, layer by layer" says what each
//! enforces, and what holds where it is missing.
//!
//! Invariants: where the cage has a PID namespace, nothing the program starts
//! outlives it (`init`). The watcher ends as the program did, so every verdict
//! reads the program's own end (`watch`). Nothing untrusted ever runs in memory
//! shared with fencelab's (`start_cloned`, `start_forked`).

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

const SYS_CREATE_RULESET: libc::c_long = 444;
const SYS_ADD_RULE: libc::c_long = 445;
const SYS_RESTRICT_SELF: libc::c_long = 446;
const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_DIR: u64 = 1 << 7;
const MAKE_REG: u64 = 1 << 8;
const MAKE_SOCK: u64 = 1 << 9;
const MAKE_FIFO: u64 = 1 << 10;
const MAKE_BLOCK: u64 = 1 << 11;
const MAKE_SYM: u64 = 1 << 12;
const REFER: u64 = 1 << 13;
const TRUNCATE: u64 = 1 << 14;
const IOCTL_DEV: u64 = 1 << 15;
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// The largest address space an implementation may map.
const ADDRESS_SPACE: u64 = 4 << 30;
/// The most processes (and threads) the user may have once it runs. The
/// kernel exempts root's own uid, so this binds no one when fencelab runs as
/// root.
const PROCESSES: u64 = 8192;
/// One more than the most processes and threads a cage's PID namespace may
/// hold at once (its `pid_max`; the kernel's least is 301).
const PIDS: &std::ffi::CStr = c"2048";
/// The most memory a cage's processes may use together, without swap (a
/// memory cgroup of its own, `Memory`), the pages of the files they write
/// in their trial's tmpfs included. A correct implementation uses a few MiB;
/// PrairieLearn gives a whole grading job 2 GiB; with the default 4 trials
/// at once per core, 2 cores hold at most 8 GiB of caged memory.
pub(crate) const MEMORY: u64 = 1 << 30;
/// The most a trial's directory may hold, every file together (a tmpfs of
/// its own, `Space`): twice the largest file a trial may write (256 MiB,
/// `engine::runner`), a hundred times what a test's database needs.
pub(crate) const SPACE: u64 = 512 << 20;
/// The most files (and directories) a trial's directory may hold.
const SPACE_FILES: u64 = 16_384;
/// The variable that tells a judge the memory cgroup (`Memory::adopt`) its
/// implementation's cage goes in: made and removed by fencelab's runner,
/// which outlives the judge.
pub(crate) const MEMORY_ENV: &str = "FENCELAB_MEMORY_CGROUP";

/// The system's programs and libraries: what any program needs to start.
/// Directories that are symbolic links (`/lib` -> `usr/lib`) are made links.
const SYSTEM: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// The directory, in the trial's, on which the new root is built (it stays
/// there, empty, in the trial's directory as the code sees it).
const STAGE: &str = ".fencelab-root";
/// Single files of the system a program may read.
const SYSTEM_FILES: [&str; 7] = [
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The test hook that makes `Layers::probe` report a layer missing, as on a
/// machine without it: `FENCELAB_CAGE_WITHOUT=namespaces`, `landlock`,
/// `memory` or `space` (or several, comma-separated). Read here and nowhere else; it changes only what
/// is reported, never what the child sets up.
pub(crate) const SIMULATE_MISSING_ENV: &str = "FENCELAB_CAGE_WITHOUT";

/// The variable that makes a test needing a missing layer fail rather than
/// skip (`Layers::test_needs`); `.ci/run` sets it to 1.
pub const REQUIRE_CAGE_ENV: &str = "FENCELAB_REQUIRE_CAGE";

/// A layer a test needs (`Layers::test_needs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Namespaces,
    Landlock,
    /// Landlock's ABI 6: scoped signals and abstract sockets.
    Landlock6,
    Memory,
    Space,
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

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
pub(crate) struct Memory {
    dir: PathBuf,
    /// `cgroup.procs`, opened for writing by the parent (the kernel checks
    /// the opener's rights), written by the child.
    procs: OwnedFd,
    v2: bool,
    /// Whether dropping it removes it (not when a judge was handed it).
    owned: bool,
}

impl Memory {
    /// A memory cgroup for one cage where this machine has a writable one
    /// (`Layers::probe`), `None` where it has none; an error where it has
    /// one and it could not be made.
    pub(crate) fn for_cage() -> std::io::Result<Option<Memory>> {
        if !Layers::probe().memory {
            return Ok(None);
        }
        Memory::create().map(Some)
    }

    /// A memory cgroup for a build of untrusted code (a cargo run and every
    /// compiler it starts), limited to `limit`, where this machine has one.
    pub(crate) fn for_build(limit: u64) -> std::io::Result<Option<Memory>> {
        if !Layers::probe().memory {
            return Ok(None);
        }
        Memory::limited_to(limit).map(Some)
    }

    /// The descriptor of its `cgroup.procs`: a child that writes "0" to it
    /// joins it (in a `pre_exec` hook: one system call).
    pub(crate) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// A new memory cgroup under this process's own, limited to `MEMORY`.
    fn create() -> std::io::Result<Memory> {
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
    pub(crate) fn adopt(dir: &Path) -> std::io::Result<Memory> {
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
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// Whether the OOM killer killed a process of it: the cage ran out of
    /// memory. The process killed may be the cage's watcher or init, which
    /// ends the cage all the same.
    pub(crate) fn ran_out(&self) -> bool {
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
                .filter_map(|l| l.trim().parse::<libc::pid_t>().ok())
            {
                // SAFETY: a signal to a process of this cage's cgroup.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
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
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok());
        let Some(pid) = pid else { continue };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
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
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
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

/// A network namespace with no interface up, and the user namespace that
/// owns it, for the trials of one implementation (`engine::runner` makes one
/// per submission, or per implementation a learner's tests are judged
/// against): each of its trials' `Space` is made in that user namespace and
/// every process of the trial joins the network namespace, so a cage made
/// there needs no network namespace of its own (`closed_network`). Made
/// once instead of once per trial: a network namespace costs its making
/// (`copy_net_ns`) and, after it, the kernel's asynchronous `cleanup_net`,
/// together about 6% of a trial's processor time. Only descriptors: no
/// process holds it, and it goes when the last descriptor and process do.
pub(crate) struct Net {
    user: OwnedFd,
    net: OwnedFd,
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Net({}, {})",
            self.user.as_raw_fd(),
            self.net.as_raw_fd()
        )
    }
}

impl Net {
    /// A closed network where this machine has user namespaces
    /// (`Layers::probe`), `None` where it has none; an error where it
    /// should and could not.
    pub(crate) fn for_trials() -> std::io::Result<Option<Net>> {
        if !Layers::probe().namespaces {
            return Ok(None);
        }
        Net::new().map(Some)
    }

    fn new() -> std::io::Result<Net> {
        // SAFETY: plain queries.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let uid_map = CString::new(format!("{uid} {uid} 1"))?;
        let gid_map = CString::new(format!("{gid} {gid} 1"))?;
        let mut fds: [RawFd; 2] = [-1, -1];
        let fds_at = fds.as_mut_ptr();
        let made = in_a_clone(libc::CLONE_NEWUSER | libc::CLONE_NEWNET, &mut || {
            // SAFETY: the clone's work, system calls on what was prepared.
            unsafe {
                if write_file(c"/proc/self/setgroups", c"deny").is_err()
                    || write_file(c"/proc/self/uid_map", &uid_map).is_err()
                    || write_file(c"/proc/self/gid_map", &gid_map).is_err()
                {
                    return false;
                }
                *fds_at = libc::open(
                    c"/proc/self/ns/user".as_ptr(),
                    libc::O_RDONLY | libc::O_CLOEXEC,
                );
                *fds_at.add(1) = libc::open(
                    c"/proc/self/ns/net".as_ptr(),
                    libc::O_RDONLY | libc::O_CLOEXEC,
                );
                *fds_at >= 0 && *fds_at.add(1) >= 0
            }
        });
        // SAFETY: the clone shares this process's descriptors: what it
        // opened is ours from here on.
        let owned = |fd: RawFd| (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
        let (user, net) = (owned(fds[0]), owned(fds[1]));
        match (made?, user, net) {
            (true, Some(user), Some(net)) => Ok(Net { user, net }),
            _ => Err(std::io::Error::other(
                "a network namespace for the trials could not be made",
            )),
        }
    }
}

/// Runs `work` in a child that shares this process's memory and descriptor
/// table (`CLONE_VM | CLONE_VFORK | CLONE_FILES`, with `flags`), this
/// thread waiting until it has ended; true if `work` said so. For making a
/// namespace, which needs a process of its own but nothing of this one's: a
/// fork would copy every page table of fencelab's (and fault in each page
/// the runner writes while the copy lives). What `work` opens stays open
/// here. `work` makes only system calls: it runs on a small stack of its
/// own, beside this process's other threads.
fn in_a_clone(flags: libc::c_int, work: &mut dyn FnMut() -> bool) -> std::io::Result<bool> {
    extern "C" fn trampoline(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `&mut dyn FnMut` below, alive until the
        // clone ends (its parent waits, CLONE_VFORK).
        let work = unsafe { &mut *arg.cast::<&mut dyn FnMut() -> bool>() };
        if work() { 0 } else { 1 }
    }
    let mut stack = vec![0u8; 64 << 10];
    // The stack grows down, from its top, aligned to 16 bytes.
    let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
    let mut work = work;
    // SAFETY: the child runs `trampoline` on `stack` until it returns; this
    // thread is suspended meanwhile (CLONE_VFORK), so both stay alive.
    let pid = unsafe {
        libc::clone(
            trampoline,
            top as *mut libc::c_void,
            flags | libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD,
            (&raw mut work).cast(),
        )
    };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut status = 0;
    // SAFETY: our own child, ended (CLONE_VFORK): reaped.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
    drop(stack);
    Ok(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
}

/// Whether this process's network namespace has no interface up: no
/// address to send to or from, TCP, UDP or DNS, here or anywhere (a fresh
/// one's loopback is down). A cage made here then shares it (`Cage::build`)
/// where Landlock keeps abstract sockets in (ABI 6): a `Net` of the trials
/// of one implementation. Anything else (the machine's own network, an
/// interface that cannot be asked) is not closed.
pub(crate) fn closed_network() -> bool {
    let Ok(dev) = std::fs::read_to_string("/proc/thread-self/net/dev") else {
        return false;
    };
    // SAFETY: a socket of ours, closed below, only asked about interfaces.
    let sock = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if sock < 0 {
        return false;
    }
    // SAFETY: the descriptor was just opened, and is ours.
    let sock = unsafe { OwnedFd::from_raw_fd(sock) };
    // Two header lines, then "name: counters" per interface.
    dev.lines().skip(2).all(|line| {
        let Some((name, _)) = line.split_once(':') else {
            return false;
        };
        let name = name.trim().as_bytes();
        // SAFETY: an ifreq of ours, its name filled and NUL-terminated.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        if name.is_empty() || name.len() >= req.ifr_name.len() {
            return false;
        }
        for (to, from) in req.ifr_name.iter_mut().zip(name) {
            *to = *from as libc::c_char;
        }
        // SAFETY: SIOCGIFFLAGS fills the ifreq's flags.
        let asked = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } == 0;
        // SAFETY: the union's flags, which SIOCGIFFLAGS filled.
        asked && (unsafe { req.ifr_ifru.ifru_flags } as libc::c_int & libc::IFF_UP) == 0
    })
}

/// A trial's directory as a tmpfs of its own, at most `SPACE` bytes and
/// `SPACE_FILES` files, in a mount namespace of its own, owned by a user
/// namespace: its `Net`'s when it has one, else one of its own. A clone of
/// ours makes both and ends (`in_a_clone`); descriptors hold them. Every
/// process of the trial joins that namespace (`Space::join`): the judge
/// (caged or not), the server the runner starts; a cage's own mount
/// namespace is then made from it, so all of them see the same files.
/// Nothing outside sees the tmpfs; it goes when the last descriptor and
/// process in the namespace do.
///
/// A memory cgroup alone would not do. It charges a cage's written pages only
/// where the trial's directory is a tmpfs (`/dev/shm`): a `TMPDIR` on a disk
/// is written back and freed. It charges only what the cage itself
/// writes, not the trusted server a learner's tests drive. And it ends in the
/// OOM killer, which reads as memory, not space.
pub(crate) struct Space {
    _user: Option<OwnedFd>,
    _net: Option<OwnedFd>,
    _mount: OwnedFd,
    /// The tmpfs's root, opened in the new namespace.
    root: OwnedFd,
    join: Arc<Join>,
}

/// What a child does to join a trial's `Space` (descriptors held open by it).
#[derive(Debug)]
pub(crate) struct Join {
    user: Option<RawFd>,
    /// The trials' `Net`, joined after its user namespace.
    net: Option<RawFd>,
    mount: RawFd,
    dir: CString,
}

impl Join {
    /// The `Join` of a trial's space whose namespaces a process received as
    /// descriptors (a Python server forked per trial: `bridge::zygote`),
    /// its trial's directory `dir`; `user` is None where the process is in
    /// that user namespace already, `net` where it is in that network (or
    /// the judge sent none): the cage it then builds makes a network of its
    /// own unless it finds itself in a closed one (`Cage::build`), as a
    /// judge's does.
    pub(crate) fn of(
        user: Option<RawFd>,
        mount: RawFd,
        net: Option<RawFd>,
        dir: &Path,
    ) -> std::io::Result<Join> {
        Ok(Join {
            user,
            net,
            mount,
            dir: CString::new(absolute(dir).as_os_str().as_bytes())?,
        })
    }

    /// The trial's directory, as `Join::of` takes it back.
    pub(crate) fn dir(&self) -> &std::ffi::CStr {
        &self.dir
    }

    /// Its namespaces as descriptors (user, mount, network), for a process
    /// that joins them itself (`Join::of` is how it reads them back).
    pub(crate) fn descriptors(&self) -> (Option<RawFd>, RawFd, Option<RawFd>) {
        (self.user, self.mount, self.net)
    }
}

impl std::fmt::Debug for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Space({:?})", self.join)
    }
}

impl Space {
    /// The space of a trial whose directory is `dir`, in `net` when given,
    /// where this machine allows it (`Layers::probe`), `None` where it does
    /// not; an error where it should and could not.
    pub(crate) fn for_trial(dir: &Path, net: Option<&Net>) -> std::io::Result<Option<Space>> {
        if !Layers::probe().space {
            return Ok(None);
        }
        Space::new(dir, net).map(Some)
    }

    fn new(dir: &Path, net: Option<&Net>) -> std::io::Result<Space> {
        let dir = absolute(dir);
        let c_dir = CString::new(dir.as_os_str().as_bytes())?;
        let options = CString::new(format!("size={SPACE},nr_inodes={SPACE_FILES},mode=755"))?;
        // SAFETY: plain queries.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let uid_map = CString::new(format!("{uid} {uid} 1"))?;
        let gid_map = CString::new(format!("{gid} {gid} 1"))?;
        let given_user = net.map(|n| n.user.as_raw_fd());
        // The clone's descriptors: its user namespace (when it made one),
        // its mount namespace, the tmpfs's root.
        let mut fds: [RawFd; 3] = [-1, -1, -1];
        let fds_at = fds.as_mut_ptr();
        let made = in_a_clone(0, &mut || {
            // SAFETY: the clone's work, system calls on what was prepared.
            unsafe {
                let mode = hold(&c_dir, &options, &uid_map, &gid_map, given_user);
                let open = |path: &std::ffi::CStr, flags| {
                    libc::open(path.as_ptr(), flags | libc::O_CLOEXEC)
                };
                if mode == b'u' {
                    *fds_at = open(c"/proc/self/ns/user", libc::O_RDONLY);
                }
                *fds_at.add(1) = open(c"/proc/self/ns/mnt", libc::O_RDONLY);
                *fds_at.add(2) = open(&c_dir, libc::O_PATH);
                mode != b'x'
                    && (mode != b'u' || *fds_at >= 0)
                    && *fds_at.add(1) >= 0
                    && *fds_at.add(2) >= 0
            }
        });
        // SAFETY: the clone shares this process's descriptors: what it
        // opened is ours from here on.
        let owned = |fd: RawFd| (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
        let (own_user, mount, root) = (owned(fds[0]), owned(fds[1]), owned(fds[2]));
        let (Ok(true), Some(mount), Some(root)) = (made, mount, root) else {
            return Err(std::io::Error::other(
                "the trial's space could not be mounted",
            ));
        };
        let (user, net) = match net {
            Some(net) => (Some(net.user.try_clone()?), Some(net.net.try_clone()?)),
            None => (own_user, None),
        };
        let join = Arc::new(Join {
            user: user.as_ref().map(AsRawFd::as_raw_fd),
            net: net.as_ref().map(AsRawFd::as_raw_fd),
            mount: mount.as_raw_fd(),
            dir: c_dir,
        });
        Ok(Space {
            _user: user,
            _net: net,
            _mount: mount,
            root,
            join,
        })
    }

    /// What a child of the trial does to join it (see `join`).
    pub(crate) fn join(&self) -> Arc<Join> {
        self.join.clone()
    }

    /// Whether the trial used up its space (less than 1 MiB, or no file,
    /// left): it wrote too much, and what it wrote last was refused. This is
    /// the tmpfs's own account, so the runner fails the trial whatever the
    /// code made of the refusal (ENOSPC).
    pub(crate) fn used_up(&self) -> bool {
        // SAFETY: fills a statvfs of ours from a descriptor of ours.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatvfs(self.root.as_raw_fd(), &mut stat) } != 0 {
            return false;
        }
        let free = stat.f_bavail as u64 * stat.f_frsize as u64;
        free < (1 << 20) || stat.f_favail == 0
    }
}

/// The making of a trial's space, in a clone of ours: the mount namespace,
/// owned by the user namespace `user` (a `Net`'s, joined) or else by one of
/// its own mapping fencelab's own ids (or, for root where the kernel
/// refuses one, the machine's), and the tmpfs on `dir`. Says which user
/// namespace: `u` its own, `g` the given one, `m` the machine's; `x` when
/// nothing was made.
unsafe fn hold(
    dir: &std::ffi::CStr,
    options: &std::ffi::CStr,
    uid_map: &std::ffi::CStr,
    gid_map: &std::ffi::CStr,
    user: Option<RawFd>,
) -> u8 {
    unsafe {
        let none = std::ptr::null();
        let made = if let Some(user) = user {
            // Its owner's: every right in it, and none outside.
            if libc::setns(user, libc::CLONE_NEWUSER) != 0 || libc::unshare(libc::CLONE_NEWNS) != 0
            {
                return b'x';
            }
            b'g'
        } else if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) == 0 {
            if write_file(c"/proc/self/setgroups", c"deny").is_err()
                || write_file(c"/proc/self/uid_map", uid_map).is_err()
                || write_file(c"/proc/self/gid_map", gid_map).is_err()
            {
                return b'x';
            }
            b'u'
        } else if libc::geteuid() == 0
            && libc::unshare(libc::CLONE_NEWNS) == 0
            && libc::mount(
                c"none".as_ptr(),
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_SLAVE,
                none.cast(),
            ) == 0
        {
            b'm'
        } else {
            return b'x';
        };
        // Mounts copied into a mount namespace of a user namespace below the
        // machine's are slaves already: nothing mounted here reaches it.
        let mounted = libc::mount(
            c"fencelab".as_ptr(),
            dir.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        ) == 0;
        if mounted { made } else { b'x' }
    }
}

/// Joins the trial's space `join` (from `Space::join`), in the trial's
/// directory. Meant for a child between fork and exec, before `enter`.
///
/// # Safety
/// Call only from a `pre_exec` hook, while the `Space` is alive.
pub(crate) unsafe fn join(join: &Join) -> std::io::Result<()> {
    unsafe {
        if let Some(user) = join.user
            && libc::setns(user, libc::CLONE_NEWUSER) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        // The trials' closed network (every right in its user namespace,
        // just joined, is needed to join it).
        if let Some(net) = join.net
            && libc::setns(net, libc::CLONE_NEWNET) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        // It leaves the root and working directory at the namespace's root.
        if libc::setns(join.mount, libc::CLONE_NEWNS) != 0 || libc::chdir(join.dir.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // A change of credentials may have cleared it.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    }
    Ok(())
}

/// Whether Landlock keeps a cage's abstract Unix sockets in (ABI 6): it can
/// connect to none made outside it. Only then does a cage share its
/// trials' closed network (`Net`): without it, a caged program could reach
/// an abstract socket of another trial of the same implementation's.
fn scopes_abstract_sockets() -> bool {
    available().is_some_and(|abi| abi >= 6)
}

/// The Landlock ABI version of the running kernel, if it has Landlock
/// (Linux 5.13+).
pub(crate) fn available() -> Option<i32> {
    // SAFETY: asks the version; no memory is passed.
    let abi = unsafe {
        libc::syscall(
            SYS_CREATE_RULESET,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    (abi > 0).then_some(abi as i32)
}

/// Which layers of the cage this machine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layers {
    /// User, mount, network and IPC namespaces can be made unprivileged.
    pub namespaces: bool,
    /// The Landlock ABI version, if any.
    pub landlock: Option<i32>,
    /// A memory cgroup can be made under fencelab's own (`Memory`).
    pub memory: bool,
    /// A trial's directory can be a tmpfs of its own (`Space`).
    pub space: bool,
}

impl Layers {
    /// The layers of the running kernel, asked once per process.
    pub fn probe() -> Layers {
        static PROBED: OnceLock<Layers> = OnceLock::new();
        *PROBED.get_or_init(|| {
            let namespaces = namespaces_work();
            Layers {
                namespaces,
                landlock: available(),
                memory: Memory::create().is_ok(),
                // SAFETY: a plain query.
                space: namespaces || (unsafe { libc::geteuid() } == 0 && mount_namespace_works()),
            }
        })
    }

    /// Whether a test that needs `needs` runs here. Where one is missing (or
    /// `SIMULATE_MISSING_ENV` says so), the test is skipped with a word on
    /// stderr; under `REQUIRE_CAGE_ENV=1` it fails instead, naming the layer,
    /// so that CI never passes with the cage untested.
    pub fn test_needs(needs: &[Need]) -> bool {
        let required = std::env::var(REQUIRE_CAGE_ENV).is_ok_and(|v| v == "1");
        match Layers::reported().missing(needs) {
            None => true,
            Some(layer) if required => panic!(
                "this test needs {layer}, which this machine lacks, and \
                 {REQUIRE_CAGE_ENV}=1 says the cage must be tested here \
                 (unset it to skip such tests; README: \"The tests, in two steps\")"
            ),
            Some(layer) => {
                eprintln!("skipped: this test needs {layer}, which this machine lacks");
                false
            }
        }
    }

    /// The first of `needs` these layers lack, named for a person.
    fn missing(&self, needs: &[Need]) -> Option<&'static str> {
        needs.iter().find_map(|need| {
            let (has, name) = match need {
                Need::Namespaces => (self.namespaces, "user namespaces"),
                Need::Landlock => (self.landlock.is_some(), "Landlock"),
                Need::Landlock6 => (self.landlock.is_some_and(|abi| abi >= 6), "Landlock ABI 6"),
                Need::Memory => (self.memory, "a writable memory cgroup"),
                Need::Space => (self.space, "a trial's space (a tmpfs of its own)"),
            };
            (!has).then_some(name)
        })
    }

    /// What this machine has, less what `SIMULATE_MISSING_ENV` pretends is
    /// missing: for fencelab's report of what is not enforced.
    pub(crate) fn reported() -> Layers {
        let mut layers = Layers::probe();
        let hook = std::env::var(SIMULATE_MISSING_ENV).unwrap_or_default();
        for missing in hook.split(',').map(str::trim) {
            match missing {
                "namespaces" => layers.namespaces = false,
                "landlock" => layers.landlock = None,
                "memory" => layers.memory = false,
                "space" => layers.space = false,
                _ => {}
            }
        }
        layers
    }

    /// What untrusted code can do here that it could not on a machine with
    /// every layer: one sentence each, in English and in Japanese; empty when
    /// everything holds.
    pub(crate) fn not_enforced(&self) -> Vec<(&'static str, &'static str)> {
        let mut gaps = Vec::new();
        if !self.namespaces {
            gaps.push((
                "no user namespaces here: untrusted code keeps the network (UDP and DNS out, \
                 and TCP without Landlock 4+), can connect to any Unix socket it can name, and \
                 processes it leaves are found only by their environment",
                "ユーザー名前空間が使えません: 信頼できないコードがネットワーク (UDP と DNS、\
                 Landlock 4 未満なら TCP も) と、名前の分かる Unix ソケットに届き、残したプロセスは\
                 環境変数でしか見つけられません",
            ));
        }
        match self.landlock {
            None if !self.namespaces => gaps.push((
                "no Landlock here: untrusted code can read and write every file fencelab's \
                 user can (other submissions, the cache, home)",
                "Landlock が使えません: 信頼できないコードが fencelab のユーザーの読み書きできる\
                 すべてのファイル (他の提出物、キャッシュ、ホーム) を読み書きできます",
            )),
            None => gaps.push((
                "no Landlock here: untrusted code may write in the system directories it is \
                 shown, wherever fencelab's user may",
                "Landlock が使えません: 信頼できないコードが、見えているシステムのディレクトリに\
                 fencelab のユーザーと同じだけ書き込めます",
            )),
            Some(abi) if abi < 6 && !self.namespaces => gaps.push((
                "Landlock before ABI 6 here: untrusted code can signal other processes of \
                 fencelab's user",
                "Landlock の ABI が 6 未満です: 信頼できないコードが fencelab のユーザーの\
                 ほかのプロセスにシグナルを送れます",
            )),
            _ => {}
        }
        if !self.memory {
            gaps.push((
                "memory across a trial's processes: not bounded (no writable memory cgroup)",
                "試行のプロセス全体のメモリ: 上限なし (書き込めるメモリ cgroup がありません)",
            ));
        }
        if !self.space {
            gaps.push((
                "total space per trial: not bounded (no user or mount namespaces), only 256 \
                 MiB per file",
                "試行ごとの書き込みの合計: 上限なし (ユーザー名前空間もマウント名前空間も\
                 使えません)、1 ファイル 256 MiB まで",
            ));
        }
        gaps
    }
}

/// Whether a child, as root, can make a mount namespace (where user
/// namespaces are refused): for a trial's `Space`.
fn mount_namespace_works() -> bool {
    // SAFETY: the child makes only system calls, then exits.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return false;
        }
        if pid == 0 {
            libc::_exit(if libc::unshare(libc::CLONE_NEWNS) == 0 {
                0
            } else {
                1
            });
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0) == pid
            && libc::WIFEXITED(status)
            && libc::WEXITSTATUS(status) == 0
    }
}

/// Whether a child can make user, mount, network and IPC namespaces and map
/// itself in (a fork that tries, then exits).
fn namespaces_work() -> bool {
    let maps = Maps::of_this_process();
    // SAFETY: the child makes only system calls, then exits.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return false;
        }
        if pid == 0 {
            let ok = enter_namespaces(&maps, true).is_ok_and(|made| made)
                && libc::mount(
                    c"none".as_ptr(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) == 0;
            libc::_exit(if ok { 0 } else { 1 });
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0) == pid
            && libc::WIFEXITED(status)
            && libc::WEXITSTATUS(status) == 0
    }
}

/// The user and group maps a child writes for itself in its new user
/// namespace: fencelab's own ids, or 65534 (nobody) in place of root.
struct Maps {
    uid: CString,
    gid: CString,
}

impl Maps {
    fn of_this_process() -> Maps {
        // SAFETY: plain queries.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let inside = |id: u32| if id == 0 { 65534 } else { id };
        Maps {
            uid: CString::new(format!("{} {uid} 1", inside(uid))).expect("no NUL"),
            gid: CString::new(format!("{} {gid} 1", inside(gid))).expect("no NUL"),
        }
    }
}

/// Unshares the namespaces (a network namespace too when `own_net`) and
/// writes the maps; false when the kernel refuses unprivileged user
/// namespaces. Child side: system calls only.
unsafe fn enter_namespaces(maps: &Maps, own_net: bool) -> std::io::Result<bool> {
    unsafe {
        let mut flags =
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWPID;
        if own_net {
            flags |= libc::CLONE_NEWNET;
        }
        // The judge makes itself not dumpable (client.rs), and a fork keeps
        // that; a process that is not dumpable has its /proc/self files owned
        // by root, so a user other than root could not write its own maps
        // (EACCES: no cage started for anyone running fencelab unprivileged).
        // This child's memory is a copy of the judge's only until its exec,
        // and the namespaces' init makes itself not dumpable again.
        libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
        if libc::unshare(flags) != 0 {
            let err = std::io::Error::last_os_error();
            let refused = [
                libc::EPERM,
                libc::EINVAL,
                libc::ENOSPC,
                libc::EUSERS,
                libc::ENOSYS,
            ];
            return match err.raw_os_error() {
                Some(e) if refused.contains(&e) => Ok(false),
                _ => Err(err),
            };
        }
        write_file(c"/proc/self/setgroups", c"deny")?;
        write_file(c"/proc/self/uid_map", &maps.uid)?;
        write_file(c"/proc/self/gid_map", &maps.gid)?;
        Ok(true)
    }
}

unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> std::io::Result<()> {
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// What the child does to enter a cage, prepared by the parent: C strings and
/// descriptor numbers only, so that the child allocates nothing.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The new root, when namespaces are there.
    root: Option<Root>,
    /// The Landlock ruleset's descriptor, when the kernel has Landlock.
    ruleset: Option<RawFd>,
    /// The `cgroup.procs` of the cage's `Memory`, when it has one.
    cgroup: Option<RawFd>,
    /// The program the cage's last process executes itself, when the caller
    /// knows it (`Cage::executing`): then the init and the program are
    /// clones sharing the watcher's memory, not forks of it (`enter_root`).
    exec: Option<Exec>,
}

impl Plan {
    /// Whether entering it makes namespaces, and so processes: the
    /// process that enters it stays as the cage's watcher (`enter_root`).
    pub(crate) fn has_namespaces(&self) -> bool {
        self.root.is_some()
    }
}

/// A program and its command line and environment, as `execve` takes them,
/// prepared by the parent (`Cage::executing`, and the engine's clones).
pub(crate) struct Exec {
    program: CString,
    _strings: Vec<CString>,
    /// Pointers into `program` and `_strings`, each list ended by a null.
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

// SAFETY: the pointers point into the strings `Exec` owns, which are never
// changed nor moved (a `CString`'s bytes live on the heap); they are only read.
unsafe impl Send for Exec {}
// SAFETY: as above: nothing writes through them.
unsafe impl Sync for Exec {}

impl std::fmt::Debug for Exec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Exec({:?}, {} arguments)",
            self.program,
            self.argv.len() - 1
        )
    }
}

impl Exec {
    /// The program's path, its arguments and its environment, each list
    /// ended by a null: valid while this lives.
    pub(crate) fn pointers(
        &self,
    ) -> (
        *const libc::c_char,
        *const *const libc::c_char,
        *const *const libc::c_char,
    ) {
        (
            self.program.as_ptr(),
            self.argv.as_ptr(),
            self.envp.as_ptr(),
        )
    }

    /// `program` run with `args` after it and exactly `env`; None where
    /// one of them holds a NUL byte.
    pub(crate) fn new(
        program: &Path,
        args: &[&std::ffi::OsStr],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Option<Exec> {
        let program = CString::new(program.as_os_str().as_bytes()).ok()?;
        let mut strings = Vec::new();
        for arg in args {
            strings.push(CString::new(arg.as_bytes()).ok()?);
        }
        for (key, value) in env {
            let mut pair = key.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            strings.push(CString::new(pair).ok()?);
        }
        let (args_in, env_in) = strings.split_at(args.len());
        let mut argv = vec![program.as_ptr()];
        argv.extend(args_in.iter().map(|a| a.as_ptr()));
        argv.push(std::ptr::null());
        let mut envp: Vec<_> = env_in.iter().map(|e| e.as_ptr()).collect();
        envp.push(std::ptr::null());
        Some(Exec {
            program,
            _strings: strings,
            argv,
            envp,
        })
    }
}

/// A mount namespace's new root: a tmpfs mounted on a directory in the
/// trial's (`stage`, so that it hides nothing that is bound), the places the
/// code may see bound into it at their own paths, then made the root.
#[derive(Debug)]
struct Root {
    maps: Maps,
    /// Whether the cage makes a network namespace of its own: not where it
    /// starts in a closed one (a `Net`) and Landlock keeps abstract sockets
    /// in (`shares_net`).
    own_net: bool,
    stage: CString,
    /// The trial's directory, where the code starts.
    work: CString,
    /// Directories to create in the stage (relative, parents first).
    dirs: Vec<CString>,
    /// Empty files to create in the stage, to bind files over.
    files: Vec<CString>,
    /// Symbolic links to create: (its text, where).
    links: Vec<(CString, CString)>,
    /// Bind mounts: (the source, where in the stage, whether recursive). By
    /// path: a descriptor opened in the parent's mount namespace cannot be
    /// bound from in the child's.
    binds: Vec<(CString, CString, libc::c_ulong)>,
    /// Where `/proc` goes in the stage, when it is shown: a fresh one of the
    /// cage's PID namespace (or, where the kernel refuses to mount one, the
    /// machine's, bound).
    proc: Option<CString>,
    /// The command line's and the environment's bytes in this process's
    /// memory (from `/proc/self/stat`): the cage's init, a fork that never
    /// executes anything, wipes them, so that its `/proc/1/cmdline` says
    /// nothing of fencelab's.
    scrub: [(usize, usize); 2],
}

impl std::fmt::Debug for Maps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Maps({:?}, {:?})", self.uid, self.gid)
    }
}

/// A prepared cage: what the child enters, and the descriptors it refers to,
/// held open by the parent until the child has started.
pub(crate) struct Cage {
    plan: Arc<Plan>,
    _ruleset: Option<OwnedFd>,
    _sources: Vec<OwnedFd>,
}

/// What a place in the cage is.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// Read and executed (the system's, the program).
    System,
    /// Read, written, everything (the trial's directory).
    Trial,
    /// Read and written, a single file (a device, a socket).
    Device,
    /// Bound into the new root, with no Landlock right at all (/proc).
    Shown,
}

impl Cage {
    /// A cage for `program`, whose only writable place is `writable` (and
    /// /dev/null), which sees nothing of the machine but the system's
    /// programs and libraries, `program`, `writable` and `also` (a socket to
    /// connect to, say).
    #[cfg(test)] // the engine's cages read: `reading`, `new_reading`
    pub(crate) fn new(writable: &Path, program: &Path, also: &[&Path]) -> Cage {
        Cage::build(writable, program, also, &[], true)
    }

    /// The cage of `new`, which also reads (and executes) beneath `reads`:
    /// a Python server's interpreter, its standard library and the one
    /// module it serves.
    pub(crate) fn reading(writable: &Path, program: &Path, reads: &[PathBuf]) -> Cage {
        Cage::build(writable, program, &[], reads, true)
    }

    /// The cage of fencelab's own code run beside untrusted code (the
    /// implementations a learner's tests are judged against): Landlock and
    /// the limits, no namespaces (they cost about 5 ms a process, and this
    /// code neither reads nor sends anything it is not asked to).
    #[cfg(test)] // fencelab's own servers are caged by `trusted_reading`
    pub(crate) fn trusted(writable: &Path, program: &Path) -> Cage {
        Cage::build(writable, program, &[], &[], false)
    }

    /// The cage of `trusted`, which also reads beneath `reads` (a Python
    /// server's interpreter and the one module it serves).
    pub(crate) fn trusted_reading(writable: &Path, program: &Path, reads: &[PathBuf]) -> Cage {
        Cage::build(writable, program, &[], reads, false)
    }

    /// The cage of `new`, which also reads beneath `reads`: a learner's
    /// Python tests' interpreter and their judge's own directory.
    pub(crate) fn new_reading(
        writable: &Path,
        program: &Path,
        also: &[&Path],
        reads: &[PathBuf],
    ) -> Cage {
        Cage::build(writable, program, also, reads, true)
    }

    /// This cage, for a child that joins the trial's `space` first (its
    /// writable place is then the space's tmpfs): Landlock's rules hold for
    /// inodes, and it skips the directory a tmpfs is mounted on, so the
    /// tmpfs's own root gets the trial's rights.
    pub(crate) fn within(mut self, space: Option<&Space>) -> Cage {
        if space.is_some_and(|s| s.join.net.is_some()) && scopes_abstract_sockets() {
            let plan = Arc::get_mut(&mut self.plan).expect("within before it is shared");
            if let Some(root) = &mut plan.root {
                root.own_net = false;
            }
        }
        if let Some(space) = space
            && let Ok(root) = space.root.try_clone()
            && let Some(ruleset) = &self._ruleset
        {
            let access = handled_fs(available().unwrap_or(1));
            if allow(ruleset, &root, access).is_some() {
                self._sources.push(root);
            }
        }
        self
    }

    /// This cage, with every process of it in `memory` (see `Memory`),
    /// which the caller keeps until the child has started, and removes once
    /// the cage's processes are gone.
    pub(crate) fn bounded(mut self, memory: Option<&Memory>) -> Cage {
        if let Some(memory) = memory {
            let plan = Arc::get_mut(&mut self.plan).expect("bounded before it is shared");
            plan.cgroup = Some(memory.procs.as_raw_fd());
        }
        self
    }

    /// This cage, for a child that ends in executing `program` (an absolute
    /// path) with `args` after it and exactly `env`, as its caller's `execve`
    /// would: `enter_serving` then executes it itself, from a clone, where
    /// the cage has a PID namespace (see `enter_root`), and returns as
    /// before where it has none. Only for `enter_serving`'s callers that go
    /// on to execute that very program.
    pub(crate) fn executing(
        mut self,
        program: &Path,
        args: &[&std::ffi::OsStr],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Cage {
        if program.is_absolute() {
            let plan = Arc::get_mut(&mut self.plan).expect("executing before it is shared");
            plan.exec = Exec::new(program, args, env);
        }
        self
    }

    fn build(
        writable: &Path,
        program: &Path,
        also: &[&Path],
        reads: &[PathBuf],
        namespaces: bool,
    ) -> Cage {
        let mut places: Vec<(PathBuf, Place)> = Vec::new();
        for dir in SYSTEM {
            places.push((PathBuf::from(dir), Place::System));
        }
        for file in SYSTEM_FILES {
            let place = if file.starts_with("/dev/") {
                Place::Device
            } else {
                Place::System
            };
            places.push((PathBuf::from(file), place));
        }
        places.push((absolute(program), Place::System));
        for read in reads {
            places.push((absolute(read), Place::System));
        }
        for extra in also {
            places.push((absolute(extra), Place::Device));
        }
        let writable = absolute(writable);
        places.push((writable.clone(), Place::Trial));
        // The places that exist, each opened once (O_PATH: not read).
        let mut opened: Vec<(PathBuf, Place, Option<OwnedFd>, Option<PathBuf>)> = Vec::new();
        for (path, place) in places {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() && SYSTEM.contains(&path.to_str().unwrap_or("")) {
                let text = std::fs::read_link(&path).ok();
                opened.push((path.clone(), place, open_path(&path), text));
            } else if let Some(fd) = open_path(&path) {
                opened.push((path, place, Some(fd), None));
            }
        }
        let ruleset = available().and_then(|abi| ruleset(abi, &opened));
        // /proc is there for what needs /proc/self/exe (a test that runs its
        // own binary again, `std::env::current_exe`), but only under
        // Landlock, which gives no right to read anything in it, and keeps
        // the links of other processes (`cwd`, `exe`, `fd`) out of reach, as
        // it refuses to trace them. Without Landlock there is no /proc.
        if ruleset.is_some() {
            opened.push((PathBuf::from("/proc"), Place::Shown, None, None));
        }
        // Namespaces are not probed here (a fork, 5 ms: once per judge, so
        // once per trial): the child tries them, and goes on without them
        // where the kernel refuses (`enter_root`).
        let root = namespaces.then(|| root_plan(&writable, &opened)).flatten();
        Cage {
            plan: Arc::new(Plan {
                root,
                ruleset: ruleset.as_ref().map(AsRawFd::as_raw_fd),
                cgroup: None,
                exec: None,
            }),
            _ruleset: ruleset,
            _sources: opened.into_iter().filter_map(|(_, _, fd, _)| fd).collect(),
        }
    }

    /// What the child enters (see `enter`).
    pub(crate) fn plan(&self) -> Arc<Plan> {
        self.plan.clone()
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn open_path(path: &Path) -> Option<OwnedFd> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid C string; O_PATH opens without reading.
    let fd = unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    // SAFETY: the descriptor was just opened, and is ours.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The new root: every opened place bound at its own path in the stage.
fn root_plan(
    writable: &Path,
    opened: &[(PathBuf, Place, Option<OwnedFd>, Option<PathBuf>)],
) -> Option<Root> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files = Vec::new();
    let mut links = Vec::new();
    let mut binds = Vec::new();
    let mut proc = None;
    let make_dir = |dir: &Path, dirs: &mut Vec<PathBuf>| {
        for ancestor in dir.ancestors().collect::<Vec<_>>().into_iter().rev() {
            let rel = ancestor.strip_prefix("/").unwrap_or(ancestor);
            if !rel.as_os_str().is_empty() && !dirs.iter().any(|d| d == rel) {
                dirs.push(rel.to_path_buf());
            }
        }
    };
    for (path, place, fd, link) in opened {
        let rel = path.strip_prefix("/").unwrap_or(path);
        if let Some(parent) = path.parent() {
            make_dir(parent, &mut dirs);
        }
        if let Some(text) = link {
            links.push((c(text)?, c(rel)?));
            continue;
        }
        if *place == Place::Shown {
            make_dir(path, &mut dirs);
            proc = Some(c(rel)?);
            continue;
        }
        if fd.is_none() {
            continue;
        }
        if path.is_dir() {
            make_dir(path, &mut dirs);
        } else {
            files.push(c(rel)?);
        }
        // Not the trial's directory's own submounts: the stage is one.
        let recursive = if path == writable { 0 } else { libc::MS_REC };
        binds.push((c(path)?, c(rel)?, recursive));
    }
    Some(Root {
        maps: Maps::of_this_process(),
        own_net: !(closed_network() && scopes_abstract_sockets()),
        stage: c(&writable.join(STAGE))?,
        work: c(writable)?,
        dirs: dirs.iter().map(|d| c(d)).collect::<Option<_>>()?,
        files,
        links,
        binds,
        proc,
        scrub: arguments_and_environment(),
    })
}

/// Where this process's command line and environment lie in its memory
/// (fields 48 to 51 of `/proc/self/stat`); nothing where it cannot tell.
fn arguments_and_environment() -> [(usize, usize); 2] {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // Field 3 (the state) is the first after the name.
    let at = |n: usize| fields.get(n - 3).and_then(|f| f.parse().ok()).unwrap_or(0);
    let range = |start: usize, end: usize| if start < end { (start, end) } else { (0, 0) };
    [range(at(48), at(49)), range(at(50), at(51))]
}

/// Enters the cage `plan` (from `Cage::plan`). Meant for the child between
/// fork and exec: it only makes system calls. Where the cage has a PID
/// namespace, this process stays outside as its watcher and never returns
/// (see `watch`); the program runs in a grandchild. When `left` is given, a
/// byte is written to it if the program left processes running when it
/// ended (they were killed with the namespace).
///
/// # Safety
/// Call only from a `pre_exec` hook, while the `Cage` is alive in the parent.
pub(crate) unsafe fn enter(plan: &Plan, left: Option<RawFd>) -> std::io::Result<()> {
    unsafe {
        join_memory(plan.cgroup)?;
        limit();
        if let Some(root) = &plan.root {
            // Where the plan knows the program (`Cage::executing`), it is
            // executed from here, by clones (see `start_cloned`).
            let serve = plan.exec.as_ref().map(|exec| Serve {
                exec,
                listener: None,
                ruleset: plan.ruleset,
            });
            enter_root(root, left, serve, false)?;
        }
        restrict(plan.ruleset)
    }
}

/// Makes `listener` the server's listening socket (`server::LISTENER_FD`) and
/// enters the cage `plan`, keeping the ruleset out of the way when it
/// happens to sit at that very descriptor. Where the plan knows the program
/// (`Cage::executing`) and the cage has a PID namespace, the program is
/// executed from here and this returns only an error.
///
/// # Safety
/// As `enter`: only from a `pre_exec` hook, while the `Cage` is alive.
pub(crate) unsafe fn enter_serving(listener: RawFd, plan: &Plan) -> std::io::Result<()> {
    unsafe {
        join_memory(plan.cgroup)?;
        limit();
        // First, while the descriptors of the places are where they were.
        if let Some(root) = &plan.root {
            let serve = plan.exec.as_ref().map(|exec| Serve {
                exec,
                listener: Some(listener),
                ruleset: plan.ruleset,
            });
            // A server not executed from here goes on with this memory (a
            // Python server forked per trial): `start_forked`.
            enter_root(root, None, serve, true)?;
        }
        serve_from(listener, plan.ruleset)
    }
}

/// The end of `enter_serving`, in the program's own process: the listening
/// socket at `server::LISTENER_FD`, then no new privileges and the ruleset.
unsafe fn serve_from(listener: RawFd, ruleset: Option<RawFd>) -> std::io::Result<()> {
    let target = super::server::LISTENER_FD;
    let mut ruleset_fd = ruleset;
    unsafe {
        if ruleset_fd == Some(target) && listener != target {
            let moved = libc::fcntl(target, libc::F_DUPFD_CLOEXEC, target + 1);
            if moved < 0 {
                return Err(std::io::Error::last_os_error());
            }
            ruleset_fd = Some(moved);
        }
        let ok = if listener == target {
            libc::fcntl(listener, libc::F_SETFD, 0) != -1
        } else {
            libc::dup2(listener, target) != -1
        };
        if !ok {
            return Err(std::io::Error::last_os_error());
        }
        restrict(ruleset_fd)
    }
}

/// What the program's process of a cage does last, when it executes the
/// program itself (`Cage::executing`): `serve_from` (a server's cage:
/// `enter_serving`) or `restrict` alone (`enter`), then `exec`.
#[derive(Clone, Copy)]
struct Serve<'a> {
    exec: &'a Exec,
    listener: Option<RawFd>,
    ruleset: Option<RawFd>,
}

/// Puts this process (the watcher, before anything untrusted runs; all it
/// starts inherits it) in the cage's memory cgroup.
unsafe fn join_memory(cgroup: Option<RawFd>) -> std::io::Result<()> {
    let Some(fd) = cgroup else { return Ok(()) };
    // SAFETY: writes a byte of ours ("0": the writer itself).
    if unsafe { libc::write(fd, c"0".as_ptr().cast(), 1) } != 1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The limits every caged process gets; each also dies with its parent.
unsafe fn limit() {
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        let set = |resource, value: u64| {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            libc::setrlimit(resource, &limit);
        };
        set(libc::RLIMIT_CORE, 0);
        set(libc::RLIMIT_AS, ADDRESS_SPACE);
        set(libc::RLIMIT_NPROC, PROCESSES);
    }
}

/// No new privileges, the Landlock ruleset, then no capability at all.
unsafe fn restrict(ruleset: Option<RawFd>) -> std::io::Result<()> {
    unsafe {
        // Again: a change of credentials (a new user namespace) may clear it.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some(fd) = ruleset
            && libc::syscall(SYS_RESTRICT_SELF, fd, 0u32) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        drop_capabilities()
    }
}

/// Gives up every capability: the creator of a user namespace holds them
/// all in it, and a program that is not executed (a Python server forked
/// per trial) keeps them, where an executed one loses them.
unsafe fn drop_capabilities() -> std::io::Result<()> {
    const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    unsafe {
        // The bounding set first: dropping it needs CAP_SETPCAP. A number
        // past the kernel's last capability is refused, and harmless.
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let mut header = Header {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let none = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &raw mut header, none.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The namespaces, then the new root. Child side: system calls only.
///
/// Three processes: this one stays outside the new PID namespace and
/// watches (`watch`); its child is the namespace's init (`init`), which
/// builds the root and starts the program, the grandchild, which returns
/// from here to execute it. When the init ends, the kernel kills whatever
/// else is in the namespace, so nothing the program started outlives it.
/// Where the program is executed from here (`serve`), the init and the
/// program share this process's memory until it executes
/// (`start_cloned`); where it is a server that is not (`forked`: a Python
/// server forked per trial, which goes on with the memory it has), the init
/// shares it and the program is this process's fork (`start_forked`): two
/// copies of it a cage, not three. (Its parent is then this process, the
/// watcher, outside its namespace: `getppid()` says 0 there, where it says
/// 1 in the others.)
unsafe fn enter_root(
    root: &Root,
    left: Option<RawFd>,
    serve: Option<Serve<'_>>,
    forked: bool,
) -> std::io::Result<()> {
    let check = |result: libc::c_int| {
        if result == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    unsafe {
        if !enter_namespaces(&root.maps, root.own_net)? {
            // Where the kernel has no unprivileged user namespaces, the other
            // layers hold alone (fencelab said so at the start of the run).
            return Ok(());
        }
        // The init tells the watcher how the program ended.
        let mut report = [0; 2];
        check(libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC))?;
        if let Some(serve) = serve {
            return start_cloned(root, report, left, serve);
        }
        if forked {
            return start_forked(root, report, left);
        }
        let init_pid = libc::fork();
        if init_pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if init_pid > 0 {
            watch(init_pid, report[0], left);
        }
        // The init: PID 1 of the new namespace, killed if the watcher dies.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close(report[0]);
        build_root(root)?;
        let program = libc::fork();
        if program < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if program == 0 {
            // The program: on to the rest of the cage, then its own code.
            libc::close(report[1]);
            return Ok(());
        }
        init(program, report[1], &root.scrub)
    }
}

/// The init's work before the program: the new root built (a tmpfs on the
/// stage, every place bound in it, /proc), made the root, the old one gone,
/// and the trial's directory the working one. System calls only.
unsafe fn build_root(root: &Root) -> std::io::Result<()> {
    let check = |result: libc::c_int| {
        if result == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    unsafe {
        let none = std::ptr::null();
        check(libc::mount(
            c"none".as_ptr(),
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            none.cast(),
        ))?;
        if libc::mkdir(root.stage.as_ptr(), 0o700) != 0 && *libc::__errno_location() != libc::EEXIST
        {
            return Err(std::io::Error::last_os_error());
        }
        check(libc::mount(
            c"fencelab".as_ptr(),
            root.stage.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"size=64k,mode=755".as_ptr().cast(),
        ))?;
        check(libc::chdir(root.stage.as_ptr()))?;
        for dir in &root.dirs {
            if libc::mkdir(dir.as_ptr(), 0o755) != 0 && *libc::__errno_location() != libc::EEXIST {
                return Err(std::io::Error::last_os_error());
            }
        }
        for file in &root.files {
            let fd = libc::open(
                file.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            );
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::close(fd);
        }
        for (text, at) in &root.links {
            check(libc::symlink(text.as_ptr(), at.as_ptr()))?;
        }
        for (source, at, recursive) in &root.binds {
            check(libc::mount(
                source.as_ptr(),
                at.as_ptr(),
                none,
                libc::MS_BIND | recursive,
                none.cast(),
            ))?;
        }
        if let Some(proc) = &root.proc {
            // A /proc of the namespace's own (before the old root goes: the
            // kernel mounts one only where the machine's is fully visible).
            let fresh = libc::mount(
                c"proc".as_ptr(),
                proc.as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                none.cast(),
            ) == 0;
            if fresh {
                // Linux 6.14+: no more than this many processes and threads
                // in the namespace, whoever runs them (root included).
                let _ = write_file(c"proc/sys/kernel/pid_max", PIDS);
            } else {
                check(libc::mount(
                    c"/proc".as_ptr(),
                    proc.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    none.cast(),
                ))?;
            }
        }
        // The stage becomes the root; the old root goes, /proc with it.
        check(libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int)?;
        check(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
        check(libc::mount(
            c"none".as_ptr(),
            c"/".as_ptr(),
            none,
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            none.cast(),
        ))?;
        check(libc::chdir(root.work.as_ptr()))?;
        Ok(())
    }
}

/// The size of each of the two stacks of `start_cloned` (the init's, the
/// program's until it executes): what their system calls need, many times.
const CLONE_STACK: usize = 128 << 10;

/// `enter_root`'s namespaces made, the watcher (this process) starts the
/// init and the init the program as clones that share this process's
/// memory (`CLONE_VM`, each on a stack of its own), not as forks: a fork
/// copies the page tables of the judge's memory that this process is a
/// copy of, and each of the three copies faults in every page it then
/// writes and is torn down when it ends or executes. The init (PID 1)
/// builds the root; the program, a `CLONE_VFORK` clone of the init (PID 2),
/// finishes the cage (`serve_from` for a server, `restrict` for a judge's
/// cage entered by `enter`) and executes the program: from then on
/// it has memory of its own, and nothing untrusted ever runs in the shared
/// one. The init then says so (a word of 0) and reaps, as `init` does; the
/// watcher watches. The program's credentials, namespaces, limits and
/// Landlock domain are its own, as after a fork. Where the root or the
/// program cannot be started, the init says why (the errno) and ends, and
/// this returns that error, as the fork of `enter_root` would have returned
/// it to `std`'s spawn.
unsafe fn start_cloned(
    root: &Root,
    report: [RawFd; 2],
    left: Option<RawFd>,
    serve: Serve<'_>,
) -> std::io::Result<()> {
    unsafe {
        let stacks = libc::mmap(
            std::ptr::null_mut(),
            2 * CLONE_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stacks == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // The init's stack above, the program's below; each grows down from
        // its top, aligned to 16 bytes.
        let program_top = (stacks as usize + CLONE_STACK) & !15;
        let init_top = (stacks as usize + 2 * CLONE_STACK) & !15;
        let mut cloned = Cloned {
            root,
            report: report[1],
            unused: report[0],
            serve,
            program_stack: program_top,
            failed: 0,
        };
        let init_pid = libc::clone(
            init_entry,
            init_top as *mut libc::c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            (&raw mut cloned).cast(),
        );
        if init_pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The init's word: only the init holds the pipe's other end now.
        libc::close(report[1]);
        let word = read_word(report[0]);
        if word == Some(0) {
            watch(init_pid, report[0], left);
        }
        // The init has ended (or was killed) before the program started.
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        libc::close(report[0]);
        Err(std::io::Error::from_raw_os_error(
            word.unwrap_or(libc::ECHILD),
        ))
    }
}

/// `enter_root`'s namespaces made, for a program that is not executed from
/// here (it goes on with this process's memory: a Python server forked per
/// trial): the init is a clone that shares this process's memory
/// (`CLONE_VM`, on a stack of its own, system calls only), as in
/// `start_cloned`, and the program is this process's fork once the init has
/// built the root: PID 2, this process's child (not the init's), with a
/// copy of this memory as the init's fork of it would have had, where the
/// init's own copy, and its end, cost as much again. The program's working
/// directory becomes the trial's in the new root (this process's is left
/// in the old one, which the init unmounted). The watcher (this process)
/// waits for the program, tells the init it ended, and ends as the
/// program did, with the init's word on what else was still running
/// (`watch_forked`). Returns in the program only (to be executed by the
/// caller, or to go on as it is).
unsafe fn start_forked(
    root: &Root,
    report: [RawFd; 2],
    left: Option<RawFd>,
) -> std::io::Result<()> {
    unsafe {
        let check = |result: libc::c_int| {
            if result == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        // The watcher's word to the init: "S" the program started, "E" it
        // ended.
        let mut telling = [0; 2];
        check(libc::pipe2(telling.as_mut_ptr(), libc::O_CLOEXEC))?;
        let stack = libc::mmap(
            std::ptr::null_mut(),
            CLONE_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut forked = Forked {
            root,
            report: report[1],
            unused: report[0],
            told: telling[0],
            telling: telling[1],
        };
        let init_pid = libc::clone(
            forked_init_entry,
            ((stack as usize + CLONE_STACK) & !15) as *mut libc::c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            (&raw mut forked).cast(),
        );
        if init_pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::close(report[1]);
        libc::close(telling[0]);
        let word = read_word(report[0]);
        let program = match word {
            Some(0) => libc::fork(),
            _ => -1,
        };
        if program == 0 {
            // The program: its working directory the trial's, in the new
            // root; nothing of the watcher's and the init's.
            libc::close(report[0]);
            libc::close(telling[1]);
            libc::munmap(stack, CLONE_STACK);
            check(libc::chdir(root.work.as_ptr()))?;
            return Ok(());
        }
        if program > 0 {
            libc::write(telling[1], b"S".as_ptr().cast(), 1);
            watch_forked(init_pid, program, [report[0], telling[1]], left);
        }
        // The init could not build the root (its errno), or the program
        // could not be forked (this process's).
        let errno = match word {
            Some(0) => *libc::__errno_location(),
            Some(errno) => errno,
            None => libc::ECHILD,
        };
        libc::kill(init_pid, libc::SIGKILL);
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        libc::close(report[0]);
        libc::close(telling[1]);
        Err(std::io::Error::from_raw_os_error(errno))
    }
}

/// Reads a word of 4 bytes (an errno, 0 for none) from `fd`: None where the
/// writer ended first.
unsafe fn read_word(fd: RawFd) -> Option<libc::c_int> {
    let mut word = [0u8; 4];
    let mut got = 0;
    unsafe {
        while got < word.len() {
            let n = libc::read(fd, word[got..].as_mut_ptr().cast(), word.len() - got);
            if n > 0 {
                got += n as usize;
            } else if !(n < 0 && *libc::__errno_location() == libc::EINTR) {
                return None;
            }
        }
    }
    Some(i32::from_ne_bytes(word))
}

/// What the init of `start_forked` reads (on the watcher's stack, in the
/// memory both share).
struct Forked<'a> {
    root: &'a Root,
    /// The init's end of the report pipe (to the watcher).
    report: RawFd,
    /// The watcher's end, closed by the init.
    unused: RawFd,
    /// The init's end of the watcher's word.
    told: RawFd,
    /// The watcher's end of it, closed by the init.
    telling: RawFd,
}

/// The init of `start_forked`: PID 1, killed if the watcher dies. Builds the
/// root, says so (a word of 0, or the errno), then reaps the namespace's
/// orphans until the watcher says the program ended. System calls only.
extern "C" fn forked_init_entry(arg: *mut libc::c_void) -> libc::c_int {
    let forked = arg.cast::<Forked>();
    // SAFETY: `arg` is the watcher's `Forked`, alive while the watcher waits
    // for this init's word (and, once the word is 0, for ever: the watcher
    // never returns); only system calls.
    unsafe {
        let report = (*forked).report;
        let told = (*forked).told;
        let say = |errno: libc::c_int| {
            libc::write(report, errno.to_ne_bytes().as_ptr().cast(), 4);
        };
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close((*forked).unused);
        libc::close((*forked).telling);
        if let Err(err) = build_root((*forked).root) {
            say(err.raw_os_error().unwrap_or(libc::EIO));
            libc::_exit(1);
        }
        // The orphans it reaps (its own signal mask: not the watcher's).
        let mut children: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut children);
        libc::sigaddset(&mut children, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &children, std::ptr::null_mut());
        let signals = libc::signalfd(-1, &children, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if signals < 0 {
            say((*libc::__errno_location()).max(1));
            libc::_exit(1);
        }
        let scrub = (*forked).root.scrub;
        say(0);
        forked_init(report, told, signals, &scrub)
    }
}

/// The rest of `start_forked`'s init, as `init`: reaps every orphan of the
/// namespace until the watcher says the program ended ("E"), waits up to
/// `LINGER` for the others to end too, and tells the watcher whether
/// others were still running, then exits, which kills them. The memory it
/// shares with the watcher is made not dumpable and its command line is
/// wiped once the program has its own copy of it ("S"): before, the
/// program would be forked not dumpable too (its judge could no longer
/// read its descriptors) and without its command line.
unsafe fn forked_init(
    report: RawFd,
    told: RawFd,
    signals: RawFd,
    scrub: &[(usize, usize); 2],
) -> ! {
    unsafe {
        close_all_but(0, &mut [report, told, signals]);
        libc::prctl(libc::PR_SET_NAME, c"init".as_ptr(), 0, 0, 0);
        loop {
            let mut polled = [
                libc::pollfd {
                    fd: told,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: signals,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            if libc::poll(polled.as_mut_ptr(), 2, -1) < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            if polled[1].revents != 0 {
                let mut info = [0u8; 128];
                while libc::read(signals, info.as_mut_ptr().cast(), info.len()) > 0 {}
                while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
            }
            if polled[0].revents != 0 {
                let mut byte = 0u8;
                let n = libc::read(told, (&raw mut byte).cast(), 1);
                if n == 1 && byte == b'S' {
                    libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
                    for &(start, end) in scrub {
                        if start != 0 && start < end {
                            std::ptr::write_bytes(start as *mut u8, 0, end - start);
                        }
                    }
                } else if !(n < 0 && *libc::__errno_location() == libc::EINTR) {
                    // "E", or the watcher is gone.
                    break;
                }
            }
        }
        let others = u8::from(others_stay(LINGER_MS));
        libc::write(report, (&raw const others).cast(), 1);
        libc::_exit(0)
    }
}

/// The watcher of `start_forked`: waits for the program, its child, tells
/// the init, then ends as the program did (as `watch`, and as it, says on
/// `left` whether others were still running). Killed, it takes the
/// namespace with it (the init's parent-death signal).
unsafe fn watch_forked(
    init_pid: libc::pid_t,
    program: libc::pid_t,
    [report, telling]: [RawFd; 2],
    left: Option<RawFd>,
) -> ! {
    unsafe {
        close_all_but(0, &mut [report, telling, left.unwrap_or(-1)]);
        // The init may be gone (killed): its end of the pipe with it.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let mut ended = 0;
        loop {
            let pid = libc::waitpid(program, &mut ended, 0);
            if pid == program {
                break;
            }
            if pid < 0 && *libc::__errno_location() != libc::EINTR {
                ended = libc::SIGKILL;
                break;
            }
        }
        libc::write(telling, b"E".as_ptr().cast(), 1);
        let mut others = 0u8;
        let got = loop {
            let n = libc::read(report, (&raw mut others).cast(), 1);
            if !(n < 0 && *libc::__errno_location() == libc::EINTR) {
                break n;
            }
        };
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        if got != 1 {
            // The init was killed before the program ended.
            die(libc::SIGKILL);
        }
        if others != 0
            && let Some(fd) = left
        {
            libc::write(fd, b"L".as_ptr().cast(), 1);
        }
        if libc::WIFEXITED(ended) {
            libc::_exit(libc::WEXITSTATUS(ended));
        }
        if libc::WIFSIGNALED(ended) {
            die(libc::WTERMSIG(ended));
        }
        die(libc::SIGKILL)
    }
}

/// What the init and the program of `start_cloned` share (on the watcher's
/// stack, in the memory all three share while the program has not executed).
struct Cloned<'a> {
    root: &'a Root,
    /// The init's end of the report pipe (to the watcher).
    report: RawFd,
    /// The watcher's end, closed by the init.
    unused: RawFd,
    serve: Serve<'a>,
    /// The top of the program's stack.
    program_stack: usize,
    /// The program's errno where it could not be executed (0: it was).
    failed: libc::c_int,
}

/// The init of `start_cloned`: PID 1, killed if the watcher dies.
extern "C" fn init_entry(arg: *mut libc::c_void) -> libc::c_int {
    let cloned = arg.cast::<Cloned>();
    // SAFETY: `arg` is the watcher's `Cloned`, alive while the watcher waits
    // for this init's word (and, once the word is 0, for ever: the watcher
    // never returns); only system calls, on what the parent prepared.
    unsafe {
        let report = (*cloned).report;
        let say = |errno: libc::c_int| {
            libc::write(report, errno.to_ne_bytes().as_ptr().cast(), 4);
        };
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close((*cloned).unused);
        if let Err(err) = build_root((*cloned).root) {
            say(err.raw_os_error().unwrap_or(libc::EIO));
            libc::_exit(1);
        }
        // Suspended until the program has executed (or ended): its stack
        // and what it reads stay as they are meanwhile.
        let program = libc::clone(
            program_entry,
            (*cloned).program_stack as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            arg,
        );
        if program < 0 {
            say((*libc::__errno_location()).max(1));
            libc::_exit(1);
        }
        let failed = std::ptr::read_volatile(&raw const (*cloned).failed);
        if failed != 0 {
            // Its zombie goes with this namespace.
            say(failed);
            libc::_exit(1);
        }
        say(0);
        init(program, report, &(*cloned).root.scrub)
    }
}

/// The program of `start_cloned`: the rest of the cage, then its program.
extern "C" fn program_entry(arg: *mut libc::c_void) -> libc::c_int {
    let cloned = arg.cast::<Cloned>();
    // SAFETY: as `init_entry`'s, whose clone this is (its parent suspended
    // until this executes or ends, CLONE_VFORK); only system calls.
    unsafe {
        libc::close((*cloned).report);
        let serve = (*cloned).serve;
        let entered = match serve.listener {
            Some(listener) => serve_from(listener, serve.ruleset),
            None => restrict(serve.ruleset),
        };
        let errno = match entered {
            Ok(()) => {
                libc::execve(
                    serve.exec.program.as_ptr(),
                    serve.exec.argv.as_ptr(),
                    serve.exec.envp.as_ptr(),
                );
                *libc::__errno_location()
            }
            Err(err) => err.raw_os_error().unwrap_or(libc::EIO),
        };
        std::ptr::write_volatile(&raw mut (*cloned).failed, errno.max(1));
        libc::_exit(127)
    }
}

/// The PID namespace's init: reaps every process of the namespace until the
/// program ends, waits up to `LINGER` for the others to end too, tells the
/// watcher how the program ended and whether others were still running,
/// then exits, which kills them. Whatever is left dies with the namespace,
/// however it hid: double-forked, in a session of its own, its environment
/// cleared. Runs no code but system calls.
unsafe fn init(program: libc::pid_t, report: RawFd, scrub: &[(usize, usize); 2]) -> ! {
    unsafe {
        keep_only(report, -1);
        // Nothing of fencelab's in /proc/1: not its memory, descriptors or
        // environment (not dumpable), not its command line (wiped).
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_SET_NAME, c"init".as_ptr(), 0, 0, 0);
        for &(start, end) in scrub {
            if start != 0 && start < end {
                std::ptr::write_bytes(start as *mut u8, 0, end - start);
            }
        }
        let mut ended = libc::SIGKILL;
        loop {
            let mut status = 0;
            let pid = libc::waitpid(-1, &mut status, 0);
            if pid == program {
                ended = status;
                break;
            }
            if pid < 0 && *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        let mut message = [0u8; 5];
        message[..4].copy_from_slice(&ended.to_ne_bytes());
        message[4] = u8::from(others_stay(LINGER_MS));
        libc::write(report, message.as_ptr().cast(), message.len());
        libc::_exit(0)
    }
}

/// How long the other processes of a namespace may outlive its program
/// before they count as left behind (as `engine::process` waits for a group).
const LINGER_MS: i64 = 300;

/// Whether the init still has a live child after `ms` milliseconds of
/// reaping (every live process of the namespace descends from one).
unsafe fn others_stay(ms: i64) -> bool {
    unsafe {
        let now = || {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
            t.tv_sec * 1000 + t.tv_nsec / 1_000_000
        };
        let deadline = now() + ms;
        let mut pause_us = 100;
        loop {
            let reaped = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG);
            if reaped > 0 {
                continue;
            }
            if reaped < 0 {
                // No child at all: nothing is left.
                return false;
            }
            if now() >= deadline {
                return true;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: pause_us * 1000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
            pause_us = (pause_us * 2).min(10_000);
        }
    }
}

/// The watcher: the process fencelab started, outside the PID namespace. It
/// waits for the init's word, then ends as the program did (the same exit
/// status, or killed by the same signal), so that fencelab's verdicts see the
/// program's own end. Killed (a timeout, a flood, fencelab's death), it takes
/// the namespace with it (the init's parent-death signal).
unsafe fn watch(init_pid: libc::pid_t, report: RawFd, left: Option<RawFd>) -> ! {
    unsafe {
        keep_only(report, left.unwrap_or(-1));
        let mut message = [0u8; 5];
        let mut got = 0;
        while got < message.len() {
            let n = libc::read(
                report,
                message[got..].as_mut_ptr().cast(),
                message.len() - got,
            );
            if n > 0 {
                got += n as usize;
            } else if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            } else {
                break;
            }
        }
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        if got < message.len() {
            // The init was killed before the program ended.
            die(libc::SIGKILL);
        }
        if message[4] != 0
            && let Some(fd) = left
        {
            libc::write(fd, b"L".as_ptr().cast(), 1);
        }
        let ended = i32::from_ne_bytes([message[0], message[1], message[2], message[3]]);
        if libc::WIFEXITED(ended) {
            libc::_exit(libc::WEXITSTATUS(ended));
        }
        if libc::WIFSIGNALED(ended) {
            die(libc::WTERMSIG(ended));
        }
        die(libc::SIGKILL)
    }
}

/// Ends this process by `signal`, with its default action.
unsafe fn die(signal: libc::c_int) -> ! {
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(signal, &action, std::ptr::null_mut());
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
    }
}

/// Closes every descriptor but `a` and `b` (-1: none), the standard ones
/// too: what the watcher and the init hold open would keep a pipe of the
/// program's (its output, std's report of a failed exec) from ending.
unsafe fn keep_only(a: RawFd, b: RawFd) {
    unsafe { close_all_but(0, &mut [a, b]) }
}

/// Closes every descriptor from `first` on but those in `keep` (which it
/// sorts; below `first` or negative: ignored). System calls only: safe
/// between fork and exec.
pub(crate) unsafe fn close_all_but(first: RawFd, keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut from = first.max(0) as libc::c_uint;
    unsafe {
        for &fd in keep.iter() {
            if fd < 0 || (fd as libc::c_uint) < from {
                continue;
            }
            if fd as libc::c_uint > from {
                close_range(from, fd as libc::c_uint - 1);
            }
            from = fd as libc::c_uint + 1;
        }
        close_range(from, libc::c_uint::MAX);
    }
}

unsafe fn close_range(first: libc::c_uint, last: libc::c_uint) {
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, last, 0) != 0 {
            // Before Linux 5.9: one by one, as far as descriptors go here.
            for fd in first..=last.min(first.max(4096)) {
                libc::close(fd as libc::c_int);
            }
        }
    }
}

/// Kills the cage whose watcher is `watcher` (a child of this process's),
/// so that waiting for the watcher then waits for everything in the cage to
/// be gone: its init gets SIGKILL (the kernel kills the rest of the
/// namespace, then the watcher ends). Where there is no init, the watcher
/// itself is the program: it gets SIGKILL. True if the cage had a PID
/// namespace of its own: then nothing the program started is anywhere else.
pub(crate) fn kill_cage(watcher: libc::pid_t) -> bool {
    let init = std::fs::read_to_string(format!("/proc/{watcher}/task/{watcher}/children"))
        .ok()
        .and_then(|list| list.split_whitespace().next()?.parse::<libc::pid_t>().ok())
        .filter(|&child| in_a_pid_namespace_of_its_own(child));
    // SAFETY: signals to our own child, or to its only child.
    unsafe {
        libc::kill(init.unwrap_or(watcher), libc::SIGKILL);
    }
    init.is_some()
}

/// Whether `pid` is in a PID namespace nested in this process's: its
/// `NSpid` names more than one pid (false when it cannot be read: the caller
/// then looks further). Its status, not its `ns/pid` link: the init makes
/// itself not dumpable, and a user other than root may not read the link
/// of a process that is not dumpable.
fn in_a_pid_namespace_of_its_own(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("NSpid:"))
            .is_some_and(|pids| pids.split_whitespace().count() > 1)
    })
}

/// How many live processes a cage whose watcher is `watcher` holds besides
/// its init and its program (found by descent, from /proc): what the program
/// started and has not ended. For a process the cage is about to kill; 0
/// where it has no PID namespace.
///
/// The descent reads each thread's children one file at a time, and a
/// thread that ends meanwhile (a server answers each call on a thread of its
/// own) hands its children to another thread of its process: read before
/// the move on the one and after it on the other, they are in neither list.
/// A thread ends once, so of two descents one after the other at least one
/// sees every child of such a thread; the larger count is the answer.
pub(crate) fn others_in_cage(watcher: libc::pid_t) -> usize {
    descend_the_cage(watcher).max(descend_the_cage(watcher))
}

/// One descent of [`others_in_cage`].
fn descend_the_cage(watcher: libc::pid_t) -> usize {
    // The children of every thread of a process.
    let children = |pid: libc::pid_t| -> Vec<libc::pid_t> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten();
        tasks
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|list| {
                list.split_whitespace()
                    .filter_map(|n| n.parse().ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let mut family = children(watcher);
    let mut others = 0;
    let mut at = 0;
    while at < family.len() {
        let pid = family[at];
        at += 1;
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name));
        let alive = field("State:").is_some_and(|s| !s.trim().starts_with(['Z', 'X']));
        // Its pid in the innermost namespace, when that is not ours.
        let nested: Vec<i64> = field("NSpid:")
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        if alive && nested.len() > 1 && nested[nested.len() - 1] > 2 {
            others += 1;
        }
        for child in children(pid) {
            if !family.contains(&child) {
                family.push(child);
            }
        }
    }
    others
}

fn ruleset(
    abi: i32,
    opened: &[(PathBuf, Place, Option<OwnedFd>, Option<PathBuf>)],
) -> Option<OwnedFd> {
    let fs = handled_fs(abi);
    let _ = IOCTL_DEV;
    let net = if abi >= 4 {
        NET_BIND_TCP | NET_CONNECT_TCP
    } else {
        0
    };
    let scoped = if abi >= 6 {
        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    } else {
        0
    };
    let attr = RulesetAttr {
        handled_access_fs: fs,
        handled_access_net: net,
        scoped,
    };
    ruleset_with(abi, attr, opened)
}

/// The file accesses a ruleset handles (all of them: allowed only where a
/// rule says so), for the kernel's ABI.
fn handled_fs(abi: i32) -> u64 {
    let mut fs = EXECUTE
        | WRITE_FILE
        | READ_FILE
        | READ_DIR
        | REMOVE_DIR
        | REMOVE_FILE
        | MAKE_CHAR
        | MAKE_DIR
        | MAKE_REG
        | MAKE_SOCK
        | MAKE_FIFO
        | MAKE_BLOCK
        | MAKE_SYM;
    if abi >= 2 {
        fs |= REFER;
    }
    if abi >= 3 {
        fs |= TRUNCATE;
    }
    fs
}

fn ruleset_with(
    abi: i32,
    attr: RulesetAttr,
    opened: &[(PathBuf, Place, Option<OwnedFd>, Option<PathBuf>)],
) -> Option<OwnedFd> {
    let fs = attr.handled_access_fs;
    // The attribute grew with the ABI: pass only the fields this kernel knows.
    let size = match abi {
        1..=3 => 8,
        4 | 5 => 16,
        _ => std::mem::size_of::<RulesetAttr>(),
    };
    // SAFETY: a valid attribute of the size given.
    let fd = unsafe { libc::syscall(SYS_CREATE_RULESET, &attr as *const RulesetAttr, size, 0u32) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the kernel just gave us this descriptor.
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    for (path, place, fd, _) in opened {
        let Some(fd) = fd else { continue };
        let is_dir = path.is_dir();
        let access = match place {
            Place::Trial => fs,
            Place::System if is_dir => EXECUTE | READ_FILE | READ_DIR,
            Place::System => EXECUTE | READ_FILE,
            Place::Device => READ_FILE | WRITE_FILE | if abi >= 3 { TRUNCATE } else { 0 },
            Place::Shown => continue,
        };
        let added = allow(&ruleset, fd, access);
        // Without its trial directory the code could not run at all.
        if added.is_none() && *place == Place::Trial {
            return None;
        }
    }
    Some(ruleset)
}

/// Allows `access` beneath the place open at `parent`.
fn allow(ruleset: &OwnedFd, parent: &OwnedFd, access: u64) -> Option<()> {
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: a valid attribute for a path-beneath rule.
    let added = unsafe {
        libc::syscall(
            SYS_ADD_RULE,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    (added == 0).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::process::Command;

    /// Set in the environment of `attacker` when the test below runs it caged.
    const ATTACK_ENV: &str = "FENCELAB_SANDBOX_ATTACK";

    /// What caged code tries, one line each: `name ok` or `name refused`.
    /// A helper, not a test: `--ignored` alone runs it, and it does nothing
    /// unless `the_cage_holds_against_reads_network_and_sockets` started it.
    #[test]
    #[ignore = "run by the_cage_holds_against_reads_network_and_sockets"]
    fn attacker() {
        let Ok(targets) = std::env::var(ATTACK_ENV) else {
            return;
        };
        let t: Vec<&str> = targets.split('|').collect();
        let (secret, tcp, udp, socket) = (t[0], t[1], t[2], t[3]);
        let report =
            |name: &str, ok: bool| println!("ATTACK {name} {}", if ok { "ok" } else { "refused" });
        report("read-secret", std::fs::read_to_string(secret).is_ok());
        report("read-etc", std::fs::read_to_string("/etc/hostname").is_ok());
        report("list-root", std::fs::read_dir("/").is_ok());
        report("proc", std::fs::read_to_string("/proc/1/cmdline").is_ok());
        report("proc-link", std::fs::read_link("/proc/1/cwd").is_ok());
        report(
            "parent-link",
            std::fs::read_link(format!("/proc/{}/cwd", std::os::unix::process::parent_id()))
                .is_ok(),
        );
        report("current-exe", std::env::current_exe().is_ok());
        report(
            "tcp",
            std::net::TcpStream::connect_timeout(
                &tcp.parse().unwrap(),
                std::time::Duration::from_secs(2),
            )
            .is_ok(),
        );
        let udp_sent = std::net::UdpSocket::bind("127.0.0.1:0")
            .and_then(|s| s.send_to(b"leak", udp))
            .is_ok();
        report("udp", udp_sent);
        report(
            "unix",
            std::os::unix::net::UnixStream::connect(socket).is_ok(),
        );
        report(
            "write-tmp",
            std::fs::write("/tmp/fencelab-cage-probe", "x").is_ok(),
        );
        let here = std::env::current_dir().unwrap().join("mine");
        report("write-trial", std::fs::write(here, "x").is_ok());
    }

    #[test]
    fn a_test_names_the_first_layer_it_needs_that_is_missing() {
        let full = Layers {
            namespaces: true,
            landlock: Some(6),
            memory: true,
            space: true,
        };
        let all = [
            Need::Namespaces,
            Need::Landlock,
            Need::Landlock6,
            Need::Memory,
            Need::Space,
        ];
        assert_eq!(full.missing(&all), None);
        let old = Layers {
            landlock: Some(4),
            ..full
        };
        assert_eq!(old.missing(&[Need::Landlock]), None);
        assert_eq!(old.missing(&all), Some("Landlock ABI 6"));
        let bare = Layers {
            namespaces: false,
            landlock: None,
            memory: false,
            space: false,
        };
        assert_eq!(bare.missing(&all), Some("user namespaces"));
        assert_eq!(
            bare.missing(&[Need::Memory, Need::Space]),
            Some("a writable memory cgroup")
        );
    }

    /// Run by `a_required_cage_fails_a_test_whose_layer_is_missing` in a
    /// child that pretends the namespaces are missing.
    #[test]
    #[ignore = "run by a_required_cage_fails_a_test_whose_layer_is_missing"]
    fn needs_namespaces() {
        // `cargo test -- --ignored` (.ci/run step 2) runs it too: nothing
        // pretends then.
        if std::env::var_os(SIMULATE_MISSING_ENV).is_none() {
            return;
        }
        if Layers::test_needs(&[Need::Namespaces]) {
            panic!("ran, where the namespaces are said to be missing");
        }
    }

    #[test]
    fn a_required_cage_fails_a_test_whose_layer_is_missing() {
        let run = |require: &str| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "bridge::sandbox::tests::needs_namespaces"])
                .args(["--ignored", "--nocapture", "--test-threads", "1"])
                .env(SIMULATE_MISSING_ENV, "namespaces")
                .env(REQUIRE_CAGE_ENV, require)
                .output()
                .unwrap()
        };
        let skipped = run("0");
        let stderr = String::from_utf8_lossy(&skipped.stderr);
        assert!(skipped.status.success(), "{stderr}");
        assert!(
            stderr.contains("skipped: this test needs user namespaces"),
            "{stderr}"
        );
        let failed = run("1");
        let out = String::from_utf8_lossy(&failed.stderr);
        assert!(!failed.status.success(), "{out}");
        assert!(out.contains("this test needs user namespaces"), "{out}");
        assert!(out.contains("FENCELAB_REQUIRE_CAGE=1"), "{out}");
    }

    #[test]
    fn the_cage_holds_against_reads_network_and_sockets() {
        if !Layers::test_needs(&[Need::Namespaces, Need::Landlock]) {
            return;
        }
        let layers = Layers::probe();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "the other submission").unwrap();
        let socket = outside.path().join("grader.sock");
        let _unix = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let trial = tempfile::tempdir().unwrap();
        let tmp = trial.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let me = std::env::current_exe().unwrap();
        let cage = Cage::new(&tmp, &me, &[]);
        let mut command = Command::new(&me);
        command
            .args([
                "--exact",
                "bridge::sandbox::tests::attacker",
                "--ignored",
                "--nocapture",
            ])
            .current_dir(&tmp)
            .env(
                ATTACK_ENV,
                format!(
                    "{}|{}|{}|{}",
                    secret.display(),
                    tcp.local_addr().unwrap(),
                    udp.local_addr().unwrap(),
                    socket.display()
                ),
            );
        let limits = crate::engine::process::Limits {
            time: Some(std::time::Duration::from_secs(60)),
            cage: Some(cage.plan()),
            ..Default::default()
        };
        let finished = crate::engine::process::run(command, trial.path(), &limits).unwrap();
        let said = |name: &str| {
            finished
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("ATTACK {name} ")))
                .unwrap_or("missing")
                .to_string()
        };
        assert_eq!(said("write-trial"), "ok", "{finished:?}");
        if layers.landlock.is_some() {
            // /proc is there (a test may run its own binary again), but
            // nothing of another process's.
            assert_eq!(said("current-exe"), "ok", "{finished:?}");
        }
        for attack in ["proc-link", "parent-link"] {
            assert_eq!(said(attack), "refused", "{attack}: {finished:?}");
        }
        for attack in [
            "read-secret",
            "read-etc",
            "list-root",
            "proc",
            "write-tmp",
            "unix",
        ] {
            assert_eq!(said(attack), "refused", "{attack}: {finished:?}");
        }
        if layers.namespaces || layers.landlock >= Some(4) {
            assert_eq!(said("tcp"), "refused", "{finished:?}");
        }
        let mut got = [0u8; 16];
        let received = udp.recv(&mut got).is_ok();
        if layers.namespaces {
            assert!(!received, "a datagram got out");
            assert_eq!(said("udp"), "refused", "{finished:?}");
        }
        let mut leaked = String::new();
        let _ = std::fs::File::open("/tmp/fencelab-cage-probe")
            .map(|mut f| f.read_to_string(&mut leaked));
        assert!(leaked.is_empty() || !std::path::Path::new("/tmp/fencelab-cage-probe").exists());
    }
}

#[cfg(test)]
mod pid_namespace {
    use super::*;
    use crate::engine::process::{Finished, Limits, run};
    use std::process::Command;
    use std::time::{Duration, Instant};

    /// `script` run by sh in a cage whose trial directory is `trial`/tmp.
    fn caged(trial: &Path, script: &str) -> Finished {
        let tmp = trial.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let sh = &std::fs::canonicalize("/bin/sh").unwrap();
        let cage = Cage::new(&tmp, sh, &[]);
        let mut command = Command::new(sh);
        command.args(["-c", script]).current_dir(&tmp).env_clear();
        let limits = Limits {
            time: Some(Duration::from_secs(30)),
            cage: Some(cage.plan()),
            ..Default::default()
        };
        run(command, trial, &limits).unwrap()
    }

    fn live(pattern: &str) -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(pattern))
            .collect()
    }

    /// `script` started by `sh` in `cage`, once it has printed its first
    /// line (it says so when what it starts is running).
    pub(super) fn started(cage: &Cage, sh: &Path, script: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        let plan = cage.plan();
        let mut command = Command::new(sh);
        command
            .args(["-c", script])
            .stdout(std::process::Stdio::piped());
        // SAFETY: only system calls between fork and exec.
        unsafe {
            command.pre_exec(move || enter(&plan, None));
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        child
    }

    /// Set when `a_judge_that_is_not_dumpable_cages_as_a_user_other_than_root`
    /// runs the test below as another user.
    const NOT_ROOT_ENV: &str = "FENCELAB_SANDBOX_NOT_ROOT";

    /// As a judge does (client.rs): not dumpable, then a cage. Runs only when
    /// started by the test below, as a user other than root.
    #[test]
    fn cages_when_not_dumpable() {
        let Ok(trial) = std::env::var(NOT_ROOT_ENV) else {
            return;
        };
        // SAFETY: a plain prctl on this test process.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        let done = caged(Path::new(&trial), "echo $$; exit 7");
        println!(
            "CAGED {:?} {}",
            done.status.and_then(|s| s.code()),
            done.stdout.trim()
        );
        // A judge kills its server's cage by its init, which it must find
        // as this user too (the init is not dumpable: its ns links are
        // not this user's to read).
        let tmp = Path::new(&trial).join("tmp");
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        let cage = Cage::new(&tmp, &sh, &[]);
        let mut child = started(&cage, &sh, "sleep 651 & echo started; exec sleep 652");
        let namespaced = kill_cage(child.id() as libc::pid_t);
        child.wait().unwrap();
        println!(
            "KILLED namespaced={namespaced} left={}",
            live("sleep 65").len()
        );
        // The same for a server's cage whose init and program are clones
        // (`Cage::executing`): the init makes the memory it shares with
        // the watcher not dumpable, and must still be found.
        let listener = std::os::unix::net::UnixListener::bind(tmp.join("s")).unwrap();
        let script = "sleep 653 & echo started; exec sleep 654";
        let cage = Cage::new(&tmp, &sh, &[]).executing(&sh, &["-c".as_ref(), script.as_ref()], &[]);
        let mut child = started_serving(&cage, &sh, listener.as_raw_fd());
        let namespaced = kill_cage(child.id() as libc::pid_t);
        child.wait().unwrap();
        println!(
            "SERVING KILLED namespaced={namespaced} left={}",
            live("sleep 65").len()
        );
    }

    /// The program of `cage` (which executes it itself: `Cage::executing`)
    /// started as a judge starts its server, once it has printed its first
    /// line.
    fn started_serving(cage: &Cage, sh: &Path, listener: RawFd) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        let plan = cage.plan();
        let mut command = Command::new(sh);
        command
            .args(["-c", "echo std"])
            .stdout(std::process::Stdio::piped());
        // SAFETY: only system calls between fork and exec.
        unsafe {
            command.pre_exec(move || enter_serving(listener, &plan));
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line, "started\n");
        child
    }

    #[test]
    fn a_judge_that_is_not_dumpable_cages_as_a_user_other_than_root() {
        use std::os::unix::process::CommandExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root (to become another user)");
            return;
        }
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "bridge::sandbox::pid_namespace::cages_when_not_dumpable",
            ])
            .args(["--nocapture", "--test-threads", "1"])
            .env(NOT_ROOT_ENV, dir.path())
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Its own PID namespace, as for root: process 2, exit status 7.
        assert!(
            stdout.contains("CAGED Some(7) 2"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Its cage is killed by its init, and nothing of it is left.
        assert!(
            stdout.contains("KILLED namespaced=true left=0"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("SERVING KILLED namespaced=true left=0"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn the_program_ends_as_it_would_uncaged_exit_status_and_signal_alike() {
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let done = caged(dir.path(), "echo $$ $PPID; exit 7");
        // Its own PID namespace: it is process 2, under an init of ours.
        assert_eq!(done.stdout.trim(), "2 1", "{done:?}");
        assert_eq!(done.status.unwrap().code(), Some(7), "{done:?}");
        assert!(!done.left_behind);
        use std::os::unix::process::ExitStatusExt;
        let killed = caged(dir.path(), "kill -SEGV $$");
        assert_eq!(killed.status.unwrap().signal(), Some(libc::SIGSEGV));
        let aborted = caged(dir.path(), "kill -ABRT $$");
        assert_eq!(aborted.status.unwrap().signal(), Some(libc::SIGABRT));
    }

    /// `Cage::executing`: the init and the program are clones that share
    /// the watcher's memory, and the program executes what the plan says
    /// (not what `std` would have: here `echo std`), with exactly the
    /// plan's environment, as PID 2 under our init, in the cage, its end
    /// the watcher's; one that cannot be executed fails the spawn, as
    /// `std`'s own exec would. Fails if the clones' program returned to
    /// `std` (it would say "std"), or if a failed exec went unnoticed.
    #[test]
    fn a_serving_cage_executes_its_program_from_clones_as_a_fork_would() {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let sh = &std::fs::canonicalize("/bin/sh").unwrap();
        let listener = std::os::unix::net::UnixListener::bind(tmp.join("s")).unwrap();
        let serve = |program: &Path, script: &str| {
            let env = [("CAGED".into(), "yes".into())];
            let cage = Cage::new(&tmp, sh, &[]).executing(
                program,
                &["-c".as_ref(), script.as_ref()],
                &env,
            );
            let plan = cage.plan();
            let fd = listener.as_raw_fd();
            let mut command = Command::new(sh);
            command
                .args(["-c", "echo std"])
                .current_dir(&tmp)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            // SAFETY: only system calls between fork and exec.
            unsafe {
                command.pre_exec(move || enter_serving(fd, &plan));
            }
            let output = command.spawn().and_then(|c| c.wait_with_output());
            drop(cage);
            output
        };
        let done = serve(
            sh,
            "echo $$ $PPID $CAGED $(env | wc -l); cat /etc/hostname || exit 7",
        )
        .unwrap();
        let said = String::from_utf8_lossy(&done.stdout);
        // PWD, SHLVL and `_` are sh's own.
        let words: Vec<&str> = said.split_whitespace().collect();
        assert_eq!(words[..3], ["2", "1", "yes"], "{done:?}");
        assert!(words[3].parse::<u32>().unwrap() <= 4, "{done:?}");
        assert_eq!(done.status.code(), Some(7), "{done:?}");
        let killed = serve(sh, "kill -SEGV $$").unwrap();
        assert_eq!(killed.status.signal(), Some(libc::SIGSEGV), "{killed:?}");
        let missing = serve(&tmp.join("no-such-program"), "exit 0");
        assert_eq!(
            missing.as_ref().map_err(std::io::Error::raw_os_error).err(),
            Some(Some(libc::ENOENT)),
            "{missing:?}"
        );
    }

    /// A server's cage whose program is not executed from it (a Python
    /// server forked per trial goes on as it is: here `std` executes `sh`
    /// after it) is `start_forked`'s: the program is the watcher's fork,
    /// process 2 (its parent, the watcher, outside: 0), in the trial's
    /// directory, its end the watcher's; the init, which shares the
    /// watcher's memory, reaps the orphans of the namespace while the
    /// program runs, and takes what is left with it when the program ends.
    /// Fails where the program is not in the new root's trial directory,
    /// where orphans stay zombies, or where the watcher misreports.
    #[test]
    fn a_server_that_goes_on_as_it_is_is_the_watchers_fork_under_an_init_sharing_its_memory() {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let sh = &std::fs::canonicalize("/bin/sh").unwrap();
        let listener = std::os::unix::net::UnixListener::bind(tmp.join("s")).unwrap();
        let serve = |script: &str| {
            let cage = Cage::new(&tmp, sh, &[]);
            let plan = cage.plan();
            let fd = listener.as_raw_fd();
            let mut command = Command::new(sh);
            command
                .args(["-c", script])
                .current_dir("/")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            // SAFETY: only system calls between fork and exec.
            unsafe {
                command.pre_exec(move || enter_serving(fd, &plan));
            }
            let output = command.spawn().and_then(|c| c.wait_with_output()).unwrap();
            drop(cage);
            output
        };
        let done = serve("echo $$ $PPID $(pwd) $(stat -c %d:%i /); exit 7");
        let said = String::from_utf8_lossy(&done.stdout);
        // Its root the cage's (the init's pivot moved the watcher's, which
        // it inherits), not the machine's.
        use std::os::unix::fs::MetadataExt;
        let machine = std::fs::metadata("/").unwrap();
        let machines = format!("{}:{}", machine.dev(), machine.ino());
        let words: Vec<&str> = said.split_whitespace().collect();
        assert_eq!(words[..3], ["2", "0", tmp.to_str().unwrap()], "{done:?}");
        assert!(words.len() == 4 && words[3] != machines, "{done:?}");
        assert_eq!(done.status.code(), Some(7), "{done:?}");
        let killed = serve("kill -SEGV $$");
        assert_eq!(killed.status.signal(), Some(libc::SIGSEGV), "{killed:?}");
        // Orphans that end are reaped while the program runs: gone from
        // /proc, where a zombie stays until its parent reaps it.
        let reaped = serve(
            "[ -r /proc/1/status ] || exit 9; (true & echo $! > p1); (true & echo $! > p2); \
             there() { [ -e /proc/$(cat p1) ] || [ -e /proc/$(cat p2) ]; }; i=0; \
             while there && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; \
             if there; then echo zombies; else echo reaped; fi",
        );
        assert_eq!(
            String::from_utf8_lossy(&reaped.stdout),
            "reaped\n",
            "{reaped:?}"
        );
        // What it left running ends with it.
        let left = serve("(sleep 657 &); echo started");
        assert_eq!(
            String::from_utf8_lossy(&left.stdout),
            "started\n",
            "{left:?}"
        );
        assert_eq!(left.status.code(), Some(0), "{left:?}");
        assert!(live("sleep 657").is_empty(), "{:?}", live("sleep 657"));
    }

    #[test]
    fn a_double_forked_process_in_a_new_session_dies_with_the_program() {
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        // It would write the marker a second after the program ended, from
        // a session of its own, with no environment, elsewhere.
        let marker = dir.path().join("tmp/marker");
        let script = format!(
            "(setsid env -i sh -c 'cd /; sleep 1; echo escaped > {}; exec sleep 313' &) &",
            marker.display()
        );
        let done = caged(dir.path(), &script);
        assert!(done.success(), "{done:?}");
        assert!(done.left_behind, "what it left is reported: {done:?}");
        // Gone by the time `run` returned (no search: the namespace ended).
        assert!(live("sleep 313").is_empty());
        assert!(live("sleep 1; echo escaped").is_empty());
        let later = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < later {
            assert!(!marker.exists(), "the escaped process wrote its marker");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn what_a_running_program_started_is_counted_before_it_is_killed() {
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        let cage = Cage::new(dir.path(), &sh, &[]);
        // Two processes of its own (one in a session of its own), then it
        // waits, as a server does.
        let mut child = started(
            &cage,
            &sh,
            "sleep 611 & setsid sleep 622 & echo started; exec sleep 633",
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while others_in_cage(child.id() as libc::pid_t) != 2 {
            assert!(
                Instant::now() < deadline,
                "{}",
                others_in_cage(child.id() as i32)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mine = || [live("sleep 611"), live("sleep 622"), live("sleep 633")].concat();
        while !mine().is_empty() {
            assert!(Instant::now() < deadline, "{:?}", mine());
            std::thread::sleep(Duration::from_millis(20));
        }
        // Nothing of an uncaged process counts.
        let mut plain = Command::new("sleep").arg("64").spawn().unwrap();
        assert_eq!(others_in_cage(plain.id() as libc::pid_t), 0);
        plain.kill().unwrap();
        plain.wait().unwrap();
    }

    #[test]
    fn a_cages_processes_are_bounded_whoever_runs_fencelab() {
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        // Three thousand sleeping processes, counted as they start (the
        // shell ends at the first fork refused).
        let done = caged(
            dir.path(),
            "n=0; while [ $n -lt 3000 ]; do sleep 60 & n=$((n+1)); echo $n > count; done",
        );
        let count = std::fs::read_to_string(dir.path().join("tmp/count")).unwrap_or_default();
        let started: usize = count.trim().parse().unwrap_or_else(|_| panic!("{done:?}"));
        assert!(started < 2048, "{started} processes: {done:?}");
        assert!(done.stderr.contains("fork"), "{done:?}");
        assert!(live("sleep 60").len() < 10, "they died with the namespace");
    }
}

#[cfg(test)]
mod memory_and_space {
    use super::*;
    use crate::engine::process::{Finished, Limits, run};
    use std::os::unix::process::CommandExt;
    use std::process::Command;
    use std::time::{Duration, Instant};

    /// `script` run by sh, caged (in `space` when given) and bounded by `memory`.
    fn caged(
        trial: &Path,
        script: &str,
        memory: Option<&Memory>,
        space: Option<&Space>,
    ) -> Finished {
        let tmp = trial.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let sh = &std::fs::canonicalize("/bin/sh").unwrap();
        let cage = Cage::new(&tmp, sh, &[]).within(space).bounded(memory);
        let mut command = Command::new(sh);
        command.args(["-c", script]).current_dir(&tmp).env_clear();
        let limits = Limits {
            time: Some(Duration::from_secs(60)),
            cage: Some(cage.plan()),
            space: space.map(Space::join),
            ..Default::default()
        };
        run(command, trial, &limits).unwrap()
    }

    #[test]
    fn every_process_of_a_cage_is_in_its_memory_cgroup_which_goes_with_it() {
        if !Layers::test_needs(&[Need::Namespaces, Need::Memory]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        let memory = Memory::for_cage().unwrap().unwrap();
        let limit = if memory.v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        let set = std::fs::read_to_string(memory.path().join(limit)).unwrap();
        assert_eq!(set.trim(), MEMORY.to_string());
        let cage = Cage::new(dir.path(), &sh, &[]).bounded(Some(&memory));
        let mut child =
            super::pid_namespace::started(&cage, &sh, "sleep 641 & echo started; exec sleep 642");
        // The watcher, the init, the program and what it started: all in it.
        let watcher = child.id();
        assert!(memory.holds(watcher), "the watcher is not in its cgroup");
        let procs = std::fs::read_to_string(memory.path().join("cgroup.procs")).unwrap();
        assert_eq!(procs.lines().count(), 4, "{procs}");
        assert!(!memory.ran_out());
        kill_cage(watcher as libc::pid_t);
        child.wait().unwrap();
        let path = memory.path().to_path_buf();
        drop(memory);
        assert!(!path.exists(), "{} was left behind", path.display());
    }

    #[test]
    fn what_a_killed_fencelab_left_is_swept_and_nothing_else() {
        if !Layers::test_needs(&[Need::Memory]) {
            return;
        }
        let (parent, _) = own_memory_cgroup().expect("a memory cgroup, as probed");
        let mut gone = Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        let stale = parent.join(format!("fencelab-{dead}-7"));
        let live = parent.join(format!("fencelab-{}-999999", std::process::id()));
        std::fs::create_dir(&stale).unwrap();
        std::fs::create_dir(&live).unwrap();
        sweep(&parent);
        let (stale_left, live_left) = (stale.exists(), live.exists());
        let _ = std::fs::remove_dir(&stale);
        std::fs::remove_dir(&live).unwrap();
        assert!(!stale_left, "{} was left", stale.display());
        assert!(live_left, "a live process's cgroup was removed");
    }

    #[test]
    fn a_memory_bomb_across_processes_is_killed_in_its_cgroup_and_says_so() {
        if !Layers::test_needs(&[Need::Namespaces, Need::Memory]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::for_cage().unwrap().unwrap();
        // Eight processes of 256 MiB each, each within its address space:
        // twice the cage's memory.
        let bomb = "import time; b = bytearray(256 << 20); time.sleep(20)";
        let script =
            format!("for n in 1 2 3 4 5 6 7 8; do python3 -c '{bomb}' & done; wait; echo survived");
        let start = Instant::now();
        let done = caged(dir.path(), &script, Some(&memory), None);
        assert!(memory.ran_out(), "{done:?}");
        assert!(start.elapsed() < Duration::from_secs(40), "{done:?}");
        let path = memory.path().to_path_buf();
        drop(memory);
        assert!(!path.exists());
        // A cage without one is not said to have run out.
        let other = Memory::for_cage().unwrap().unwrap();
        let fine = caged(dir.path(), "echo fine", Some(&other), None);
        assert!(fine.success() && !other.ran_out(), "{fine:?}");
    }

    #[test]
    fn a_trials_space_is_one_tmpfs_for_all_its_processes_and_bounded_in_total() {
        if !Layers::test_needs(&[Need::Namespaces, Need::Space]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let space = Space::for_trial(&tmp, None).unwrap().unwrap();
        // A process of the trial, uncaged (a judge), writes a file; the
        // cage sees it and writes beside it; outside, the directory is empty.
        let mut judge = Command::new("sh");
        judge.args(["-c", "echo from-judge > given; pwd"]);
        let join = space.join();
        // SAFETY: only system calls between fork and exec.
        unsafe {
            judge.pre_exec(move || super::join(&join));
        }
        let out = judge.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            tmp.display().to_string()
        );
        let done = caged(
            dir.path(),
            "cat given && echo from-cage > mine",
            None,
            Some(&space),
        );
        // The lighter cage of fencelab's own servers writes there too.
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        let trusted = Cage::trusted(&tmp, &sh).within(Some(&space));
        let mut server = Command::new(&sh);
        server.args(["-c", "cat mine && echo from-server > theirs"]);
        let (join, plan) = (space.join(), trusted.plan());
        // SAFETY: only system calls between fork and exec.
        unsafe {
            server.pre_exec(move || {
                super::join(&join)?;
                enter(&plan, None)
            });
        }
        let out = server.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "from-cage");
        assert_eq!(done.stdout.trim(), "from-judge", "{done:?}");
        assert!(
            std::fs::read_dir(&tmp).unwrap().next().is_none(),
            "seen outside"
        );
        assert!(!space.used_up());
        // Files of 200 MiB each, below the limit of a file, until refused.
        let fill = "n=0; while [ $n -lt 8 ]; do \
                    head -c 209715200 /dev/zero > f$n || { echo refused $n; exit 3; }; \
                    n=$((n+1)); done";
        let filled = caged(dir.path(), fill, None, Some(&space));
        assert!(filled.stdout.contains("refused 2"), "{filled:?}");
        assert!(space.used_up(), "{filled:?}");
        drop(space);
    }

    #[test]
    fn a_missing_memory_cgroup_or_space_is_said_in_english_and_japanese() {
        let all = Layers {
            namespaces: true,
            landlock: Some(6),
            memory: true,
            space: true,
        };
        assert!(all.not_enforced().is_empty());
        let gaps = Layers {
            memory: false,
            space: false,
            ..all
        }
        .not_enforced();
        assert_eq!(gaps.len(), 2, "{gaps:?}");
        assert_eq!(
            gaps[0].0,
            "memory across a trial's processes: not bounded (no writable memory cgroup)"
        );
        assert!(gaps[0].1.contains("cgroup") && gaps[1].1.contains("256 MiB"));
        assert!(gaps[1].0.starts_with("total space per trial: not bounded"));
    }

    #[test]
    fn the_memory_cgroup_is_found_in_v1_and_in_delegated_v2() {
        let mounts = "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                      31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        let memory = |k: &str, o: &str| k == "cgroup" && o.split(',').any(|o| o == "memory");
        assert_eq!(
            cgroup_dir(mounts, memory, "/a/b"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/a/b"))
        );
        // A container's view: the mount's root is its own cgroup.
        let inside = "30 25 0:26 /a /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(
            cgroup_dir(inside, memory, "/a/b"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/b"))
        );
        assert_eq!(
            cgroup_dir(mounts, |k, _| k == "cgroup2", "/user.slice"),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice"))
        );
        assert_eq!(cgroup_dir(mounts, |k, _| k == "nothing", "/"), None);
    }
}

#[cfg(test)]
mod shared_network {
    use super::*;
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    /// What a caged Python program sees of the network: whether it can bind
    /// UDP port 47011 (`inuse` when another process of its network holds
    /// it), send to it, connect to the abstract socket `@fencelab-net`,
    /// and which interfaces are up.
    const PROBE: &str = r#"
import socket, errno, fcntl, struct
r = []
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.bind(("0.0.0.0", 47011)); r.append("bound")
except OSError as e:
    r.append("inuse" if e.errno == errno.EADDRINUSE else "bind%d" % e.errno)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 47011)); r.append("sent")
except OSError:
    r.append("unsent")
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    a.connect("\0fencelab-net"); r.append("connected")
except OSError:
    r.append("refused")
up = []
for _, name in socket.if_nameindex():
    got = fcntl.ioctl(u.fileno(), 0x8913, struct.pack("256s", name.encode()))
    if struct.unpack("H", got[16:18])[0] & 1:
        up.append(name)
r.append("up=" + ",".join(up))
print(" ".join(r), flush=True)
"#;

    /// The other trial: holds UDP port 47011 and the abstract socket
    /// `@fencelab-net`, says so, and waits.
    const HOLDER: &str = r#"
import socket, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("0.0.0.0", 47011))
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); a.bind("\0fencelab-net"); a.listen(1)
print("holding", flush=True)
time.sleep(60)
"#;

    /// `python` run caged in `space` (a trial's, in `tmp`): the child, once
    /// it has printed its first line, and that line.
    fn caged_python(tmp: &Path, space: &Space, python: &str) -> (std::process::Child, String) {
        let py = std::fs::canonicalize("/usr/bin/python3").unwrap();
        let cage = Cage::new(tmp, &py, &[]).within(Some(space));
        let (plan, join) = (cage.plan(), space.join());
        let mut command = Command::new(&py);
        command
            .args(["-c", python])
            .current_dir(tmp)
            .env_clear()
            .stdout(Stdio::piped());
        // SAFETY: only system calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                super::join(&join)?;
                enter(&plan, None)
            });
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        (child, line.trim().to_string())
    }

    #[test]
    fn the_trials_of_one_net_share_it_and_reach_nothing_of_each_others() {
        if !Layers::test_needs(&[Need::Namespaces, Need::Space, Need::Landlock6]) {
            return;
        }
        let net = Net::for_trials().unwrap().unwrap();
        let other_net = Net::for_trials().unwrap().unwrap();
        let trial = |net: &Net| {
            let dir = tempfile::tempdir().unwrap();
            let tmp = dir.path().join("tmp");
            std::fs::create_dir(&tmp).unwrap();
            let space = Space::for_trial(&tmp, Some(net)).unwrap().unwrap();
            (dir, tmp, space)
        };
        let (_a, tmp_a, space_a) = trial(&net);
        let (mut holder, said) = caged_python(&tmp_a, &space_a, HOLDER);
        assert_eq!(said, "holding");
        // Another trial of the same implementation: in the same network
        // (the port is taken: with a network of its own, it would bind it),
        // and still it reaches nothing: no interface is up, and Landlock
        // keeps the holder's abstract socket out of its reach.
        let (_b, tmp_b, space_b) = trial(&net);
        let (mut probe, seen) = caged_python(&tmp_b, &space_b, PROBE);
        probe.wait().unwrap();
        // Another implementation's trial: a network of its own.
        let (_c, tmp_c, space_c) = trial(&other_net);
        let (mut other, elsewhere) = caged_python(&tmp_c, &space_c, PROBE);
        other.wait().unwrap();
        kill_cage(holder.id() as libc::pid_t);
        holder.wait().unwrap();
        assert_eq!(seen, "inuse unsent refused up=");
        assert_eq!(elsewhere, "bound unsent refused up=");
    }

    #[test]
    fn a_net_is_closed_and_the_machines_network_is_not() {
        // SAFETY: a plain query.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: joining a network from a thread needs root");
            return;
        }
        if !Layers::test_needs(&[Need::Namespaces]) {
            return;
        }
        assert!(
            !closed_network(),
            "this test's own network is the machine's"
        );
        let net = Net::for_trials().unwrap().unwrap();
        let fd = net.net.as_raw_fd();
        // A thread of its own joins it (a network namespace is a thread's).
        let inside = std::thread::spawn(move || {
            // SAFETY: joins a namespace held open by `net`, alive meanwhile.
            assert_eq!(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }, 0);
            closed_network()
        })
        .join()
        .unwrap();
        assert!(inside, "a Net has no interface up");
    }
}

#[cfg(test)]
mod cost {
    /// What the cage costs a process: `cargo test --lib cage_cost -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn cage_cost() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let program = std::path::Path::new("/usr/bin/true");
        let _ = super::Layers::probe();
        // Uncaged; caged; caged with a memory cgroup of its own and in a
        // trial's space (a trial's judge or server now).
        for mode in [0, 1, 2, 0, 1, 2] {
            let start = std::time::Instant::now();
            for _ in 0..200 {
                let (memory, space) = match mode {
                    2 => (
                        super::Memory::for_cage().unwrap(),
                        super::Space::for_trial(&tmp, None).unwrap(),
                    ),
                    _ => (None, None),
                };
                let cage = (mode > 0).then(|| {
                    super::Cage::new(&tmp, program, &[])
                        .within(space.as_ref())
                        .bounded(memory.as_ref())
                });
                let limits = crate::engine::process::Limits {
                    cage: cage.as_ref().map(super::Cage::plan),
                    space: space.as_ref().map(super::Space::join),
                    ..Default::default()
                };
                let mut command = std::process::Command::new(program);
                command.current_dir(&tmp);
                let done = crate::engine::process::run(command, dir.path(), &limits).unwrap();
                assert!(done.success());
            }
            let what = ["uncaged", "caged", "caged, memory cgroup, space"][mode];
            println!("{what}: {:?} per process", start.elapsed() / 200);
        }
        let start = std::time::Instant::now();
        for _ in 0..200 {
            drop(super::Memory::for_cage().unwrap());
        }
        println!(
            "memory cgroup made and removed: {:?}",
            start.elapsed() / 200
        );
        let start = std::time::Instant::now();
        for _ in 0..200 {
            drop(super::Space::for_trial(&tmp, None).unwrap());
        }
        println!("space held and let go: {:?}", start.elapsed() / 200);
        let start = std::time::Instant::now();
        for _ in 0..200 {
            super::namespaces_work();
        }
        println!("probe: {:?}", start.elapsed() / 200);
    }
}
