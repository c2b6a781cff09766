//! The cage an implementation's process runs in. Set up between fork and exec,
//! so that it holds before any of the implementation's code (constructors
//! included) runs:
//! - Landlock (Linux 5.13+): files may be created, written or removed only
//!   beneath the test's temporary directory (and /dev/null); where the kernel
//!   allows, no TCP, and no signals or abstract sockets outside the cage;
//! - no new privileges; the process dies with its parent;
//! - limits on address space and on the number of processes, no core dumps.
//!
//! Where Landlock is missing the other limits still apply; `available`
//! tells, so that the grader can warn.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const SYS_CREATE_RULESET: libc::c_long = 444;
const SYS_ADD_RULE: libc::c_long = 445;
const SYS_RESTRICT_SELF: libc::c_long = 446;
const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

// Filesystem rights that change things; reading and executing stay free.
const WRITE_FILE: u64 = 1 << 1;
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
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// The largest address space an implementation may map.
const ADDRESS_SPACE: u64 = 4 << 30;
/// The most processes (and threads) the user may have once it runs.
const PROCESSES: u64 = 8192;

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

/// The Landlock ABI version of the running kernel, if it has Landlock.
pub fn available() -> Option<i32> {
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

/// A prepared cage: a Landlock ruleset (when the kernel has Landlock) to be
/// entered by the child.
pub struct Cage {
    ruleset: Option<OwnedFd>,
}

impl Cage {
    /// A cage whose only writable place is `writable` (and /dev/null).
    pub fn new(writable: &Path) -> Cage {
        Cage {
            ruleset: available().and_then(|abi| ruleset(abi, writable)),
        }
    }

    /// Whether the filesystem rules will hold (Landlock is there).
    pub fn confines_files(&self) -> bool {
        self.ruleset.is_some()
    }

    /// The ruleset's descriptor, to pass to `enter` in the child.
    pub fn ruleset_fd(&self) -> Option<RawFd> {
        use std::os::fd::AsRawFd;
        self.ruleset.as_ref().map(|fd| fd.as_raw_fd())
    }
}

/// Enters the cage whose ruleset is `ruleset_fd` (from `Cage::ruleset_fd`).
/// Meant for the child between fork and exec: it only makes system calls.
///
/// # Safety
/// Call only from a `pre_exec` hook, while the `Cage` is alive in the parent.
pub unsafe fn enter(ruleset_fd: Option<RawFd>) -> std::io::Result<()> {
    {
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            let space = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            libc::setrlimit(libc::RLIMIT_AS, &space);
            let processes = libc::rlimit {
                rlim_cur: PROCESSES,
                rlim_max: PROCESSES,
            };
            libc::setrlimit(libc::RLIMIT_NPROC, &processes);
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = ruleset_fd
                && libc::syscall(SYS_RESTRICT_SELF, fd, 0u32) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Makes `listener` the server's listening socket (`server::LISTENER_FD`) and
/// enters the cage whose ruleset is `ruleset_fd`, keeping the ruleset out of
/// the way when it happens to sit at that very descriptor.
///
/// # Safety
/// As `enter`: only from a `pre_exec` hook, while the `Cage` is alive.
pub unsafe fn enter_serving(listener: RawFd, ruleset_fd: Option<RawFd>) -> std::io::Result<()> {
    let target = super::server::LISTENER_FD;
    let mut ruleset_fd = ruleset_fd;
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
        enter(ruleset_fd)
    }
}

fn ruleset(abi: i32, writable: &Path) -> Option<OwnedFd> {
    let mut fs = WRITE_FILE
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
    allow(&ruleset, writable, fs)?;
    allow(
        &ruleset,
        Path::new("/dev/null"),
        WRITE_FILE | if abi >= 3 { TRUNCATE } else { 0 },
    );
    Some(ruleset)
}

/// Allows `access` beneath `path`.
fn allow(ruleset: &OwnedFd, path: &Path, access: u64) -> Option<()> {
    use std::os::fd::AsRawFd;
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid C string; O_PATH opens without reading.
    let fd = unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: we own the descriptor just opened.
    let parent = unsafe { OwnedFd::from_raw_fd(fd) };
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
