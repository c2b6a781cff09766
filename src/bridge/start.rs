//! The implementation's server as the judge starts it, on the test's first
//! call: afresh, in the cage a judge builds for a server, or, where the
//! runner handed down a forking server, forked by it into the same cage.
//! Either way the judge holds its standard streams and its pid, and reaps it
//! as it exits (`held::reap_server`).
//!
//! Invariants: a server started here never holds the runner's connection;
//! what the judge cannot start ends it with `NOT_STARTED_STATUS`, never with
//! a test's verdict.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::capture::{Output, Rename};
use super::held::{FORKED, Process, SERVER_PID, Server, Spawned, not_started, reap_server};
use super::protocol::{IMPL_ENV, SERVER_ENV, SHOWN_ENV, SOCKET_ENV};

pub(super) fn start() -> Server {
    if let Some(socket) = std::env::var_os(SOCKET_ENV) {
        return Server {
            socket: PathBuf::from(socket),
            rename: Arc::default(),
            python: false,
            spawned: None,
        };
    }
    // The runner's connection to a forking server, if it handed one down.
    let forking = super::zygote::connection().is_some();
    let exe = std::env::var_os(SERVER_ENV).unwrap_or_else(|| {
        not_started(format_args!(
            "{SERVER_ENV} is not set (run the judge through fencelab)"
        ))
    });
    let key = std::env::var(IMPL_ENV).unwrap_or_else(|_| {
        not_started(format_args!(
            "{IMPL_ENV} is not set (run the judge through fencelab)"
        ))
    });
    let socket = socket_path(
        &std::env::temp_dir(),
        &std::env::current_dir().unwrap_or_default(),
    );
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).unwrap_or_else(|e| {
        not_started(format_args!("cannot listen on {}: {e}", socket.display()))
    });
    let fd = listener.as_raw_fd();
    let shown = std::env::var_os(SHOWN_ENV);
    let rename = Arc::new(Rename::of(
        Path::new(&exe),
        &key,
        shown.as_ref().and_then(|s| s.to_str()),
    ));
    // The implementation may write only in the test's temporary directory.
    let reads = python_reads(Path::new(&exe), &key);
    if forking && !reads.is_empty() {
        return start_forked(Path::new(&exe), &key, socket, listener, reads, rename);
    }
    // A server this judge starts itself never holds that connection.
    super::zygote::keep_to_self();
    // Its processes' memory is bounded together, in the cgroup fencelab
    // made for this trial's implementation (and removes after it).
    let memory = std::env::var_os(super::sandbox::MEMORY_ENV).map(|dir| {
        super::sandbox::Memory::adopt(Path::new(&dir)).unwrap_or_else(|e| {
            not_started(format_args!(
                "cannot join the implementation's memory cgroup: {e}"
            ))
        })
    });
    // The command line and environment `command` below executes, also
    // given to the cage, which executes it itself (`Cage::executing`).
    let mut args = vec![
        std::ffi::OsStr::new(super::server::SERVE),
        std::ffi::OsStr::new(key.as_str()),
    ];
    // A Rust server is told the path to show for its file; a Python server
    // knows its own (and takes the key alone).
    if let Some(shown) = &shown {
        args.push(shown);
    }
    let env = super::protocol::server_env();
    let cage = super::sandbox::Cage::reading(&std::env::temp_dir(), Path::new(&exe), &reads)
        .bounded(memory.as_ref())
        .executing(Path::new(&exe), &args, &env);
    let plan = cage.plan();
    // Not dumpable: the judge's memory and files in /proc are out of the
    // implementation's reach. A subreaper: what it abandons is the judge's to kill.
    use rustix::process::{DumpableBehavior, getpid, set_child_subreaper, set_dumpable_behavior};
    let _ = set_dumpable_behavior(DumpableBehavior::NotDumpable);
    let _ = set_child_subreaper(Some(getpid()));
    let mut command = Command::new(&exe);
    command
        .args(&args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Hand the listening socket over as fd 3. dup2 clears close-on-exec on the
    // copy; when the socket already is fd 3, clear the flag on it directly.
    // The cage's plan was built, and allocated, before the fork.
    let steps = super::child::Steps {
        serving: Some((fd, plan)),
        ..Default::default()
    };
    super::child::before_exec(&mut command, steps);
    // Started from a thread that lives as long as the judge: the cage dies
    // with the thread that started it (its parent-death signal), and a
    // test's thread ends before `reap_server` has counted what the
    // implementation left in its cage.
    let (started, spawned) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = started.send(command.spawn());
        loop {
            std::thread::park();
        }
    });
    let mut child = spawned
        .recv()
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
        .unwrap_or_else(|e| not_started(format_args!("{}: {e}", Path::new(&exe).display())));
    // Only the server keeps the listening socket: once it ends, connecting fails
    // at once instead of waiting for an answer that cannot come.
    drop(listener);
    drop(cage);
    drop(memory);
    let stdin = child.stdin.take().expect("piped stdin");
    let pid = child.id() as libc::pid_t;
    SERVER_PID.store(pid, Ordering::SeqCst);
    reap_at_exit();
    let stdout = Output::start(
        child.stdout.take().expect("piped stdout"),
        pid,
        rename.clone(),
    );
    let stderr = Output::start(
        child.stderr.take().expect("piped stderr"),
        pid,
        rename.clone(),
    );
    Server {
        socket,
        rename,
        python: super::protocol::serves_python(Path::new(&exe)),
        spawned: Some(Spawned {
            child: Mutex::new(Process::Child(child)),
            _stdin: stdin,
            stdout,
            stderr,
        }),
    }
}

