use super::*;
use crate::bridge::sandbox::{Layers, Need, proc};
use crate::engine::builder::{self, Built, Plan};
use crate::engine::policy::{Policy, Trust};
use crate::engine::runner::{Runner, Trial};
use crate::lab::suite::SuiteFiles;

/// Held by each test here that starts a root: a root's command line is
/// the same for every run of one scratch workspace, so one test's look
/// for what its run left running would see another's roots.
static ROOTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The processes whose command line holds `text`.
fn running(text: &str) -> Vec<String> {
    proc::pids()
        .into_iter()
        .filter_map(|pid| proc::read(format!("/proc/{pid}/cmdline")))
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(text))
        .collect()
}

/// A trial of each of `tests` against `host`, within 60 s.
fn trials_of(host: &Host, tests: &[&str]) -> Vec<Trial> {
    (tests.iter())
        .map(|test| Trial {
            host: host.clone(),
            test: test.to_string(),
            limit: Duration::from_secs(60),
        })
        .collect()
}

/// Runs `tests` on `host` (60 s each), one trial each, and asserts that
/// every one passed.
fn passes_on(runner: &Runner, host: &Host, tests: &[&str]) {
    let trials = trials_of(host, tests);
    let mut outcomes = Vec::new();
    runner
        .run(&trials, |i, result| outcomes.push((i, result.outcome)))
        .unwrap();
    assert_eq!(outcomes.len(), tests.len());
    for (i, outcome) in &outcomes {
        assert!(outcome.passed(), "{}: {outcome:?}", trials[*i].test);
    }
}

/// Whether this process ignores SIGINT (a shell's background job does),
/// as every process it starts then does: an interpreter started afresh
/// keeps it ignored rather than install its own handler.
fn sigint_ignored() -> bool {
    use crate::bridge::sandbox::sys;
    sys::signal_disposition(libc::SIGINT) == Some(sys::Disposition::Ignore)
}

