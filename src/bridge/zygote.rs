//! A Python server forked per trial from a forking server per implementation,
//! instead of an interpreter started afresh by each judge. The interpreter's
//! start leaves the trial, and its imports leave the submission
//! (`bench/RESULTS.md`). The runner uses it only where the cage has a PID
//! namespace.
//!
//! The judge's side (`connection`, `fork`, `status`), the child's way into the
//! cage (`fencelab_fork_cage`) and the forking server's loop
//! (`fencelab_forking_loop`) are here. The child enters the very cage a judge
//! gives a server it starts: the same code, not a second cage. So the cage
//! stays one piece of Rust, rather than a Python port of it.
//!
//! Invariants: the forking server never imports an implementation, is
//! single-threaded, not dumpable, and dies with the runner. Nothing outlives a
//! trial, and every verdict reads as for a server started afresh.

use std::ffi::{CStr, c_char, c_int};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::process::{Pid, PidfdFlags, WaitOptions, pidfd_open, waitpid};

use super::fds::receive_with;
pub(crate) use super::fds::send_with;

/// The environment variable by which the runner hands a judge its
/// connection to the forking server: "FD PID" (the descriptor, inherited,
/// and the pid of the runner, which made the pair: the socket's peer
/// credentials say so, which tells it from another descriptor at that
/// number in a process that inherited the variable and not the descriptor).
/// Never a path, so no caged program can find it.
pub(crate) const ZYGOTE_ENV: &str = "FENCELAB_ZYGOTE";

/// What a judge asks of the forking server (python/fencelab_forking.py
/// reads `key` and `library`, and hands all of it to `fencelab_fork_cage`,
/// with the descriptors' numbers filled in).
#[derive(serde::Serialize, serde::Deserialize, Debug)]
pub(crate) struct Request {
    /// The implementation to serve (the forking server serves one).
    pub key: String,
    /// The bridge's cdylib, which enters the cage (`library`).
    pub library: PathBuf,
    /// The trial's directory: the only writable place, where it starts.
    pub tmp: PathBuf,
    /// The server's program and what its cage reads besides the system's.
    pub program: PathBuf,
    pub reads: Vec<PathBuf>,
    /// The memory cgroup of the cage, made by the runner (`MEMORY_ENV`).
    pub memory: Option<PathBuf>,
    /// The environment a server started by the judge would have had (the
    /// child takes it on: `TMPDIR`, `HOME`, ...).
    pub env: Vec<(String, String)>,
}

/// The environment of a server this judge starts (`client::start`), as
/// strings for the request.
pub(crate) fn server_env() -> Vec<(String, String)> {
    super::protocol::server_env()
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// The bridge's cdylib beside the judge that runs this code: cargo writes a
/// dependency's cdylib where it writes the judge, under the bridge crate's
/// own (content-addressed) name.
pub(crate) fn library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe
        .parent()?
        .join(format!("lib{}.so", env!("CARGO_CRATE_NAME")));
    path.exists().then_some(path)
}

