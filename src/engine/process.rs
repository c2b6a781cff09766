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

use rustix::process::{Pid, Signal, WaitOptions};

use crate::bridge::child::{self, Enter, Setup, Signals};

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
    // SAFETY: `pre_exec` runs its hook between fork and exec, where
    // `child::prepare` makes only system calls; the space and the cage are
    // held alive by `limits` until the child has executed.
    unsafe {
        command.pre_exec(move || {
            child::prepare(&mut Setup {
                // If fencelab dies (Ctrl-C, SIGKILL), nothing it started
                // outlives it waiting on a limit nobody enforces any more.
                parent: Some(parent),
                limits: Some(file_size),
                space: space.as_deref(),
                cage: cage.as_deref().map(|plan| Enter::Cage(plan, left_fd)),
                ..Setup::default()
            })
        });
    }
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

/// `run` for an uncaged `spawn` (`limits.cage` must be `None`; an error
/// otherwise), started by a clone that shares this process's memory and
/// waits for it to execute its program (`CLONE_VM | CLONE_VFORK`, as
/// `posix_spawn` does) rather than by a fork: a fork copies every page table
/// of fencelab's (many threads, a large heap) and makes each page fencelab
/// writes until the child has executed a copy. The child does what `run`'s
/// does between fork and exec (its own process group, no core, the file
/// size limit, the trial's space, death with fencelab), then executes.
/// (The runner calls `run_judge`.)
#[cfg(test)]
pub(crate) fn run_light(
    spawn: &Spawn,
    output_dir: &Path,
    limits: &Limits,
) -> std::io::Result<Finished> {
    run_judge(spawn, output_dir, limits, None, None)
}

/// `run_light`, the program also inheriting `inherit` (a descriptor of this
/// process's, close-on-exec here: the flag is cleared in the child's own
/// table only, so no other program this process starts meanwhile gets it);
/// or where `zygote` is given, the same judge forked by it (`JudgeZygote`)
/// rather than executed afresh.
pub(crate) fn run_judge(
    spawn: &Spawn,
    output_dir: &Path,
    limits: &Limits,
    inherit: Option<std::os::fd::RawFd>,
    zygote: Option<&JudgeZygote>,
) -> std::io::Result<Finished> {
    if limits.cage.is_some() {
        return Err(std::io::Error::other(
            "a caged program is started by a fork (its watcher stays)",
        ));
    }
    let out_path = output_dir.join("stdout");
    let err_path = output_dir.join("stderr");
    let stdin = File::open("/dev/null")?;
    let stdout = File::create(&out_path)?;
    let stderr = File::create(&err_path)?;
    let stdio = [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()];
    let start = Instant::now();
    let (pid, waiter) = match zygote {
        Some(zygote) => {
            let (pid, connection) = zygote.fork(
                spawn,
                stdio,
                inherit,
                limits.file_size,
                limits.space.as_deref(),
            )?;
            (pid, Waiter::Zygote(connection))
        }
        None => {
            let pid = Prepared::of(spawn)?.start(Started {
                stdio,
                inherit: inherit.unwrap_or(-1),
                file_size: limits.file_size,
                space: limits.space.as_deref(),
                serving: None,
            })?;
            (pid, Waiter::Child)
        }
    };
    drop((stdin, stdout, stderr));
    finish(pid, waiter, start, None, &out_path, &err_path, limits)
}

/// fencelab's own judge started once (by a clone, as `run_light` starts
/// it) as a zygote, which forks a child per trial set up as `run_light`'s
/// clone sets up the judge it executes (`bridge::judge_zygote`): a judge
/// executed afresh cost about 1.3 ms of processor time in its start alone.
/// Dropped, it ends, and its children with it.
pub(crate) struct JudgeZygote {
    control: OwnedFd,
    pid: libc::pid_t,
}