#[test]
fn a_python_trial_is_served_by_a_caged_fork_that_holds_nothing_of_the_forking_server() {
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    interpreter().expect("python3 3.10+ (.ci/run checks it first)");
    let _roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
    // The reference, refusing to be served unless it was forked from the
    // forking server, holding no capability (a fork that is never
    // executed keeps what its user namespace gave it, unless dropped),
    // with nothing of it open (only the standard streams
    // and the listening socket), in the environment its judge gave it,
    // with the signal handlers of an interpreter started afresh here (none
    // of the forking server's, none left at the defaults the fork set).
    let checks = format!(
        "if _sys.orig_argv[-1] != '--forking':\n    raise SystemExit('started afresh')\n\
         if _os.environ.get('TMPDIR') != _os.getcwd():\n    raise SystemExit('another environment')\n\
         if _signal.getsignal(_signal.SIGCHLD) != _signal.SIG_DFL:\n    raise SystemExit('a SIGCHLD handler')\n\
         if _sys._getframe(1).f_code.co_filename != _sys.argv[0]:\n    raise SystemExit('the server named after another file')\n\
         import ctypes as _ctypes\n\
         _libc = _ctypes.CDLL(None)\n\
         _sets = (_ctypes.c_uint32 * 6)()\n\
         _libc.capget((_ctypes.c_uint32 * 2)(0x20080522, 0), _sets)\n\
         if any(_sets):\n    raise SystemExit(f'a capability: {{list(_sets)}}')\n\
         if any(_libc.prctl(23, _cap, 0, 0, 0) == 1 for _cap in range(64)):\n    raise SystemExit('a capability in the bounding set')\n\
         if _ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) != 1:\n    raise SystemExit('not dumpable: its judge cannot read its descriptors')\n\
         _old = _ctypes.create_string_buffer(256)\n\
         _ctypes.CDLL(None).sigaction(_signal.SIGINT, None, _old)\n\
         _handler = int.from_bytes(_old.raw[:8], 'little')\n\
         _python = _signal.getsignal(_signal.SIGINT)\n\
         if not ((_handler == 1 and _python == _signal.SIG_IGN) if {} else \
             (_handler not in (0, 1) and _python is _signal.default_int_handler)):\n    \
             raise SystemExit('SIGINT unlike an interpreter started afresh')\n\
         for _fd in range(4, 4096):\n    \
             try:\n        _os.fstat(_fd)\n    except OSError:\n        continue\n    \
             raise SystemExit(f'descriptor {{_fd}} is open')\n",
        if sigint_ignored() { "True" } else { "False" },
    );
    // Its import once before the trials (`imports`) is no trial: the
    // checks are for the trial's server.
    let checks: String = checks.lines().map(|l| format!("    {l}\n")).collect();
    let source = format!(
        "{}\nimport os as _os, sys as _sys, signal as _signal\n\
         if _sys.argv[1:2] != ['--import']:\n{checks}",
        crate::lab::python::REFERENCE,
    );
    let implementation = Implementation {
        shown_path: "forked.py".into(),
        source,
    };
    let policy = Policy::of(Trust::Submissions);
    // The bridge's cdylib, so that the runner can name it.
    build_library(&scratch, policy.servers, None);
    let hosted = host(
        &scratch,
        std::slice::from_ref(&implementation),
        policy.servers,
        policy.import_first,
    )
    .unwrap();
    let Hosting::Hosted(host) = &hosted.hosting[0] else {
        panic!("it compiles: {:?}", hosted.hosting[0]);
    };
    let plan = Plan {
        suite: &SuiteFiles::builtin(),
        implementations: &[],
        time_limit: None,
        servers: policy.servers,
        judge_caged: policy.judge_caged,
        detail: None,
    };
    let Built::Done(build) = builder::build(&scratch, &plan).unwrap() else {
        panic!("the suite builds");
    };
    let tests = [
        "step1::creates_the_six_columns",
        "step2::new_job_returns_true",
        "step3::fresh_job_reads_the_defaults",
        // Its four claimers are judges run again in processes of their
        // own: each is served by a fork too (an interpreter started
        // afresh refuses), and none holds the trial's connection.
        "step4::claims_race_across_processes",
    ];
    let mut runner = Runner::new(build.judge.clone(), 2, &policy);
    // Forked by the bridge's loop where the runner names the bridge's
    // cdylib (built with the judge above).
    assert!(hosted.forking.as_ref().is_some_and(|f| f.library.is_some()));
    runner.forking = hosted.forking.clone();
    passes_on(&runner, host, &tests);
    // Where it names none, nothing forks: each server is started afresh,
    // which this implementation refuses (a runner that forked all the same
    // passes here).
    runner.forking = (hosted.forking.clone()).map(|f| Forking { library: None, ..f });
    let trials = trials_of(host, &tests[..1]);
    let mut outcomes = Vec::new();
    runner
        .run(&trials, |_, result| outcomes.push(result.outcome))
        .unwrap();
    assert!(outcomes.len() == 1 && !outcomes[0].passed(), "{outcomes:?}");
    // Its forking server ended with its last trial, and the root it was
    // forked from with the run (both run the root's command line).
    let root = hosted.forking.as_ref().expect("forked").root.display();
    let forking = format!("{root} root --forking");
    assert!(running(&forking).is_empty(), "{:?}", running(&forking));
}

