//! A cage whose program goes on with the watcher's memory (a Python server
//! forked per trial): the init is a clone sharing it, the program a fork.

use std::os::fd::RawFd;

use crate::descriptors::close_all_but;
use crate::init::{CLONE_STACK, LINGER_MS, die, others_stay, read_word};
use crate::mounts::{Root, build_root};

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
pub(crate) unsafe fn start_forked(
    root: &Root,
    report: [RawFd; 2],
    left: Option<RawFd>,
) -> std::io::Result<()> {
    // SAFETY: `enter_root`'s namespaces made, in the child before exec: the
    // clone runs on a stack mapped here, and reads `forked`, which outlives it.
    unsafe {
        let check = |result: libc::c_int| {
            if result == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        // The watcher's word to the init: "S" the program started, "E" it
        // ended.
        let mut telling = [0; 2];
        check(libc::pipe2(telling.as_mut_ptr(), libc::O_CLOEXEC))?;
        let stack = libc::mmap(
            std::ptr::null_mut(),
            CLONE_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut forked = Forked {
            root,
            report: report[1],
            unused: report[0],
            told: telling[0],
            telling: telling[1],
        };
        let init_pid = libc::clone(
            forked_init_entry,
            ((stack as usize + CLONE_STACK) & !15) as *mut libc::c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            (&raw mut forked).cast(),
        );
        if init_pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::close(report[1]);
        libc::close(telling[0]);
        let word = read_word(report[0]);
        let program = match word {
            Some(0) => libc::fork(),
            _ => -1,
        };
        if program == 0 {
            // The program: its working directory the trial's, in the new
            // root; nothing of the watcher's and the init's.
            libc::close(report[0]);
            libc::close(telling[1]);
            libc::munmap(stack, CLONE_STACK);
            check(libc::chdir(root.work.as_ptr()))?;
            return Ok(());
        }
        if program > 0 {
            libc::write(telling[1], b"S".as_ptr().cast(), 1);
            watch_forked(init_pid, program, [report[0], telling[1]], left);
        }
        // The init could not build the root (its errno), or the program
        // could not be forked (this process's).
        let errno = match word {
            Some(0) => *libc::__errno_location(),
            Some(errno) => errno,
            None => libc::ECHILD,
        };
        libc::kill(init_pid, libc::SIGKILL);
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        libc::close(report[0]);
        libc::close(telling[1]);
        Err(std::io::Error::from_raw_os_error(errno))
    }
}

/// What the init of `start_forked` reads (on the watcher's stack, in the
/// memory both share).
struct Forked<'a> {
    root: &'a Root,
    /// The init's end of the report pipe (to the watcher).
    report: RawFd,
    /// The watcher's end, closed by the init.
    unused: RawFd,
    /// The init's end of the watcher's word.
    told: RawFd,
    /// The watcher's end of it, closed by the init.
    telling: RawFd,
}

/// The init of `start_forked`: PID 1, killed if the watcher dies. Builds the
/// root, says so (a word of 0, or the errno), then reaps the namespace's
/// orphans until the watcher says the program ended. System calls only.
extern "C" fn forked_init_entry(arg: *mut libc::c_void) -> libc::c_int {
    let forked = arg.cast::<Forked>();
    // SAFETY: `arg` is the watcher's `Forked`, alive while the watcher waits
    // for this init's word (and, once the word is 0, for ever: the watcher
    // never returns); only system calls.
    unsafe {
        let report = (*forked).report;
        let told = (*forked).told;
        let say = |errno: libc::c_int| {
            libc::write(report, errno.to_ne_bytes().as_ptr().cast(), 4);
        };
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close((*forked).unused);
        libc::close((*forked).telling);
        if let Err(err) = build_root((*forked).root) {
            say(err.raw_os_error().unwrap_or(libc::EIO));
            libc::_exit(1);
        }
        // The orphans it reaps (its own signal mask: not the watcher's).
        let mut children: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut children);
        libc::sigaddset(&mut children, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &children, std::ptr::null_mut());
        let signals = libc::signalfd(-1, &children, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if signals < 0 {
            say((*libc::__errno_location()).max(1));
            libc::_exit(1);
        }
        let scrub = (*forked).root.scrub;
        say(0);
        forked_init(report, told, signals, &scrub)
    }
}

/// The rest of `start_forked`'s init, as `init`: reaps every orphan of the
/// namespace until the watcher says the program ended ("E"), waits up to
/// `LINGER` for the others to end too, and tells the watcher whether
/// others were still running, then exits, which kills them. The memory it
/// shares with the watcher is made not dumpable and its command line is
/// wiped once the program has its own copy of it ("S"): before, the
/// program would be forked not dumpable too (its judge could no longer
/// read its descriptors) and without its command line.
unsafe fn forked_init(
    report: RawFd,
    told: RawFd,
    signals: RawFd,
    scrub: &[(usize, usize); 2],
) -> ! {
    // SAFETY: the init's own descriptors and signals; `scrub` points into this
    // process's memory, wiped once the program has its own copy.
    unsafe {
        close_all_but(0, &mut [report, told, signals]);
        libc::prctl(libc::PR_SET_NAME, c"init".as_ptr(), 0, 0, 0);
        loop {
            let mut polled = [
                libc::pollfd {
                    fd: told,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: signals,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            if libc::poll(polled.as_mut_ptr(), 2, -1) < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            if polled[1].revents != 0 {
                let mut info = [0u8; 128];
                while libc::read(signals, info.as_mut_ptr().cast(), info.len()) > 0 {}
                while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
            }
            if polled[0].revents != 0 {
                let mut byte = 0u8;
                let n = libc::read(told, (&raw mut byte).cast(), 1);
                if n == 1 && byte == b'S' {
                    libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
                    for &(start, end) in scrub {
                        if start != 0 && start < end {
                            std::ptr::write_bytes(start as *mut u8, 0, end - start);
                        }
                    }
                } else if !(n < 0 && *libc::__errno_location() == libc::EINTR) {
                    // "E", or the watcher is gone.
                    break;
                }
            }
        }
        let others = u8::from(others_stay(LINGER_MS));
        libc::write(report, (&raw const others).cast(), 1);
        libc::_exit(0)
    }
}

/// The watcher of `start_forked`: waits for the program, its child, tells
/// the init, then ends as the program did (as `watch`, and as it, says on
/// `left` whether others were still running). Killed, it takes the
/// namespace with it (the init's parent-death signal).
unsafe fn watch_forked(
    init_pid: libc::pid_t,
    program: libc::pid_t,
    [report, telling]: [RawFd; 2],
    left: Option<RawFd>,
) -> ! {
    // SAFETY: the watcher's waits and writes on its own children and descriptors.
    unsafe {
        close_all_but(0, &mut [report, telling, left.unwrap_or(-1)]);
        // The init may be gone (killed): its end of the pipe with it.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let mut ended = 0;
        loop {
            let pid = libc::waitpid(program, &mut ended, 0);
            if pid == program {
                break;
            }
            if pid < 0 && *libc::__errno_location() != libc::EINTR {
                ended = libc::SIGKILL;
                break;
            }
        }
        libc::write(telling, b"E".as_ptr().cast(), 1);
        let mut others = 0u8;
        let got = loop {
            let n = libc::read(report, (&raw mut others).cast(), 1);
            if !(n < 0 && *libc::__errno_location() == libc::EINTR) {
                break n;
            }
        };
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        if got != 1 {
            // The init was killed before the program ended.
            die(libc::SIGKILL);
        }
        if others != 0
            && let Some(fd) = left
        {
            libc::write(fd, b"L".as_ptr().cast(), 1);
        }
        if libc::WIFEXITED(ended) {
            libc::_exit(libc::WEXITSTATUS(ended));
        }
        if libc::WIFSIGNALED(ended) {
            die(libc::WTERMSIG(ended));
        }
        die(libc::SIGKILL)
    }
}

#[cfg(test)]
mod tests;
