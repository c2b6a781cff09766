//! fencelab's own judge, started once per run and forked per trial rather than
//! executed afresh by each. A judge's start cost as much processor time as a
//! test's run (`bench/RESULTS.md`). Most of it was the C library probing the
//! caches by `cpuid`, which a virtual machine traps.
//!
//! The judge's program carries `init` in its `.init_array`, so it runs before
//! `main`. It returns at once unless the program was started as a judge zygote
//! (`ZYGOTE_ARG`, by `engine::process::JudgeZygote`). Then it waits on its
//! control socket and forks a child for each trial. The child (`child`) sets
//! itself up as the runner's clone sets up a judge, then returns to `main`.
//!
//! Invariants: nothing of the suite runs in the zygote, so each child starts
//! from the state an executed judge starts from. The zygote is fencelab's own
//! code and the suite's, never a learner's. It is single-threaded and dies with
//! the runner, and each child dies with it.

use std::ffi::{CStr, CString, c_char, c_int};
use std::os::fd::{IntoRawFd, RawFd};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::pipe::PipeFlags;
use rustix::process::{Pid, Signal};

use super::child::{borrowed, close};
use super::sandbox::sys::{self, ForkResult};

/// The first argument of a judge started as a zygote; the second is its
/// control socket's descriptor, the third the runner's pid.
pub(crate) const ZYGOTE_ARG: &str = "--fencelab-judge-zygote";
/// How many arguments a trial's command line may have: the zygote is
/// started with this many after its own, whose slots a child's take.
pub(crate) const ARG_SLOTS: usize = 16;
/// The room the zygote is started with, in its last argument and in the
/// variable `ROOM_ENV`, where a child writes its own command line and
/// environment (bytes).
pub(crate) const ARG_ROOM: usize = 4096;
pub(crate) const ENV_ROOM: usize = 16384;
pub(crate) const ROOM_ENV: &str = "FENCELAB_ZYGOTE_ROOM";
/// The longest request the zygote reads; the runner sends none longer (a
/// message cut short would end the zygote).
pub(crate) const REQUEST_ROOM: usize = 1 << 16;
/// What the zygote says on its control socket once it waits for trials.
pub(crate) const READY: &[u8] = b"ready";

/// A trial's request, as the runner sends it: JSON, as every request to a
/// zygote or forking server (`protocol::bytes` for its byte strings).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Request {
    /// Where the descriptor the judge inherits goes (the runner's number).
    pub inherit: Option<RawFd>,
    pub file_size: Option<u64>,
    #[serde(with = "super::protocol::bytes")]
    pub dir: CString,
    /// The trial's space: its directory (the namespaces come as descriptors).
    #[serde(with = "super::protocol::bytes::option")]
    pub space: Option<CString>,
    #[serde(with = "super::protocol::bytes::list")]
    pub args: Vec<CString>,
    #[serde(with = "super::protocol::bytes::list")]
    pub env: Vec<CString>,
    /// Which of the namespaces came: user, mount, network.
    pub namespaces: [bool; 3],
}

impl Request {
    /// The bytes the runner sends.
    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a request of byte strings always serializes")
    }

    /// The request in `bytes`, or None where it is not one: not its JSON, a
    /// NUL in a string, a negative descriptor, or no room for its arguments.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Request> {
        let request: Request = serde_json::from_slice(bytes).ok()?;
        let fits = (1..=ARG_SLOTS).contains(&request.args.len());
        (fits && request.inherit.is_none_or(|fd| fd >= 0)).then_some(request)
    }
}

