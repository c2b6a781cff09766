//! A running cage seen from outside, through `/proc`: its init found and
//! killed, and what the program left running counted.

use crate::proc;

/// Kills the cage whose watcher is `watcher` (a child of this process's),
/// so that waiting for the watcher then waits for everything in the cage to
/// be gone: its init gets SIGKILL (the kernel kills the rest of the
/// namespace, then the watcher ends). Where there is no init, the watcher
/// itself is the program: it gets SIGKILL. True if the cage had a PID
/// namespace of its own: then nothing the program started is anywhere else.
pub fn kill_cage(watcher: libc::pid_t) -> bool {
    let init = proc::thread_children(watcher, watcher)
        .first()
        .copied()
        .filter(|&child| in_a_pid_namespace_of_its_own(child));
    // Our own child, or its only child.
    if let Some(pid) = Some(init.unwrap_or(watcher))
        .filter(|&pid| pid > 0)
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
    init.is_some()
}

/// Whether `pid` is in a PID namespace nested in this process's: its
/// `NSpid` names more than one pid (false when it cannot be read: the caller
/// then looks further). Its status, not its `ns/pid` link: the init makes
/// itself not dumpable, and a user other than root may not read the link
/// of a process that is not dumpable.
fn in_a_pid_namespace_of_its_own(pid: libc::pid_t) -> bool {
    proc::status(pid).is_some_and(|s| {
        s.field("NSpid")
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
pub fn others_in_cage(watcher: libc::pid_t) -> usize {
    descend_the_cage(watcher).max(descend_the_cage(watcher))
}

/// One descent of [`others_in_cage`].
fn descend_the_cage(watcher: libc::pid_t) -> usize {
    let mut family = proc::children(watcher);
    let mut others = 0;
    let mut at = 0;
    while at < family.len() {
        let pid = family[at];
        at += 1;
        let Some(status) = proc::status(pid) else {
            continue;
        };
        let alive = status
            .field("State")
            .is_some_and(|s| !s.starts_with(['Z', 'X']));
        // Its pid in the innermost namespace, when that is not ours.
        let nested: Vec<i64> = status
            .field("NSpid")
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        if alive && nested.len() > 1 && nested[nested.len() - 1] > 2 {
            others += 1;
        }
        for child in proc::children(pid) {
            if !family.contains(&child) {
                family.push(child);
            }
        }
    }
    others
}