impl JudgeZygote {
    /// `judge` started as a zygote, or None where it is not one (a judge
    /// built without `bridge::judge_zygote::init` ends at once, refusing
    /// the argument): its trials are then executed as before. Call it on
    /// a thread that outlives the trials: the zygote dies with that thread.
    pub(crate) fn start(judge: &Path) -> Option<JudgeZygote> {
        use crate::bridge::judge_zygote::{
            ARG_ROOM, ARG_SLOTS, ENV_ROOM, READY, ROOM_ENV, ZYGOTE_ARG,
        };
        let (ours, theirs) = crate::bridge::zygote::seqpacket_pair().ok()?;
        let mut args: Vec<std::ffi::OsString> = vec![
            ZYGOTE_ARG.into(),
            theirs.as_raw_fd().to_string().into(),
            std::process::id().to_string().into(),
        ];
        // The slots of a child's command line, the last with the room
        // where it writes it for the kernel to show; the same for its
        // environment.
        args.extend(std::iter::repeat_n("-".into(), ARG_SLOTS - 1));
        args.push("-".repeat(ARG_ROOM).into());
        let mut env: Vec<_> = passed_on().collect();
        env.push((ROOM_ENV.into(), "-".repeat(ENV_ROOM).into()));
        // Where its run's trials are, as a judge's own says where its trial
        // is: so is it found among a run's processes (its children take
        // on their own environment, the C library's and the kernel's).
        env.push(("TMPDIR".into(), std::env::temp_dir().into()));
        let spawn = Spawn {
            program: std::path::absolute(judge).ok()?,
            args,
            env,
            dir: "/".into(),
        };
        let null = File::open("/dev/null").ok()?;
        let sink = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .ok()?;
        let pid = Prepared::of(&spawn)
            .ok()?
            .start(Started {
                stdio: [null.as_raw_fd(), sink.as_raw_fd(), sink.as_raw_fd()],
                inherit: theirs.as_raw_fd(),
                file_size: None,
                space: None,
                serving: None,
            })
            .ok()?;
        drop(theirs);
        let zygote = JudgeZygote { control: ours, pid };
        // A judge that is not a zygote ends, and its end of the socket with it.
        let said = crate::bridge::zygote::receive(zygote.control.as_raw_fd(), Some(ZYGOTE_START));
        (said.as_deref() == Some(READY)).then_some(zygote)
    }

    /// Forks the judge of one trial: `spawn` (its program this zygote's),
    /// `stdio`, the descriptor it inherits at the same number, the file
    /// size limit and the trial's space; its pid (leading its own group)
    /// and the connection on which its end comes (`Waiter::Zygote`).
    fn fork(
        &self,
        spawn: &Spawn,
        stdio: [libc::c_int; 3],
        inherit: Option<std::os::fd::RawFd>,
        file_size: Option<u64>,
        space: Option<&crate::bridge::sandbox::Join>,
    ) -> std::io::Result<(libc::pid_t, OwnedFd)> {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let invalid = || std::io::Error::other("a NUL byte in a command line or environment");
        let c = |bytes: &[u8]| CString::new(bytes).map_err(|_| invalid());
        let mut args = vec![c(spawn.program.as_os_str().as_bytes())?];
        for arg in &spawn.args {
            args.push(c(arg.as_bytes())?);
        }
        let mut env = Vec::new();
        for (key, value) in spawn.environment() {
            let mut pair = key.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            env.push(c(&pair)?);
        }
        let (user, mount, net) = match space {
            Some(join) => {
                let (user, mount, net) = join.descriptors();
                (user, Some(mount), net)
            }
            None => (None, None, None),
        };
        let request = crate::bridge::judge_zygote::Request {
            inherit,
            file_size,
            dir: c(spawn.dir.as_os_str().as_bytes())?,
            space: space.map(|join| join.dir().to_owned()),
            args,
            env,
            namespaces: [user.is_some(), mount.is_some(), net.is_some()],
        };
        let (ours, theirs) = crate::bridge::zygote::seqpacket_pair()?;
        let mut fds = vec![theirs.as_raw_fd()];
        fds.extend(stdio);
        fds.extend(inherit.into_iter().chain(user).chain(mount).chain(net));
        crate::bridge::zygote::send_with(self.control.as_raw_fd(), &request.encode(), &fds)?;
        drop(theirs);
        let answer = crate::bridge::zygote::receive(ours.as_raw_fd(), None)
            .ok_or_else(|| std::io::Error::other("the judge's zygote did not fork it"))?;
        let pid = <[u8; 4]>::try_from(answer.as_slice())
            .map(libc::pid_t::from_le_bytes)
            .map_err(|_| std::io::Error::other("the judge's zygote answered otherwise"))?;
        // A child that could not be set up for its trial (its errno).
        if pid <= 0 {
            return Err(std::io::Error::from_raw_os_error(-pid));
        }
        Ok((pid, ours))
    }
}

