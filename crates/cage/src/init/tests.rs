//! The init and the watcher: the program ends as it would uncaged, and nothing
//! it started outlives it, whoever runs the cage.

use crate::testing::{Entry, caged, live, output_entering, started, started_entering};
use crate::{Cage, Layers, Need, kill_cage, others_in_cage};
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Set when `a_judge_that_is_not_dumpable_cages_as_a_user_other_than_root`
/// runs the test below as another user.
const NOT_ROOT_ENV: &str = "FENCELAB_SANDBOX_NOT_ROOT";

/// As a judge does (client.rs): not dumpable, then a cage. Runs only when
/// started by the test below, as a user other than root.
#[test]
fn cages_when_not_dumpable() {
    let Ok(trial) = std::env::var(NOT_ROOT_ENV) else {
        return;
    };
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable).unwrap();
    let done = caged(Path::new(&trial), "echo $$; exit 7");
    println!(
        "CAGED {:?} {}",
        done.status.and_then(|s| s.code()),
        done.stdout.trim()
    );
    // A judge kills its server's cage by its init, which it must find
    // as this user too (the init is not dumpable: its ns links are
    // not this user's to read).
    let tmp = Path::new(&trial).join("tmp");
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let cage = Cage::new(&tmp, &sh, &[]);
    let mut child = started(&cage, &sh, "sleep 651 & echo started; exec sleep 652");
    let namespaced = kill_cage(child.id() as libc::pid_t);
    child.wait().unwrap();
    println!(
        "KILLED namespaced={namespaced} left={}",
        live("sleep 65").len()
    );
    // The same for a server's cage whose init and program are clones
    // (`Cage::executing`): the init makes the memory it shares with
    // the watcher not dumpable, and must still be found.
    let listener = std::os::unix::net::UnixListener::bind(tmp.join("s")).unwrap();
    let script = "sleep 653 & echo started; exec sleep 654";
    let cage = Cage::new(&tmp, &sh, &[]).executing(&sh, &["-c".as_ref(), script.as_ref()], &[]);
    let mut child = started_serving(&cage, &sh, listener.as_raw_fd());
    let namespaced = kill_cage(child.id() as libc::pid_t);
    child.wait().unwrap();
    println!(
        "SERVING KILLED namespaced={namespaced} left={}",
        live("sleep 65").len()
    );
}

/// The program of `cage` (which executes it itself: `Cage::executing`)
/// started as a judge starts its server, once it has printed its first
/// line.
fn started_serving(cage: &Cage, sh: &Path, listener: RawFd) -> std::process::Child {
    let (child, line) = started_entering(sh, "echo std", Entry::Serving(listener, cage.plan()));
    assert_eq!(line, "started\n");
    child
}

