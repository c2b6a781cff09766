//! The forking servers: one interpreter per implementation, forked into
//! each trial's cage, from one root interpreter per run.

use super::*;

/// The forking servers of a run (`bridge::zygote`): one per Python
/// implementation whose trials the judge starts the server of, forked from
/// the run's root interpreter on its first trial (the root, started once
/// per run, imported what each needs and compiled the server) and ended
/// after its last (or with the run),
/// each handing every trial's judge a connection of its own. Where the
/// runner starts the servers itself (fencelab's own implementations, judged
/// by a learner's tests), it asks on that connection itself, for the cage it
/// gives those (`trusted`).
pub(crate) struct Zygotes {
    /// Per server program and key: how many trials have yet to ask.
    waiting: Mutex<HashMap<(PathBuf, String), usize>>,
    /// The servers running, shared with the trials that use them.
    running: Mutex<HashMap<(PathBuf, String), Arc<Zygote>>>,
    /// The root's script (`Forking::root`), where the servers fork.
    root_script: Option<PathBuf>,
    /// The bridge's cdylib (`Forking::library`): each forking server forks
    /// from its loop (`fencelab_forking_loop`).
    library: Option<PathBuf>,
    /// The run's root interpreter, started on the first forking server's
    /// start, and shared with them.
    pub(super) root: Mutex<Option<Arc<Root>>>,
    /// Starts the roots from a thread that lives as long as the run: a root
    /// dies with the thread that started it (its parent-death signal), and
    /// its forking servers with it.
    starter: Mutex<mpsc::Sender<(Command, mpsc::Sender<std::io::Result<Child>>)>>,
    /// Whether they fork the servers of fencelab's own implementations
    /// (`Launch::ByRunner`), caged as the runner cages those.
    trusted: bool,
    /// Whether this run's Python servers are forked at all.
    forks: bool,
}

/// A root interpreter (python/fencelab_forking.py `root`): its process and
/// the runner's end of its control socket, on which one start is asked at a
/// time (the answer, the forking server's pid, is opened as a pidfd before
/// the next: the root collects its ended children only while it answers).
pub(crate) struct Root {
    pub(super) child: Mutex<Child>,
    control: Mutex<OwnedFd>,
}

/// One forking server: its process (a pidfd, where the kernel has them) and
/// the runner's end of its control socket, on which each trial's connection
/// is sent; and the root it was forked from, which lives as long.
pub(crate) struct Zygote {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
    control: OwnedFd,
    pub(super) _root: Arc<Root>,
}

/// A trial's connection to its forking server: the judge's end (inherited as
/// `ZYGOTE_ENV` says) and what keeps the server running meanwhile.
pub(crate) struct Handed {
    pub fd: OwnedFd,
    pub(super) _server: Arc<Zygote>,
}

