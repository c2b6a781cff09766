//! The child's way into a cage, in the order nsjail's `contain.cc` keeps: the
//! memory cgroup, the limits, the namespaces and the new root, then no new
//! privileges, Landlock, and no capability. System calls only.

use std::mem::ManuallyDrop;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd, RawFd};

use crate::cage::{Exec, Plan};
use crate::descriptors::inherited;
use crate::init::enter_root;
use crate::landlock::SYS_RESTRICT_SELF;
use crate::limits::limit;
use crate::memory::join_memory;
use crate::namespaces::drop_capabilities;

/// Where a server's listening socket is (`enter_serving`): the bridge's
/// `server::LISTENER_FD`, which a test of fencelab's holds equal.
pub const LISTENER_FD: RawFd = 3;

/// Enters the cage `plan` (from `Cage::plan`). Meant for the child between
/// fork and exec: it only makes system calls. Where the cage has a PID
/// namespace, this process stays outside as its watcher and never returns
/// (see `watch`); the program runs in a grandchild. When `left` is given, a
/// byte is written to it if the program left processes running when it
/// ended (they were killed with the namespace).
///
/// # Safety
/// Call only from a `pre_exec` hook, while the `Cage` is alive in the parent:
/// the child forks again and closes descriptors by number.
pub unsafe fn enter(plan: &Plan, left: Option<RawFd>) -> std::io::Result<()> {
    contain(plan, left, None)
}

/// Makes `listener` the server's listening socket (`server::LISTENER_FD`) and
/// enters the cage `plan`, keeping the ruleset out of the way when it
/// happens to sit at that very descriptor. Where the plan knows the program
/// (`Cage::executing`) and the cage has a PID namespace, the program is
/// executed from here and this returns only an error.
///
/// # Safety
/// As `enter`: only from a `pre_exec` hook, while the `Cage` is alive.
pub unsafe fn enter_serving(listener: RawFd, plan: &Plan) -> std::io::Result<()> {
    contain(plan, None, Some(listener))
}

/// `enter` (no `listener`) and `enter_serving`, for this crate's own
/// children between fork and exec (the entries' contract, kept by them).
pub(crate) fn contain(
    plan: &Plan,
    left: Option<RawFd>,
    listener: Option<RawFd>,
) -> std::io::Result<()> {
    join_memory(plan.cgroup)?;
    limit();
    // First, while the descriptors of the places are where they were.
    if let Some(root) = &plan.root {
        // Where the plan knows the program (`Cage::executing`), it is
        // executed from here, by clones (see `start_cloned`).
        let serve = plan.exec.as_ref().map(|exec| Serve {
            exec,
            listener,
            ruleset: plan.ruleset,
        });
        // A server not executed from here goes on with this memory (a
        // Python server forked per trial): `start_forked`.
        enter_root(root, left, serve, listener.is_some())?;
    }
    match listener {
        Some(listener) => serve_from(listener, plan.ruleset),
        None => restrict(plan.ruleset),
    }
}

/// The end of `enter_serving`, in the program's own process: the listening
/// socket at `server::LISTENER_FD`, then no new privileges and the ruleset.
pub(crate) fn serve_from(listener: RawFd, ruleset: Option<RawFd>) -> std::io::Result<()> {
    use rustix::io::FdFlags;
    let target = LISTENER_FD;
    let mut ruleset_fd = ruleset;
    if ruleset_fd == Some(target) && listener != target {
        let moved = rustix::io::fcntl_dupfd_cloexec(inherited(target), target + 1)?;
        ruleset_fd = Some(moved.into_raw_fd());
    }
    if listener == target {
        rustix::io::fcntl_setfd(inherited(listener), FdFlags::empty())?;
    } else {
        // SAFETY: the number the listener goes to, which nothing of this
        // child owns (a ruleset there was moved above); never closed here.
        let mut at = ManuallyDrop::new(unsafe { OwnedFd::from_raw_fd(target) });
        rustix::io::dup2(inherited(listener), &mut at)?;
    }
    restrict(ruleset_fd)
}

/// What the program's process of a cage does last, when it executes the
/// program itself (`Cage::executing`): `serve_from` (a server's cage:
/// `enter_serving`) or `restrict` alone (`enter`), then `exec`.
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
