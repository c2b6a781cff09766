//! Child processes under limits, for everything fencelab runs that it does not
//! trust to end on its own (cargo, and every test of every implementation).
//!
//! Each child leads a process group of its own, so that a kill reaches whatever
//! it started too: at the deadline the group gets SIGTERM and, shortly after,
//! SIGKILL; when the child has ended, the group gets SIGKILL anyway to take down
//! anything left behind. Output goes to files, not pipes, so nothing waits on a
//! pipe that an orphan holds open, and only the first bytes of it are read back.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use crate::bridge::child::{self, Steps};
use crate::bridge::sandbox::proc;

mod light;
#[cfg(test)]
pub(crate) use light::run_light;
pub(crate) use light::{JudgeZygote, run_judge, start_light_serving};

/// The environment a judge (or a server the engine starts) begins with:
/// where the system's programs are (`SYSTEM_PATH`, never the grader's own
/// `PATH`: a learner's tests are a judge) and fencelab's locale.
pub(super) fn passed_on() -> impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os()
        .filter(|(key, _)| {
            let key = key.to_string_lossy();
            key == "LANG" || key.starts_with("LC_") || key == RANDOM_SEQUENCES_ENV
        })
        .chain([("PATH".into(), crate::bridge::protocol::SYSTEM_PATH.into())])
}

/// How many sequences each step's test of random calls runs, when set
/// (`tests/behaviour/random.rs`: `.ci/run` runs more on every wheat).
pub(crate) const RANDOM_SEQUENCES_ENV: &str = "FENCELAB_RANDOM_SEQUENCES";

/// The largest file a trial's process may write (`RLIMIT_FSIZE`).
pub(crate) const FILE_SIZE: u64 = 256 * 1024 * 1024;

/// What a child may use.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// Wall-clock time before the group is killed.
    pub time: Option<Duration>,
    /// How much of stdout and of stderr (each) is read back.
    pub output_cap: usize,
    /// The largest file the child may write (RLIMIT_FSIZE), so a flood of output
    /// cannot fill the disk.
    pub file_size: Option<u64>,
    /// The cage the child runs in, if it is untrusted (see `bridge::sandbox`).
    pub cage: Option<std::sync::Arc<crate::bridge::sandbox::Plan>>,
    /// The trial's space the child joins first (`bridge::sandbox::Space`).
    pub space: Option<std::sync::Arc<crate::bridge::sandbox::Join>>,
    /// Where another thread may stop the child before its limit
    /// (`engine::hangs`).
    pub stop: Option<std::sync::Arc<Stop>>,
}

/// A child that another thread may stop before its limit, as if it had
/// reached it (`engine::hangs`: a trial that spins or waits).
#[derive(Debug, Default)]
pub(crate) struct Stop {
    state: std::sync::Mutex<StopState>,
}

#[derive(Debug, Default)]
struct StopState {
    /// The child's pid, once started.
    pid: Option<libc::pid_t>,
    stopped: bool,
    /// Wakes `finish`, which waits for the child.
    wake: Option<mpsc::Sender<Ended>>,
}

/// What `finish` learns while it waits: the child ended, or is to be stopped.
type Ended = Option<std::io::Result<(ExitStatus, Duration)>>;

impl Stop {
    /// The child's pid, once it has started.
    pub(crate) fn pid(&self) -> Option<libc::pid_t> {
        self.lock().pid
    }

    /// Stops the child now (or as soon as it starts).
    pub(crate) fn stop(&self) {
        let mut state = self.lock();
        state.stopped = true;
        if let Some(wake) = &state.wake {
            let _ = wake.send(None);
        }
    }

    /// `finish` waits for the child `pid` on `wake`.
    fn attach(&self, pid: libc::pid_t, wake: mpsc::Sender<Ended>) {
        let mut state = self.lock();
        state.pid = Some(pid);
        if state.stopped {
            let _ = wake.send(None);
        }
        state.wake = Some(wake);
    }

    /// As if the child `pid` had started (`engine::hangs`' tests).
    #[cfg(test)]
    pub(crate) fn started_as(&self, pid: libc::pid_t) {
        self.lock().pid = Some(pid);
    }