impl Zygotes {
    /// The forking servers the trials of `hosts` (one each) may use: Python
    /// implementations, where the cage has a PID namespace (nothing a child
    /// of a judge's starts then outlives its cage). Whose servers the judge
    /// starts (`Launch::ByJudge`), each judge asks for its own; whose the
    /// runner starts (`Launch::ByRunner`), the runner asks, where the
    /// bridge's cdylib (with which a child enters its cage) is built. None
    /// elsewhere, or without `forking`: each server is an interpreter
    /// started afresh, as before.
    pub(crate) fn for_hosts<'a>(
        hosts: impl Iterator<Item = &'a Host>,
        launch: Launch,
        forking: Option<&Forking>,
    ) -> Zygotes {
        let mut waiting: HashMap<(PathBuf, String), usize> = HashMap::new();
        let forks = forking.is_some_and(|f| f.library.is_some())
            && crate::bridge::sandbox::Layers::probe().namespaces;
        if forks {
            for host in hosts {
                if host.program.file_name().and_then(|n| n.to_str()) == Some(SERVER_FILE) {
                    *waiting
                        .entry((host.program.clone(), host.key.clone()))
                        .or_default() += 1;
                }
            }
        }
        let (tx, rx) = mpsc::channel::<(Command, mpsc::Sender<std::io::Result<Child>>)>();
        if !waiting.is_empty() {
            std::thread::spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            });
        }
        Zygotes {
            waiting: Mutex::new(waiting),
            running: Mutex::new(HashMap::new()),
            root_script: forking.map(|f| f.root.clone()),
            library: forking.and_then(|f| f.library.clone()),
            root: Mutex::new(None),
            starter: Mutex::new(tx),
            trusted: launch == Launch::ByRunner,
            forks,
        }
    }

    /// `host` has one more trial (run again alone): where it has a forking
    /// server, that trial is forked too, from a server started again if
    /// its last trial let it go.
    pub(crate) fn expect_again(&self, host: &Host) {
        if self.forks && host.program.file_name().and_then(|n| n.to_str()) == Some(SERVER_FILE) {
            let id = (host.program.clone(), host.key.clone());
            *self
                .waiting
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(id)
                .or_default() += 1;
        }
    }

    /// A connection for one trial of `host`'s, starting its forking server
    /// on its first; None where the host has none (see `for_trials`).
    pub(crate) fn hand(&self, host: &Host) -> Result<Option<Handed>, Error> {
        let id = (host.program.clone(), host.key.clone());
        let last = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            let Some(left) = waiting.get_mut(&id) else {
                return Ok(None);
            };
            *left -= 1;
            let last = *left == 0;
            if last {
                waiting.remove(&id);
            }
            last
        };
        let server = {
            let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            let server = match running.get(&id) {
                Some(server) => server.clone(),
                None => {
                    let server = Arc::new(self.start(host)?);
                    running.insert(id.clone(), server.clone());
                    server
                }
            };
            // After its last trial, the server ends with that trial.
            if last {
                running.remove(&id);
            }
            server
        };
        let (judge, zygote) = crate::bridge::zygote::seqpacket_pair()
            .map_err(|e| cage_error("a connection to the forking Python server", e))?;
        crate::bridge::zygote::send_with(
            server.control.as_raw_fd(),
            b"trial",
            &[zygote.as_raw_fd()],
        )
        .map_err(|e| cage_error("a connection to the forking Python server", e))?;
        Ok(Some(Handed {
            fd: judge,
            _server: server,
        }))
    }

    /// Forks `host`'s forking server from the run's root, starting the root
    /// on the first.
    fn start(&self, host: &Host) -> Result<Zygote, Error> {
        let failed = |e: std::io::Error| cage_error("the forking Python server", e);
        let root = {
            let mut root = self.root.lock().unwrap_or_else(|e| e.into_inner());
            match &*root {
                Some(root) => root.clone(),
                None => {
                    let script = self
                        .root_script
                        .as_deref()
                        .ok_or_else(|| failed(std::io::Error::other("no root to fork it from")))?;
                    root.insert(Arc::new(self.start_root(script)?)).clone()
                }
            }
        };
        let (ours, theirs) = crate::bridge::zygote::seqpacket_pair().map_err(failed)?;
        let control = root.control.lock().unwrap_or_else(|e| e.into_inner());
        let asked = crate::bridge::protocol::Serve {
            key: host.key.clone(),
            server: host.program.clone(),
            library: (self.library.clone())
                .ok_or_else(|| failed(std::io::Error::other("no cdylib to fork it with")))?,
        };
        crate::bridge::zygote::send_with(
            control.as_raw_fd(),
            &asked.encode(),
            &[theirs.as_raw_fd()],
        )
        .map_err(failed)?;
        drop(theirs);
        let answer = crate::bridge::zygote::receive(control.as_raw_fd(), Some(ROOT_ANSWERS))
            .unwrap_or_default();
        let pid = serde_json::from_slice::<crate::bridge::protocol::Forked>(&answer)
            .map(|forked| forked.pid)
            .map_err(|_| {
                failed(std::io::Error::other(format!(
                    "its root answered {:?}",
                    String::from_utf8_lossy(&answer)
                )))
            })?;
        // Opened while the root waits for the next start, before which it
        // collects none of its children: the pid is still this server's.
        let pidfd = rustix::process::Pid::from_raw(pid.max(0)).and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        drop(control);
        Ok(Zygote {
            pid,
            pidfd,
            control: ours,
            _root: root,
        })
    }

    /// Starts the run's root interpreter, `forking` (`Forking::root`).
    fn start_root(&self, forking: &Path) -> Result<Root, Error> {
        let (ours, theirs) = crate::bridge::zygote::seqpacket_pair()
            .map_err(|e| cage_error("a control socket for the forking Python server", e))?;
        let mut command = Command::new(forking);
        command
            .arg("root")
            .arg(match self.trusted {
                true => "--forking-trusted",
                false => "--forking",
            })
            .env_clear()
            .envs(crate::engine::process::passed_on())
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let fd = theirs.as_raw_fd();
        // What a judge's limits give the server it starts: no core dump,
        // FILE_SIZE per file; the runner's own servers (`trusted`) have no
        // FILE_SIZE, as `process::start_light_serving` starts them. The
        // forking servers the root forks, and their children, inherit them.
        use rustix::process::Resource;
        let caps = [
            Some((Resource::Core, 0)),
            (!self.trusted).then_some((Resource::Fsize, process::FILE_SIZE)),
        ];
        // The control socket becomes fd 3 (LISTENER_FD), inherited.
        let steps = crate::bridge::child::Steps {
            caps: caps.into_iter().flatten().collect(),
            place: vec![(fd, crate::bridge::server::LISTENER_FD)],
            ..Default::default()
        };
        crate::bridge::child::before_exec(&mut command, steps);
        let (reply, spawned) = mpsc::channel();
        let sent = self
            .starter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((command, reply));
        let child = sent
            .ok()
            .and_then(|()| spawned.recv().ok())
            .unwrap_or_else(|| Err(std::io::Error::other("its starter is gone")))
            .map_err(|e| {
                Error::environment(format!("cannot start {}: {e}", forking.display())).with_next(
                    "run again (fencelab writes again what is missing); if it happens \
                         again, report it with the command you ran",
                )
            })?;
        drop(theirs);
        Ok(Root {
            child: Mutex::new(child),
            control: Mutex::new(ours),
        })
    }
}

