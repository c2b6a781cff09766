//! What a child does before it runs untrusted code, written once for every
//! way fencelab starts one: the runner's clone and fork (`engine::process`),
//! the judge's zygote (`judge_zygote`) and the Python forking server
//! (`zygote`). Each asks for the steps it needs; `prepare` fixes their order.
//! A spawned `Command` asks through `before_exec`, fencelab's one `pre_exec`.
//!
//! Invariants: only system calls on what the parent prepared. It allocates
//! only for an environment or an `Enter::Built` cage, both asked by forks:
//! the runner's clone shares its memory. The first step that fails ends it.

use std::ffi::{CStr, CString, c_int};
use std::os::fd::{IntoRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use rustix::io::{Errno, FdFlags};
use rustix::process::{Pid, Resource, Rlimit, Signal};

use super::sandbox::duplicate_at;
use super::sandbox::sys::{self, Disposition};
use super::sandbox::{Join, Plan, Stacks};
/// The cage's, for the bridge's protocols too: descriptors by number.
pub(crate) use super::sandbox::{borrowed, close};

/// What a child does before it runs untrusted code: each step it is
/// asked for, in the order of the fields.
#[derive(Default)]
pub(crate) struct Setup<'a> {
    /// Joins a memory cgroup, by its `cgroup.procs`.
    pub memory: Option<RawFd>,
    /// Dies with its parent, this pid (exits 137 if it is gone already).
    pub parent: Option<Pid>,
    /// Leads a process group of its own.
    pub own_group: bool,
    /// Which signals go back to their default action.
    pub signals: Signals,
    /// No core; with a size, files and memory bounded (`trial_limits`).
    pub limits: Option<Option<u64>>,
    /// These limits, each its current and its maximum.
    pub caps: &'a [(Resource, u64)],
    /// The trial's space to join, then descriptors (its namespaces) to close.
    pub space: Option<&'a Join>,
    pub close_joined: &'a [RawFd],
    /// Descriptors put in place, (where it is, where it goes), and others
    /// kept where they are (moved away only where one is a target).
    pub place: &'a mut [(RawFd, RawFd)],
    pub keep: &'a mut [RawFd],
    /// Every other descriptor from this one up closed. None: the child
    /// executes a program, whose others close on exec.
    pub close_from: Option<RawFd>,
    /// Its working directory, and its whole environment.
    pub dir: Option<&'a CStr>,
    pub env: Option<&'a [CString]>,
    /// The cage it enters last.
    pub cage: Option<Enter<'a>>,
    /// No signal blocked (its parent blocked some around the fork).
    pub unblock: bool,
}

