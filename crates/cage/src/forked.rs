//! A cage whose program goes on with the watcher's memory (a Python server
//! forked per trial): the init is a clone sharing it, the program a fork.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use rustix::event::{PollFd, PollFlags};

use rustix::process::{Pid, Signal, WaitOptions};

use crate::descriptors::{borrowed, close, keep_only};
use crate::init::{
    LINGER_MS, Stacks, end_as, fork_again, others_stay, read_word, reap, report_pipe, wipe,
};
use crate::mounts::{Root, build_root};
use crate::sys::{self, Disposition, ForkResult, clone_running, die, exit_now};

/// `enter_root`'s namespaces made, for a program that is not executed from
/// here (it goes on with this process's memory: a Python server forked per
/// trial): the init is a clone that shares this process's memory
/// (`CLONE_VM`, on a stack of its own, system calls only), as in
/// `start_cloned`, and the program is this process's fork once the init has
/// built the root: PID 2, this process's child (not the init's), with a
/// copy of this memory as the init's fork of it would have had, where the
/// init's own copy, and its end, cost as much again. The program's working
/// directory becomes the trial's in the new root (this process's is left
/// in the old one, which the init unmounted). The watcher (this process)
/// waits for the program, tells the init it ended, and ends as the
/// program did, with the init's word on what else was still running
/// (`watch_forked`). Returns in the program only (to be executed by the
/// caller, or to go on as it is).
pub(crate) fn start_forked(
    root: &Root,
    report: [RawFd; 2],
    left: Option<RawFd>,
    stacks: &mut Stacks,
) -> std::io::Result<()> {
    // The watcher's word to the init: "S" the program started, "E" it
    // ended.
    let telling = report_pipe()?;
    let [top, _] = stacks.tops()?;
    // The init of `start_forked`: PID 1, killed if the watcher dies. Builds
    // the root, says so (a word of 0, or the errno), then reaps the
    // namespace's orphans until the watcher says the program ended.
    let mut init_work = || -> libc::c_int {
        let say = |errno: libc::c_int| {
            let _ = rustix::io::write(borrowed(report[1]), &errno.to_ne_bytes());
        };
        let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
        close(report[0]);
        close(telling[1]);
        if let Err(err) = build_root(root) {
            say(err.raw_os_error().unwrap_or(libc::EIO));
            exit_now(1);
        }
        // The orphans it reaps (its own signal mask: not the watcher's).
        let signals = match sys::children_signals() {
            Ok(signals) => signals,
            Err(err) => {
                say(err.raw_os_error().unwrap_or(0).max(1));
                exit_now(1);
            }
        };
        say(0);
        forked_init(report[1], telling[0], signals, &root.scrub)
    };
    let mut init_work: &mut dyn FnMut() -> libc::c_int = &mut init_work;
    // SAFETY: the stacks are the caller's, held until this returns, and
    // `init_work` (with all it borrows) lives on this frame, which outlives
    // the init: it ends in `watch_forked`, or kills and reaps the init first.
    let init_pid = unsafe { clone_running(top, libc::CLONE_VM | libc::SIGCHLD, &mut init_work) }?;
    close(report[1]);
    close(telling[0]);
    let word = read_word(report[0]);
    // The program, once the init has built the root.
    let program = (word == Some(0)).then(fork_again);
    match program {
        Some(Ok(ForkResult::Child)) => {
            // The program: its working directory the trial's, in the new
            // root; nothing of the watcher's and the init's.
            close(report[0]);
            close(telling[1]);
            rustix::process::chdir(root.work.as_c_str())?;
            return Ok(());
        }
        Some(Ok(ForkResult::Parent { child: program })) => {
            let _ = rustix::io::write(borrowed(telling[1]), b"S");
            watch_forked(init_pid, program.as_raw(), [report[0], telling[1]], left);
        }
        Some(Err(_)) | None => {}
    }
    // The init could not build the root (its errno), or the program
    // could not be forked (this process's).
    let errno = match (word, program) {
        (_, Some(Err(err))) => err.raw_os_error().unwrap_or(0),
        (Some(errno), _) => errno,
        (None, _) => libc::ECHILD,
    };
    if let Some(pid) = Pid::from_raw(init_pid) {
        let _ = rustix::process::kill_process(pid, Signal::KILL);
    }
    reap(init_pid);
    close(report[0]);
    close(telling[1]);
    Err(std::io::Error::from_raw_os_error(errno))
}

/// The rest of `start_forked`'s init, as `init`: reaps every orphan of the
/// namespace until the watcher says the program ended ("E"), waits up to
/// `LINGER` for the others to end too, and tells the watcher whether
/// others were still running, then exits, which kills them. The memory it
/// shares with the watcher is made not dumpable and its command line is
/// wiped once the program has its own copy of it ("S"): before, the
/// program would be forked not dumpable too (its judge could no longer
/// read its descriptors) and without its command line.
fn forked_init(report: RawFd, told: RawFd, signals: OwnedFd, scrub: &[(usize, usize); 2]) -> ! {
    keep_only(0, &mut [report, told, signals.as_raw_fd()]);
    let _ = rustix::thread::set_name(c"init");
    loop {
        let mut polled =
            [borrowed(told), signals.as_fd()].map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::IN));
        match rustix::event::poll(&mut polled, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        let ready = |at: usize| !polled[at].revents().is_empty();
        let (told_ready, signalled) = (ready(0), ready(1));
        if signalled {
            let mut info = [0u8; 128];
            while rustix::io::read(&signals, &mut info).is_ok_and(|n| n > 0) {}
            while rustix::process::wait(WaitOptions::NOHANG).is_ok_and(|reaped| reaped.is_some()) {}
        }
        if told_ready {
            let mut byte = [0u8];
            match rustix::io::read(borrowed(told), &mut byte) {
                Ok(1) if byte[0] == b'S' => {
                    let _ = rustix::process::set_dumpable_behavior(
                        rustix::process::DumpableBehavior::NotDumpable,
                    );
                    wipe(scrub);
                }
                Err(rustix::io::Errno::INTR) => {}
                // "E", or the watcher is gone.
                _ => break,
            }
        }
    }
    let others = u8::from(others_stay(LINGER_MS));
    let _ = rustix::io::write(borrowed(report), &[others]);
    exit_now(0)
}

/// The watcher of `start_forked`: waits for the program, its child, tells
/// the init, then ends as the program did (as `watch`, and as it, says on
/// `left` whether others were still running). Killed, it takes the
/// namespace with it (the init's parent-death signal).
fn watch_forked(
    init_pid: libc::pid_t,
    program: libc::pid_t,
    [report, telling]: [RawFd; 2],
    left: Option<RawFd>,
) -> ! {
    keep_only(0, &mut [report, telling, left.unwrap_or(-1)]);
    // The init may be gone (killed): its end of the pipe with it.
    let _ = sys::set_signal(libc::SIGPIPE, Disposition::Ignore);
    let ended = reap(program).unwrap_or(libc::SIGKILL);
    let _ = rustix::io::write(borrowed(telling), b"E");
    let mut others = [0u8];
    let got = loop {
        match rustix::io::read(borrowed(report), &mut others) {
            Err(rustix::io::Errno::INTR) => {}
            got => break got,
        }
    };
    reap(init_pid);
    if !matches!(got, Ok(1)) {
        // The init was killed before the program ended.
        die(libc::SIGKILL);
    }
    if others[0] != 0
        && let Some(fd) = left
    {
        let _ = rustix::io::write(borrowed(fd), b"L");
    }
    end_as(ended)
}

#[cfg(test)]
mod tests;
