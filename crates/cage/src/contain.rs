//! The child's way into a cage, in the order nsjail's `contain.cc` keeps: the
//! memory cgroup, the limits, the namespaces and the new root, then no new
//! privileges, Landlock, and no capability. System calls only.

use std::os::fd::RawFd;

use rustix::process::Signal;

use crate::cage::Plan;
use crate::descriptors::close;
use crate::forked::start_forked;
use crate::init::{Stacks, fork_again, init, report_pipe, start_cloned, watch};
use crate::last::{Serve, restrict, serve_from};
use crate::limits::limit;
use crate::memory::join_memory;
use crate::mounts::{Root, build_root};
use crate::namespaces::enter_namespaces;
use crate::sys::ForkResult;

/// Enters the cage `plan` (from `Cage::plan`). Meant for the child between
/// fork and exec: it only makes system calls. Where the cage has a PID
/// namespace, this process stays outside as its watcher and never returns
/// (see `watch`); the program runs in a grandchild. When `left` is given, a
/// byte is written to it if the program left processes running when it
/// ended (they were killed with the namespace). A server's cage is given its
/// `listener`, which becomes `LISTENER_FD` (a ruleset sitting there moves
/// away); where the plan knows the program (`Cage::executing`) and the cage
/// has a PID namespace, the program is executed from here and this returns
/// only an error. `stacks`: the parent's, for `plan` (`Stacks::for_plan`).
///
/// # Safety
/// Call only from a `pre_exec` hook, while the `Cage` is alive in the parent:
/// the child forks again and closes descriptors by number.
pub unsafe fn enter(
    plan: &Plan,
    left: Option<RawFd>,
    listener: Option<RawFd>,
    stacks: &mut Stacks,
) -> std::io::Result<()> {
    contain(plan, left, listener, stacks)
}

/// `enter`, for this crate's own children between fork and exec (its
/// contract, kept by them).
pub(crate) fn contain(
    plan: &Plan,
    left: Option<RawFd>,
    listener: Option<RawFd>,
    stacks: &mut Stacks,
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
        enter_root(root, left, serve, listener.is_some(), stacks)?;
    }
    match listener {
        Some(listener) => serve_from(listener, plan.ruleset),
        None => restrict(plan.ruleset),
    }
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
pub(crate) fn enter_root(
    root: &Root,
    left: Option<RawFd>,
    serve: Option<Serve<'_>>,
    forked: bool,
    stacks: &mut Stacks,
) -> std::io::Result<()> {
    if !enter_namespaces(&root.maps, root.own_net)? {
        // Where the kernel has no unprivileged user namespaces, the other
        // layers hold alone (fencelab said so at the start of the run).
        return Ok(());
    }
    // The init tells the watcher how the program ended.
    let report = report_pipe()?;
    if let Some(serve) = serve {
        return start_cloned(root, report, left, serve, stacks);
    }
    if forked {
        return start_forked(root, report, left, stacks);
    }
    if let ForkResult::Parent { child: init } = fork_again()? {
        watch(init.as_raw(), report[0], left);
    }
    // The init: PID 1 of the new namespace, killed if the watcher dies.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    close(report[0]);
    build_root(root)?;
    match fork_again()? {
        ForkResult::Child => {
            // The program: on to the rest of the cage, then its own code.
            close(report[1]);
            Ok(())
        }
        ForkResult::Parent { child: program } => init(program.as_raw(), report[1], &root.scrub),
    }
}