impl Drop for JudgeZygote {
    fn drop(&mut self) {
        // Our own child, killed and reaped once.
        let pid = Pid::from_raw(self.pid.max(0));
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
        }
    }
}

/// How long a judge may take to say it is a zygote (it says so before it
/// does anything else; one that is not ends at once).
const ZYGOTE_START: Duration = Duration::from_secs(60);

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
                let answer = crate::bridge::zygote::receive(connection.as_raw_fd(), None)
                    .filter(|a| a.len() == 12)
                    .ok_or_else(|| std::io::Error::other("the judge's zygote ended"))?;
                let (status, cpu) = answer.split_at(4);
                let status = i32::from_le_bytes(status.try_into().expect("four bytes"));
                let cpu = u64::from_le_bytes(cpu.try_into().expect("eight bytes"));
                Ok((ExitStatus::from_raw(status), Duration::from_micros(cpu)))
            }
        }
    }
}

/// Starts `spawn` as `run_light` does (a clone sharing this process's
/// memory, leading a group of its own, in the trial's `space`), with `stdio`
/// as its standard streams, a server in the cage `plan` listening on
/// `listener` (`sandbox::enter_serving`, which must start no process: a cage
/// without namespaces, `Cage::trusted_reading`); its pid, once it has
/// executed its program. The caller kills its group and reaps it.
pub(crate) fn start_light_serving(
    spawn: &Spawn,
    stdio: [std::os::fd::RawFd; 3],
    space: Option<&crate::bridge::sandbox::Join>,
    listener: std::os::fd::RawFd,
    plan: &crate::bridge::sandbox::Plan,
) -> std::io::Result<libc::pid_t> {
    if plan.has_namespaces() {
        return Err(std::io::Error::other(
            "a cage with namespaces is started by a fork (its watcher stays)",
        ));
    }
    Prepared::of(spawn)?.start(Started {
        stdio,
        inherit: -1,
        file_size: None,
        space,
        serving: Some((listener, plan)),
    })
}

/// What else the child of `Prepared::start` is given.
struct Started<'a> {
    stdio: [libc::c_int; 3],
    /// A descriptor to keep open across the exec (-1: none).
    inherit: libc::c_int,
    file_size: Option<u64>,
    space: Option<&'a crate::bridge::sandbox::Join>,
    /// A server's listening socket and cage (`start_light_serving`).
    serving: Option<(libc::c_int, &'a crate::bridge::sandbox::Plan)>,
}

/// A `Spawn` as `execve` takes it, and its directory, made before the clone.
struct Prepared {
    exec: crate::bridge::sandbox::Exec,
    dir: std::ffi::CString,
}

impl Prepared {
    fn of(spawn: &Spawn) -> std::io::Result<Prepared> {
        use std::os::unix::ffi::OsStrExt;
        let args: Vec<&std::ffi::OsStr> = spawn.args.iter().map(|a| a.as_os_str()).collect();
        let invalid = || std::io::Error::other("a NUL byte in a command line or environment");
        Ok(Prepared {
            exec: crate::bridge::sandbox::Exec::new(&spawn.program, &args, &spawn.environment())
                .ok_or_else(invalid)?,
            dir: std::ffi::CString::new(spawn.dir.as_os_str().as_bytes()).map_err(|_| invalid())?,
        })
    }

    /// Clones the child and waits for it to execute (`Child::spawn`).
    fn start(&self, started: Started<'_>) -> std::io::Result<libc::pid_t> {
        let (program, argv, envp) = self.exec.pointers();
        Child {
            program,
            argv,
            envp,
            dir: &self.dir,
            stdio: started.stdio,
            inherit: started.inherit,
            file_size: started.file_size,
            space: started.space,
            serving: started.serving,
            parent: rustix::process::getpid(),
            failed: 0,
        }
        .spawn()
    }
}

/// What the child of `run_light` needs, prepared before the clone: it only
/// reads it, and makes system calls.
struct Child<'a> {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    dir: &'a std::ffi::CStr,
    stdio: [libc::c_int; 3],
    /// A descriptor to keep open across the exec (-1: none).
    inherit: libc::c_int,
    file_size: Option<u64>,
    space: Option<&'a crate::bridge::sandbox::Join>,
    serving: Option<(libc::c_int, &'a crate::bridge::sandbox::Plan)>,
    parent: rustix::process::Pid,
    /// The child's errno where it could not execute its program (it shares
    /// this memory): 0 when it did.
    failed: libc::c_int,
}

