//! The few system calls rustix offers no safe wrapper for (it leaves signals
//! and `_exit` to its unstable runtime), wrapped once so callers need no
//! `unsafe`: signal masks and signalfd through `nix`, the rest raw.
//!
//! Every function here is async-signal-safe and allocates nothing: callers
//! run them between fork and exec of a multi-threaded parent.

use std::io;

use libc::c_int;
use nix::sched::CloneFlags;
use nix::sys::signal::{self, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// Ends this process at once: no destructors, no `atexit`, no flushing.
/// Between fork and exec, the only safe way out.
pub fn exit_now(code: c_int) -> ! {
    // SAFETY: `_exit` takes no pointer and cannot fail.
    unsafe { libc::_exit(code) }
}

/// What a signal does, set without a handler of ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// The kernel's default action.
    Default,
    /// Ignored.
    Ignore,
}

/// Sets what `signal` does.
pub fn set_signal(signal: c_int, to: Disposition) -> io::Result<()> {
    sigaction(signal, Some(to)).map(drop)
}

/// What `signal` does now: `None` where a handler of the process's own is
/// installed (or the signal is not one).
pub fn signal_disposition(signal: c_int) -> Option<Disposition> {
    match sigaction(signal, None).ok()? {
        libc::SIG_DFL => Some(Disposition::Default),
        libc::SIG_IGN => Some(Disposition::Ignore),
        _ => None,
    }
}

/// Sets what `signal` does where `to` says: what it did before (its
/// handler, or `SIG_DFL` or `SIG_IGN`).
fn sigaction(signal: c_int, to: Option<Disposition>) -> io::Result<libc::sighandler_t> {
    let mut action = empty_action();
    action.sa_sigaction = match to {
        Some(Disposition::Ignore) => libc::SIG_IGN,
        Some(Disposition::Default) | None => libc::SIG_DFL,
    };
    let new: *const libc::sigaction = match to {
        Some(_) => &action,
        None => std::ptr::null(),
    };
    let mut old = empty_action();
    // SAFETY: `new` is null or a sigaction of this frame with no handler
    // function; the old one is written into another of this frame.
    let done = unsafe { libc::sigaction(signal, new, &mut old) };
    if done == 0 {
        Ok(old.sa_sigaction)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Unblocks every signal of this thread: a child inherits its parent's mask.
pub fn unblock_signals() {
    let none = SigSet::empty();
    let _ = signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&none), None);
}

/// Every signal of this thread blocked until it is dropped, which puts the
/// mask back as it was: no handler of this process's runs meanwhile.
#[derive(Debug)]
pub struct AllBlocked {
    old: SigSet,
}

impl AllBlocked {
    /// Blocks every signal of this thread.
    pub fn new() -> io::Result<AllBlocked> {
        let old = SigSet::all().thread_swap_mask(SigmaskHow::SIG_SETMASK)?;
        Ok(AllBlocked { old })
    }
}

impl Drop for AllBlocked {
    fn drop(&mut self) {
        let _ = self.old.thread_set_mask();
    }
}

/// Ends this process by `signal`, with its default action, so that a
/// parent reads the same end the program had.
pub fn die(signal: c_int) -> ! {
    let _ = set_signal(signal, Disposition::Default);
    unblock_signals();
    // Raw: rustix names no real-time signal, and a program may die by one.
    // SAFETY: `kill` takes no pointer; a bad number is refused.
    unsafe { libc::kill(rustix::process::getpid().as_raw_nonzero().get(), signal) };
    exit_now(128 + signal)
}

/// Forks this process: nix's `fork`, whose contract every caller keeps:
/// where the caller has other threads, the child makes only
/// async-signal-safe calls (no allocation, no lock) until it execs or ends.
pub use nix::unistd::{ForkResult, fork};