/// `start` for a Python server forked by the forking server the runner
/// started (`zygote`): the child enters the same cage, built from the same
/// strings, in the same trial's space and memory cgroup; this judge keeps
/// what it keeps of a server it starts (its standard streams, the watcher's
/// pid for `reap_server`), and learns how it ended from the forking server.
fn start_forked(
    exe: &Path,
    key: &str,
    socket: PathBuf,
    listener: UnixListener,
    reads: Vec<PathBuf>,
    rename: Arc<Rename>,
) -> Server {
    let pipe = || {
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap_or_else(|e| {
            not_started(format_args!(
                "cannot make a pipe: {}",
                std::io::Error::from(e)
            ))
        })
    };
    // The trial's space, as this judge is in it (opened before the judge
    // makes itself not dumpable).
    let namespace = |kind: &str| {
        super::sandbox::proc::own_namespace(kind)
            .map(std::os::fd::OwnedFd::from)
            .unwrap_or_else(|e| not_started(format_args!("cannot open its {kind} namespace: {e}")))
    };
    let (user, mount, net) = (namespace("user"), namespace("mnt"), namespace("net"));
    // As in `start`.
    use rustix::process::{DumpableBehavior, getpid, set_child_subreaper, set_dumpable_behavior};
    let _ = set_dumpable_behavior(DumpableBehavior::NotDumpable);
    let _ = set_child_subreaper(Some(getpid()));
    let (stdin_r, stdin_w) = pipe();
    let (stdout_r, stdout_w) = pipe();
    let (stderr_r, stderr_w) = pipe();
    let (told_r, told_w) = pipe();
    let request = super::zygote::Request {
        key: key.to_string(),
        tmp: std::env::temp_dir(),
        program: exe.to_path_buf(),
        reads,
        memory: std::env::var_os(super::sandbox::MEMORY_ENV).map(PathBuf::from),
        env: super::zygote::server_env(),
    };
    let fds = [
        listener.as_raw_fd(),
        stdin_r.as_raw_fd(),
        stdout_w.as_raw_fd(),
        stderr_w.as_raw_fd(),
        told_w.as_raw_fd(),
        user.as_raw_fd(),
        mount.as_raw_fd(),
        net.as_raw_fd(),
    ];
    let pid = super::zygote::fork(&request, &fds)
        .unwrap_or_else(|e| not_started(format_args!("{}: {e}", exe.display())));
    // Only the server keeps these (as in `start`).
    drop((
        listener, stdin_r, stdout_w, stderr_w, told_w, user, mount, net,
    ));
    FORKED.store(true, Ordering::SeqCst);
    SERVER_PID.store(pid, Ordering::SeqCst);
    reap_at_exit();
    // The cage's word: "ok" from its program once it is in, else why not.
    let mut told = String::new();
    let _ = std::io::Read::read_to_string(&mut std::fs::File::from(told_r), &mut told);
    if told != "ok" {
        let why = if told.is_empty() {
            "its cage ended before it was entered".to_string()
        } else {
            told
        };
        not_started(format_args!("{}: {why}", exe.display()));
    }
    Server {
        socket,
        spawned: Some(Spawned {
            child: Mutex::new(Process::Forked),
            _stdin: std::process::ChildStdin::from(stdin_w),
            stdout: Output::start(stdout_r, pid, rename.clone()),
            stderr: Output::start(stderr_r, pid, rename.clone()),
        }),
        rename,
        python: true,
    }
}