    /// The child is gone: nothing more to stop.
    fn detach(&self) {
        let mut state = self.lock();
        state.wake = None;
        state.pid = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StopState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: None,
            output_cap: 256 * 1024,
            file_size: None,
            cage: None,
            space: None,
            stop: None,
        }
    }
}

/// How a child ended.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Its exit status, or `None` when it was killed at the deadline.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    /// How many bytes of output were beyond the cap and not read.
    pub dropped: u64,
    pub duration: Duration,
    /// Whether processes of the child's group were still running a while
    /// after the child ended (they were killed).
    pub left_behind: bool,
}

impl Finished {
    pub(crate) fn timed_out(&self) -> bool {
        self.status.is_none()
    }

    #[cfg(test)]
    pub(crate) fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// How long a group has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(200);

/// A program to run without a `Command`: for `run_light`.
#[derive(Debug, Clone)]
pub(crate) struct Spawn {
    /// An absolute path (no search of `PATH`).
    pub program: std::path::PathBuf,
    pub args: Vec<std::ffi::OsString>,
    /// The whole environment: nothing of fencelab's own is added.
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// Its working directory (in the trial's space, when it joins one).
    pub dir: std::path::PathBuf,
}

impl Spawn {
    /// The environment as the program gets it: each variable once, with the
    /// last value given (as `Command::env`), in `Command`'s order.
    pub(crate) fn environment(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let env: std::collections::BTreeMap<&std::ffi::OsStr, &std::ffi::OsStr> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
            .collect();
        env.into_iter()
            .map(|(k, v)| (k.to_os_string(), v.to_os_string()))
            .collect()
    }

    /// The same as a `Command` (for `run`, where a cage or a hook of the
    /// caller's needs a fork).
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.dir);
        command
    }
}

/// Runs `command` to its end or its deadline, with its output in files under
/// `output_dir` (which must exist).
pub(crate) fn run(
    mut command: Command,
    output_dir: &Path,
    limits: &Limits,
) -> std::io::Result<Finished> {
    let out_path = output_dir.join("stdout");
    let err_path = output_dir.join("stderr");
    command
        .stdin(Stdio::null())
        .stdout(File::create(&out_path)?)
        .stderr(File::create(&err_path)?)
        .process_group(0);
    let file_size = limits.file_size;
    let cage = limits.cage.clone();
    let space = limits.space.clone();
    // A caged child's PID namespace ends with it, and what it left running
    // with the namespace: the cage says on this pipe whether there was any.
    let left = match cage {
        Some(_) => Some(left_pipe()?),
        None => None,
    };
    let left_fd = left.as_ref().map(|(_, write)| write.as_raw_fd());
    let parent = rustix::process::getpid();
    child::before_exec(
        &mut command,
        Steps {
            // If fencelab dies (Ctrl-C, SIGKILL), nothing it started
            // outlives it waiting on a limit nobody enforces any more.
            parent: Some(parent),
            limits: Some(file_size),
            space,
            cage: cage.map(|plan| (plan, left_fd)),
            ..Steps::default()
        },
    );
    let start = Instant::now();
    let spawned = command.spawn();
    // Only the cage's watcher keeps the write end: it reads as ended once
    // the watcher has.
    let left = left.map(|(read, _)| read);
    let child = spawned?;
    // Its stdio are files: dropping the handle closes nothing it needs.
    let pid = child.id() as libc::pid_t;
    drop(child);
    finish(
        pid,
        Waiter::Child,
        start,
        left,
        &out_path,
        &err_path,
        limits,
    )
}

/// How `finish` learns that its child ended.
enum Waiter {
    /// It is this process's child (`wait_with_cpu`).
    Child,
    /// It is a judge's zygote's, which says so on this connection.
    Zygote(OwnedFd),
}

impl Waiter {
    fn wait(self, pid: libc::pid_t) -> std::io::Result<(ExitStatus, Duration)> {
        use std::os::unix::process::ExitStatusExt;
        match self {
            Waiter::Child => wait_with_cpu(pid),
            Waiter::Zygote(connection) => {
                use crate::bridge::protocol::Ended;
                let (status, cpu) = crate::bridge::zygote::receive(connection.as_raw_fd(), None)
                    .and_then(|answer| serde_json::from_slice::<Ended>(&answer).ok())
                    .and_then(|ended| Some((ended.status, ended.cpu_micros?)))
                    .ok_or_else(|| std::io::Error::other("the judge's zygote ended"))?;
                Ok((ExitStatus::from_raw(status), Duration::from_micros(cpu)))
            }
        }
    }
}

