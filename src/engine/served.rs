//! An implementation's server that the runner starts for a trial, where
//! the judge is a learner's test: the judge must not start it, nor learn
//! which implementation it serves.

use std::path::PathBuf;
use std::time::Duration;

use crate::bridge::sandbox::{Cage, Memory, Space};
use crate::engine::builder::Host;
use crate::engine::process::{self, cage_error};
use crate::error::Error;

/// An implementation's server started by the runner for one trial (an
/// untrusted judge must not start it, or learn which implementation it
/// serves): it listens on a socket in the trial's directory, is told its
/// implementation on its standard input (a forked one: in the runner's
/// request), runs in the cage, and is killed when dropped (with its process
/// group; a forked one by its forking server, as the connection ends).
pub(super) struct Served {
    /// Its process, which this runner kills when the trial ends.
    process: ServedProcess,
    /// Its standard input: it ends when this closes.
    _stdin: std::fs::File,
    /// Its cage's memory cgroup, removed after the server is gone.
    memory: Option<Memory>,
}

/// How a server of the runner's is held.
enum ServedProcess {
    /// Started afresh: its pid, leading its own process group.
    Started(libc::pid_t),
    /// Forked by a forking server (`python::Zygotes`): the connection its
    /// request went on, whose end makes the forking server kill it, and the
    /// trial's hold on that forking server (its death would take the
    /// server with it).
    Forked {
        connection: std::os::fd::OwnedFd,
        _hold: crate::engine::python::Handed,
        /// The server itself (a trusted cage has no PID namespace, so no
        /// watcher: `bridge::forking`'s loop answers with its pid).
        pid: libc::pid_t,
    },
}

impl Served {
    /// Its cage's memory cgroup, where it has one.
    pub(super) fn cgroup(&self) -> Option<PathBuf> {
        self.memory.as_ref().map(|m| m.path().to_path_buf())
    }

    /// Its process, which `hangs` looks at with all it starts where no
    /// cgroup holds them.
    pub(super) fn pid(&self) -> libc::pid_t {
        match self.process {
            ServedProcess::Started(pid) | ServedProcess::Forked { pid, .. } => pid,
        }
    }

    /// Listens on `socket` (in the trial's directory `dir`).
    fn listen(
        socket: &std::path::Path,
        dir: &std::path::Path,
    ) -> Result<std::os::unix::net::UnixListener, Error> {
        use std::os::fd::AsRawFd;
        // A Unix socket's path must fit in 108 bytes: a longer one is
        // reached through a descriptor of its directory.
        let parent = std::fs::File::open(dir).map_err(|e| Error::io("open", dir, e))?;
        let short = if socket.as_os_str().len() > 100 {
            PathBuf::from(format!("/proc/self/fd/{}", parent.as_raw_fd()))
                .join(socket.file_name().unwrap_or_default())
        } else {
            socket.to_path_buf()
        };
        std::os::unix::net::UnixListener::bind(&short)
            .map_err(|e| Error::io("listen on", socket, e))
    }

    /// The file in `dir` a server's stream `name` goes to.
    fn output(dir: &std::path::Path, name: &str) -> Result<std::fs::File, Error> {
        let path = dir.join(name);
        std::fs::File::create(&path).map_err(|e| Error::io("create", &path, e))
    }

    pub(super) fn start(
        host: &Host,
        socket: &std::path::Path,
        dir: &std::path::Path,
        tmp: &std::path::Path,
        space: Option<&Space>,
    ) -> Result<Served, Error> {
        use std::io::Write as _;
        use std::os::fd::AsRawFd;
        let listener = Served::listen(socket, dir)?;
        // The implementations are fencelab's (the reference, the wheats, the
        // mutants): the untrusted side is the judge, caged in full.
        // (A Python server also reads its interpreter and its one module.)
        let reads = crate::bridge::start::python_reads(&host.program, &host.key);
        let memory = Memory::for_cage().map_err(|e| cage_error("a memory cgroup", e))?;
        let cage = Cage::trusted_reading(tmp, &host.program, &reads)
            .within(space)
            .bounded(memory.as_ref());
        let plan = cage.plan();
        let join = space.map(Space::join);
        let (program, args, key_line) = host.serving_stdin();
        let spawn = process::Spawn {
            program: std::path::absolute(&program).unwrap_or(program),
            args,
            env: vec![("RUST_BACKTRACE".into(), "0".into())],
            dir: tmp.to_path_buf(),
        };
        let (stdin_r, stdin_w) = std::io::pipe().map_err(|e| cage_error("a pipe", e))?;
        let (stdout, stderr) = (
            Served::output(dir, "server.stdout")?,
            Served::output(dir, "server.stderr")?,
        );
        let stdio = [stdin_r.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()];
        // Started by a clone that shares the runner's memory, not a fork of
        // it (`process::start_light_serving`): after the limits, the trial's
        // space, its group and its cage, it executes the server at once.
        let pid = process::start_light_serving(
            &spawn,
            stdio,
            join.as_deref(),
            listener.as_raw_fd(),
            &plan,
        )
        .map_err(|e| not_started(host, e))?;
        drop((listener, stdin_r, stdout, stderr, plan));
        drop(cage);
        let mut stdin = std::fs::File::from(std::os::fd::OwnedFd::from(stdin_w));
        // A server that died at once is seen by the judge as one that does not
        // answer; nothing to do here.
        let _ = stdin.write_all(key_line.as_bytes());
        Ok(Served {
            process: ServedProcess::Started(pid),
            _stdin: stdin,
            memory,
        })
    }

