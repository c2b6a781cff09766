//! The PID namespace's init and the watcher outside it: the init reaps and
//! reports how the program ended, the watcher ends as the program did.

use std::os::fd::RawFd;

use crate::contain::{Serve, restrict, serve_from};
use crate::descriptors::keep_only;
use crate::forked::start_forked;
use crate::mounts::{Root, build_root};
use crate::namespaces::enter_namespaces;

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
pub(crate) unsafe fn enter_root(
    root: &Root,
    left: Option<RawFd>,
    serve: Option<Serve<'_>>,
    forked: bool,
) -> std::io::Result<()> {
    let check = |result: libc::c_int| {
        if result == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    // SAFETY: the child between fork and exec: system calls on what the parent
    // prepared; each fork's or clone's side is kept apart by its return value.
    unsafe {
        if !enter_namespaces(&root.maps, root.own_net)? {
            // Where the kernel has no unprivileged user namespaces, the other
            // layers hold alone (fencelab said so at the start of the run).
            return Ok(());
        }
        // The init tells the watcher how the program ended.
        let mut report = [0; 2];
        check(libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC))?;
        if let Some(serve) = serve {
            return start_cloned(root, report, left, serve);
        }
        if forked {
            return start_forked(root, report, left);
        }
        let init_pid = libc::fork();
        if init_pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if init_pid > 0 {
            watch(init_pid, report[0], left);
        }
        // The init: PID 1 of the new namespace, killed if the watcher dies.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close(report[0]);
        build_root(root)?;
        let program = libc::fork();
        if program < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if program == 0 {
            // The program: on to the rest of the cage, then its own code.
            libc::close(report[1]);
            return Ok(());
        }
        init(program, report[1], &root.scrub)
    }
}

/// The size of each of the two stacks of `start_cloned` (the init's, the
/// program's until it executes): what their system calls need, many times.
pub(crate) const CLONE_STACK: usize = 128 << 10;

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
unsafe fn start_cloned(
    root: &Root,
    report: [RawFd; 2],
    left: Option<RawFd>,
    serve: Serve<'_>,
) -> std::io::Result<()> {
    // SAFETY: both stacks are mapped here and `cloned` lives on this frame,
    // which outlives both clones: it ends in `watch`, or reaps the init first.
    unsafe {
        let stacks = libc::mmap(
            std::ptr::null_mut(),
            2 * CLONE_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stacks == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // The init's stack above, the program's below; each grows down from
        // its top, aligned to 16 bytes.
        let program_top = (stacks as usize + CLONE_STACK) & !15;
        let init_top = (stacks as usize + 2 * CLONE_STACK) & !15;
        let mut cloned = Cloned {
            root,
            report: report[1],
            unused: report[0],
            serve,
            program_stack: program_top,
            failed: 0,
        };
        let init_pid = libc::clone(
            init_entry,
            init_top as *mut libc::c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            (&raw mut cloned).cast(),
        );
        if init_pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The init's word: only the init holds the pipe's other end now.
        libc::close(report[1]);
        let word = read_word(report[0]);
        if word == Some(0) {
            watch(init_pid, report[0], left);
        }
        // The init has ended (or was killed) before the program started.
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        libc::close(report[0]);
        Err(std::io::Error::from_raw_os_error(
            word.unwrap_or(libc::ECHILD),
        ))
    }
}

/// Reads a word of 4 bytes (an errno, 0 for none) from `fd`: None where the
/// writer ended first.
pub(crate) unsafe fn read_word(fd: RawFd) -> Option<libc::c_int> {
    let mut word = [0u8; 4];
    let mut got = 0;
    // SAFETY: reads into a buffer of this frame, its length given.
    unsafe {
        while got < word.len() {
            let n = libc::read(fd, word[got..].as_mut_ptr().cast(), word.len() - got);
            if n > 0 {
                got += n as usize;
            } else if !(n < 0 && *libc::__errno_location() == libc::EINTR) {
                return None;
            }
        }
    }
    Some(i32::from_ne_bytes(word))
}

/// What the init and the program of `start_cloned` share (on the watcher's
/// stack, in the memory all three share while the program has not executed).
struct Cloned<'a> {
    root: &'a Root,
    /// The init's end of the report pipe (to the watcher).
    report: RawFd,
    /// The watcher's end, closed by the init.
    unused: RawFd,
    serve: Serve<'a>,
    /// The top of the program's stack.
    program_stack: usize,
    /// The program's errno where it could not be executed (0: it was).
    failed: libc::c_int,
}

/// The init of `start_cloned`: PID 1, killed if the watcher dies.
extern "C" fn init_entry(arg: *mut libc::c_void) -> libc::c_int {
    let cloned = arg.cast::<Cloned>();
    // SAFETY: `arg` is the watcher's `Cloned`, alive while the watcher waits
    // for this init's word (and, once the word is 0, for ever: the watcher
    // never returns); only system calls, on what the parent prepared.
    unsafe {
        let report = (*cloned).report;
        let say = |errno: libc::c_int| {
            libc::write(report, errno.to_ne_bytes().as_ptr().cast(), 4);
        };
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close((*cloned).unused);
        if let Err(err) = build_root((*cloned).root) {
            say(err.raw_os_error().unwrap_or(libc::EIO));
            libc::_exit(1);
        }
        // Suspended until the program has executed (or ended): its stack
        // and what it reads stay as they are meanwhile.
        let program = libc::clone(
            program_entry,
            (*cloned).program_stack as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            arg,
        );
        if program < 0 {
            say((*libc::__errno_location()).max(1));
            libc::_exit(1);
        }
        let failed = std::ptr::read_volatile(&raw const (*cloned).failed);
        if failed != 0 {
            // Its zombie goes with this namespace.
            say(failed);
            libc::_exit(1);
        }
        say(0);
        init(program, report, &(*cloned).root.scrub)
    }
}