/// A learner's Python tests talk to fencelab's own implementations
/// through servers the runner forks itself (where the bridge's cdylib is
/// built): each in the cage the runner gives such a server (the
/// implementation cannot be made to write outside the trial), holding
/// nothing of the forking server's, and gone after its last trial.
#[test]
fn a_learners_python_tests_are_served_by_caged_forks_of_the_runners() {
    if !Layers::test_needs(&[Need::Namespaces, Need::Landlock]) {
        return;
    }
    interpreter().expect("python3 3.10+ (.ci/run checks it first)");
    let _roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
    let policy = Policy::of(Trust::LearnerTests);
    // fencelab's judge, built with the bridge: its cdylib is then there.
    let plan = Plan {
        suite: &SuiteFiles::builtin(),
        implementations: &[],
        time_limit: None,
        servers: policy.servers,
        judge_caged: false,
        detail: None,
    };
    let Built::Done(_build) = builder::build(&scratch, &plan).unwrap() else {
        panic!("the suite builds");
    };
    // The reference, refusing to serve unless the runner's forking
    // server forked it, with nothing of that server's open, in the
    // environment and with the file size limit a server the runner
    // starts has (the runner's own: `start_light_serving` sets none).
    let fsize = rustix::process::getrlimit(rustix::process::Resource::Fsize);
    // Unlimited is -1 in Python, None in rustix.
    let python_limit = |v: Option<u64>| match v {
        None => -1,
        Some(v) => v as i128,
    };
    let source = format!(
        "{}\n\
         import os as _os, sys as _sys, resource as _resource\n\
         if _sys.orig_argv[-1] != '--forking-trusted':\n    raise SystemExit('not forked')\n\
         if dict(_os.environ) != {{'RUST_BACKTRACE': '0'}}:\n    raise SystemExit('another environment')\n\
         if _resource.getrlimit(_resource.RLIMIT_FSIZE) != ({}, {}):\n    raise SystemExit('another file size limit')\n\
         for _fd in range(4, 4096):\n    \
             try:\n        _os.fstat(_fd)\n    except OSError:\n        continue\n    \
             raise SystemExit(f'descriptor {{_fd}} is open')\n",
        crate::lab::python::REFERENCE,
        python_limit(fsize.current),
        python_limit(fsize.maximum),
    );
    let implementation = Implementation {
        shown_path: "lease.py".into(),
        source,
    };
    let hosted = host(
        &scratch,
        std::slice::from_ref(&implementation),
        policy.servers,
        policy.import_first,
    )
    .unwrap();
    let forking = hosted.forking.as_ref().expect("a root to fork from");
    assert!(forking.library.is_some(), "the bridge's cdylib is built");
    let Hosting::Hosted(host) = &hosted.hosting[0] else {
        panic!("it compiles: {:?}", hosted.hosting[0]);
    };
    let outside = tempfile::tempdir().unwrap();
    let escape = outside.path().join("escape.db");
    let tests = format!(
        "import lease\n\
         \n\
         def test_served(tmp_path):\n    \
             db = str(tmp_path / 'jobs.db')\n    \
             lease.init_db(db)\n    \
             assert lease.enqueue(db, 'j') is True\n\
         \n\
         def test_has_it_write_outside():\n    \
             try:\n        lease.init_db({:?})\n    except Exception:\n        return\n    \
             raise AssertionError('the implementation wrote outside its trial')\n",
        escape.to_str().unwrap()
    );
    let suite = SuiteFiles {
        target: "mine".into(),
        root: "forked_test.py".into(),
        files: vec![("forked_test.py".into(), tests)],
        binding: "import lease".into(),
        builtin: false,
    };
    let Judge::Ready { program, pin, .. } = judge(&scratch, &suite).unwrap() else {
        panic!("the tests are collected");
    };
    let mut runner = Runner::new(program, 2, &policy);
    runner.forking = hosted.forking.clone();
    passes_on(&runner, host, &["test_served", "test_has_it_write_outside"]);
    drop(pin);
    assert!(!escape.exists(), "the implementation wrote {escape:?}");
    let forking = format!("{} root --forking-trusted", forking.root.display());
    assert!(running(&forking).is_empty(), "{:?}", running(&forking));
}

