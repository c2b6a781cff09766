//! The PID namespace's init and the watcher outside it: the init reaps and
//! reports how the program ended, the watcher ends as the program did.

use std::os::fd::{IntoRawFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

use rustix::process::{Pid, Signal, WaitOptions};

use crate::cage::Plan;
use crate::descriptors::{borrowed, close, keep_only};
use crate::last::{Serve, restrict, serve_from};
use crate::mounts::{Root, build_root};
use crate::sys::{self, ForkResult, clone_running, die, exit_now};

/// Forks the cage's child again (for the init, the program): this crate's
/// one fork between fork and exec, under the entries' contract (`enter`).
pub(crate) fn fork_again() -> std::io::Result<ForkResult> {
    // SAFETY: `enter`'s callers' word: this process
    // is single-threaded, or a child that makes system calls only until it
    // executes, and so is its fork (the watcher's, the init's code is ours).
    let forked = unsafe { sys::fork() };
    Ok(forked?)
}

/// A pipe of two raw numbers (read, write), closed on exec: each process
/// of the cage closes its copies of them by number.
pub(crate) fn report_pipe() -> std::io::Result<[RawFd; 2]> {
    let (read, write) = std::io::pipe()?;
    Ok([read.into_raw_fd(), write.into_raw_fd()])
}

/// The size of each of the two stacks of `start_cloned` (the init's, the
/// program's until it executes): what their system calls need, many times.
pub(crate) const CLONE_STACK: usize = 128 << 10;

/// Memory for the stacks of a cage's clones (`start_cloned`,
/// `start_forked`), made by the parent before it forks: its child may not
/// allocate. Empty where the plan starts no PID namespace.
#[derive(Debug, Default)]
pub struct Stacks(Vec<u8>);

impl Stacks {
    /// What entering `plan` needs (`enter`).
    pub fn for_plan(plan: &Plan) -> Stacks {
        let len = if plan.root.is_some() {
            2 * CLONE_STACK
        } else {
            0
        };
        Stacks(vec![0; len])
    }

    /// The tops of its two stacks, each aligned to 16 bytes (a stack grows
    /// down from its top): an error where it has no room for them.
    pub(crate) fn tops(&mut self) -> std::io::Result<[usize; 2]> {
        if self.0.len() < 2 * CLONE_STACK {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        let start = self.0.as_mut_ptr() as usize;
        Ok([start + CLONE_STACK, start + 2 * CLONE_STACK].map(|top| top & !15))
    }
}

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
pub(crate) fn start_cloned(
    root: &Root,
    report: [RawFd; 2],
    left: Option<RawFd>,
    serve: Serve<'_>,
    stacks: &mut Stacks,
) -> std::io::Result<()> {
    // The init's stack above, the program's below.
    let [program_top, init_top] = stacks.tops()?;
    // The program's errno where it could not be executed (0: it was).
    let failed = AtomicI32::new(0);
    // The program of `start_cloned`: the rest of the cage, then its program.
    let mut program = || -> libc::c_int {
        close(report[1]);
        let entered = match serve.listener {
            Some(listener) => serve_from(listener, serve.ruleset),
            None => restrict(serve.ruleset),
        };
        let errno = match entered {
            Ok(()) => serve.exec.execute(),
            Err(err) => err.raw_os_error().unwrap_or(libc::EIO),
        };
        failed.store(errno.max(1), Ordering::SeqCst);
        exit_now(127)
    };
    let mut program: &mut dyn FnMut() -> libc::c_int = &mut program;
    // The init of `start_cloned`: PID 1, killed if the watcher dies.
    let mut init_work = || -> libc::c_int {
        let say = |errno: libc::c_int| {
            let _ = rustix::io::write(borrowed(report[1]), &errno.to_ne_bytes());
        };
        let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
        close(report[0]);
        if let Err(err) = build_root(root) {
            say(err.raw_os_error().unwrap_or(libc::EIO));
            exit_now(1);
        }
        // Suspended until the program has executed (or ended): its stack
        // and what it reads stay as they are meanwhile.
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
        // SAFETY: this init waits until the program has executed or ended
        // (CLONE_VFORK); its stack and `program` live in the watcher's frame.
        let started = unsafe { clone_running(program_top, flags, &mut program) };
        let program_pid = match started {
            Ok(pid) => pid,
            Err(err) => {
                say(err.raw_os_error().unwrap_or(0).max(1));
                exit_now(1);
            }
        };
        let failed = failed.load(Ordering::SeqCst);
        if failed != 0 {
            // Its zombie goes with this namespace.
            say(failed);
            exit_now(1);
        }
        say(0);
        init(program_pid, report[1], &root.scrub)
    };
    let mut init_work: &mut dyn FnMut() -> libc::c_int = &mut init_work;
    // SAFETY: the stacks are the caller's, held until this returns, and
    // `init_work` (with all it borrows) lives on this frame, which outlives
    // the init: it ends in `watch`, or reaps the init first.
    let init_pid =
        unsafe { clone_running(init_top, libc::CLONE_VM | libc::SIGCHLD, &mut init_work) }?;
    // The init's word: only the init holds the pipe's other end now.
    close(report[1]);
    let word = read_word(report[0]);
    if word == Some(0) {
        watch(init_pid, report[0], left);
    }
    // The init has ended (or was killed) before the program started.
    reap(init_pid);
    close(report[0]);
    Err(std::io::Error::from_raw_os_error(
        word.unwrap_or(libc::ECHILD),
    ))
}

/// Waits for the child `pid` to end, through interruptions: its status,
/// None where it cannot be waited for.
pub(crate) fn reap(pid: libc::pid_t) -> Option<libc::c_int> {
    let pid = Pid::from_raw(pid)?;
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(ended) => return ended.map(|(_, status)| status.as_raw()),
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
}

/// Reads all of `buf` from `fd`, through interruptions: how much it got
/// before the writer ended or an error.
pub(crate) fn read_all(fd: RawFd, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match rustix::io::read(borrowed(fd), &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
    }
    got
}

/// Reads a word of 4 bytes (an errno, 0 for none) from `fd`: None where the
/// writer ended first.
pub(crate) fn read_word(fd: RawFd) -> Option<libc::c_int> {
    let mut word = [0u8; 4];
    (read_all(fd, &mut word) == word.len()).then(|| i32::from_ne_bytes(word))
}

/// Wipes the command line and environment the ranges of `scrub` hold, in
/// place: nothing of fencelab's in the init's `/proc/1/cmdline`.
pub(crate) fn wipe(scrub: &[(usize, usize); 2]) {
    for &(start, end) in scrub {
        if start != 0 && start < end {
            // SAFETY: `mounts::arguments_and_environment` read these ranges
            // of this process's memory from the kernel: mapped, writable,
            // and nothing of Rust's refers to them.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
        }
    }
}

/// The PID namespace's init: reaps every process of the namespace until the
/// program ends, waits up to `LINGER` for the others to end too, tells the
/// watcher how the program ended and whether others were still running,
/// then exits, which kills them. Whatever is left dies with the namespace,
/// however it hid: double-forked, in a session of its own, its environment
/// cleared. Runs no code but system calls.
pub(crate) fn init(program: libc::pid_t, report: RawFd, scrub: &[(usize, usize); 2]) -> ! {
    keep_only(0, &mut [report, -1]);
    // Nothing of fencelab's in /proc/1: not its memory, descriptors or
    // environment (not dumpable), not its command line (wiped).
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    let _ = rustix::thread::set_name(c"init");
    wipe(scrub);
    let mut ended = libc::SIGKILL;
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid.as_raw_nonzero().get() == program => {
                ended = status.as_raw();
                break;
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
    }
    let mut message = [0u8; 5];
    message[..4].copy_from_slice(&ended.to_ne_bytes());
    message[4] = u8::from(others_stay(LINGER_MS));
    let _ = rustix::io::write(borrowed(report), &message);
    exit_now(0)
}

/// How long the other processes of a namespace may outlive its program
/// before they count as left behind (as `engine::process` waits for a group).
pub(crate) const LINGER_MS: u64 = 300;

/// Whether the init still has a live child after `ms` milliseconds of
/// reaping (every live process of the namespace descends from one).
pub(crate) fn others_stay(ms: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    let mut pause_us = 100;
    loop {
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some(_)) => continue,
            // No child at all (or no wait): nothing is left.
            Err(_) => return false,
            Ok(None) => {}
        }
        if std::time::Instant::now() >= deadline {
            return true;
        }
        let pause = rustix::thread::Timespec {
            tv_sec: 0,
            tv_nsec: pause_us * 1000,
        };
        let _ = rustix::thread::nanosleep(&pause);
        pause_us = (pause_us * 2).min(10_000);
    }
}