/// Runs before `main` in every judge program (its `.init_array`): nothing
/// unless the program was started as a zygote, which never returns but in
/// the child of each trial, set up for it. The engine appends it to the
/// judge's root file (`engine::crates::write_judge`).
///
/// # Safety
/// Only as an `.init_array` function, which the C library calls with the
/// program's `argc`, `argv` and `envp`.
pub unsafe extern "C" fn init(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char) {
    if argc < 4 || argv.is_null() {
        return;
    }
    // The C library's lists and their strings, which nothing else reads
    // before `main`: `argc` in `argv`, and in `envp` at most its count.
    let list = |at: *mut *mut c_char, count: usize| -> &'static mut [*mut c_char] {
        // SAFETY: the caller's word, for either list.
        unsafe { std::slice::from_raw_parts_mut(at, count) }
    };
    let string = |at: *mut c_char| -> &'static CStr {
        // SAFETY: one of the lists' strings, ended by a NUL.
        unsafe { CStr::from_ptr(at) }
    };
    let argv = list(argv, argc as usize);
    if string(argv[1]).to_bytes() != ZYGOTE_ARG.as_bytes() {
        return;
    }
    let number = |i: usize| {
        std::str::from_utf8(string(argv[i]).to_bytes())
            .ok()?
            .parse::<i32>()
            .ok()
    };
    let (Some(control), Some(runner)) = (number(2), number(3)) else {
        sys::exit_now(2)
    };
    // How many strings `envp` holds, at most: the variables the standard
    // library reads from it (it skips one without a `=`).
    let env_count = std::env::vars_os().count();
    // A single-threaded process (before `main`); returns only in a child,
    // set up.
    let request = serve(control, runner);
    if request.args.len() >= argv.len() {
        sys::exit_now(127)
    }
    // The bytes of the strings of a list, where they lie one after the
    // other (as the kernel lays out a program's arguments and its
    // environment); None where they do not.
    let area = |list: &[*mut c_char]| -> Option<&'static mut [u8]> {
        let start = *list.first()?;
        let mut end = start;
        for &at in list {
            if at != end {
                return None;
            }
            end = at.wrapping_add(string(at).count_bytes() + 1);
        }
        // SAFETY: the strings' bytes, which abut, from `start` to `end`.
        Some(unsafe { std::slice::from_raw_parts_mut(start.cast(), end as usize - start as usize) })
    };
    // The child's command line and environment where the kernel shows a
    // process's own (`/proc/PID/cmdline`, `environ`: what `ps` and a
    // look at a trial's processes read), in the room the zygote was started
    // with; and its command line in the slots of the zygote's `argv` (the
    // standard library reads `argv` when asked, and stops at the first
    // null; the environment it reads is the C library's, set already).
    let written =
        area(argv).and_then(|room| Some((room.as_mut_ptr(), write_into(room, &request.args)?)));
    let count = request.args.len();
    for (i, arg) in request.args.into_iter().enumerate() {
        // Where `write_into` put it; else a string that lives as long as
        // the process.
        argv[i] = match &written {
            Some((room, starts)) => room.wrapping_add(starts[i]).cast(),
            None => arg.into_raw(),
        };
    }
    argv[count] = std::ptr::null_mut();
    if !envp.is_null() {
        // The C library's environment is the child's own by now.
        if let Some(room) = area(list(envp, env_count)) {
            write_into(room, &request.env);
        }
    }
}

/// Writes `items` into `room` one after the other, each ended by a null,
/// and nulls after them; where each begins, or None (nothing written)
/// where they do not fit.
fn write_into(room: &mut [u8], items: &[CString]) -> Option<Vec<usize>> {
    let need: usize = items.iter().map(|i| i.as_bytes_with_nul().len()).sum();
    if need > room.len() {
        return None;
    }
    let mut starts = Vec::with_capacity(items.len());
    let mut at = 0;
    for item in items {
        let bytes = item.as_bytes_with_nul();
        room[at..at + bytes.len()].copy_from_slice(bytes);
        starts.push(at);
        at += bytes.len();
    }
    room[at..].fill(0);
    Some(starts)
}

/// The zygote's loop: one child per request on `control`; returns in each
/// child, set up, its request. It dies with the runner: by its parent-death
/// signal, and at its control socket's end. Called by `init` alone, before
/// `main`: a single-threaded process.
fn serve(control: RawFd, runner: libc::pid_t) -> Request {
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    if Pid::as_raw(rustix::process::getppid()) != runner {
        sys::exit_now(0);
    }
    // Its children's ends come as a descriptor to poll, never closed (a
    // child closes it with the zygote's others).
    let Ok(ended) = sys::children_signals().map(IntoRawFd::into_raw_fd) else {
        sys::exit_now(1)
    };
    if super::zygote::send_with(control, READY, &[]).is_err() {
        sys::exit_now(1);
    }
    let me = rustix::process::getpid().as_raw_nonzero().get();
    // Each running child's connection.
    let mut running: Vec<(libc::pid_t, RawFd)> = Vec::new();
    loop {
        let mut polls = [
            PollFd::from_borrowed_fd(borrowed(control), PollFlags::IN),
            PollFd::from_borrowed_fd(borrowed(ended), PollFlags::IN),
        ];
        if rustix::event::poll(&mut polls, None).is_err() {
            continue;
        }
        if !polls[1].revents().is_empty() {
            let mut info = [0u8; 128];
            while rustix::io::read(borrowed(ended), &mut info).is_ok_and(|n| n > 0) {}
            reap(&mut running);
        }
        if polls[0].revents().is_empty() {
            continue;
        }
        let (message, fds) = match receive_with(control) {
            Some(received) => received,
            // The runner is gone, or done with this judge.
            None => sys::exit_now(0),
        };
        let Some((&connection, given)) = fds.split_first() else {
            continue;
        };
        let request = Request::decode(&message);
        // The child's word on its set-up: its errno where it failed,
        // nothing (the pipe's end) where it is the judge now.
        let word = match &request {
            Some(request) if given.len() == 3 + request.given() => {
                rustix::pipe::pipe_with(PipeFlags::CLOEXEC).ok()
            }
            _ => None,
        };
        let mut pid = match &word {
            // SAFETY: `init`'s, before `main`: a single-threaded process, so
            // its fork's child may run on.
            Some(_) => match unsafe { sys::fork() } {
                Ok(ForkResult::Child) => 0,
                Ok(ForkResult::Parent { child }) => child.as_raw(),
                Err(_) => -1,
            },
            None => -libc::EINVAL,
        };
        if pid == 0 {
            let (Some(request), Some((read, write))) = (request, word) else {
                sys::exit_now(127)
            };
            drop(read);
            let mut word = write.into_raw_fd();
            let prepared = child(&request, given, me, &mut word, |setup| {
                // SAFETY: the child of a single-threaded process (above).
                unsafe { super::child::prepare(setup) }
            });
            if let Err(err) = prepared {
                let errno = err.raw_os_error().unwrap_or(libc::EINVAL).to_le_bytes();
                let _ = rustix::io::write(borrowed(word), &errno);
                sys::exit_now(127);
            }
            return request;
        }
        for &fd in given {
            close(fd);
        }
        match word {
            Some((read, write)) if pid > 0 => {
                drop(write);
                let mut errno = [0u8; 4];
                let said = loop {
                    match rustix::io::read(&read, &mut errno) {
                        Err(Errno::INTR) => continue,
                        said => break said,
                    }
                };
                drop(read);
                // Reaped with the others; fencelab's failure, not the judge's.
                if said != Ok(0) {
                    pid = -i32::from_le_bytes(errno).max(1);
                }
            }
            Some((read, write)) => drop((read, write)),
            None => {}
        }
        let answer = super::protocol::Forked { pid }.encode();
        if super::zygote::send_with(connection, &answer, &[]).is_err() || pid < 0 {
            close(connection);
            continue;
        }
        running.push((pid, connection));
    }
}

