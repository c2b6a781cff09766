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
    // A request longer than the zygote reads is refused before it is sent,
    // and the zygote goes on forking judges.
    let room = crate::bridge::judge_zygote::REQUEST_ROOM;
    let long = Spawn {
        env: vec![("LONG".into(), "x".repeat(room).into())],
        ..spawn.clone()
    };
    let out = work.path().join("long");
    std::fs::create_dir_all(&out).unwrap();
    let refused = run_judge(&long, &out, &limits, None, Some(&zygote)).map(|f| f.status);
    let err = refused.expect_err("no judge runs");
    assert!(
        err.to_string().contains("longer than its zygote reads"),
        "{err}"
    );
    assert_eq!(run(Some(&zygote), "again"), forked);
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
    let waited = rustix::process::waitpid(leader, rustix::process::WaitOptions::empty()).unwrap();
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
        let refused = start_light_serving(&spawn, stdio, None, listener.as_raw_fd(), &caged.plan());
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
    let finished = run_light(&light("sleep 60 & echo $!"), dir.path(), &Limits::default()).unwrap();
    assert!(finished.success() && finished.left_behind, "{finished:?}");
    let orphan: libc::pid_t = finished.stdout.trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while live_processes(|pid, _| pid == orphan).len() == 1 {
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
    while live_processes(|pid, _| pid == orphan).len() == 1 {
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
