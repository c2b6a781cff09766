//! The forking server's side of a Python server forked per trial (`zygote`
//! is the judge's side): its loop between two forks, the fork itself, and
//! the child's way into the cage. python/fencelab_forking.py calls the loop
//! through `ctypes`, by its symbol in the bridge's cdylib.
//!
//! Invariants: between two forks nothing is allocated but what the loop's
//! lists grow by; the child enters the very cage a judge gives a server it
//! starts, and any failure ends the child before the implementation runs.

use std::ffi::{CStr, c_int};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::{Pid, PidfdFlags, WaitOptions, pidfd_open, waitpid};

use super::child::{Setup, borrowed};
use super::sandbox::sys::{self, ForkResult};

use super::fds::{receive_with, send_with};
use super::zygote::Request;

/// Forks the trial that `request` (its JSON, as it came) asks for, with
/// its descriptors `fds`. In the forking server: the child's pid (-1:
/// none). In the child: 0, once the request is read, its key checked and
/// the cage entered (`child`); where any of it fails, the cage's word says
/// why and the child ends. The request is read in the child: nothing is
/// allocated before the fork. Called by the loop alone, whose caller's word
/// is a single-threaded process.
fn fork_into_cage(key: &str, trusted: bool, request: &[u8], fds: &[RawFd]) -> libc::pid_t {
    // SAFETY: the loop's caller's word: a single-threaded process.
    match unsafe { sys::fork() } {
        Ok(ForkResult::Child) => {}
        Ok(ForkResult::Parent { child }) => return child.as_raw(),
        Err(_) => return -1,
    }
    let mut fds = fds.to_vec();
    let entered = serde_json::from_slice::<Request>(request)
        .map_err(|e| std::io::Error::other(format!("a malformed request: {e}")))
        .and_then(|request| {
            if key != request.key {
                return Err(std::io::Error::other(
                    "a request for another implementation",
                ));
            }
            child(&request, trusted, &mut fds, |setup| {
                // SAFETY: the child of a single-threaded process (above).
                unsafe { super::child::prepare(setup) }
            })?;
            // Not freed: each page a free writes is one the program copies.
            std::mem::forget(request);
            Ok(())
        });
    if let Err(err) = entered {
        let message = format!("cannot enter the cage: {err}");
        // To the cage's word, then this child ends.
        let _ = rustix::io::write(borrowed(fds[4]), message.as_bytes());
        sys::exit_now(1)
    }
    0
}

/// The descriptors a request comes with, at most (`Request`'s order: the
/// listener, the three standard streams, the cage's word, the three
/// namespaces).
const REQUEST_FDS: usize = 8;