impl Request {
    /// How many descriptors come beside the standard streams.
    fn given(&self) -> usize {
        usize::from(self.inherit.is_some()) + self.namespaces.iter().filter(|&&n| n).count()
    }
}

/// Collects every ended child and tells its trial how it ended: its wait
/// status and processor time.
fn reap(running: &mut Vec<(libc::pid_t, RawFd)>) {
    while let Ok(Some((pid, status, usage))) = sys::wait_with_usage(-1, libc::WNOHANG) {
        let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        let cpu = micros(usage.ru_utime) + micros(usage.ru_stime);
        if let Some(at) = running.iter().position(|&(p, _)| p == pid) {
            let (_, connection) = running.swap_remove(at);
            let answer = super::protocol::Ended {
                status,
                cpu_micros: Some(cpu),
            };
            let _ = super::zygote::send_with(connection, &answer.encode(), &[]);
            // The zygote's own descriptor, closed once.
            close(connection);
        }
    }
}

/// One message and the descriptors that came with it (at most eight), from
/// the control socket; None at its end.
fn receive_with(fd: RawFd) -> Option<(Vec<u8>, Vec<RawFd>)> {
    use std::os::fd::IntoRawFd as _;
    let mut buf = vec![0u8; REQUEST_ROOM];
    let (n, fds) = super::fds::receive_with(fd, &mut buf, 8)?;
    buf.truncate(n);
    Some((buf, fds.into_iter().map(|f| f.into_raw_fd()).collect()))
}