impl Child<'_> {
    /// Clones the child, which runs `Child::run` and executes the program;
    /// returns its pid once it has (or an error if it could not).
    fn spawn(mut self) -> std::io::Result<libc::pid_t> {
        extern "C" fn trampoline(arg: *mut libc::c_void) -> libc::c_int {
            // SAFETY: `arg` is the `Child` below, alive until the clone has
            // executed its program or ended (its parent waits, CLONE_VFORK).
            let child = unsafe { &mut *arg.cast::<Child>() };
            // SAFETY: only system calls, on what the parent prepared.
            unsafe { child.run() }
        }
        // Enough for the system calls the child makes (and a signal, should
        // one come before its handlers are reset: none is installed).
        let mut stack = vec![0u8; 64 << 10];
        let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
        // Every signal blocked in this thread until the child has executed:
        // no handler of this process's runs on the child's stack.
        // SAFETY: system calls on signal sets of ours; the clone runs
        // `trampoline` on `stack` while this thread is suspended, and
        // `self` outlives it (CLONE_VFORK). No safe wrapper clones.
        let pid = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            let pid = libc::clone(
                trampoline,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&raw mut self).cast(),
            );
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            pid
        };
        drop(stack);
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if self.failed != 0 {
            // Our own child, ended: reaped.
            let _ = rustix::process::waitpid(Pid::from_raw(pid), WaitOptions::empty());
            return Err(std::io::Error::from_raw_os_error(self.failed));
        }
        Ok(pid)
    }

    /// The child: set up (`child::prepare`: death with fencelab, its own
    /// process group, signals at their defaults, the limits, the trial's
    /// space, its standard streams and inherited descriptor, its directory,
    /// a server's cage), then its program.
    ///
    /// # Safety
    /// Only in the clone of `spawn`.
    unsafe fn run(&mut self) -> libc::c_int {
        let mut place = [
            (self.stdio[0], 0),
            (self.stdio[1], 1),
            (self.stdio[2], 2),
            // The clone has a table of descriptors of its own (no
            // CLONE_FILES): the flag is cleared for its program alone.
            (self.inherit, self.inherit),
        ];
        let places = if self.inherit >= 0 { 4 } else { 3 };
        let mut setup = Setup {
            parent: Some(self.parent),
            own_group: true,
            // As a fresh process has them (as std's spawn leaves them).
            signals: Signals::Handled,
            limits: Some(self.file_size),
            space: self.space,
            place: &mut place[..places],
            dir: Some(self.dir),
            // A cage without namespaces: system calls on this process alone.
            cage: self
                .serving
                .map(|(listener, plan)| Enter::Serving(listener, plan)),
            unblock: true,
            ..Setup::default()
        };
        // SAFETY: the clone of `spawn`, before it executes.
        if let Err(err) = unsafe { child::prepare(&mut setup) } {
            fail(&mut self.failed, err.raw_os_error())
        }
        // SAFETY: what `Prepared` made, alive until the clone has executed.
        unsafe { libc::execve(self.program, self.argv, self.envp) };
        fail(&mut self.failed, None)
    }
}

/// Ends `run_light`'s child that could not execute its program, its errno
/// (`errno`, else the last one) left in `failed` for the parent.
fn fail(failed: &mut libc::c_int, errno: Option<libc::c_int>) -> ! {
    let last = || std::io::Error::last_os_error().raw_os_error();
    *failed = errno.or_else(last).unwrap_or(0).max(1);
    // SAFETY: ends the clone, which shares its parent's memory: nothing of
    // the process's own exit may run. No safe wrapper exits so.
    unsafe { libc::_exit(127) }
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
    let mut status = 0;
    // SAFETY: fills a rusage of ours.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child (never waited for elsewhere).
        let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if waited == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
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
        if !exists || live_processes(|stat| stat.pgrp == group).is_empty() {
            return false;
        }
        if Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// What `/proc/PID/stat` says of a process.
struct Stat {
    pid: libc::pid_t,
    state: char,
    pgrp: libc::pid_t,
    /// When it started, in clock ticks since boot.
    started: u64,
}

/// Now, in the clock ticks since boot that `/proc/PID/stat` counts a
/// process's start in.
pub(crate) fn boot_ticks() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    let hz = rustix::param::clock_ticks_per_second().max(1);
    now.tv_sec as u64 * hz + now.tv_nsec as u64 * hz / 1_000_000_000
}