/// A sigaction of the default action, no flag and no signal masked.
fn empty_action() -> libc::sigaction {
    libc::sigaction {
        sa_sigaction: libc::SIG_DFL,
        sa_mask: *SigSet::empty().as_ref(),
        sa_flags: 0,
        sa_restorer: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Setting and reading back agree, and the default is restored: a
    /// `set_signal` that ignored its argument fails here.
    #[test]
    fn a_signal_set_reads_back() {
        let signal = libc::SIGUSR2;
        set_signal(signal, Disposition::Ignore).unwrap();
        assert_eq!(signal_disposition(signal), Some(Disposition::Ignore));
        set_signal(signal, Disposition::Default).unwrap();
        assert_eq!(signal_disposition(signal), Some(Disposition::Default));
    }

    /// A signal number the kernel refuses is an error, not a silent success.
    #[test]
    fn an_unknown_signal_is_refused() {
        assert!(set_signal(0, Disposition::Default).is_err());
        assert_eq!(signal_disposition(-1), None);
    }

    /// A forked child that dies by a signal is seen to die by it; one that
    /// calls `exit_now` is seen to exit with its code.
    #[test]
    fn die_and_exit_now_end_as_they_say() {
        // A real-time signal too: rustix names none.
        let late = libc::SIGRTMIN() + 6;
        for (end, expect) in [(0, libc::SIGTERM), (1, 7), (2, late)] {
            let status = crate::namespaces::fork_ending(|| match end {
                0 => die(libc::SIGTERM),
                2 => die(late),
                _ => 7,
            })
            .unwrap();
            if end != 1 {
                assert_eq!(status.terminating_signal(), Some(expect));
            } else {
                assert_eq!(status.exit_status(), Some(expect));
            }
        }
    }
}

/// A child's end as `wait4` tells it: its pid, its wait status, and the
/// processor time it and the children it waited for used; None where
/// `WNOHANG` found none ended. rustix's waits leave the usage out.
pub fn wait_with_usage(
    pid: libc::pid_t,
    options: c_int,
) -> io::Result<Option<(libc::pid_t, c_int, libc::rusage)>> {
    let mut status = 0;
    let never = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut usage = libc::rusage {
        ru_utime: never,
        ru_stime: never,
        ru_maxrss: 0,
        ru_ixrss: 0,
        ru_idrss: 0,
        ru_isrss: 0,
        ru_minflt: 0,
        ru_majflt: 0,
        ru_nswap: 0,
        ru_inblock: 0,
        ru_oublock: 0,
        ru_msgsnd: 0,
        ru_msgrcv: 0,
        ru_nsignals: 0,
        ru_nvcsw: 0,
        ru_nivcsw: 0,
    };
    // SAFETY: writes a status and a rusage of this frame.
    let waited = unsafe { libc::wait4(pid, &mut status, options, &mut usage) };
    match waited {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        pid => Ok(Some((pid, status, usage))),
    }
}

#[cfg(test)]
mod wait_tests {
    use super::*;

    /// The child's pid and status come back, and its processor time: a
    /// wrapper that dropped the usage, or the status, fails here.
    #[test]
    fn a_child_is_waited_for_with_its_usage() {
        // Busy a while: its time is more than nothing.
        let busy = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 5";
        let spawned = std::process::Command::new("/bin/sh")
            .args(["-c", busy])
            .spawn();
        let child = spawned.unwrap().id() as libc::pid_t;
        let (pid, status, usage) = wait_with_usage(child, 0).unwrap().unwrap();
        assert_eq!(pid, child);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 5);
        let micros = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
        let used = micros(usage.ru_utime) + micros(usage.ru_stime);
        assert!(used > 0, "{used} µs");
    }
}

/// Makes the namespaces `flags` name this process's own. Refuses to unshare
/// the descriptor table (`FILES`): another thread would lose descriptors it
/// holds, which is why rustix calls its `unshare` unsafe (nix's, used here,
/// leaves that to its caller).
pub fn unshare(flags: rustix::thread::UnshareFlags) -> io::Result<()> {
    if flags.contains(rustix::thread::UnshareFlags::FILES) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let flags = CloneFlags::from_bits_retain(flags.bits() as c_int);
    Ok(nix::sched::unshare(flags)?)
}