/// The child of a trial, set up as the runner's clone sets up a judge it
/// executes (`child::prepare`): death with its parent (the zygote), its own
/// group, no core, the file size limit, the trial's space, its standard
/// streams and the descriptor it inherits (`given`: standard input, output
/// and error, then the inherited one, then the namespaces), nothing else
/// open but the word's pipe (`word`, moved where it must), its directory,
/// its environment, and no signal blocked (the zygote blocks SIGCHLD).
/// `prepare` runs the set-up.
fn child(
    request: &Request,
    given: &[RawFd],
    zygote: libc::pid_t,
    word: &mut RawFd,
    prepare: impl FnOnce(&mut super::child::Setup<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (streams, rest) = given.split_at(3);
    let (inherit, namespaces) = match request.inherit {
        Some(target) => (Some((rest[0], target)), &rest[1..]),
        None => (None, rest),
    };
    let join = match &request.space {
        Some(dir) => {
            let mut next = namespaces.iter().copied();
            let [user, mount, net] = request.namespaces;
            let user = if user { next.next() } else { None };
            let mount = if mount { next.next() } else { None };
            let net = if net { next.next() } else { None };
            let mount = mount.ok_or_else(|| std::io::Error::other("no mount namespace"))?;
            let dir = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(dir.as_bytes());
            Some(super::sandbox::Join::of(user, mount, net, dir.as_ref())?)
        }
        None => None,
    };
    let mut place: Vec<(RawFd, RawFd)> = (0..)
        .zip(streams.iter().copied())
        .map(|(t, fd)| (fd, t))
        .collect();
    place.extend(inherit);
    let mut keep = [*word];
    let mut setup = super::child::Setup {
        parent: rustix::process::Pid::from_raw(zygote),
        own_group: true,
        limits: Some(request.file_size),
        space: join.as_ref(),
        close_joined: namespaces,
        place: &mut place,
        keep: &mut keep,
        close_from: Some(0),
        dir: Some(&request.dir),
        env: Some(&request.env),
        unblock: true,
        ..Default::default()
    };
    let prepared = prepare(&mut setup);
    // The word's pipe where it is now (its new number is the caller's).
    *word = keep[0];
    prepared?;
    // Set up: the zygote answers the runner with this pid.
    close(*word);
    Ok(())
}

/// Prints what this process was given as a judge (its command line, its
/// directory and environment, its process group, descriptors, signals,
/// limits and namespaces): the judge's `PROBE_TEST`, by which a unit test
/// compares a judge forked by the zygote with one executed afresh.
pub fn probe() {
    let mut lines = vec![format!(
        "args {:?}",
        std::env::args().skip(1).collect::<Vec<_>>()
    )];
    lines.push(format!("dir {:?}", std::env::current_dir().ok()));
    // What the kernel shows of this process (`ps`, a look at /proc), the
    // nulls after a forked judge's own left out.
    for (name, sorted) in [("cmdline", false), ("environ", true)] {
        let bytes = super::sandbox::proc::read(format!("/proc/self/{name}")).unwrap_or_default();
        let mut items: Vec<String> = bytes
            .split(|&b| b == 0)
            .map(|i| String::from_utf8_lossy(i).into_owned())
            .collect();
        while items.last().is_some_and(String::is_empty) {
            items.pop();
        }
        if sorted {
            items.sort();
        }
        lines.push(format!("{name} {items:?}"));
    }
    let mut env: Vec<_> = std::env::vars_os().collect();
    env.sort();
    lines.push(format!("env {env:?}"));
    let group = rustix::process::getpgid(None).ok();
    lines.push(format!(
        "leads its group {}",
        Some(rustix::process::getpid()) == group
    ));
    let dumpable = rustix::process::dumpable_behavior().map(|d| d as i32);
    lines.push(format!("dumpable {}", dumpable.unwrap_or(-1)));
    let mut fds: Vec<String> = super::sandbox::proc::own_descriptors()
        .into_iter()
        .filter_map(|(fd, target)| {
            let target = target.to_string_lossy();
            // A directory of /proc that libtest's threads hold is not the judge's.
            (!target.ends_with("/fd") && !target.contains("/task/")).then(|| {
                let kind = target.split(':').next().unwrap_or("").to_string();
                let kind = if target.starts_with('/') && !target.starts_with("/dev/") {
                    "a file".to_string()
                } else {
                    kind
                };
                format!("{fd}={kind}")
            })
        })
        .collect();
    fds.sort();
    lines.push(format!("descriptors {fds:?}"));
    // This thread's signals (libtest's main thread may be starting it), and
    // the process's ids.
    let status = super::sandbox::proc::read_text("/proc/thread-self/status").unwrap_or_default();
    for line in status.lines() {
        if [
            "SigBlk",
            "SigIgn",
            "SigCgt",
            "Uid",
            "Gid",
            "NoNewPrivs",
            "Seccomp",
            "Cpus_allowed_list",
        ]
        .iter()
        .any(|k| line.starts_with(&format!("{k}:")))
        {
            lines.push(line.replace('\t', " "));
        }
    }
    use rustix::process::Resource;
    for (name, resource) in [
        ("core", Resource::Core),
        ("fsize", Resource::Fsize),
        ("nofile", Resource::Nofile),
        ("nproc", Resource::Nproc),
        ("stack", Resource::Stack),
    ] {
        let limit = rustix::process::getrlimit(resource);
        // Unlimited as the kernel says it.
        let value = |v: Option<u64>| v.unwrap_or(u64::MAX);
        lines.push(format!(
            "limit {name} {} {}",
            value(limit.current),
            value(limit.maximum)
        ));
    }
    for ns in ["user", "mnt", "net", "pid", "ipc", "uts", "cgroup"] {
        let target = std::fs::read_link(format!("/proc/self/ns/{ns}")).ok();
        lines.push(format!("namespace {ns} {target:?}"));
    }
    // Read by setting it, then set back as it was.
    let umask = rustix::process::umask(rustix::fs::Mode::from_bits_retain(0o022));
    rustix::process::umask(umask);
    lines.push(format!("umask {:o}", umask.bits()));
    println!("{}", lines.join("\n"));
}

#[cfg(test)]
mod tests;