/// The rest of `run` once the child `pid` (leading its own group) has
/// started: waits for it to its end or its deadline, kills the group,
/// reads its output back.
fn finish(
    pid: libc::pid_t,
    waiter: Waiter,
    start: Instant,
    left: Option<OwnedFd>,
    out_path: &Path,
    err_path: &Path,
    limits: &Limits,
) -> std::io::Result<Finished> {
    let group = pid;
    let (tx, rx) = mpsc::channel::<Ended>();
    if let Some(stop) = &limits.stop {
        stop.attach(pid, tx.clone());
    }
    std::thread::spawn(move || {
        let _ = tx.send(Some(waiter.wait(pid)));
    });
    let waited = match limits.time {
        Some(limit) => rx.recv_timeout(limit).ok(),
        None => rx.recv().ok(),
    }
    // Stopped by another thread: as at the limit.
    .flatten();
    if let Some(stop) = &limits.stop {
        stop.detach();
    }
    let status = match waited {
        Some(Err(err)) => {
            kill_group(group, libc::SIGKILL);
            return Err(err);
        }
        Some(Ok((status, _))) => Some(status),
        None => {
            kill_group(group, libc::SIGTERM);
            if recv_ended(&rx, Some(GRACE)).is_none() {
                kill_group(group, libc::SIGKILL);
                let _ = recv_ended(&rx, None)
                    .ok_or_else(|| std::io::Error::other("its waiter ended"))?;
            }
            None
        }
    };
    let duration = start.elapsed();
    // Whatever the child left running in its group goes with it, after a
    // moment to end on its own.
    let left_behind = status.is_some() && (said_left(left.as_ref()) || linger(group, LINGER));
    kill_group(group, libc::SIGKILL);
    let (stdout, dropped_out) = read_capped(out_path, limits.output_cap);
    let (stderr, dropped_err) = read_capped(err_path, limits.output_cap);
    Ok(Finished {
        status,
        stdout,
        stderr,
        dropped: dropped_out + dropped_err,
        duration,
        left_behind,
    })
}

/// The child's end from `rx`, past any word to stop it, within `limit`.
fn recv_ended(
    rx: &mpsc::Receiver<Ended>,
    limit: Option<Duration>,
) -> Option<std::io::Result<(ExitStatus, Duration)>> {
    let deadline = limit.map(|l| Instant::now() + l);
    loop {
        let got = match deadline {
            Some(d) => rx
                .recv_timeout(d.saturating_duration_since(Instant::now()))
                .ok()?,
            None => rx.recv().ok()?,
        };
        if got.is_some() {
            return got;
        }
    }
}

/// Waits for `child` to end: its status, and the processor time it and
/// every descendant it waited for used (a caged program's, reaped by its
/// init, reaped by its watcher, reaped by the judge, included).
fn wait_with_cpu(pid: libc::pid_t) -> std::io::Result<(ExitStatus, Duration)> {
    use std::os::unix::process::ExitStatusExt;
    let (status, usage) = loop {
        // Our own child (never waited for elsewhere).
        match crate::bridge::sandbox::sys::wait_with_usage(pid, 0) {
            Ok(Some((_, status, usage))) => break (status, usage),
            Err(err) if err.raw_os_error() != Some(libc::EINTR) => return Err(err),
            _ => {}
        }
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok((
        ExitStatus::from_raw(status),
        time(usage.ru_utime) + time(usage.ru_stime),
    ))
}

/// A pipe for the cage's word on what was left behind: (read end, made
/// non-blocking; write end). Both close on exec.
fn left_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use rustix::pipe::{PipeFlags, pipe_with};
    Ok(pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?)
}

/// Whether the cage wrote on its pipe that processes were left behind.
fn said_left(pipe: Option<&OwnedFd>) -> bool {
    let Some(pipe) = pipe else { return false };
    // One byte; the pipe does not block.
    rustix::io::read(pipe, &mut [0u8; 1]) == Ok(1)
}