/// The pid of the process at the other end of the Unix socket `sock` when
/// it connected (`SO_PEERCRED`): 0 where there is none. rustix's
/// `socket_peercred` cannot hold that 0.
pub fn peer_pid(sock: std::os::fd::BorrowedFd<'_>) -> io::Result<libc::pid_t> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    Ok(getsockopt(&sock, PeerCredentials)?.pid())
}

/// Blocks SIGCHLD for this thread and returns a descriptor it is read from
/// instead (non-blocking, closed on exec): for an init that waits for a
/// word and reaps orphans in one `poll`.
pub fn children_signals() -> io::Result<std::os::fd::OwnedFd> {
    let set = SigSet::from(Signal::SIGCHLD);
    let _ = signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
    let flags = SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK;
    Ok(SignalFd::with_flags(&set, flags)?.into())
}

/// The flags (`IFF_*`) of the network interface `name` of `sock`'s
/// network namespace, as `SIOCGIFFLAGS` says them: rustix asks none.
pub fn interface_flags(sock: std::os::fd::BorrowedFd<'_>, name: &[u8]) -> io::Result<c_int> {
    use std::os::fd::AsRawFd;
    /// `struct ifreq` as `SIOCGIFFLAGS` fills it: the name, then the flags
    /// where its union begins (a plain struct: no union to read).
    #[repr(C)]
    struct FlagsRequest {
        name: [libc::c_char; libc::IFNAMSIZ],
        flags: libc::c_short,
        rest: [u8; 22],
    }
    const _: () = assert!(size_of::<FlagsRequest>() == size_of::<libc::ifreq>());
    let mut req = FlagsRequest {
        name: [0; libc::IFNAMSIZ],
        flags: 0,
        rest: [0; 22],
    };
    if name.is_empty() || name.len() >= req.name.len() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    for (to, from) in req.name.iter_mut().zip(name) {
        *to = *from as libc::c_char;
    }
    // SAFETY: fills the flags of an ifreq of this frame (its layout), its
    // name NUL-terminated.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(c_int::from(req.flags))
}