/// The forking server's fork of one trial (python/fencelab_forking.py,
/// `start_child`, through `ctypes.PyDLL`, so with the interpreter's lock
/// held as `os.fork` holds it, between `PyOS_BeforeFork` and
/// `PyOS_AfterFork_Parent` or `_Child`), given the judge's `Request` as
/// JSON, as it came, whether the cage is the one the runner gives
/// fencelab's own implementations (`Cage::trusted_reading`: the forking
/// server's word, from how the runner started it, `--forking-trusted`;
/// never the request's, so whoever holds a connection cannot ask for the
/// looser cage), and the descriptors that came with the request (`fork`'s
/// `fds`, at their numbers in the forking server): the child's pid in the
/// forking server (-1 where the descriptors are too few or the fork
/// failed); 0 in the cage's program, which serves. Nothing of the child
/// runs Python before that: it is the cage's watcher (where the cage has a
/// PID namespace; the program itself where it has none), and every page it
/// writes is a copy of the forking server's. Nothing is allocated here
/// before the fork either: a page the forking server writes while the
/// child lives is a copy too, so the request is read in the child. Where
/// the child cannot enter the cage, it says why on the request's pipe for
/// the cage's word and exits 1.
///
/// In the program, the descriptors 0, 1 and 2 are the server's standard
/// streams, `server::LISTENER_FD` its listening socket, and the cage's word
/// and the cage's own descriptors are still open: the caller writes that
/// word ("ok") and closes every descriptor above `LISTENER_FD` before it
/// runs anything else. The signals of the forking server's own handlers
/// (SIGCHLD, SIGINT) are at their defaults.
///
/// # Safety
/// `request` is a C string; `fds` holds `nfds` descriptors. Call only in a
/// single-threaded process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fencelab_fork_cage(
    request: *const c_char,
    trusted: c_int,
    fds: *const c_int,
    nfds: usize,
) -> libc::pid_t {
    if request.is_null() || fds.is_null() || nfds < 5 {
        return -1;
    }
    // SAFETY: the caller is single-threaded.
    let pid = unsafe { libc::fork() };
    if pid != 0 {
        return pid;
    }
    // SAFETY: the caller's descriptors and C string, as copied by the fork.
    let (mut fds, text) = unsafe {
        (
            std::slice::from_raw_parts(fds, nfds).to_vec(),
            CStr::from_ptr(request).to_string_lossy(),
        )
    };
    // SAFETY: the child of a single-threaded process.
    unsafe { enter_or_end(&text, None, trusted != 0, &mut fds) };
    std::mem::forget(fds);
    0
}

/// The child's side of a fork: the request `text` read, its key checked
/// (where `key` says which the forking server serves), and the cage
/// entered; where any of it fails, the cage's word says why and the child
/// ends.
///
/// # Safety
/// Only in the child of a single-threaded process; `fds` as
/// `fencelab_fork_cage`'s.
unsafe fn enter_or_end(text: &str, key: Option<&str>, trusted: bool, fds: &mut [RawFd]) {
    let entered = serde_json::from_str::<Request>(text)
        .map_err(|e| std::io::Error::other(format!("a malformed request: {e}")))
        .and_then(|request| {
            if key.is_some_and(|key| key != request.key) {
                return Err(std::io::Error::other(
                    "a request for another implementation",
                ));
            }
            // SAFETY: the child of a single-threaded process.
            unsafe { child(&request, trusted, fds)? };
            // Not freed: each page a free writes is one the program copies.
            std::mem::forget(request);
            Ok(())
        });
    if let Err(err) = entered {
        let message = format!("cannot enter the cage: {err}");
        // SAFETY: writes our own bytes to the cage's word, then ends this
        // child.
        unsafe {
            libc::write(fds[4], message.as_ptr().cast(), message.len());
            libc::_exit(1)
        }
    }
}

/// The descriptors a request comes with, at most (`Request`'s order: the
/// listener, the three standard streams, the cage's word, the three
/// namespaces).
const REQUEST_FDS: usize = 8;