/// Two implementations in two server directories (as `grade` hosts
/// them): their forking servers are forked from one root, started from
/// a directory of fencelab's own, serve from the bridge's loop (its
/// cdylib built: the runner names it), and are gone with the run.
#[test]
fn a_runs_forking_servers_are_forked_from_one_root() {
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    interpreter().expect("python3 3.10+ (.ci/run checks it first)");
    let _roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
    let implementations: Vec<Implementation> = ["one.py", "two.py"]
        .iter()
        .map(|shown| Implementation {
            shown_path: shown.to_string(),
            source: crate::lab::python::REFERENCE.into(),
        })
        .collect();
    let policy = Policy::of(Trust::Submissions);
    build_library(&scratch, policy.servers, None);
    let hosted = host(
        &scratch,
        &implementations,
        policy.servers,
        policy.import_first,
    )
    .unwrap();
    let hosts: Vec<Host> = hosted
        .hosting
        .iter()
        .map(|h| match h {
            Hosting::Hosted(host) => host.clone(),
            Hosting::Unviable { errors } => panic!("it compiles: {errors}"),
        })
        .collect();
    assert_ne!(hosts[0].program, hosts[1].program, "a directory each");
    let forking = hosted.forking.as_ref().expect("a root to fork from");
    assert!(!forking.root.starts_with(hosts[0].program.parent().unwrap()));
    // Two trials each: after one of each, both servers still run.
    let zygotes = Zygotes::for_hosts(hosts.iter().chain(&hosts), Launch::ByJudge, Some(forking));
    let handed: Vec<Handed> = hosts
        .iter()
        .map(|host| zygotes.hand(host).unwrap().expect("forked"))
        .collect();
    let cmdline = format!("{} root --forking", forking.root.display());
    let root = zygotes
        .root
        .lock()
        .unwrap()
        .clone()
        .expect("a root started");
    let root_pid = root.child.lock().unwrap().id() as libc::pid_t;
    assert!(handed.iter().all(|h| Arc::ptr_eq(&h._server._root, &root)));
    // The root's forks: the two forking servers, which show the root's
    // command line.
    let forks: Vec<(libc::pid_t, String)> = proc::pids()
        .into_iter()
        .filter(|&pid| proc::stat(pid).is_some_and(|stat| stat.ppid == root_pid))
        .filter_map(|pid| Some((pid, proc::read(format!("/proc/{pid}/cmdline"))?)))
        .map(|(pid, c)| (pid, String::from_utf8_lossy(&c).replace('\0', " ")))
        .collect();
    assert_eq!(forks.len(), 2, "{forks:?}");
    assert!(forks.iter().all(|(_, c)| c.contains(&cmdline)), "{forks:?}");
    // Each serves from the bridge's loop: its cdylib is loaded before any
    // trial (none comes here), and no handler of Python's catches SIGCHLD.
    let library = forking
        .library
        .as_ref()
        .expect("the bridge's cdylib is built");
    let library = library.to_str().unwrap();
    for &(pid, _) in &forks {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let maps = || proc::read_text(format!("/proc/{pid}/maps"));
        while !maps().is_some_and(|m| m.contains(library)) {
            assert!(
                std::time::Instant::now() < deadline,
                "{pid} never loaded {library}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let caught = proc::status(pid)
            .and_then(|s| u64::from_str_radix(s.field("SigCgt")?, 16).ok())
            .unwrap();
        assert_eq!(caught & (1 << (libc::SIGCHLD - 1)), 0, "{pid}: {caught:x}");
    }
    drop(root);
    drop(handed);
    drop(zygotes);
    // (Other tests' roots run the same command line meanwhile.)
    for pid in forks.iter().map(|&(pid, _)| pid).chain([root_pid]) {
        let alive = proc::stat(pid).is_some_and(|stat| stat.state != 'Z');
        assert!(!alive, "{pid} is still running");
    }
}

/// One interpreter identifies every server directory of a run; a
/// directory whose server is not that file, or whose table says
/// another build or other keys, is refused.
#[test]
fn every_server_is_identified_by_one_interpreter_and_a_stale_one_is_refused() {
    let Ok(python) = interpreter() else {
        eprintln!("no Python here");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, server: &str, build: &str, key: &str| -> PathBuf {
        let here = dir.path().join(name);
        std::fs::create_dir(&here).unwrap();
        let (file, text) = script(&python, SERVER_FILE, server);
        let path = here.join(file);
        std::fs::write(&path, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let table =
            serde_json::json!({ "build": build, "impls": [{ "key": key, "shown": "x.py" }] });
        std::fs::write(here.join("hosted.json"), table.to_string()).unwrap();
        path
    };
    let expected = |script: PathBuf, build: &'static str, key: &str| Expected {
        script,
        build,
        keys: vec![key.to_string()],
    };
    let a = expected(write("a", server(), "b1", "k1"), "b1", "k1");
    let b = expected(write("b", server(), "b2", "k2"), "b2", "k2");
    identify(&[&a, &b]).expect("both are right");
    // Each refused: another server file, another build, other keys.
    let stale = expected(
        write("c", &format!("{}\n# stale\n", server()), "b3", "k3"),
        "b3",
        "k3",
    );
    assert!(identify(&[&a, &stale]).is_err());
    assert!(identify(&[&a, &expected(b.script.clone(), "b9", "k2")]).is_err());
    assert!(identify(&[&a, &expected(b.script.clone(), "b2", "k9")]).is_err());
}
