//! The few system calls no safe wrapper offers (rustix leaves signals and
//! `_exit` to its unstable runtime), wrapped once so callers need no `unsafe`.
//!
//! Every function here is async-signal-safe and allocates nothing: callers
//! run them between fork and exec of a multi-threaded parent.

use std::io;

use libc::c_int;

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
    let mut action = empty_action();
    action.sa_sigaction = match to {
        Disposition::Default => libc::SIG_DFL,
        Disposition::Ignore => libc::SIG_IGN,
    };
    // SAFETY: `action` is a valid sigaction of this frame with no handler
    // function; the old action is not asked for.
    let done = unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// What `signal` does now: `None` where a handler of the process's own is
/// installed (or the signal is not one).
pub fn signal_disposition(signal: c_int) -> Option<Disposition> {
    let mut action = empty_action();
    // SAFETY: writes the current action into a sigaction of this frame.
    let done = unsafe { libc::sigaction(signal, std::ptr::null(), &mut action) };
    match (done, action.sa_sigaction) {
        (0, libc::SIG_DFL) => Some(Disposition::Default),
        (0, libc::SIG_IGN) => Some(Disposition::Ignore),
        _ => None,
    }
}

/// Unblocks every signal of this thread: a child inherits its parent's mask.
pub fn unblock_signals() {
    let none = empty_set();
    // SAFETY: `none` is an initialised set of this frame; the old mask is
    // not asked for.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) };
}

/// Ends this process by `signal`, with its default action, so that a
/// parent reads the same end the program had.
pub fn die(signal: c_int) -> ! {
    let _ = set_signal(signal, Disposition::Default);
    unblock_signals();
    if let Some(named) = rustix::process::Signal::from_named_raw(signal) {
        let _ = rustix::process::kill_process(rustix::process::getpid(), named);
    }
    exit_now(128 + signal)
}

/// The process this call returned in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forked {
    /// The new process.
    Child,
    /// The caller, given the child's pid.
    Parent(libc::pid_t),
}

/// Forks this process.
///
/// # Safety
///
/// Where the caller has other threads, the child may only make
/// async-signal-safe calls (no allocation, no lock) until it execs or ends.
pub unsafe fn fork() -> io::Result<Forked> {
    // SAFETY: the caller's word, above.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

fn empty_action() -> libc::sigaction {
    // SAFETY: sigaction is plain data; all zeroes is a valid value.
    unsafe { std::mem::zeroed() }
}

fn empty_set() -> libc::sigset_t {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given.
    unsafe { libc::sigemptyset(set.as_mut_ptr()) };
    // SAFETY: initialised by sigemptyset just above.
    unsafe { set.assume_init() }
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
        for (end, expect) in [(0, libc::SIGTERM), (1, 7)] {
            // SAFETY: the child only makes async-signal-safe calls.
            match unsafe { fork() }.unwrap() {
                Forked::Child if end == 0 => die(libc::SIGTERM),
                Forked::Child => exit_now(7),
                Forked::Parent(pid) => {
                    let pid = rustix::process::Pid::from_raw(pid).unwrap();
                    let status =
                        rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty())
                            .unwrap()
                            .unwrap()
                            .1;
                    if end == 0 {
                        assert_eq!(status.terminating_signal(), Some(expect));
                    } else {
                        assert_eq!(status.exit_status(), Some(expect));
                    }
                }
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
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: writes a status and a rusage of this frame.
    let waited = unsafe { libc::wait4(pid, &mut status, options, usage.as_mut_ptr()) };
    match waited {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        // SAFETY: plain integers, zeroed, then written by `wait4`.
        pid => Ok(Some((pid, status, unsafe { usage.assume_init() }))),
    }
}

#[cfg(test)]
mod wait_tests {
    use super::*;

    /// The child's pid and status come back, and its processor time: a
    /// wrapper that dropped the usage, or the status, fails here.
    #[test]
    fn a_child_is_waited_for_with_its_usage() {
        // SAFETY: the child only makes async-signal-safe calls.
        let child = match unsafe { fork() }.unwrap() {
            Forked::Child => {
                // Busy a while: its time is more than nothing.
                let start = std::time::Instant::now();
                while start.elapsed() < std::time::Duration::from_millis(20) {}
                exit_now(5)
            }
            Forked::Parent(pid) => pid,
        };
        let (pid, status, usage) = wait_with_usage(child, 0).unwrap().unwrap();
        assert_eq!(pid, child);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 5);
        let micros = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
        let used = micros(usage.ru_utime) + micros(usage.ru_stime);
        assert!(used > 0, "{used} µs");
    }
}

/// Blocks SIGCHLD in this thread and opens a descriptor (close-on-exec,
/// non-blocking) that reads a record each time it comes: a single-threaded
/// process's children's ends, to poll. rustix makes no signalfd.
pub fn children_ended() -> io::Result<std::os::fd::OwnedFd> {
    let mut children = empty_set();
    // SAFETY: adds a signal to an initialised set of this frame.
    unsafe { libc::sigaddset(&mut children, libc::SIGCHLD) };
    // SAFETY: a set of this frame; the old mask is not asked for.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &children, std::ptr::null_mut()) };
    let flags = libc::SFD_CLOEXEC | libc::SFD_NONBLOCK;
    // SAFETY: a set of this frame; makes a new descriptor, or fails.
    match unsafe { libc::signalfd(-1, &children, flags) } {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: the new descriptor, this process's alone.
        fd => Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) }),
    }
}

#[cfg(test)]
mod children_ended_tests {
    use super::*;

    /// A child's end reads on the descriptor as a SIGCHLD record: a wrapper
    /// that left SIGCHLD unblocked, or watched another signal, fails here.
    /// In a forked child, single-threaded as its callers are.
    #[test]
    fn a_childs_end_reads_on_the_descriptor() {
        // SAFETY: the child only makes async-signal-safe calls.
        let tester = match unsafe { fork() }.unwrap() {
            Forked::Parent(pid) => pid,
            Forked::Child => {
                let Ok(ended) = children_ended() else {
                    exit_now(2)
                };
                // SAFETY: as above.
                match unsafe { fork() } {
                    Ok(Forked::Child) => exit_now(0),
                    Ok(Forked::Parent(_)) => {}
                    Err(_) => exit_now(3),
                }
                let mut record = [0u8; 128];
                for _ in 0..5000 {
                    if rustix::io::read(&ended, &mut record) == Ok(record.len()) {
                        let signal =
                            u32::from_ne_bytes([record[0], record[1], record[2], record[3]]);
                        exit_now(if signal == libc::SIGCHLD as u32 { 0 } else { 4 })
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                exit_now(5)
            }
        };
        let (_, status, _) = wait_with_usage(tester, 0).unwrap().unwrap();
        assert!(libc::WIFEXITED(status), "{status}");
        assert_eq!(libc::WEXITSTATUS(status), 0);
    }
}