#[test]
fn a_judge_that_is_not_dumpable_cages_as_a_user_other_than_root() {
    use std::os::unix::process::CommandExt;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root (to become another user)");
        return;
    }
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "init::tests::cages_when_not_dumpable"])
        .args(["--nocapture", "--test-threads", "1"])
        .env(NOT_ROOT_ENV, dir.path())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Its own PID namespace, as for root: process 2, exit status 7.
    assert!(
        stdout.contains("CAGED Some(7) 2"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Its cage is killed by its init, and nothing of it is left.
    assert!(
        stdout.contains("KILLED namespaced=true left=0"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("SERVING KILLED namespaced=true left=0"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_program_ends_as_it_would_uncaged_exit_status_and_signal_alike() {
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let done = caged(dir.path(), "echo $$ $PPID; exit 7");
    // Its own PID namespace: it is process 2, under an init of ours.
    assert_eq!(done.stdout.trim(), "2 1", "{done:?}");
    assert_eq!(done.status.unwrap().code(), Some(7), "{done:?}");
    assert!(!done.left_behind);
    use std::os::unix::process::ExitStatusExt;
    let killed = caged(dir.path(), "kill -SEGV $$");
    assert_eq!(killed.status.unwrap().signal(), Some(libc::SIGSEGV));
    let aborted = caged(dir.path(), "kill -ABRT $$");
    assert_eq!(aborted.status.unwrap().signal(), Some(libc::SIGABRT));
}

/// `Cage::executing`: the init and the program are clones that share
/// the watcher's memory, and the program executes what the plan says
/// (not what `std` would have: here `echo std`), with exactly the
/// plan's environment, as PID 2 under our init, in the cage, its end
/// the watcher's; one that cannot be executed fails the spawn, as
/// `std`'s own exec would. Fails if the clones' program returned to
/// `std` (it would say "std"), or if a failed exec went unnoticed.
#[test]
fn a_serving_cage_executes_its_program_from_clones_as_a_fork_would() {
    use std::os::unix::process::ExitStatusExt;
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let sh = &std::fs::canonicalize("/bin/sh").unwrap();
    let listener = std::os::unix::net::UnixListener::bind(tmp.join("s")).unwrap();
    let serve = |program: &Path, script: &str| {
        let env = [("CAGED".into(), "yes".into())];
        let cage =
            Cage::new(&tmp, sh, &[]).executing(program, &["-c".as_ref(), script.as_ref()], &env);
        let entry = Entry::Serving(listener.as_raw_fd(), cage.plan());
        let output = output_entering(sh, "echo std", &tmp, entry);
        drop(cage);
        output
    };
    let done = serve(
        sh,
        "echo $$ $PPID $CAGED $(env | wc -l); cat /etc/hostname || exit 7",
    )
    .unwrap();
    let said = String::from_utf8_lossy(&done.stdout);
    // PWD, SHLVL and `_` are sh's own.
    let words: Vec<&str> = said.split_whitespace().collect();
    assert_eq!(words[..3], ["2", "1", "yes"], "{done:?}");
    assert!(words[3].parse::<u32>().unwrap() <= 4, "{done:?}");
    assert_eq!(done.status.code(), Some(7), "{done:?}");
    let killed = serve(sh, "kill -SEGV $$").unwrap();
    assert_eq!(killed.status.signal(), Some(libc::SIGSEGV), "{killed:?}");
    let missing = serve(&tmp.join("no-such-program"), "exit 0");
    assert_eq!(
        missing.as_ref().map_err(std::io::Error::raw_os_error).err(),
        Some(Some(libc::ENOENT)),
        "{missing:?}"
    );
}

#[test]
fn a_double_forked_process_in_a_new_session_dies_with_the_program() {
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // It would write the marker a second after the program ended, from
    // a session of its own, with no environment, elsewhere.
    let marker = dir.path().join("tmp/marker");
    let script = format!(
        "(setsid env -i sh -c 'cd /; sleep 1; echo escaped > {}; exec sleep 313' &) &",
        marker.display()
    );
    let done = caged(dir.path(), &script);
    assert!(done.success(), "{done:?}");
    assert!(done.left_behind, "what it left is reported: {done:?}");
    // Gone by the time `run` returned (no search: the namespace ended).
    assert!(live("sleep 313").is_empty());
    assert!(live("sleep 1; echo escaped").is_empty());
    let later = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < later {
        assert!(!marker.exists(), "the escaped process wrote its marker");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn what_a_running_program_started_is_counted_before_it_is_killed() {
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let cage = Cage::new(dir.path(), &sh, &[]);
    // Two processes of its own (one in a session of its own), then it
    // waits, as a server does.
    let mut child = started(
        &cage,
        &sh,
        "sleep 611 & setsid sleep 622 & echo started; exec sleep 633",
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while others_in_cage(child.id() as libc::pid_t) != 2 {
        assert!(
            Instant::now() < deadline,
            "{}",
            others_in_cage(child.id() as i32)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mine = || [live("sleep 611"), live("sleep 622"), live("sleep 633")].concat();
    while !mine().is_empty() {
        assert!(Instant::now() < deadline, "{:?}", mine());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Nothing of an uncaged process counts.
    let mut plain = Command::new("sleep").arg("64").spawn().unwrap();
    assert_eq!(others_in_cage(plain.id() as libc::pid_t), 0);
    plain.kill().unwrap();
    plain.wait().unwrap();
}

#[test]
fn a_cages_processes_are_bounded_whoever_runs_fencelab() {
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Three thousand sleeping processes, counted as they start (the
    // shell ends at the first fork refused).
    let done = caged(
        dir.path(),
        "n=0; while [ $n -lt 3000 ]; do sleep 60 & n=$((n+1)); echo $n > count; done",
    );
    let count = std::fs::read_to_string(dir.path().join("tmp/count")).unwrap_or_default();
    let started: usize = count.trim().parse().unwrap_or_else(|_| panic!("{done:?}"));
    assert!(started < 2048, "{started} processes: {done:?}");
    assert!(done.stderr.contains("fork"), "{done:?}");
    assert!(live("sleep 60").len() < 10, "they died with the namespace");
}

/// A cage that starts a PID namespace gets two stacks of `CLONE_STACK`
/// from its parent, each top inside them and aligned; one that starts none
/// gets nothing, and asking it for stacks is an error, not memory out of
/// bounds (a `tops` that skipped its check, or sizes swapped, fail here).
#[test]
fn a_cages_stacks_are_its_parents_and_only_where_it_clones() {
    use crate::init::{CLONE_STACK, Stacks};
    let tmp = tempfile::tempdir().unwrap();
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let plan = Cage::new(tmp.path(), &sh, &[]).plan();
    let mut stacks = Stacks::for_plan(&plan);
    if plan.root.is_some() {
        let [program, init] = stacks.tops().unwrap();
        let start = stacks.0.as_ptr() as usize;
        assert_eq!((program % 16, init % 16), (0, 0));
        assert_eq!(init - program, CLONE_STACK);
        assert!(start + CLONE_STACK - 16 < program && init <= start + stacks.0.len());
    } else {
        assert!(stacks.tops().is_err());
    }
    assert!(Stacks::default().tops().is_err());
}