/// The pids of the live (not zombie) processes whose stat passes `select`.
fn live_processes(select: impl Fn(&Stat) -> bool) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<libc::pid_t>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // The fields after the command name, which is in parentheses.
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let state = fields.next()?.chars().next()?;
            let _ppid = fields.next()?;
            let pgrp = fields.next()?.parse().ok()?;
            // Field 22 of the line; the third after the name is field 5.
            let started = fields.nth(16)?.parse().ok()?;
            Some(Stat {
                pid,
                state,
                pgrp,
                started,
            })
        })
        .filter(|stat| stat.state != 'Z' && stat.state != 'X' && select(stat))
        .map(|stat| stat.pid)
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
        live_processes(|stat| {
            stat.pid != me
                && stat.started >= since
                && (std::fs::read(format!("/proc/{}/environ", stat.pid)).is_ok_and(|environ| {
                    environ.split(|b| *b == 0).any(|var| {
                        var.strip_prefix(b"TMPDIR=").is_some_and(|value| {
                            std::str::from_utf8(value).is_ok_and(|v| Path::new(v).starts_with(dir))
                        })
                    })
                }) || std::fs::read_link(format!("/proc/{}/cwd", stat.pid))
                    .is_ok_and(|cwd| cwd.starts_with(dir)))
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
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    fn light(script: &str) -> Spawn {
        Spawn {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![
                ("ONLY".into(), "not this".into()),
                ("ONLY".into(), "this".into()),
            ],
            dir: "/".into(),
        }
    }

    #[test]
    fn the_suite_reads_the_number_of_random_sequences_from_the_variable_passed_on() {
        let random = crate::lab::suite::MODULES
            .iter()
            .find(|(path, _)| path.ends_with("random.rs"))
            .expect("the suite's random calls")
            .1;
        assert!(random.contains(&format!("\"{RANDOM_SEQUENCES_ENV}\"")));
    }

    /// fencelab's judge forked by its zygote is given what it is given
    /// executed afresh by a clone (`run_light`), as its probe prints it.
    /// Both are set up by `child::prepare`; what still differs is checked:
    /// the command line and environment the zygote writes, and the
    /// descriptors it closes where an executed judge's close on exec.
    #[test]
    fn a_judge_forked_by_its_zygote_is_given_what_an_executed_one_is() {
        use crate::engine::builder::{self, Built, Plan};
        use crate::engine::policy::{Policy, Trust};
        use crate::engine::scratch::Scratch;
        use crate::lab::suite::SuiteFiles;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
        let plan = Plan {
            suite: &SuiteFiles::builtin(),
            implementations: &[],
            time_limit: None,
            servers: Policy::of(Trust::Submissions).servers,
            judge_caged: false,
            detail: None,
        };
        let Built::Done(build) = builder::build(&scratch, &plan).unwrap() else {
            panic!("the suite builds");
        };
        let zygote = JudgeZygote::start(&build.judge).expect("fencelab's judge is a zygote");
        let work = tempfile::tempdir().unwrap();
        let tmp = work.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let space = crate::bridge::sandbox::Space::for_trial(&tmp, None).unwrap();
        let (_read, write) = left_pipe().unwrap();
        let probe = crate::engine::crates::PROBE_TEST;
        let spawn = Spawn {
            program: std::path::absolute(&build.judge).unwrap(),
            args: [
                "--exact",
                probe,
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ]
            .map(std::ffi::OsString::from)
            .to_vec(),
            env: vec![
                ("PATH".into(), "/usr/bin:/bin".into()),
                ("FENCELAB_PROBE".into(), "two words".into()),
                ("HOME".into(), tmp.clone().into()),
            ],
            dir: tmp.clone(),
        };
        let limits = Limits {
            time: Some(Duration::from_secs(120)),
            output_cap: 1 << 20,
            file_size: Some(FILE_SIZE),
            cage: None,
            space: space.as_ref().map(crate::bridge::sandbox::Space::join),
            stop: None,
        };
        let run = |zygote: Option<&JudgeZygote>, name: &str| {
            let out = work.path().join(name);
            std::fs::create_dir_all(&out).unwrap();
            let finished = run_judge(&spawn, &out, &limits, Some(write.as_raw_fd()), zygote)
                .expect("the judge runs");
            assert!(finished.success(), "{finished:?}");
            // What the probe printed, from its first line to libtest's "ok".
            let from = finished.stdout.find("args [").expect("the probe printed");
            let printed: Vec<String> = finished.stdout[from..]
                .lines()
                .take_while(|l| *l != "ok")
                .map(String::from)
                .collect();
            assert!(printed.len() > 20, "the probe printed: {finished:?}");
            printed
        };
        let executed = run(None, "executed");
        let forked = run(Some(&zygote), "forked");
        // A judge executed afresh also inherits whatever this process holds
        // open without close-on-exec (cargo's jobserver, say); the forked one
        // holds its standard streams and the descriptor it inherits alone.
        let fd = write.as_raw_fd();
        let mut given = [
            "0=/dev/null".to_string(),
            "1=a file".to_string(),
            "2=a file".to_string(),
            format!("{fd}=pipe"),
        ];
        given.sort();
        let given = format!("{given:?}");
        let descriptors = |printed: &[String]| {
            let line = printed
                .iter()
                .find(|l| l.starts_with("descriptors "))
                .unwrap();
            let mut fds: Vec<&str> = line["descriptors [".len()..line.len() - 1]
                .split(", ")
                .collect();
            fds.retain(|f| {
                let n = f.trim_matches('"').split('=').next().unwrap();
                ["0", "1", "2", &fd.to_string()].contains(&n)
            });
            format!("[{}]", fds.join(", "))
        };
        assert_eq!(descriptors(&executed), given);
        assert!(
            forked.contains(&format!("descriptors {given}")),
            "{forked:?}"
        );
        let others = |printed: &[String]| -> Vec<String> {
            printed
                .iter()
                .filter(|l| !l.starts_with("descriptors "))
                .cloned()
                .collect()
        };
        assert_eq!(others(&executed), others(&forked));
        // And it is the probe's own: its command line, its directory.
        assert!(forked[0].contains(probe), "{forked:?}");
        assert!(forked.iter().any(|l| l.contains("two words")), "{forked:?}");
        // A judge that cannot be set up for its trial (its directory is
        // gone) is fencelab's failure either way, never a judge that ran.
        let gone = Spawn {
            dir: work.path().join("gone"),
            ..spawn.clone()
        };
        for zygote in [None, Some(&zygote)] {
            let out = work.path().join("out");
            std::fs::create_dir_all(&out).unwrap();
            let failed = run_judge(&gone, &out, &limits, None, zygote).map(|f| f.status);
            let err = failed.expect_err("no judge runs");
            assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
        }
    }

    #[test]
    fn a_light_spawn_inherits_the_descriptor_it_is_given_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = || rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        let ((_given_r, given_w), (_other_r, other_w)) = (pipe(), pipe());
        let (given, other) = (given_w.as_raw_fd(), other_w.as_raw_fd());
        let script = format!(
            "for fd in {given} {other}; do if [ -e /proc/self/fd/$fd ]; then echo open $fd; \
             else echo closed $fd; fi; done"
        );
        let finished = run_judge(
            &light(&script),
            dir.path(),
            &Limits::default(),
            Some(given),
            None,
        )
        .unwrap();
        assert_eq!(
            finished.stdout.lines().collect::<Vec<_>>(),
            [format!("open {given}"), format!("closed {other}")],
            "{finished:?}"
        );
        // Only in the child's own table: here it still closes on exec, so a
        // program started next does not get it.
        let flags = rustix::io::fcntl_getfd(&given_w).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        let finished = run_light(&light(&script), dir.path(), &Limits::default()).unwrap();
        assert_eq!(
            finished.stdout.lines().collect::<Vec<_>>(),
            [format!("closed {given}"), format!("closed {other}")],
            "{finished:?}"
        );
    }

    #[test]
    fn a_light_spawn_runs_as_a_fork_would_in_a_group_of_its_own_with_only_its_environment() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            file_size: Some(10_000),
            ..Limits::default()
        };
        // Its own group, its directory, exactly its environment, the limits;
        // stdin empty.
        let script = "ps -o pgid= -p $$; echo pid $$; pwd; env | grep -v '^PWD=' | grep -v '^SHLVL=' \
             | grep -v '^_='; ulimit -c; ulimit -f; cat; exit 3";
        let finished = run_light(&light(script), dir.path(), &limits).unwrap();
        assert_eq!(
            finished.status.and_then(|s| s.code()),
            Some(3),
            "{finished:?}"
        );
        let mut lines = finished.stdout.lines();
        let pgid = lines.next().unwrap().trim().to_string();
        assert_eq!(lines.next().unwrap(), format!("pid {pgid}"), "{finished:?}");
        let rest: Vec<&str> = lines.collect();
        assert_eq!(rest, ["/", "ONLY=this", "0", "19"], "{finished:?}");
        // Signals as std's spawn leaves them: none blocked (the runner's
        // thread blocks them all around the clone), ignored only what this
        // process inherited ignored. Read by the executed program itself (a
        // shell blocks signals around its own forks).
        let signals = Spawn {
            program: "/bin/grep".into(),
            args: vec![
                "-E".into(),
                "^Sig(Blk|Ign)".into(),
                "/proc/self/status".into(),
            ],
            ..light("")
        };
        let light_signals = run_light(&signals, dir.path(), &limits).unwrap();
        let forked = run(signals.command(), dir.path(), &Limits::default()).unwrap();
        assert!(
            light_signals
                .stdout
                .starts_with("SigBlk:\t0000000000000000\n"),
            "{light_signals:?}"
        );
        assert_eq!(light_signals.stdout, forked.stdout);
        // A program that cannot be executed is an error, not a status.
        let missing = Spawn {
            program: dir.path().join("missing"),
            ..light("")
        };
        let err = run_light(&missing, dir.path(), &limits).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
    }

    /// The runner's servers (`Served::start`): started by the clone, in the
    /// trusted cage (Landlock: writes beneath the trial's directory only),
    /// the listening socket at fd 3, the key line on the standard input, a
    /// group of its own; a cage with namespaces is refused (its watcher
    /// would stay in the runner's memory).
    #[test]
    fn a_light_server_is_in_its_cage_with_its_socket_at_fd_3_and_namespaces_are_refused() {
        use crate::bridge::sandbox::{Cage, Layers};
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let script = format!(
            "read key; echo key $key; \
             [ -S /proc/self/fd/3 ] && echo socket 3; \
             echo in > in.txt && echo wrote inside; \
             echo out > {}/out.txt && echo wrote outside; read end; exit 0",
            outside.path().display()
        );
        let spawn = Spawn {
            dir: dir.path().to_path_buf(),
            ..light(&script)
        };
        let cage = Cage::trusted_reading(dir.path(), &spawn.program, &[]);
        let plan = cage.plan();
        let (stdin_r, mut stdin_w) = std::io::pipe().unwrap();
        let out = File::create(dir.path().join("out")).unwrap();
        let stdio = [stdin_r.as_raw_fd(), out.as_raw_fd(), out.as_raw_fd()];
        let pid = start_light_serving(&spawn, stdio, None, listener.as_raw_fd(), &plan).unwrap();
        std::io::Write::write_all(&mut stdin_w, b"impl-7\n").unwrap();
        // It leads its own group (it waits for its standard input to end).
        let leader = Pid::from_raw(pid);
        assert_eq!(rustix::process::getpgid(leader).ok(), leader);
        drop((stdin_r, stdin_w, out));
        // Our own child, reaped once.
        let waited = rustix::process::waitpid(leader, WaitOptions::empty()).unwrap();
        assert_eq!(waited.map(|(pid, _)| pid), leader);
        let said = std::fs::read_to_string(dir.path().join("out")).unwrap();
        assert!(said.contains("key impl-7\n"), "{said}");
        assert!(said.contains("socket 3\n"), "{said}");
        assert!(said.contains("wrote inside\n"), "{said}");
        if Layers::probe().landlock.is_some() {
            assert!(!said.contains("wrote outside"), "{said}");
            assert!(!outside.path().join("out.txt").exists());
        }
        let caged = Cage::reading(dir.path(), &spawn.program, &[]);
        if Layers::probe().namespaces {
            let refused =
                start_light_serving(&spawn, stdio, None, listener.as_raw_fd(), &caged.plan());
            assert!(refused.is_err(), "{refused:?}");
        }
    }

    #[test]
    fn a_light_spawn_is_killed_at_the_deadline_with_its_group_and_its_leftovers_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            time: Some(Duration::from_millis(300)),
            ..Limits::default()
        };
        let finished = run_light(&light("sleep 30 & sleep 30"), dir.path(), &limits).unwrap();
        assert!(finished.timed_out());
        assert!(finished.duration < Duration::from_secs(25));
        let finished =
            run_light(&light("sleep 60 & echo $!"), dir.path(), &Limits::default()).unwrap();
        assert!(finished.success() && finished.left_behind, "{finished:?}");
        let orphan: libc::pid_t = finished.stdout.trim().parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while live_processes(|stat| stat.pid == orphan).len() == 1 {
            assert!(Instant::now() < deadline, "the orphan is still running");
            std::thread::sleep(Duration::from_millis(20));
        }
        // A flood stops at the file size limit (SIGXFSZ, its default).
        let capped = Limits {
            output_cap: 100,
            file_size: Some(10_000),
            ..Limits::default()
        };
        let flood = run_light(&light("yes flood"), dir.path(), &capped).unwrap();
        assert_eq!(flood.stdout.len(), 100);
        assert!(!flood.success());
        assert!(std::fs::metadata(dir.path().join("stdout")).unwrap().len() <= 10_000);
    }

    #[test]
    fn a_hang_is_killed_at_the_deadline_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child-still-running");
        let limits = Limits {
            time: Some(Duration::from_millis(300)),
            ..Limits::default()
        };
        // The child starts a grandchild that would write a file after 1 s.
        let script = format!("(sleep 1; touch {}) & sleep 30", marker.display());
        let finished = run(sh(&script), dir.path(), &limits).unwrap();
        assert!(finished.timed_out());
        // Killed at the deadline, not at the end of the hang (30 s): the bound
        // is loose so that a loaded machine cannot break it.
        assert!(
            finished.duration < Duration::from_secs(25),
            "{:?}",
            finished.duration
        );
        // Had the grandchild survived, it would write the marker after 1 s.
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "the grandchild was killed with its group");
    }

    #[test]
    fn leftovers_are_killed_when_the_child_ends() {
        let dir = tempfile::tempdir().unwrap();
        // The orphan would run for a minute, much longer than `run` waits for it.
        let script = "sleep 60 & echo $!";
        let finished = run(sh(script), dir.path(), &Limits::default()).unwrap();
        assert!(finished.success());
        assert!(finished.left_behind, "it is reported as left behind");
        let orphan: libc::pid_t = finished.stdout.trim().parse().unwrap();
        // It got SIGKILL before `run` returned; wait for it to be gone.
        let deadline = Instant::now() + Duration::from_secs(30);
        while live_processes(|stat| stat.pid == orphan).len() == 1 {
            assert!(Instant::now() < deadline, "the orphan is still running");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn processes_tagged_with_a_trials_directory_are_found_and_killed() {
        let dir = tempfile::tempdir().unwrap();
        let since = boot_ticks();
        // A process of the trial's, out of its group, as `setsid` leaves it.
        // In the trial's directory, as a trial's processes are: caught in
        // the middle of `execve` (a loaded machine), its environment reads
        // empty, and its directory still tags it.
        let mut escaped = Command::new("setsid")
            .args(["sleep", "60"])
            .env("TMPDIR", dir.path().join("tmp"))
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        // Not one started before the trial.
        assert_eq!(kill_tagged(dir.path(), since + 100_000), 0);
        assert_eq!(kill_tagged(dir.path(), since), 1);
        let status = escaped.wait().unwrap();
        assert!(!status.success(), "killed: {status}");
    }

    #[test]
    fn output_is_capped_and_a_flood_is_stopped_by_the_file_size_limit() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            output_cap: 100,
            file_size: Some(10_000),
            ..Limits::default()
        };
        let finished = run(sh("yes flood"), dir.path(), &limits).unwrap();
        assert_eq!(finished.stdout.len(), 100);
        assert!(finished.stdout.starts_with("flood\nflood\n"));
        assert!(!finished.success(), "SIGXFSZ or a write error ends it");
        assert!(std::fs::metadata(dir.path().join("stdout")).unwrap().len() <= 10_000);
    }
}