/// Starts a clone of this process (`libc::clone` with `flags`) that runs
/// `work` on the stack whose top is `top`, and ends with what it returns:
/// its pid.
///
/// # Safety
/// The stack and `work` (with all it borrows) must outlive the clone's use
/// of them: the caller waits for it (`CLONE_VFORK`), or never returns before
/// it has ended. Sharing memory (`CLONE_VM`), `work` makes system calls only.
pub unsafe fn clone_running(
    top: usize,
    flags: libc::c_int,
    work: &mut &mut dyn FnMut() -> libc::c_int,
) -> std::io::Result<libc::pid_t> {
    extern "C" fn trampoline(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is `work` below, alive while the clone runs (the
        // caller's word).
        let work = unsafe { &mut *arg.cast::<&mut dyn FnMut() -> libc::c_int>() };
        work()
    }
    let arg: *mut &mut dyn FnMut() -> libc::c_int = work;
    // SAFETY: the child runs `trampoline` on the caller's stack, which with
    // `work` outlives it (the caller's word).
    let pid = unsafe { libc::clone(trampoline, top as *mut libc::c_void, flags, arg.cast()) };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(pid)
}

#[cfg(test)]
mod appended_tests {
    use super::*;

    /// `FILES` is refused before any system call; other namespaces are
    /// unshared (none asked: the call itself succeeds).
    #[test]
    fn unshare_refuses_the_descriptor_table() {
        use rustix::thread::UnshareFlags;
        let refused = unshare(UnshareFlags::FILES).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::EINVAL));
        unshare(UnshareFlags::empty()).unwrap();
    }

    /// A child's end is read from the descriptor, in a fork (a single
    /// thread, as the init that uses it: SIGCHLD would go to another
    /// thread): a set with the wrong bit, or a mask not blocked, reads
    /// nothing and the fork says so.
    #[test]
    fn a_childs_end_is_read_from_children_signals() {
        use crate::namespaces::in_a_fork;
        let read = in_a_fork(|| {
            let Ok(signals) = children_signals() else {
                return false;
            };
            // A child that ends at once: its SIGCHLD stays pending here.
            let _ = in_a_fork(|| true);
            use rustix::event::{PollFd, PollFlags, Timespec};
            let mut fds = [PollFd::new(&signals, PollFlags::IN)];
            let _ = rustix::event::poll(
                &mut fds,
                Some(&Timespec {
                    tv_sec: 10,
                    tv_nsec: 0,
                }),
            );
            let mut info = [0u8; 128];
            let read = rustix::io::read(&signals, &mut info);
            let signo = u32::from_ne_bytes([info[0], info[1], info[2], info[3]]);
            read == Ok(128) && signo == libc::SIGCHLD as u32
        });
        assert!(read);
    }

    /// The loopback interface says it is one, whether up or down; one that
    /// does not exist, or a name too long, is an error.
    #[test]
    fn an_interfaces_flags_are_the_kernels() {
        use rustix::net::{AddressFamily, SocketFlags, SocketType};
        use std::os::fd::AsFd;
        let sock = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC,
            None,
        )
        .unwrap();
        let lo = interface_flags(sock.as_fd(), b"lo").unwrap();
        assert_ne!(lo & libc::IFF_LOOPBACK, 0, "{lo:#x}");
        assert!(interface_flags(sock.as_fd(), b"no-such-if").is_err());
        assert!(interface_flags(sock.as_fd(), &[b'x'; 16]).is_err());
    }

    /// A clone that shares this memory (`clone_running`, through
    /// `in_a_clone`) runs its work and ends with its word: a trampoline
    /// that dropped the work, or an exit status lost, fails here.
    #[test]
    fn a_clone_runs_its_work_and_ends_with_its_word() {
        use std::sync::atomic::{AtomicI32, Ordering};
        for word in [true, false] {
            let seen = AtomicI32::new(0);
            let mut work = || {
                seen.store(7, Ordering::SeqCst);
                word
            };
            let said = crate::namespaces::in_a_clone(0, &mut work).unwrap();
            assert_eq!((said, seen.load(Ordering::SeqCst)), (word, 7));
        }
    }

    /// Every signal is blocked while the guard lives, and the mask is as
    /// it was after: a guard that blocked nothing, or restored nothing,
    /// fails here. In a thread of its own, whose mask is its own.
    #[test]
    fn all_blocked_blocks_until_dropped() {
        let masks = std::thread::spawn(|| {
            let blocked = |signal| SigSet::thread_get_mask().unwrap().contains(signal);
            let guard = AllBlocked::new().unwrap();
            let during = blocked(Signal::SIGUSR1) && blocked(Signal::SIGTERM);
            drop(guard);
            (during, blocked(Signal::SIGUSR1))
        });
        assert_eq!(masks.join().unwrap(), (true, false));
    }

    /// A connected socket's peer is the process at its other end (here,
    /// this one); an unconnected socket's is 0, which rustix's `Pid`
    /// cannot hold: a wrapper that read the wrong field fails here.
    #[test]
    fn a_sockets_peer_is_its_pid_or_0() {
        use std::os::fd::AsFd;
        let (one, _other) = std::os::unix::net::UnixStream::pair().unwrap();
        let me = std::process::id() as libc::pid_t;
        assert_eq!(peer_pid(one.as_fd()).unwrap(), me);
        let alone = std::os::unix::net::UnixDatagram::unbound().unwrap();
        assert_eq!(peer_pid(alone.as_fd()).unwrap(), 0);
    }
}