/// The forking server's loop, run by python/fencelab_forking.py's forking
/// server (`forking`) where the bridge's cdylib is known before its first
/// trial, instead of its loop in Python: between two forks it runs only
/// this, which writes to a few pages of its own (a loop in Python wrote to
/// about 115 after each fork, each a copy, as the child's writes are).
/// `control`: the runner's control socket (a trial's dispenser each
/// message, with its descriptor; its end ends the forking server, each
/// cage it still watches killed); on a dispenser, "connect" with a
/// connection's end; on a connection, one request with its descriptors
/// (`Request`, `REQUEST_FDS`), answered with the watcher's pid, then with
/// its wait status when it ends; a connection that ends first has its
/// cage killed. Each fork is the interpreter's as `os.fork` makes it
/// (`PyOS_BeforeFork`, `PyOS_AfterFork_Parent`; the child's after-fork is
/// the caller's, in Python). Nothing is allocated between forks but what
/// the loop's lists grow by.
///
/// Returns only in a child, in its cage (as `fencelab_fork_cage` returns
/// 0): 0, with the request copied to `request_out` (NUL-terminated, at most
/// `out_len` bytes with the NUL) and the descriptor of the cage's word at
/// `told_out`; or -1, at once, where the interpreter's fork hooks cannot be
/// found (the caller serves from Python then).
///
/// # Safety
/// `key` is a C string; `request_out` holds `out_len` bytes; `told_out`
/// one int. Call only in a single-threaded process, holding the
/// interpreter's lock (`ctypes.PyDLL`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fencelab_forking_loop(
    control: c_int,
    key: *const c_char,
    trusted: c_int,
    request_out: *mut c_char,
    out_len: usize,
    told_out: *mut c_int,
) -> c_int {
    // SAFETY: looks up two symbols of the process.
    let hooks = unsafe {
        (
            libc::dlsym(libc::RTLD_DEFAULT, c"PyOS_BeforeFork".as_ptr()),
            libc::dlsym(libc::RTLD_DEFAULT, c"PyOS_AfterFork_Parent".as_ptr()),
        )
    };
    if key.is_null() || request_out.is_null() || told_out.is_null() || out_len == 0 {
        return -1;
    }
    let (before, after) = match hooks {
        (b, a) if !b.is_null() && !a.is_null() => {
            // SAFETY: both are `void f(void)` in the C API.
            unsafe {
                (
                    std::mem::transmute::<*mut libc::c_void, extern "C" fn()>(b),
                    std::mem::transmute::<*mut libc::c_void, extern "C" fn()>(a),
                )
            }
        }
        _ => return -1,
    };
    // SAFETY: the caller's C string.
    let key = unsafe { CStr::from_ptr(key) }
        .to_string_lossy()
        .into_owned();
    let mut forking = Forking::default();
    let mut buf = vec![0u8; 1 << 16];
    let mut polled: Vec<libc::pollfd> = Vec::with_capacity(64);
    loop {
        polled.clear();
        let watch = |fd: RawFd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        polled.push(watch(control));
        polled.extend(forking.dispensers.iter().map(|d| watch(d.as_raw_fd())));
        polled.extend(forking.trials.iter().map(|t| watch(t.conn.as_raw_fd())));
        polled.extend(forking.watched().map(watch));
        // SAFETY: pollfds of ours.
        let ready = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            forking.end();
        }
        // One at a time: what it does may close a descriptor and open
        // another at its number, which a later one of this round would
        // name (the others are still ready at the next poll).
        let Some(fd) = polled.iter().find(|p| p.revents != 0).map(|p| p.fd) else {
            continue;
        };
        {
            if fd == control {
                match receive_with(control, &mut buf, 1) {
                    Some((_, fds)) if !fds.is_empty() => {
                        let mut fds = fds.into_iter();
                        forking.dispensers.extend(fds.next());
                    }
                    // The runner is gone, or done with this implementation.
                    _ => forking.end(),
                }
            } else if let Some(at) = forking.dispensers.iter().position(|d| d.as_raw_fd() == fd) {
                match receive_with(fd, &mut buf, 1) {
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
                let received = receive_with(fd, &mut buf, REQUEST_FDS);
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
                // SAFETY: a single-threaded process (the caller's word).
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                    let mut raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
                    // SAFETY: the child of a single-threaded process.
                    unsafe { enter_or_end(&text, Some(&key), trusted != 0, &mut raw) };
                    let len = n.min(out_len - 1);
                    // SAFETY: the caller's buffer of `out_len` bytes, and its int.
                    unsafe {
                        std::ptr::copy_nonoverlapping(buf.as_ptr(), request_out.cast(), len);
                        *request_out.add(len) = 0;
                        *told_out = raw[4];
                    }
                    // The descriptors stay open (the caller closes what it
                    // does not serve with); nothing of the loop is freed.
                    std::mem::forget(fds);
                    std::mem::forget(forking);
                    std::mem::forget(buf);
                    std::mem::forget(polled);
                    return 0;
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
        // SAFETY: ends this process.
        unsafe { libc::_exit(0) }
    }
}

/// The forked child's way into the cage (`child::prepare`): the forking
/// server's signal handlers gone, the trial's space joined (the namespaces
/// the judge sent, unless they are this process's already), the server's
/// descriptors (`fds`: the listening socket, standard input, output and
/// error, the cage's word, the namespaces) in place (`LISTENER_FD`, 0, 1
/// and 2) and none of the forking server's others open, then the cage a
/// judge builds for a server (`client::start`), or, `trusted`, the one the
/// runner gives fencelab's own implementations.
///
/// # Safety
/// Only in the child of a single-threaded process.
unsafe fn child(request: &Request, trusted: bool, fds: &mut [RawFd]) -> std::io::Result<()> {
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
    let mut setup = super::child::Setup {
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
    // SAFETY: the caller's word: the child of a single-threaded process.
    unsafe { super::child::prepare(&mut setup) }
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
        // SAFETY: a descriptor the caller holds, for the call.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
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

/// Enters the cage a judge builds for a server (`client::start`), or,
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
    // SAFETY: a single-threaded process; the cage is alive.
    unsafe { super::sandbox::enter_serving(listener, &plan)? };
    // In the program now. What the cage was built from is not freed: every
    // page a free writes (a `CString` zeroes its first byte; the allocator
    // writes its own records) is a page the program copies from the
    // watcher, which made it. The cage's own descriptors (its places, its
    // ruleset, cgroup.procs) are still closed before anything of the
    // implementation runs: the caller closes every descriptor above the
    // listening socket's first thing (`fencelab_fork_cage`).
    std::mem::forget(plan);
    std::mem::forget(cage);
    std::mem::forget(memory);
    Ok(())
}

/// The judge's connection to its forking server, once asked for.
struct Connection {
    fd: OwnedFd,
    /// The watcher's wait status, once the forking server has said it.
    status: Mutex<Option<i32>>,
}

static CONNECTION: OnceLock<Connection> = OnceLock::new();

/// The connection the runner handed down (`ZYGOTE_ENV`), once found.
static DISPENSER: OnceLock<RawFd> = OnceLock::new();

/// The connection the runner handed down (`ZYGOTE_ENV`), when there is one
/// and it is still what the runner made (a process this judge started
/// inherits the variable; where it did not inherit the descriptor, the
/// number is another's). It is the trial's dispenser, not a server's
/// connection: each judge process of the trial (the judge, and the judges
/// it runs again as claimers in processes of their own) asks on it for a
/// connection of its own (`fork`), so it stays open across their `exec`.
/// A judge that starts a server itself closes it to that server first
/// (`keep_to_self`).
pub(crate) fn connection() -> Option<RawFd> {
    if let Some(&fd) = DISPENSER.get() {
        return Some(fd);
    }
    let value = std::env::var(ZYGOTE_ENV).ok()?;
    let (fd, pid) = value.split_once(' ')?;
    let (fd, pid): (RawFd, libc::pid_t) = (fd.parse().ok()?, pid.parse().ok()?);
    if fd < 3 {
        return None;
    }
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: queries a descriptor into a struct of ours.
    let peer = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    if peer != 0 || cred.pid != pid {
        return None;
    }
    Some(*DISPENSER.get_or_init(|| fd))
}

/// Closes the runner's connection to every program this judge starts from
/// here on (close-on-exec): called before it starts a server itself, which
/// must never hold it.
pub(crate) fn keep_to_self() {
    if let Some(&fd) = DISPENSER.get() {
        // SAFETY: sets a flag on a descriptor this process holds.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// A pair of connected sequenced-packet sockets, close-on-exec.
pub(crate) fn seqpacket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType, socketpair};
    let flags = SocketFlags::CLOEXEC;
    Ok(socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        flags,
        None,
    )?)
}

/// Asks the forking server for a caged child serving `request`, handing it
/// `fds` (listener, stdin, stdout, stderr, the cage's word, then the user,
/// mount and network namespaces); the watcher's pid. The request goes on a
/// connection of this process's alone, made here and sent to the forking
/// server on the runner's (`connect`): when this process ends, the forking
/// server sees that connection end and kills the cage. The judge also kills
/// it as it exits (`client::reap_server`, as for a server it started). The
/// runner kills it with its memory cgroup. The watcher is the forking
/// server's child, so nothing of the cage outlives the trial.
pub(crate) fn fork(request: &Request, fds: &[RawFd]) -> Result<libc::pid_t, String> {
    let dispenser = *DISPENSER
        .get()
        .ok_or("no connection to the forking server")?;
    if CONNECTION.get().is_some() {
        return Err("a second server asked for".to_string());
    }
    let (ours, pid) = fork_on(dispenser, request, fds)?;
    let connection = Connection {
        fd: ours,
        status: Mutex::new(None),
    };
    if CONNECTION.set(connection).is_err() {
        return Err("a second server asked for".to_string());
    }
    Ok(pid)
}

/// `fork` on the dispenser `dispenser`: the connection the request went on
/// (the cage lives as long as it is open; the child's exit status comes on
/// it) and the watcher's pid. The runner asks on it itself for the servers
/// of fencelab's own implementations that a learner's tests talk to.
pub(crate) fn fork_on(
    dispenser: RawFd,
    request: &Request,
    fds: &[RawFd],
) -> Result<(OwnedFd, libc::pid_t), String> {
    let (ours, theirs) = seqpacket_pair().map_err(|e| format!("cannot make a connection: {e}"))?;
    send_with(dispenser, b"connect", &[theirs.as_raw_fd()])
        .map_err(|e| format!("cannot reach the forking server: {e}"))?;
    drop(theirs);
    let fd = ours.as_raw_fd();
    let message = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    send_with(fd, &message, fds).map_err(|e| format!("cannot ask the forking server: {e}"))?;
    let answer = receive(fd, None).ok_or("the forking server did not answer")?;
    #[derive(serde::Deserialize)]
    struct Forked {
        pid: libc::pid_t,
    }
    serde_json::from_slice::<Forked>(&answer)
        .map(|f| (ours, f.pid))
        .map_err(|_| {
            format!(
                "the forking server answered {}",
                String::from_utf8_lossy(&answer)
            )
        })
}

/// The watcher's wait status, waiting up to `limit` for the forking server
/// to say it (None: it has not ended, or the forking server is gone). The
/// judge reads it here, so every verdict reads as for a server started
/// afresh.
pub(crate) fn status(limit: Duration) -> Option<i32> {
    let connection = CONNECTION.get()?;
    let mut status = connection.status.lock().unwrap_or_else(|e| e.into_inner());
    if status.is_none() {
        let answer = receive(connection.fd.as_raw_fd(), Some(limit))?;
        #[derive(serde::Deserialize)]
        struct Ended {
            status: i32,
        }
        *status = serde_json::from_slice::<Ended>(&answer)
            .ok()
            .map(|e| e.status);
    }
    *status
}

/// One message from the sequenced-packet socket `fd`, waiting up to
/// `limit` (forever: None); None at its end or when the time is up.
pub(crate) fn receive(fd: RawFd, limit: Option<Duration>) -> Option<Vec<u8>> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::io::Errno;
    // SAFETY: the caller's descriptor, open for the duration of the call.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let deadline = limit.map(|l| Instant::now() + l);
    loop {
        // Whole milliseconds left, as poll(2) counts them.
        let wait = deadline.map(|d| {
            let millis = d.saturating_duration_since(Instant::now()).as_millis() as i64;
            Timespec {
                tv_sec: millis / 1000,
                tv_nsec: millis % 1000 * 1_000_000,
            }
        });
        match poll(&mut [PollFd::new(&fd, PollFlags::IN)], wait.as_ref()) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(Errno::INTR) => continue,
            Err(_) => return None,
        }
        let mut buf = vec![0u8; 4096];
        match rustix::net::recv(fd, &mut buf[..], rustix::net::RecvFlags::empty()) {
            Ok((n, _)) if n > 0 => {
                buf.truncate(n);
                return Some(buf);
            }
            Err(Errno::INTR) => continue,
            _ => return None,
        }
    }
}