/// The forking server's loop, run by python/fencelab_forking.py's forking
/// server (`forking`, through `ctypes.PyDLL`, so holding the interpreter's
/// lock): between two forks it runs only this, which writes to a few pages
/// of its own (a loop in Python wrote to about 115 after each fork, each a
/// copy, as the child's writes are). `control`: the runner's control socket
/// (a trial's dispenser each message, with its descriptor; its end ends the
/// forking server, each cage it still watches killed); on a dispenser,
/// "connect" with a connection's end; on a connection, one request with its
/// descriptors (`Request`, `REQUEST_FDS`), answered with the watcher's pid,
/// then with its wait status when it ends; a connection that ends first has
/// its cage killed. Each fork is the interpreter's as `os.fork` makes it
/// (`before` and `after`: `PyOS_BeforeFork`, `PyOS_AfterFork_Parent`; the
/// child's after-fork is the caller's, in Python). Nothing is allocated
/// between forks but what the loop's lists grow by. `trusted`: the cage is
/// the one the runner gives fencelab's own implementations
/// (`Cage::trusted_reading`), the forking server's word from how the runner
/// started it, never a request's.
///
/// `buffer` holds `len` bytes: the key of the implementation served, ended
/// by a NUL, then every message received. Returns only in a child, in its
/// cage: the descriptor of the cage's word, with the request in `buffer`,
/// ended by a NUL; or -1, at once, where an argument is missing. In the
/// program, 0, 1 and 2 are the server's standard streams, `LISTENER_FD` its
/// listening socket, and the cage's own descriptors are still open: the
/// caller writes "ok" to the cage's word and closes every descriptor above
/// `LISTENER_FD` before it runs anything else. The signals of the forking
/// server's own handlers (SIGCHLD, SIGINT) are at their defaults.
///
/// # Safety
/// `buffer` holds `len` bytes that nothing else uses meanwhile. Call only
/// in a single-threaded process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fencelab_forking_loop(
    control: c_int,
    trusted: c_int,
    before: Option<extern "C" fn()>,
    after: Option<extern "C" fn()>,
    buffer: *mut u8,
    len: usize,
) -> c_int {
    let (Some(before), Some(after)) = (before, after) else {
        return -1;
    };
    if buffer.is_null() || len == 0 {
        return -1;
    }
    // SAFETY: the caller's `len` bytes, for this alone until it returns.
    let buf = unsafe { std::slice::from_raw_parts_mut(buffer, len) };
    let Ok(key) = CStr::from_bytes_until_nul(buf) else {
        return -1;
    };
    let key = key.to_string_lossy().into_owned();
    let mut forking = Forking::default();
    let mut polled: Vec<PollFd<'static>> = Vec::with_capacity(64);
    loop {
        polled.clear();
        // Each open until this round's poll has returned.
        let watch = |fd: RawFd| PollFd::from_borrowed_fd(borrowed(fd), PollFlags::IN);
        polled.push(watch(control));
        polled.extend(forking.dispensers.iter().map(|d| watch(d.as_raw_fd())));
        polled.extend(forking.trials.iter().map(|t| watch(t.conn.as_raw_fd())));
        polled.extend(forking.watched().map(watch));
        match rustix::event::poll(&mut polled, None) {
            Ok(_) => {}
            Err(Errno::INTR) => continue,
            Err(_) => forking.end(),
        }
        // One at a time: what it does may close a descriptor and open
        // another at its number, which a later one of this round would
        // name (the others are still ready at the next poll).
        let ready = polled.iter().find(|p| !p.revents().is_empty());
        let Some(fd) = ready.map(|p| p.as_fd().as_raw_fd()) else {
            continue;
        };
        {
            if fd == control {
                match receive_with(control, buf, 1) {
                    Some((_, fds)) if !fds.is_empty() => {
                        let mut fds = fds.into_iter();
                        forking.dispensers.extend(fds.next());
                    }
                    // The runner is gone, or done with this implementation.
                    _ => forking.end(),
                }
            } else if let Some(at) = forking.dispensers.iter().position(|d| d.as_raw_fd() == fd) {
                match receive_with(fd, buf, 1) {
                    Some((n, fds)) if &buf[..n] == b"connect" && fds.len() == 1 => {
                        let conn = fds.into_iter().next().expect("one");
                        forking.trials.push(Trial {
                            conn,
                            watcher: None,
                        });
                    }
                    // Every judge of the trial has ended (or one broke the
                    // protocol): no more connections from it.
                    _ => {
                        forking.dispensers.swap_remove(at);
                    }
                }
            } else if let Some(at) = forking.trials.iter().position(|t| t.conn.as_raw_fd() == fd) {
                let received = receive_with(fd, buf, REQUEST_FDS);
                let asked = match received {
                    Some((n, fds))
                        if n > 0
                            && n < buf.len()
                            && fds.len() >= 5
                            && forking.trials[at].watcher.is_none() =>
                    {
                        Some((n, fds))
                    }
                    _ => None,
                };
                let Some((n, fds)) = asked else {
                    // The judge went away (or broke the protocol): its cage goes.
                    forking.close(at);
                    continue;
                };
                before();
                let mut raw = [-1; REQUEST_FDS];
                for (to, fd) in raw.iter_mut().zip(&fds) {
                    *to = fd.as_raw_fd();
                }
                // A single-threaded process (the caller's word).
                let pid = fork_into_cage(&key, trusted != 0, &buf[..n], &raw[..fds.len()]);
                if pid == 0 {
                    // The request for the caller, ended by a NUL (`n` is
                    // less than the buffer's length).
                    buf[n] = 0;
                    // The descriptors stay open (the caller closes what it
                    // does not serve with); nothing of the loop is freed.
                    std::mem::forget(fds);
                    std::mem::forget(forking);
                    std::mem::forget(polled);
                    return raw[4];
                }
                after();
                drop(fds);
                if pid < 0 {
                    forking.close(at);
                    continue;
                }
                let opened = Pid::from_raw(pid).map(|p| pidfd_open(p, PidfdFlags::empty()));
                let Some(Ok(pidfd)) = opened else {
                    // Without one its end is never seen: no trial of it.
                    super::sandbox::kill_cage(pid);
                    // Our own child, killed.
                    let _ = waitpid(Pid::from_raw(pid), WaitOptions::empty());
                    forking.close(at);
                    continue;
                };
                let answer = format!("{{\"pid\": {pid}}}");
                forking.trials[at].watcher = Some((pid, pidfd));
                if send_with(fd, answer.as_bytes(), &[]).is_err() {
                    forking.close(at);
                }
            } else {
                forking.reap(fd);
            }
        }
    }
}