/// The program of `start_cloned`: the rest of the cage, then its program.
extern "C" fn program_entry(arg: *mut libc::c_void) -> libc::c_int {
    let cloned = arg.cast::<Cloned>();
    // SAFETY: as `init_entry`'s, whose clone this is (its parent suspended
    // until this executes or ends, CLONE_VFORK); only system calls.
    unsafe {
        libc::close((*cloned).report);
        let serve = (*cloned).serve;
        let entered = match serve.listener {
            Some(listener) => serve_from(listener, serve.ruleset),
            None => restrict(serve.ruleset),
        };
        let errno = match entered {
            Ok(()) => {
                libc::execve(
                    serve.exec.program.as_ptr(),
                    serve.exec.argv.as_ptr(),
                    serve.exec.envp.as_ptr(),
                );
                *libc::__errno_location()
            }
            Err(err) => err.raw_os_error().unwrap_or(libc::EIO),
        };
        std::ptr::write_volatile(&raw mut (*cloned).failed, errno.max(1));
        libc::_exit(127)
    }
}

/// The PID namespace's init: reaps every process of the namespace until the
/// program ends, waits up to `LINGER` for the others to end too, tells the
/// watcher how the program ended and whether others were still running,
/// then exits, which kills them. Whatever is left dies with the namespace,
/// however it hid: double-forked, in a session of its own, its environment
/// cleared. Runs no code but system calls.
unsafe fn init(program: libc::pid_t, report: RawFd, scrub: &[(usize, usize); 2]) -> ! {
    // SAFETY: the init's own children and descriptors; `scrub` points into its
    // memory (the command line and environment), wiped in place.
    unsafe {
        keep_only(report, -1);
        // Nothing of fencelab's in /proc/1: not its memory, descriptors or
        // environment (not dumpable), not its command line (wiped).
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_SET_NAME, c"init".as_ptr(), 0, 0, 0);
        for &(start, end) in scrub {
            if start != 0 && start < end {
                std::ptr::write_bytes(start as *mut u8, 0, end - start);
            }
        }
        let mut ended = libc::SIGKILL;
        loop {
            let mut status = 0;
            let pid = libc::waitpid(-1, &mut status, 0);
            if pid == program {
                ended = status;
                break;
            }
            if pid < 0 && *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        let mut message = [0u8; 5];
        message[..4].copy_from_slice(&ended.to_ne_bytes());
        message[4] = u8::from(others_stay(LINGER_MS));
        libc::write(report, message.as_ptr().cast(), message.len());
        libc::_exit(0)
    }
}

/// How long the other processes of a namespace may outlive its program
/// before they count as left behind (as `engine::process` waits for a group).
pub(crate) const LINGER_MS: i64 = 300;

/// Whether the init still has a live child after `ms` milliseconds of
/// reaping (every live process of the namespace descends from one).
pub(crate) unsafe fn others_stay(ms: i64) -> bool {
    // SAFETY: waits and sleeps on timespecs of this frame.
    unsafe {
        let now = || {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
            t.tv_sec * 1000 + t.tv_nsec / 1_000_000
        };
        let deadline = now() + ms;
        let mut pause_us = 100;
        loop {
            let reaped = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG);
            if reaped > 0 {
                continue;
            }
            if reaped < 0 {
                // No child at all: nothing is left.
                return false;
            }
            if now() >= deadline {
                return true;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: pause_us * 1000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
            pause_us = (pause_us * 2).min(10_000);
        }
    }
}

/// The watcher: the process fencelab started, outside the PID namespace. It
/// waits for the init's word, then ends as the program did (the same exit
/// status, or killed by the same signal), so that fencelab's verdicts see the
/// program's own end. Killed (a timeout, a flood, fencelab's death), it takes
/// the namespace with it (the init's parent-death signal).
unsafe fn watch(init_pid: libc::pid_t, report: RawFd, left: Option<RawFd>) -> ! {
    // SAFETY: the watcher's waits and writes on its own children and descriptors.
    unsafe {
        keep_only(report, left.unwrap_or(-1));
        let mut message = [0u8; 5];
        let mut got = 0;
        while got < message.len() {
            let n = libc::read(
                report,
                message[got..].as_mut_ptr().cast(),
                message.len() - got,
            );
            if n > 0 {
                got += n as usize;
            } else if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            } else {
                break;
            }
        }
        let mut status = 0;
        while libc::waitpid(init_pid, &mut status, 0) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        if got < message.len() {
            // The init was killed before the program ended.
            die(libc::SIGKILL);
        }
        if message[4] != 0
            && let Some(fd) = left
        {
            libc::write(fd, b"L".as_ptr().cast(), 1);
        }
        let ended = i32::from_ne_bytes([message[0], message[1], message[2], message[3]]);
        if libc::WIFEXITED(ended) {
            libc::_exit(libc::WEXITSTATUS(ended));
        }
        if libc::WIFSIGNALED(ended) {
            die(libc::WTERMSIG(ended));
        }
        die(libc::SIGKILL)
    }
}

/// Ends this process by `signal`, with its default action.
pub(crate) unsafe fn die(signal: libc::c_int) -> ! {
    // SAFETY: signal calls on zeroed structures of this frame; the process ends here.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(signal, &action, std::ptr::null_mut());
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
    }
}

#[cfg(test)]
mod tests;
