//! Landlock: a ruleset built in the parent (the places the program may read,
//! write and execute; TCP; abstract sockets and signals), restricted in the child.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use crate::cage::Place;

pub(crate) const SYS_CREATE_RULESET: libc::c_long = 444;
pub(crate) const SYS_ADD_RULE: libc::c_long = 445;
pub(crate) const SYS_RESTRICT_SELF: libc::c_long = 446;
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

/// Whether Landlock keeps a cage's abstract Unix sockets in (ABI 6): it can
/// connect to none made outside it. Only then does a cage share its
/// trials' closed network (`Net`): without it, a caged program could reach
/// an abstract socket of another trial of the same implementation's.
pub(crate) fn scopes_abstract_sockets() -> bool {
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

pub(crate) fn ruleset(
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
pub(crate) fn handled_fs(abi: i32) -> u64 {
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
pub(crate) fn allow(ruleset: &OwnedFd, parent: &OwnedFd, access: u64) -> Option<()> {
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