/// How long a group may outlive its leader before what is left counts as left
/// behind.
const LINGER: Duration = Duration::from_millis(300);

/// Waits up to `limit` for the group to hold no live process; true if one is
/// still running then. (Zombies do not count: they are dead, waiting for a
/// parent, possibly a slow init, to collect them.)
fn linger(group: libc::pid_t, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_micros(100);
    loop {
        // Signal 0 only asks whether the group exists.
        let exists = Pid::from_raw(group.max(0))
            .is_some_and(|group| rustix::process::test_kill_process_group(group).is_ok());
        if !exists || live_processes(|_, stat| stat.pgrp == group).is_empty() {
            return false;
        }
        if Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// Now, in the clock ticks since boot that `/proc/PID/stat` counts a
/// process's start in.
pub(crate) fn boot_ticks() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    let hz = rustix::param::clock_ticks_per_second().max(1);
    now.tv_sec as u64 * hz + now.tv_nsec as u64 * hz / 1_000_000_000
}

/// The pids of the live (not zombie) processes whose stat passes `select`.
fn live_processes(select: impl Fn(libc::pid_t, &proc::Stat) -> bool) -> Vec<libc::pid_t> {
    proc::pids()
        .into_iter()
        .filter(|&pid| proc::stat(pid).is_some_and(|stat| stat.live() && select(pid, &stat)))
        .collect()
}

/// Kills every live process whose environment has `TMPDIR` at or under `dir`,
/// wherever it is now (a process that left its group with `setsid` is found
/// too); returns how many there were.
///
/// A process is also found by its working directory under `dir` (a process
/// caught in the middle of `execve` shows an empty environment for an
/// instant, but keeps its working directory), and the search is repeated
/// while it finds any.
///
/// Only processes started since `since` (from `boot_ticks`, taken before the
/// trial began) can be the trial's, so only their environments are read.
pub(crate) fn kill_tagged(dir: &Path, since: u64) -> usize {
    let me = std::process::id() as libc::pid_t;
    // A tick of slack each way: the clocks are read at different moments.
    let since = since.saturating_sub(2);
    let tagged_now = || {
        live_processes(|pid, stat| {
            pid != me
                && stat.started >= since
                && (proc::environ(pid).is_some_and(|environ| {
                    environ.iter().any(|var| {
                        var.strip_prefix(b"TMPDIR=").is_some_and(|value| {
                            std::str::from_utf8(value).is_ok_and(|v| Path::new(v).starts_with(dir))
                        })
                    })
                }) || proc::cwd(pid).is_some_and(|cwd| cwd.starts_with(dir)))
        })
    };
    let mut killed = std::collections::BTreeSet::new();
    for _ in 0..50 {
        let tagged = tagged_now();
        if tagged.is_empty() {
            break;
        }
        for pid in tagged {
            // A process of the trial's, found by its tag.
            if let Some(pid) = Pid::from_raw(pid.max(0)) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
            killed.insert(pid);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    killed.len()
}

/// Sends `signal` to every process in the group led by `group`.
pub(crate) fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    // ESRCH (no such group) is fine.
    if let (Some(group), Some(signal)) =
        (Pid::from_raw(group.max(0)), Signal::from_named_raw(signal))
    {
        let _ = rustix::process::kill_process_group(group, signal);
    }
}

/// The first `cap` bytes of a file as text, and how many bytes were left unread.
fn read_capped(path: &Path, cap: usize) -> (String, u64) {
    let Ok(file) = File::open(path) else {
        return (String::new(), 0);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut kept = Vec::with_capacity(cap.min(len as usize));
    let _ = file.take(cap as u64).read_to_end(&mut kept);
    let dropped = len.saturating_sub(kept.len() as u64);
    (String::from_utf8_lossy(&kept).into_owned(), dropped)
}

/// An error of the machine's in setting up the cage's cgroups or space.
pub(crate) fn cage_error(what: &str, err: std::io::Error) -> crate::error::Error {
    crate::error::Error::environment(format!("cannot make {what} for a trial: {err}"))
        .with_next("run again; if it happens again, report it with the command you ran")
}

#[cfg(test)]
mod tests;