/// How long a root may take to fork a forking server.
const ROOT_ANSWERS: Duration = Duration::from_secs(30);

impl Drop for Root {
    /// Kills it (and so every forking server it forked, and every cage
    /// those still watch: their parent-death signals) and collects it.
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Zygote {
    /// Kills it (and so every cage it still watches: their init's
    /// parent-death signal), and waits until it has ended (its root
    /// collects it). Without a pidfd, closing its control socket ends it.
    fn drop(&mut self) {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let Some(pidfd) = &self.pidfd else { return };
        let _ = rustix::process::pidfd_send_signal(pidfd, rustix::process::Signal::KILL);
        let wait = Timespec {
            tv_sec: 5,
            tv_nsec: 0,
        };
        while poll(&mut [PollFd::new(pidfd, PollFlags::IN)], Some(&wait))
            == Err(rustix::io::Errno::INTR)
        {}
    }
}

impl Handed {
    /// The forking server's pid: a judge waits on it for its server, and
    /// its work then is not the trial's waiting (`engine::hangs`).
    pub(crate) fn forking_pid(&self) -> libc::pid_t {
        self._server.pid
    }

    /// Hands the connection down to the judge `spawn` starts: named in
    /// `ZYGOTE_ENV`; the descriptor returned is to be inherited by the judge
    /// alone (`process::run_judge` clears its close-on-exec flag
    /// in the judge's clone only), so the runner starts it without a fork.
    pub(crate) fn pass_to(&self, spawn: &mut process::Spawn) -> std::os::fd::RawFd {
        let fd = self.fd.as_raw_fd();
        // The pair's maker, this process, is what the judge finds as its peer.
        spawn.env.push((
            crate::bridge::zygote::ZYGOTE_ENV.into(),
            format!("{fd} {}", std::process::id()).into(),
        ));
        fd
    }
}