    /// `start` for a Python server forked for this trial by its forking
    /// server (`handed`), which the runner asks itself: the child enters the
    /// cage `start` gives a server (`Cage::trusted_reading`, built by the
    /// bridge's own code), in the trial's space and its own
    /// memory cgroup, with the same listening socket, streams and
    /// environment; it serves the implementation its key names, which comes
    /// in the request (no judge sees that: the learner's tests are caged in
    /// a PID namespace of their own).
    pub(super) fn forked(
        handed: crate::engine::python::Handed,
        host: &Host,
        socket: &std::path::Path,
        dir: &std::path::Path,
        tmp: &std::path::Path,
        space: Option<&Space>,
    ) -> Result<Served, Error> {
        use std::os::fd::{AsRawFd, OwnedFd};
        let listener = Served::listen(socket, dir)?;
        let memory = Memory::for_cage().map_err(|e| cage_error("a memory cgroup", e))?;
        let (stdin_r, stdin_w) = std::io::pipe().map_err(|e| cage_error("a pipe", e))?;
        let (told_r, told_w) = std::io::pipe().map_err(|e| cage_error("a pipe", e))?;
        let (stdout, stderr) = (
            Served::output(dir, "server.stdout")?,
            Served::output(dir, "server.stderr")?,
        );
        // The trial's space, which the child joins (a user namespace of the
        // runner's own where the space made none).
        let own_user;
        let mut namespaces = Vec::new();
        if let Some(space) = space {
            let (user, mount, net) = space.join().descriptors();
            let user = match user {
                Some(user) => user,
                None => {
                    own_user = crate::bridge::sandbox::proc::own_namespace("user")
                        .map_err(|e| cage_error("the user namespace", e))?;
                    own_user.as_raw_fd()
                }
            };
            namespaces.extend([user, mount]);
            namespaces.extend(net);
        }
        let request = crate::bridge::zygote::Request {
            key: host.key.clone(),
            tmp: std::path::absolute(tmp).unwrap_or_else(|_| tmp.to_path_buf()),
            program: host.program.clone(),
            reads: crate::bridge::start::python_reads(&host.program, &host.key),
            memory: memory.as_ref().map(|m| m.path().to_path_buf()),
            env: vec![("RUST_BACKTRACE".to_string(), "0".to_string())],
        };
        let mut fds = vec![
            listener.as_raw_fd(),
            stdin_r.as_raw_fd(),
            stdout.as_raw_fd(),
            stderr.as_raw_fd(),
            told_w.as_raw_fd(),
        ];
        fds.extend(namespaces);
        let (connection, pid) =
            crate::bridge::zygote::fork_on(handed.fd.as_raw_fd(), &request, &fds)
                .map_err(|e| not_started(host, std::io::Error::other(e)))?;
        drop((listener, stdin_r, stdout, stderr, told_w));
        let served = Served {
            process: ServedProcess::Forked {
                connection,
                _hold: handed,
                pid,
            },
            _stdin: std::fs::File::from(OwnedFd::from(stdin_w)),
            memory,
        };
        // The cage's word: "ok" from its program once it is in, else why not.
        let mut told = String::new();
        let _ = std::io::Read::read_to_string(
            &mut std::fs::File::from(OwnedFd::from(told_r)),
            &mut told,
        );
        if told != "ok" {
            let why = if told.is_empty() {
                "its cage ended before it was entered".to_string()
            } else {
                told
            };
            return Err(not_started(host, std::io::Error::other(why)));
        }
        Ok(served)
    }

    /// Whether the OOM killer killed a process of its cage.
    pub(super) fn ran_out(&self) -> bool {
        self.memory.as_ref().is_some_and(Memory::ran_out)
    }
}

/// fencelab could not start the server of one of its own implementations.
fn not_started(host: &Host, err: std::io::Error) -> Error {
    Error::environment(format!("cannot start {}: {err}", host.program.display())).with_next(
        "run again (fencelab builds again what is missing); if it happens again, \
         report it with the command you ran",
    )
}

impl Drop for Served {
    fn drop(&mut self) {
        match &self.process {
            ServedProcess::Started(pid) => {
                process::kill_group(*pid, libc::SIGKILL);
                // Our own child: reaped once.
                let pid = rustix::process::Pid::from_raw((*pid).max(0));
                while pid.is_some()
                    && matches!(
                        rustix::process::waitpid(pid, rustix::process::WaitOptions::empty()),
                        Err(rustix::io::Errno::INTR)
                    )
                {}
            }
            ServedProcess::Forked { connection, .. } => {
                use std::os::fd::AsRawFd;
                // The end of the request's side: the forking server kills
                // the cage, then closes the connection, which ends here (its
                // status, when it ended first, is read on the way).
                let _ = rustix::net::shutdown(connection, rustix::net::Shutdown::Write);
                while crate::bridge::zygote::receive(
                    connection.as_raw_fd(),
                    Some(Duration::from_secs(5)),
                )
                .is_some()
                {}
            }
        }
    }
}