/// Which signals a child puts back to their default action.
#[derive(Default, Clone, Copy)]
pub(crate) enum Signals {
    #[default]
    Kept,
    /// Every one this process handles, and SIGPIPE (as std's spawn does).
    Handled,
    /// These, whose handlers write where the child closes.
    These(&'static [c_int]),
}

/// The cage a child enters, last, with the stacks its parent made for it.
pub(crate) enum Enter<'a> {
    /// A program's (`sandbox::enter`), saying on `left` what it left running.
    Cage(&'a Plan, Option<RawFd>, &'a mut Stacks),
    /// A server's, listening on a descriptor (`sandbox::enter` with it).
    Serving(RawFd, &'a Plan, &'a mut Stacks),
    /// Built and entered by the child itself, a fork that may allocate.
    Built(&'a mut dyn FnMut() -> std::io::Result<()>),
}

/// `Setup`'s steps for a spawned `Command`'s child, owning what they name:
/// each field as `Setup`'s of its name.
#[derive(Default)]
pub(crate) struct Steps {
    pub memory: Option<RawFd>,
    pub parent: Option<Pid>,
    pub limits: Option<Option<u64>>,
    pub caps: Vec<(Resource, u64)>,
    pub space: Option<Arc<Join>>,
    pub place: Vec<(RawFd, RawFd)>,
    /// A program's cage (`Enter::Cage`), or a server's (`Enter::Serving`).
    pub cage: Option<(Arc<Plan>, Option<RawFd>)>,
    pub serving: Option<(RawFd, Arc<Plan>)>,
}

/// fencelab's one `pre_exec`: `command`'s child runs `steps` (`prepare`)
/// before it executes.
pub(crate) fn before_exec(command: &mut Command, mut steps: Steps) {
    // Made here: the child may not allocate.
    let mut stacks = match (&steps.cage, &steps.serving) {
        (Some((plan, _)), _) | (None, Some((_, plan))) => Stacks::for_plan(plan),
        (None, None) => Stacks::default(),
    };
    let hook = move || {
        let cage = match (&steps.cage, &steps.serving) {
            (Some((plan, left)), _) => Some(Enter::Cage(plan, *left, &mut stacks)),
            (None, Some((listener, plan))) => Some(Enter::Serving(*listener, plan, &mut stacks)),
            (None, None) => None,
        };
        let mut setup = Setup {
            memory: steps.memory,
            parent: steps.parent,
            limits: steps.limits,
            caps: &steps.caps,
            space: steps.space.as_deref(),
            place: &mut steps.place,
            cage,
            ..Setup::default()
        };
        // SAFETY: a child between fork and exec; `steps` holds alive what
        // it names.
        unsafe { prepare(&mut setup) }
    };
    // SAFETY: the hook runs between fork and exec, where it allocates
    // nothing and makes only system calls (`prepare`).
    unsafe { command.pre_exec(hook) };
}

/// Runs the steps `setup` asks for, in its order; the first error ends it.
///
/// # Safety
/// Only in a child between fork (or clone) and exec, or in a forked child
/// of a single-threaded process; `setup`'s descriptors are open in it.
pub(crate) unsafe fn prepare(setup: &mut Setup<'_>) -> std::io::Result<()> {
    if let Some(procs) = setup.memory {
        match rustix::io::write(borrowed(procs), b"0") {
            Ok(1) => {}
            Ok(_) => return Err(std::io::Error::last_os_error()),
            Err(err) => return Err(err.into()),
        }
    }
    if let Some(parent) = setup.parent {
        die_with(parent);
    }
    if setup.own_group {
        rustix::process::setpgid(None, None)?;
    }
    default_signals(setup.signals);
    if let Some(file_size) = setup.limits {
        trial_limits(file_size);
    }
    for &(resource, value) in setup.caps {
        let _ = rustix::process::setrlimit(resource, cap(value));
    }
    if let Some(join) = setup.space {
        // SAFETY: the caller's word: a child, the `Space` alive.
        unsafe { super::sandbox::join(join)? };
        // Joining a user namespace changed its credentials, which cleared
        // its parent-death signal.
        if let Some(parent) = setup.parent {
            die_with(parent);
        }
        for &fd in setup.close_joined {
            close(fd);
        }
    }
    place(setup.place, setup.keep, setup.close_from)?;
    if let Some(dir) = setup.dir {
        rustix::process::chdir(dir)?;
    }
    if let Some(env) = setup.env {
        // SAFETY: a single-threaded child: nothing else reads the
        // environment meanwhile.
        unsafe { libc::clearenv() };
        for var in env {
            // SAFETY: as above; the string lives as long as the process
            // (putenv keeps it).
            if unsafe { libc::putenv(var.clone().into_raw()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    let entry = match setup.cage.as_mut() {
        Some(Enter::Cage(plan, left, stacks)) => Some((*plan, *left, None, stacks)),
        Some(Enter::Serving(listener, plan, stacks)) => {
            Some((*plan, None, Some(*listener), stacks))
        }
        Some(Enter::Built(enter)) => enter().map(|()| None)?,
        None => None,
    };
    if let Some((plan, left, listener, stacks)) = entry {
        // SAFETY: the caller's word: a child, the cage alive in its parent.
        unsafe { super::sandbox::enter(plan, left, listener, stacks)? };
    }
    if setup.unblock {
        sys::unblock_signals();
    }
    Ok(())
}

/// Asks for SIGKILL when the parent dies, and ends at once (137) if it
/// died already, before the signal was asked for.
fn die_with(parent: Pid) {
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    if rustix::process::getppid() != Some(parent) {
        // Ends at once, as a killed one would.
        sys::exit_now(137)
    }
}

/// Puts `signals` back to their default action.
fn default_signals(signals: Signals) {
    let reset = |signal: c_int| {
        let _ = sys::set_signal(signal, Disposition::Default);
    };
    match signals {
        Signals::Kept => {}
        Signals::These(these) => these.iter().copied().for_each(reset),
        Signals::Handled => {
            for signal in 1..libc::SIGRTMAX() {
                // None: a handler of its own, or one of the C library's
                // signals, which refuses the reset as it refused the read.
                let handled = match sys::signal_disposition(signal) {
                    None => true,
                    Some(Disposition::Ignore) => signal == libc::SIGPIPE,
                    Some(Disposition::Default) => false,
                };
                if handled {
                    reset(signal);
                }
            }
        }
    }
}

/// A trial's process's limits: no core, and files of at most `file_size`
/// bytes and an address space of `JUDGE_ADDRESS_SPACE` (where it is given).
fn trial_limits(file_size: Option<u64>) {
    let _ = rustix::process::setrlimit(Resource::Core, cap(0));
    if let Some(bytes) = file_size {
        let _ = rustix::process::setrlimit(Resource::Fsize, cap(bytes));
        // A trial's judge is bounded as a caged process is: what it reads
        // of an implementation is capped, and this bounds the rest.
        let _ = rustix::process::setrlimit(Resource::As, cap(JUDGE_ADDRESS_SPACE));
    }
}

/// A limit of `value`, current and maximum.
fn cap(value: u64) -> Rlimit {
    Rlimit {
        current: Some(value),
        maximum: Some(value),
    }
}

/// The address space a trial's judge may use (as a caged process's).
const JUDGE_ADDRESS_SPACE: u64 = 4 << 30;

/// How many descriptors `place` keeps open while it closes the others.
const MOST_KEPT: usize = 16;

/// Puts each of `place` at its number and keeps `keep` open; with
/// `close_from`, closes every other descriptor from that one up.
fn place(
    place: &mut [(RawFd, RawFd)],
    keep: &mut [RawFd],
    close_from: Option<RawFd>,
) -> std::io::Result<()> {
    let is_target = |fd: RawFd, place: &[(RawFd, RawFd)]| place.iter().any(|&(_, t)| t == fd);
    let above = place.iter().map(|&(_, t)| t + 1).max().unwrap_or(0);
    // Out of the way first: one that sits at another's number would be
    // overwritten there.
    for at in 0..place.len() {
        let (fd, target) = place[at];
        if fd != target && is_target(fd, place) {
            place[at].0 = moved_above(fd, above)?;
        }
    }
    for kept in keep.iter_mut() {
        if is_target(*kept, place) {
            *kept = moved_above(*kept, above)?;
        }
    }
    if let Some(first) = close_from {
        if place.len() + keep.len() > MOST_KEPT {
            return Err(Errno::MFILE.into());
        }
        let mut open = [-1; MOST_KEPT];
        let wanted = place.iter().map(|&(fd, _)| fd).chain(keep.iter().copied());
        for (slot, fd) in open.iter_mut().zip(wanted) {
            *slot = fd;
        }
        // SAFETY: a child's own descriptors, of which it keeps `open`.
        unsafe { super::sandbox::close_all_but(first, &mut open) };
    }
    for &(fd, target) in place.iter() {
        if fd == target {
            rustix::io::fcntl_setfd(borrowed(fd), FdFlags::empty())?;
        } else {
            // A number this child gives it.
            duplicate_at(fd, target)?;
        }
    }
    if close_from.is_some() {
        for &(fd, _) in place.iter() {
            if !is_target(fd, place) {
                close(fd);
            }
        }
    }
    Ok(())
}

/// A duplicate of `fd` at `above` or higher, close-on-exec, its number.
fn moved_above(fd: RawFd, above: RawFd) -> std::io::Result<RawFd> {
    Ok(rustix::io::fcntl_dupfd_cloexec(borrowed(fd), above)?.into_raw_fd())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// Descriptors at each other's numbers land where they are asked, and
    /// a kept one at a target's number moves away rather than be lost.
    #[test]
    fn descriptors_are_placed_without_overwriting_each_other() {
        let inode = |fd: RawFd| rustix::fs::fstat(borrowed(fd)).map(|s| s.st_ino).ok();
        let (a, b) = rustix::pipe::pipe().unwrap();
        let (r, w) = rustix::pipe::pipe().unwrap();
        let (a, b, r, w) = [a, b, r, w].map(IntoRawFd::into_raw_fd).into();
        let (was_a, was_b, was_r, was_w) = (inode(a), inode(b), inode(r), inode(w));
        // a and b swap; w goes where r is, which is kept.
        let mut moves = [(a, b), (b, a), (w, r)];
        let mut keep = [r];
        place(&mut moves, &mut keep, None).unwrap();
        let kept = keep[0];
        assert_eq!((inode(b), inode(a)), (was_a, was_b));
        assert_eq!((inode(r), inode(kept)), (was_w, was_r));
        assert_ne!(kept, r);
        // Where they go, they stay open across an exec.
        for fd in [a, b, r] {
            let flags = rustix::io::fcntl_getfd(borrowed(fd)).unwrap();
            assert!(!flags.contains(FdFlags::CLOEXEC), "{fd}");
        }
        let moved = moves.map(|(fd, _)| fd);
        for fd in [a, b, r, w, kept]
            .into_iter()
            .chain(moved)
            .collect::<std::collections::BTreeSet<_>>()
        {
            // Each of this test's descriptors, closed once.
            close(fd);
        }
        let _ = std::io::stdout().as_fd();
    }
}
