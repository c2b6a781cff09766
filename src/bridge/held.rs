//! The implementation's process as this judge holds it: what starting it
//! made, its pid, and its reaping when the judge exits. Between `client`,
//! which calls it, and `start`, which starts it.

use std::path::PathBuf;
use std::process::{Child, ChildStdin};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, WaitOptions, waitpid};

use super::capture::{Output, Rename};
use super::said::{Said, Who};

/// The implementation's process for this test.
pub(super) struct Server {
    pub(super) socket: PathBuf,
    /// fencelab's paths in what the implementation says, and what to show
    /// instead (none known when the runner started it).
    pub(super) rename: Arc<Rename>,
    /// Whether it hosts a Python implementation (whose exceptions fail a
    /// call, where a Rust one's panics do).
    pub(super) python: bool,
    /// The process, when this judge started it (not when the runner did, for
    /// an untrusted judge: it then knows only the socket).
    pub(super) spawned: Option<Spawned>,
}

/// The implementation's process as the judge that started it holds it.
pub(super) struct Spawned {
    pub(super) child: Mutex<Process>,
    /// Held open so that the server sees end-of-file when the judge goes away.
    pub(super) _stdin: ChildStdin,
    pub(super) stdout: Arc<Output>,
    pub(super) stderr: Arc<Output>,
}

/// The implementation's process: this judge's child, or the child of the
/// forking server the runner started (`zygote`), known by its watcher's pid.
pub(super) enum Process {
    Child(Child),
    Forked,
}

/// Whether the implementation's process is the forking server's child.
pub(super) static FORKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The implementation's process id, for `reap_server` (0: none).
pub(super) static SERVER_PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The judge's exit status when the implementation left processes running.
pub(crate) const LEFT_BEHIND_STATUS: i32 = 87;
/// The judge's exit status when it could not start the implementation's
/// process at all (its program is missing, say): fencelab's failure, never
/// the implementation's, so it is not a test outcome. The implementation's
/// code has not run in this judge when this happens, so it cannot cause it.
pub(crate) const NOT_STARTED_STATUS: i32 = 86;

/// Ends the judge with `NOT_STARTED_STATUS`, saying why on stderr.
pub(super) fn not_started(why: std::fmt::Arguments) -> ! {
    // Straight to the file descriptor: libtest captures `eprintln!`, and the
    // process ends before it would show what it captured.
    let line = Said::CouldNotStart {
        why: why.to_string(),
    }
    .line()
        + "\n";
    // Then ends the process at once, with the status the runner reads.
    let _ = rustix::io::write(rustix::stdio::stderr(), line.as_bytes());
    super::sandbox::sys::exit_now(NOT_STARTED_STATUS)
}

/// Kills and collects the implementation's process when the judge exits, so
/// that it never lingers as an orphan or a zombie in the trial's group; then
/// kills whatever it left running. The judge is a subreaper, so everything the
/// implementation started and abandoned (even in a session of its own) is the
/// judge's child by now; finding one makes the judge exit with
/// `LEFT_BEHIND_STATUS`, which fails the test.
pub(super) extern "C" fn reap_server() {
    let pid = SERVER_PID.load(Ordering::SeqCst);
    // What it started in its cage's PID namespace dies with it, unseen by
    // `kill_adopted`: counted first.
    let caged = if pid > 0 {
        super::sandbox::others_in_cage(pid)
    } else {
        0
    };
    // Its cage goes first: once the process is reaped, nothing of the cage
    // is left. A cage with a PID namespace of its own took everything the
    // program started with it, so only a cage without one can have left
    // processes for this judge to adopt (looking costs a scan of /proc).
    let namespaced = pid > 0 && super::sandbox::kill_cage(pid);
    if pid > 0 && FORKED.load(Ordering::SeqCst) {
        // The forking server reaps it, and says so.
        let _ = super::zygote::status(Duration::from_secs(5));
    } else if pid > 0 {
        // Our own child: reaped.
        let _ = waitpid(Pid::from_raw(pid), WaitOptions::empty());
    }
    let adopted = if pid != 0 && !namespaced {
        kill_adopted()
    } else {
        0
    };
    if pid != 0 && adopted + caged > 0 {
        println!("{}", LEFT_BEHIND.line());
        // At once, with the status the runner reads.
        super::sandbox::sys::exit_now(LEFT_BEHIND_STATUS)
    }
}

/// What a judge says of an implementation that left processes running.
pub(crate) const LEFT_BEHIND: Said = Said::LeftRunning {
    who: Who::Implementation,
};

/// Kills and reaps the processes this judge adopted; returns how many were
/// still running.
fn kill_adopted() -> usize {
    let me = std::process::id() as libc::pid_t;
    let mut running = 0;
    for pid in super::sandbox::proc::pids() {
        let Some(stat) = super::sandbox::proc::stat(pid).filter(|s| s.ppid == me) else {
            continue;
        };
        if stat.state != 'Z' {
            running += 1;
        }
        // Our (adopted) child: killed and reaped.
        if let Some(pid) = Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            let _ = waitpid(Some(pid), WaitOptions::empty());
        }
    }
    running
}