/// Registers `reap_server` to run when the judge exits.
fn reap_at_exit() {
    // SAFETY: a plain function, which makes system calls and prints.
    unsafe { libc::atexit(reap_server) };
}

/// Where the judge's socket for its implementation goes: in the trial's
/// temporary directory `tmp`, under a name nobody can guess (another trial's
/// code cannot list the directory, so it cannot find the socket either).
/// A Unix socket's path must fit in 108 bytes and CI runners' temporary
/// directories can be longer: then the path is relative to the judge's
/// working directory `cwd` when that is `tmp`, as the runner makes it; never
/// a shared place such as /tmp, where any process could connect to it.
pub(super) fn socket_path(tmp: &Path, cwd: &Path) -> PathBuf {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let mut random = [0u8; 8];
    let _ = rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::empty());
    let name = format!(
        "fencelab-{}-{}.sock",
        random
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    );
    let socket = tmp.join(&name);
    if socket.as_os_str().len() <= 100 {
        return socket;
    }
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(cwd, tmp) {
        return PathBuf::from(name);
    }
    not_started(format_args!(
        "the temporary directory's path is too long for a socket ({} bytes): {}",
        socket.as_os_str().len(),
        tmp.display()
    ))
}

/// The interpreter's directories, listed by fencelab in `dir/reads` beside
/// a Python program it wrote: what every cage of one must read.
pub(crate) fn interpreter_reads(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(dir.join("reads"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// What the cage of a Python server (`fencelab_server.py`, written by
/// fencelab's `engine::python`) reads besides the script: the interpreter's
/// directories (listed in `reads` beside it), the table of what it hosts, and
/// the one module it serves (`impls/<key>`). Nothing for a Rust server.
pub(crate) fn python_reads(server: &Path, key: &str) -> Vec<PathBuf> {
    if !super::protocol::serves_python(server) {
        return Vec::new();
    }
    let dir = server.parent().unwrap_or(Path::new("."));
    let mut reads = interpreter_reads(dir);
    reads.push(dir.join("hosted.json"));
    if !key.is_empty() && !key.contains('/') && !key.starts_with('.') {
        reads.push(dir.join("impls").join(key));
    }
    reads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_in_the_trial_under_a_name_nobody_can_guess() {
        let short = Path::new("/dev/shm/fencelab-run-x/3/tmp");
        let a = socket_path(short, Path::new("/"));
        let b = socket_path(short, Path::new("/"));
        assert!(a.starts_with(short) && b.starts_with(short), "{a:?}");
        assert_ne!(a, b);
        assert!(
            !a.to_string_lossy()
                .contains(&std::process::id().to_string())
        );
        // Too long for a socket: relative to the working directory, which
        // the runner makes the trial's own, never /tmp.
        let dir = tempfile::tempdir().unwrap();
        let long = dir.path().join("d".repeat(120));
        std::fs::create_dir(&long).unwrap();
        let relative = socket_path(&long, &long);
        assert!(
            relative.is_relative() && relative.components().count() == 1,
            "{relative:?}"
        );
    }
}
