//! The light spawn: a judge or a server started by a clone that shares
//! the runner's memory (`CLONE_VM | CLONE_VFORK`), or forked by the judge's
//! zygote, rather than by a fork. Its child only makes system calls
//! (`child::prepare`) before it executes its program.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions};

use super::{Finished, Limits, Spawn, Waiter, finish, passed_on};
use crate::bridge::child::{self, Enter, Setup, Signals};
use crate::bridge::sandbox::sys;

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
        let request = request.encode();
        if request.len() > crate::bridge::judge_zygote::REQUEST_ROOM {
            return Err(std::io::Error::other(
                "a judge's command line and environment longer than its zygote reads",
            ));
        }
        crate::bridge::zygote::send_with(self.control.as_raw_fd(), &request, &fds)?;
        drop(theirs);
        let answer = crate::bridge::zygote::receive(ours.as_raw_fd(), None)
            .ok_or_else(|| std::io::Error::other("the judge's zygote did not fork it"))?;
        let pid = serde_json::from_slice::<crate::bridge::protocol::Forked>(&answer)
            .map_err(|_| std::io::Error::other("the judge's zygote answered otherwise"))?
            .pid;
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

/// Starts `spawn` as `run_light` does (a clone sharing this process's
/// memory, leading a group of its own, in the trial's `space`), with `stdio`
/// as its standard streams, a server in the cage `plan` listening on
/// `listener` (`sandbox::enter`, which must start no process: a cage
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
        Child {
            exec: &self.exec,
            dir: &self.dir,
            stdio: started.stdio,
            inherit: started.inherit,
            file_size: started.file_size,
            space: started.space,
            serving: started.serving,
            parent: rustix::process::getpid(),
        }
        .spawn()
    }
}

/// What the child of `run_light` needs, prepared before the clone: it only
/// reads it, and makes system calls.
struct Child<'a> {
    exec: &'a crate::bridge::sandbox::Exec,
    dir: &'a std::ffi::CStr,
    stdio: [libc::c_int; 3],
    /// A descriptor to keep open across the exec (-1: none).
    inherit: libc::c_int,
    file_size: Option<u64>,
    space: Option<&'a crate::bridge::sandbox::Join>,
    serving: Option<(libc::c_int, &'a crate::bridge::sandbox::Plan)>,
    parent: rustix::process::Pid,
}

impl Child<'_> {
    /// Clones the child, which sets itself up and executes the program;
    /// returns its pid once it has (or an error if it could not).
    fn spawn(self) -> std::io::Result<libc::pid_t> {
        // The child's errno where it could not execute its program (it
        // shares this memory): 0 when it did.
        let failed = AtomicI32::new(0);
        // Made here: the clone may not allocate (empty: a cage without
        // namespaces starts no clone of its own).
        let mut stacks = match self.serving {
            Some((_, plan)) => crate::bridge::sandbox::Stacks::for_plan(plan),
            None => crate::bridge::sandbox::Stacks::default(),
        };
        // The child: set up (`child::prepare`: death with fencelab, its own
        // process group, signals at their defaults, the limits, the trial's
        // space, its standard streams and inherited descriptor, its
        // directory, a server's cage), then its program.
        let mut work = || -> libc::c_int {
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
                    .map(|(listener, plan)| Enter::Serving(listener, plan, &mut stacks)),
                unblock: true,
                ..Setup::default()
            };
            // SAFETY: the clone of `spawn`, before it executes; only system
            // calls, on what the parent prepared.
            let errno = match unsafe { child::prepare(&mut setup) } {
                Ok(()) => self.exec.execute(),
                // Where it carries none, the last one.
                Err(err) => (err.raw_os_error())
                    .or_else(|| std::io::Error::last_os_error().raw_os_error())
                    .unwrap_or(0),
            };
            fail(&failed, errno)
        };
        let mut work: &mut dyn FnMut() -> libc::c_int = &mut work;
        // Enough for the system calls the child makes (and a signal, should
        // one come before its handlers are reset: none is installed).
        let mut stack = vec![0u8; 64 << 10];
        let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
        // Every signal blocked in this thread until the child has executed:
        // no handler of this process's runs on the child's stack.
        let blocked = sys::AllBlocked::new()?;
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
        // SAFETY: this thread is suspended until the clone has executed or
        // ended (CLONE_VFORK); `stack` and `work` live on this frame.
        let started = unsafe { sys::clone_running(top, flags, &mut work) };
        drop(blocked);
        drop(stack);
        let pid = started?;
        let failed = failed.load(Ordering::SeqCst);
        if failed != 0 {
            // Our own child, ended: reaped.
            let _ = rustix::process::waitpid(Pid::from_raw(pid), WaitOptions::empty());
            return Err(std::io::Error::from_raw_os_error(failed));
        }
        Ok(pid)
    }
}

/// Ends `run_light`'s child that could not execute its program, its errno
/// left in `failed` for the parent.
fn fail(failed: &AtomicI32, errno: libc::c_int) -> ! {
    failed.store(errno.max(1), Ordering::SeqCst);
    // The clone shares its parent's memory: nothing of the process's own
    // exit may run.
    sys::exit_now(127)
}
