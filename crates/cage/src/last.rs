//! What a caged program's process does last, before its own code: the
//! listening socket placed, no new privileges, Landlock, no capability.

use std::os::fd::{IntoRawFd, RawFd};

use crate::cage::Exec;
use crate::descriptors::{borrowed, duplicate_at};
use crate::landlock::SYS_RESTRICT_SELF;
use crate::namespaces::drop_capabilities;

/// Where a server's listening socket is (`enter` with one): the bridge's
/// `server::LISTENER_FD`, which a test of fencelab's holds equal.
pub const LISTENER_FD: RawFd = 3;

/// The end of a server's `enter`, in the program's own process: the listening
/// socket at `server::LISTENER_FD`, then no new privileges and the ruleset.
pub(crate) fn serve_from(listener: RawFd, ruleset: Option<RawFd>) -> std::io::Result<()> {
    use rustix::io::FdFlags;
    let target = LISTENER_FD;
    let mut ruleset_fd = ruleset;
    if ruleset_fd == Some(target) && listener != target {
        let moved = rustix::io::fcntl_dupfd_cloexec(borrowed(target), target + 1)?;
        ruleset_fd = Some(moved.into_raw_fd());
    }
    if listener == target {
        rustix::io::fcntl_setfd(borrowed(listener), FdFlags::empty())?;
    } else {
        // Nothing of this child's owns the number (a ruleset there was
        // moved above).
        duplicate_at(listener, target)?;
    }
    restrict(ruleset_fd)
}

/// What the program's process of a cage does last, when it executes the
/// program itself (`Cage::executing`): `serve_from` (a server's cage:
/// `enter` with a listener) or `restrict` alone (`enter`), then `exec`.
#[derive(Clone, Copy)]
pub(crate) struct Serve<'a> {
    pub(crate) exec: &'a Exec,
    pub(crate) listener: Option<RawFd>,
    pub(crate) ruleset: Option<RawFd>,
}

/// No new privileges, the Landlock ruleset, then no capability at all.
pub(crate) fn restrict(ruleset: Option<RawFd>) -> std::io::Result<()> {
    // Again: a change of credentials (a new user namespace) may clear it.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    rustix::thread::set_no_new_privs(true)?;
    if let Some(fd) = ruleset {
        // SAFETY: the raw call, not the `landlock` crate's `restrict_self`:
        // that consumes the parent's `RulesetCreated`, which the child only
        // borrows, and `serve_from` may have moved the descriptor. It passes
        // no memory.
        if unsafe { libc::syscall(SYS_RESTRICT_SELF, fd, 0u32) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    drop_capabilities()
}