/// A trial's connection and, once forked, its watcher (pid and pidfd).
struct Trial {
    conn: OwnedFd,
    watcher: Option<(libc::pid_t, OwnedFd)>,
}

/// What `fencelab_forking_loop` holds.
#[derive(Default)]
struct Forking {
    dispensers: Vec<OwnedFd>,
    trials: Vec<Trial>,
    /// Watchers whose judge went away: killed, not yet collected.
    killed: Vec<(libc::pid_t, OwnedFd)>,
}

impl Forking {
    /// The pidfds of every watcher not yet collected.
    fn watched(&self) -> impl Iterator<Item = RawFd> + '_ {
        self.trials
            .iter()
            .filter_map(|t| t.watcher.as_ref())
            .chain(&self.killed)
            .map(|(_, pidfd)| pidfd.as_raw_fd())
    }

    /// Closes trial `at`'s connection, killing its cage (collected later).
    fn close(&mut self, at: usize) {
        let trial = self.trials.swap_remove(at);
        if let Some((pid, pidfd)) = trial.watcher {
            super::sandbox::kill_cage(pid);
            self.killed.push((pid, pidfd));
        }
    }

    /// Collects the watcher whose pidfd is `pidfd`, and tells its judge how
    /// it ended.
    fn reap(&mut self, pidfd: RawFd) {
        if let Some(at) = self.killed.iter().position(|(_, p)| p.as_raw_fd() == pidfd) {
            let (pid, _) = self.killed.swap_remove(at);
            // Our own child, ended.
            let _ = waitpid(Pid::from_raw(pid), WaitOptions::empty());
            return;
        }
        let Some(at) = self.trials.iter().position(|t| {
            t.watcher
                .as_ref()
                .is_some_and(|(_, p)| p.as_raw_fd() == pidfd)
        }) else {
            return;
        };
        let trial = self.trials.swap_remove(at);
        let (pid, _) = trial.watcher.expect("a watcher");
        // Our own child, ended.
        if let Ok(Some((_, status))) = waitpid(Pid::from_raw(pid), WaitOptions::empty()) {
            let answer = format!("{{\"status\": {}}}", status.as_raw());
            let _ = send_with(trial.conn.as_raw_fd(), answer.as_bytes(), &[]);
        }
    }

    /// The runner is gone, or done: every cage still watched is killed, and
    /// the forking server ends.
    fn end(&mut self) -> ! {
        for (pid, _) in self.trials.iter().filter_map(|t| t.watcher.as_ref()) {
            super::sandbox::kill_cage(*pid);
        }
        sys::exit_now(0)
    }
}