/// The watcher: the process fencelab started, outside the PID namespace. It
/// waits for the init's word, then ends as the program did (the same exit
/// status, or killed by the same signal), so that fencelab's verdicts see the
/// program's own end. Killed (a timeout, a flood, fencelab's death), it takes
/// the namespace with it (the init's parent-death signal).
pub(crate) fn watch(init_pid: libc::pid_t, report: RawFd, left: Option<RawFd>) -> ! {
    keep_only(0, &mut [report, left.unwrap_or(-1)]);
    let mut message = [0u8; 5];
    let got = read_all(report, &mut message);
    reap(init_pid);
    if got < message.len() {
        // The init was killed before the program ended.
        die(libc::SIGKILL);
    }
    if message[4] != 0
        && let Some(fd) = left
    {
        let _ = rustix::io::write(borrowed(fd), b"L");
    }
    end_as(i32::from_ne_bytes([
        message[0], message[1], message[2], message[3],
    ]))
}

/// Ends this process as the program whose wait status is `ended` did: the
/// same exit status, or killed by the same signal.
pub(crate) fn end_as(ended: libc::c_int) -> ! {
    if libc::WIFEXITED(ended) {
        exit_now(libc::WEXITSTATUS(ended));
    }
    if libc::WIFSIGNALED(ended) {
        die(libc::WTERMSIG(ended));
    }
    die(libc::SIGKILL)
}

#[cfg(test)]
mod tests;
