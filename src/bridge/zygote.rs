//! A Python server forked per trial from a forking server per implementation,
//! instead of an interpreter started afresh by each judge. The interpreter's
//! start leaves the trial, and its imports leave the submission
//! (`bench/RESULTS.md`). The runner uses it only where the cage has a PID
//! namespace.
//!
//! The judge's side (`connection`, `fork`, `status`) is here; the forking
//! server's loop and the child's way into the cage (`fencelab_forking_loop`)
//! are in `forking.rs`. The child enters the very
//! cage a judge gives a server it starts: the same code, not a second cage.
//! So the cage stays one piece of Rust, rather than a Python port of it.
//!
//! Invariants: the forking server never imports an implementation, is
//! single-threaded, not dumpable, and dies with the runner. Nothing outlives a
//! trial, and every verdict reads as for a server started afresh.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub(crate) use super::fds::send_with;

/// The environment variable by which the runner hands a judge its
/// connection to the forking server: "FD PID" (the descriptor, inherited,
/// and the pid of the runner, which made the pair: the socket's peer
/// credentials say so, which tells it from another descriptor at that
/// number in a process that inherited the variable and not the descriptor).
/// Never a path, so no caged program can find it.
pub(crate) const ZYGOTE_ENV: &str = "FENCELAB_ZYGOTE";

/// What a judge asks of the forking server (`fencelab_forking_loop`, with
/// the request's descriptors).
#[derive(serde::Serialize, serde::Deserialize, Debug)]
pub(crate) struct Request {
    /// The implementation to serve (the forking server serves one).
    pub key: String,
    /// The trial's directory: the only writable place, where it starts.
    #[serde(with = "super::protocol::bytes")]
    pub tmp: PathBuf,
    /// The server's program and what its cage reads besides the system's.
    #[serde(with = "super::protocol::bytes")]
    pub program: PathBuf,
    #[serde(with = "super::protocol::bytes::list")]
    pub reads: Vec<PathBuf>,
    /// The memory cgroup of the cage, made by the runner (`MEMORY_ENV`).
    #[serde(with = "super::protocol::bytes::option")]
    pub memory: Option<PathBuf>,
    /// The environment a server started by the judge would have had (the
    /// child takes it on: `TMPDIR`, `HOME`, ...).
    pub env: Vec<(String, String)>,
}

/// The environment of a server this judge starts (`start::start`), as
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
    // A number of the environment's: an error where it is no socket.
    let peer = super::sandbox::sys::peer_pid(super::child::borrowed(fd));
    if peer.ok() != Some(pid) {
        return None;
    }
    Some(*DISPENSER.get_or_init(|| fd))
}

/// Closes the runner's connection to every program this judge starts from
/// here on (close-on-exec): called before it starts a server itself, which
/// must never hold it.
pub(crate) fn keep_to_self() {
    if let Some(&fd) = DISPENSER.get() {
        let fd = super::child::borrowed(fd);
        let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC);
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
/// it as it exits (`held::reap_server`, as for a server it started). The
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
    serde_json::from_slice::<super::protocol::Forked>(&answer)
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
        *status = serde_json::from_slice::<super::protocol::Ended>(&answer)
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
    // The caller's descriptor, open for the duration of the call.
    let fd = super::child::borrowed(fd);
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