/// The forked child's way into the cage (`child::prepare`): the forking
/// server's signal handlers gone, the trial's space joined (the namespaces
/// the judge sent, unless they are this process's already), the server's
/// descriptors (`fds`: the listening socket, standard input, output and
/// error, the cage's word, the namespaces) in place (`LISTENER_FD`, 0, 1
/// and 2) and none of the forking server's others open, then the cage a
/// judge builds for a server (`start::start`), or, `trusted`, the one the
/// runner gives fencelab's own implementations. `prepare` runs the set-up.
fn child(
    request: &Request,
    trusted: bool,
    fds: &mut [RawFd],
    prepare: impl FnOnce(&mut Setup<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let listener = super::server::LISTENER_FD;
    let (moved, kept) = fds.split_at_mut(4);
    let join = space_of(request, &kept[1..])?;
    // Where it joins no space, it starts in the trial's directory.
    let tmp = match join {
        Some(_) => None,
        None => Some(std::ffi::CString::new(
            request.tmp.as_os_str().as_encoded_bytes(),
        )?),
    };
    let mut place = [
        (moved[0], listener),
        (moved[1], 0),
        (moved[2], 1),
        (moved[3], 2),
    ];
    let mut enter = || enter_cage(request, trusted, listener);
    let mut setup = Setup {
        // Whatever the forking server's handlers would write to (its
        // wakeup pipe) is closed; a signal must not reach them meanwhile.
        signals: super::child::Signals::These(&[libc::SIGCHLD, libc::SIGINT]),
        space: join.as_ref(),
        place: &mut place,
        // The cage's word and the namespaces stay where they are (the
        // forking server holds 0 to `LISTENER_FD`: none is a target).
        keep: kept,
        close_from: Some(listener + 1),
        dir: tmp.as_deref(),
        cage: Some(super::child::Enter::Built(&mut enter)),
        ..Default::default()
    };
    prepare(&mut setup)
}

/// The trial's space to join: the namespaces the judge sent (user, mount,
/// network), unless the process is in them already (None).
fn space_of(
    request: &Request,
    namespaces: &[RawFd],
) -> std::io::Result<Option<super::sandbox::Join>> {
    let own = |kind: &str| std::fs::metadata(format!("/proc/self/ns/{kind}")).ok();
    let same = |fd: RawFd, kind: &str| {
        use std::os::unix::fs::MetadataExt;
        // A descriptor the caller holds, for the call.
        let fd = borrowed(fd);
        let stat = rustix::fs::fstat(fd);
        stat.is_ok_and(|stat| {
            own(kind).is_some_and(|m| m.ino() == stat.st_ino && m.dev() == stat.st_dev)
        })
    };
    match namespaces[..] {
        [user, mount, ref net @ ..] if !same(mount, "mnt") => {
            let user = (!same(user, "user")).then_some(user);
            // The judge's network: the trials' closed one, where it is in it.
            let net = net.first().copied().filter(|&net| !same(net, "net"));
            super::sandbox::Join::of(user, mount, net, &request.tmp).map(Some)
        }
        _ => Ok(None),
    }
}

/// Enters the cage a judge builds for a server (`start::start`), or,
/// `trusted`, the one the runner gives fencelab's own implementations.
fn enter_cage(request: &Request, trusted: bool, listener: RawFd) -> std::io::Result<()> {
    let memory = request
        .memory
        .as_deref()
        .map(super::sandbox::Memory::adopt)
        .transpose()?;
    let cage = if trusted {
        super::sandbox::Cage::trusted_reading(&request.tmp, &request.program, &request.reads)
    } else {
        super::sandbox::Cage::reading(&request.tmp, &request.program, &request.reads)
    }
    .bounded(memory.as_ref());
    let plan = cage.plan();
    let mut stacks = super::sandbox::Stacks::for_plan(&plan);
    // SAFETY: a single-threaded process; the cage is alive.
    unsafe { super::sandbox::enter(&plan, None, Some(listener), &mut stacks)? };
    // In the program now. What the cage was built from is not freed: every
    // page a free writes (a `CString` zeroes its first byte; the allocator
    // writes its own records) is a page the program copies from the
    // watcher, which made it. The cage's own descriptors (its places, its
    // ruleset, cgroup.procs) are still closed before anything of the
    // implementation runs: the caller closes every descriptor above the
    // listening socket's first thing (`fencelab_forking_loop`).
    std::mem::forget(stacks);
    std::mem::forget(plan);
    std::mem::forget(cage);
    std::mem::forget(memory);
    Ok(())
}
