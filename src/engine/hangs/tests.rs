//! The time rules tested on real processes (spinning, sleeping, working) seen
//! through cgroup directories the tests make, or without one; the rules'
//! scaling, the confirmations' order and budget, and a stopped trial's words.

use super::processes::{cgroup_usage, from_ticks, own_ticks};
use super::*;
use crate::bridge::sandbox::proc;
use std::path::Path;

/// A cage's memory cgroup as `hangs` reads it: a directory whose
/// `cgroup.procs` lists `child`.
fn cage_of(dir: &Path, name: &str, child: &std::process::Child) -> PathBuf {
    let cage = dir.join(name);
    std::fs::create_dir(&cage).unwrap();
    std::fs::write(cage.join("cgroup.procs"), format!("{}\n", child.id())).unwrap();
    cage
}

/// `script` run by sh, its output closed: nothing it leaves behind holds
/// the test's output open.
fn sh(script: &str) -> std::process::Child {
    quiet("sh", script)
}

/// `program -c script`, its output closed.
fn quiet(program: &str, script: &str) -> std::process::Child {
    std::process::Command::new(program)
        .args(["-c", script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Trial `id` of `group` watched by `watch`, its judge `child` (started),
/// in a cage of its own under `dir`.
fn watched(
    watch: &Watch,
    id: usize,
    group: &str,
    rules: Rules,
    child: &std::process::Child,
    dir: &Path,
) {
    watch
        .begin(id, group, rules, false)
        .started_as(child.id() as libc::pid_t);
    watch.sees(id, in_cage(cage_of(dir, &format!("c{id}"), child)));
}

/// A trial's processes as a machine with memory cgroups has them: its
/// untrusted side in `cage`.
fn in_cage(cage: PathBuf) -> Whereabouts {
    Whereabouts {
        cage: Some(cage),
        ..Whereabouts::default()
    }
}

#[test]
fn a_trial_that_spins_or_sleeps_is_stopped_and_one_that_works_is_not() {
    let rules = Rules {
        spin: Duration::from_millis(300),
        wait: Duration::from_millis(600),
    };
    // Spins; sleeps; and works: wakes every 10 ms, as a busy wait for
    // a lock does (SQLite's), using little of the processor.
    let mut children = [
        sh("while :; do :; done"),
        sh("exec sleep 60"),
        sh("while :; do sleep 0.01; done"),
    ];
    let cages = tempfile::tempdir().unwrap();
    let watch = Watch::default();
    for (id, child) in children.iter().enumerate() {
        watched(&watch, id, &format!("g{id}"), rules, child, cages.path());
    }
    // However loaded the machine, until both are stopped, and at least
    // 2 s: the waiter's rule thrice over.
    let stopped = |id| {
        watch
            .lock()
            .trials
            .get(&id)
            .and_then(|w| w.stopped_by)
            .is_some()
    };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2)
        || !(stopped(0) && stopped(1)) && started.elapsed() < Duration::from_secs(120)
    {
        watch.look();
        std::thread::sleep(Duration::from_millis(50));
    }
    let asleep = watch.asleep();
    let ended: Vec<_> = (0..3).map(|id| watch.end(id)).collect();
    for child in &mut children {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert_eq!(
        ended,
        [
            Some((TimeRule::Spins, rules.spin)),
            Some((TimeRule::Waits, rules.wait)),
            None
        ]
    );
    // The sleeper was asleep at its last look; the one that works is
    // asleep most of the time too, and may have been.
    assert!((1..=2).contains(&asleep), "{asleep}");
}

#[test]
fn a_busy_machine_stops_no_trial_that_waits_on_the_processor() {
    // Three spinners share one core: each is ready to run most of the
    // time and runs little. None is asleep; only processor time counts.
    let rules = Rules {
        spin: Duration::from_secs(60),
        wait: Duration::from_millis(300),
    };
    let mut spinners: Vec<_> = (0..6).map(|_| sh("while :; do :; done")).collect();
    let cages = tempfile::tempdir().unwrap();
    let watch = Watch::default();
    for (id, child) in spinners.iter().enumerate() {
        watched(&watch, id, &format!("g{id}"), rules, child, cages.path());
    }
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        watch.look();
        std::thread::sleep(Duration::from_millis(50));
    }
    let ended: Vec<_> = (0..6).map(|id| watch.end(id)).collect();
    for child in &mut spinners {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert_eq!(ended, vec![None; 6]);
}

#[test]
fn an_implementation_that_hangs_is_stopped_sooner_in_first_runs_only() {
    let rules = Rules {
        spin: Duration::from_secs(60),
        wait: Duration::from_millis(800),
    };
    let cages = tempfile::tempdir().unwrap();
    let watch = Watch::default();
    let sleep = |id: usize, group: &str, confirming: bool| {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        watch
            .begin(id, group, rules, confirming)
            .started_as(child.id() as libc::pid_t);
        watch.sees(
            id,
            in_cage(cage_of(cages.path(), &format!("c{id}"), &child)),
        );
        let started = Instant::now();
        let stopped = || watch.lock().trials[&id].stopped_by.is_some();
        while !stopped() && started.elapsed() < Duration::from_secs(120) {
            watch.look();
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        watch.end(id).map(|(_, threshold)| threshold)
    };
    assert_eq!(sleep(0, "g", false), Some(rules.wait));
    // Another first run of the same implementation: a quarter of it.
    assert_eq!(sleep(1, "g", false), Some(rules.wait / 4));
    // Run again alone, or another implementation: the full rule.
    assert_eq!(sleep(2, "g", true), Some(rules.wait));
    assert_eq!(sleep(3, "h", false), Some(rules.wait));
}

#[test]
fn a_trial_waits_only_once_its_judge_has_started() {
    // Before, it waits on fencelab (a starved runner forking its judge),
    // which the old watch counted: load then stopped trials that never slept.
    let rules = Rules {
        spin: Duration::from_secs(60),
        wait: Duration::from_millis(300),
    };
    let mut child = sh("exec sleep 60");
    let cages = tempfile::tempdir().unwrap();
    let watch = Watch::default();
    let stop = watch.begin(0, "g", rules, false);
    watch.sees(0, in_cage(cage_of(cages.path(), "c0", &child)));
    let stopped = || watch.lock().trials[&0].stopped_by;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        watch.look();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(stopped(), None, "waited before its judge started");
    assert_eq!(watch.asleep(), 0);
    stop.started_as(child.id() as libc::pid_t);
    let started = Instant::now();
    while stopped().is_none() && started.elapsed() < Duration::from_secs(120) {
        watch.look();
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(watch.end(0), Some((TimeRule::Waits, rules.wait)));
}

#[test]
fn a_trial_does_not_wait_while_fencelab_works_for_it() {
    // Its judge asleep, waiting on a forking server (fencelab's) that
    // runs: a starved forking server made a trial wait under load.
    let rules = Rules {
        spin: Duration::from_secs(60),
        wait: Duration::from_millis(300),
    };
    let (mut judge, mut helper) = (sh("exec sleep 60"), sh("while :; do :; done"));
    let cages = tempfile::tempdir().unwrap();
    let watch = Watch::default();
    watch
        .begin(0, "g", rules, false)
        .started_as(judge.id() as libc::pid_t);
    let whereabouts = Whereabouts {
        helpers: vec![helper.id() as libc::pid_t],
        ..in_cage(cage_of(cages.path(), "c0", &judge))
    };
    watch.sees(0, whereabouts);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        watch.look();
        std::thread::sleep(Duration::from_millis(20));
    }
    for child in [&mut judge, &mut helper] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert_eq!(watch.end(0), None);
}

#[test]
fn a_late_look_counts_all_the_waiting_it_saw() {
    // A starved watcher looks 1 s late: asleep at both looks with nothing
    // run between, the trial waited all of it (the old watch counted 0.1 s).
    let at = Instant::now();
    let look = |after_ms, asleep, ran| Look {
        at: at + Duration::from_millis(after_ms),
        asleep,
        ran,
        queued: 0,
        judge_ran: None,
    };
    let waited = waited_between;
    assert_eq!(
        waited(look(0, true, 7), look(1000, true, 7)),
        Duration::from_secs(1)
    );
    // Something of it ran between (a process gone since, counted by its
    // cgroup), or it was awake at either look: no waiting.
    assert_eq!(
        waited(look(0, true, 7), look(1000, true, 8)),
        Duration::ZERO
    );
    assert_eq!(
        waited(look(0, false, 7), look(1000, true, 7)),
        Duration::ZERO
    );
    assert_eq!(
        waited(look(0, true, 7), look(1000, false, 7)),
        Duration::ZERO
    );
}

#[test]
fn a_cgroup_counts_the_processor_time_of_processes_gone() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(cgroup_usage(dir.path()), 0, "cgroup v1: no cpu.stat");
    std::fs::write(
        dir.path().join("cpu.stat"),
        "usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n",
    )
    .unwrap();
    assert_eq!(cgroup_usage(dir.path()), 1234);
    let seen = look_at(None, &in_cage(dir.path().to_path_buf()), &[]);
    assert_eq!(seen.ran, 1_234_000, "in nanoseconds, with no process left");
}

#[test]
fn the_rules_grow_with_the_limit() {
    let default = Rules::for_limit(Duration::from_secs(10));
    assert_eq!(default.spin, Duration::from_millis(300));
    assert_eq!(default.wait, Duration::from_secs(2));
    let long = Rules::for_limit(Duration::from_secs(60));
    assert_eq!(long.spin, Duration::from_millis(1800));
    assert_eq!(long.wait, Duration::from_secs(12));
    // A short limit waits at least a second, and computes at least 0.3 s
    // (a step's random calls), or half the limit.
    let short = Rules::for_limit(Duration::from_secs(5));
    assert_eq!((short.spin, short.wait), (MIN_SPIN, MIN_WAIT));
    assert_eq!(Rules::for_limit(Duration::from_secs(2)).wait, MIN_WAIT);
    let tiny = Rules::for_limit(Duration::from_millis(500));
    assert_eq!(tiny.wait, Duration::from_millis(250));
    assert_eq!(tiny.spin, Duration::from_millis(250));
}

#[test]
fn confirmations_go_to_likely_passes_first_and_stop_at_the_budget() {
    let mut confirmations = Confirmations::new(Some(Duration::from_secs(3)));
    let stopped = |rule| {
        stopped(
            TestOutcome::timed_out(10.0),
            Duration::from_secs(10),
            Some((rule, Duration::from_secs(1))),
            false,
        )
    };
    let at_limit = TestOutcome::timed_out(10.0);
    let took = Duration::from_secs(1);
    assert!(!confirmations.wanted("a", 0, &TestOutcome::Passed, took));
    assert!(confirmations.wanted("b", 1, &stopped(TimeRule::Spins), took));
    assert!(confirmations.wanted("a", 2, &stopped(TimeRule::Waits), took));
    assert!(confirmations.wanted("a", 3, &at_limit, took));
    assert!(confirmations.wanted("b", 4, &at_limit, took));
    let order = confirmations.order();
    let order: Vec<(&str, usize)> = order.iter().map(|(g, i)| (g.as_str(), *i)).collect();
    assert_eq!(order, [("b", 4), ("b", 1), ("a", 3), ("a", 2)]);
    // Stopped again, a confirmation spends what its rule allows (here
    // 1 s each; the limit, 10 s, where the limit stopped it); one that
    // passes alone spends nothing.
    assert!(confirmations.may_run("a"));
    confirmations.ran("a", &TestOutcome::Passed);
    confirmations.ran("a", &stopped(TimeRule::Waits));
    confirmations.ran("a", &stopped(TimeRule::Spins));
    assert!(confirmations.may_run("a"), "2 s of 3 spent");
    confirmations.ran("a", &stopped(TimeRule::Waits));
    assert!(!confirmations.may_run("a"));
    assert!(confirmations.may_run("b"), "a budget per implementation");
    confirmations.ran("b", &at_limit);
    assert!(!confirmations.may_run("b"));
    assert_eq!(confirmations.over_budget(took).label(), "over budget");
    let unbounded = Confirmations::new(None);
    assert!(unbounded.may_run("a"));
}

#[test]
fn a_stopped_trial_says_which_rule_and_whether_it_was_confirmed() {
    let rule = Some((TimeRule::Waits, Duration::from_secs(2)));
    let ten = Duration::from_secs(10);
    let outcome = stopped(TestOutcome::timed_out(10.0), ten, rule, true);
    assert_eq!(
        outcome.message().unwrap(),
        "the test waited 2.0 s in all with none of its processes running \
             (a sleep, or a lock nobody lets go) and was stopped\n\
             confirmed: run again alone after the other tests, it was stopped again"
    );
    // A trial that ended on its own as it was stopped keeps its verdict.
    assert_eq!(
        stopped(TestOutcome::Passed, ten, rule, true),
        TestOutcome::Passed
    );
    let at_limit = stopped(TestOutcome::timed_out(10.0), ten, None, false);
    assert_eq!(at_limit, TestOutcome::timed_out(10.0));
    // Run again alone, the process's limit is longer (`STARVED_LIMIT`): the
    // watch's stop at the trial's own limit reads as that limit.
    let limit = Some((TimeRule::Limit, ten));
    let kept = stopped(TestOutcome::timed_out(40.0), ten, limit, true);
    assert_eq!(kept, stopped(TestOutcome::timed_out(10.0), ten, None, true));
    assert_eq!(kept.label(), TestOutcome::timed_out(10.0).label());
}

#[test]
fn a_trial_kept_from_the_processor_is_not_stopped_by_its_limit_for_it() {
    // A spinner looked at 1 s apart, which waited 0.9 s of it for a
    // processor (a loaded machine): 0.1 s of its limit went by.
    let at = Instant::now();
    let look = |after_ms: u64, queued_ms: u64| Look {
        at: at + Duration::from_millis(after_ms),
        asleep: false,
        ran: after_ms,
        queued: queued_ms * 1_000_000,
        judge_ran: None,
    };
    assert_eq!(
        starved_between(look(0, 0), look(1000, 900)),
        Duration::from_millis(900)
    );
    // Never more than the interval (threads queued side by side).
    assert_eq!(
        starved_between(look(0, 0), look(1000, 2500)),
        Duration::from_secs(1)
    );
    assert_eq!(
        starved_between(look(0, 500), look(1000, 500)),
        Duration::ZERO
    );
}

#[test]
fn a_trial_run_again_alone_is_stopped_at_its_limit_by_the_watch() {
    let rules = Rules {
        spin: Duration::from_secs(60),
        wait: Duration::from_secs(60),
    };
    let mut child = sh("while :; do :; done");
    let cages = tempfile::tempdir().unwrap();
    let watch = Watch::default();
    watched(&watch, 0, "g", rules, &child, cages.path());
    watch.keep_limit(0, Duration::from_millis(500));
    let started = Instant::now();
    while watch.lock().trials[&0].stopped_by.is_none()
        && started.elapsed() < Duration::from_secs(120)
    {
        watch.look();
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    let limit = Duration::from_millis(500);
    assert_eq!(watch.end(0), Some((TimeRule::Limit, limit)));
}

#[test]
fn without_a_cgroup_the_rules_hold_on_the_trials_own_processes() {
    // A machine without memory cgroups (an unprivileged user's) judges as
    // root's does: the old watch let these trials run to their limit.
    let rules = Rules {
        spin: Duration::from_millis(300),
        wait: Duration::from_millis(600),
    };
    let spin = "while :; do :; done";
    // 0 sleeps; 1, an untrusted judge, spins; 2, fencelab's own judge,
    // computes (its random calls); 3 sleeps on a server of the runner's
    // that works.
    let mut judges = [sh("exec sleep 60"), sh(spin), sh(spin), sh("exec sleep 60")];
    let mut server = sh(spin);
    let watch = Watch::default();
    for (id, judge) in judges.iter().enumerate() {
        let pid = |child: &std::process::Child| child.id() as libc::pid_t;
        let group = format!("g{id}");
        watch.begin(id, &group, rules, false).started_as(pid(judge));
        let whereabouts = match id {
            1 => Whereabouts {
                judge_untrusted: true,
                ..Whereabouts::default()
            },
            3 => Whereabouts {
                servers: vec![pid(&server)],
                ..Whereabouts::default()
            },
            _ => Whereabouts::default(),
        };
        watch.sees(id, whereabouts);
    }
    let stopped = |id| watch.lock().trials[&id].stopped_by.is_some();
    // However loaded the machine: until the first two are stopped, and
    // fencelab's judge and the working servers have computed twice the
    // spin rule (it would have stopped them), for at least the wait rule
    // thrice over.
    let computed = |child: &std::process::Child| {
        let pid = child.id() as libc::pid_t;
        let ticks = proc::children(pid).into_iter().map(own_ticks).sum::<u64>();
        from_ticks(own_ticks(pid) + ticks) >= rules.spin * 2
    };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(120)
        && (started.elapsed() < rules.wait * 3
            || !(stopped(0) && stopped(1))
            || !(computed(&judges[2]) && computed(&server)))
    {
        watch.look();
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended: Vec<_> = (0..4).map(|id| watch.end(id)).collect();
    for child in judges.iter_mut().chain([&mut server]) {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert_eq!(
        ended,
        [
            Some((TimeRule::Waits, rules.wait)),
            Some((TimeRule::Spins, rules.spin)),
            None,
            None
        ]
    );
}

/// Kills `pid` and its first descendants, deepest first: a PID namespace's
/// init takes its namespace with it.
fn kill_down(pid: libc::pid_t) {
    let mut line = vec![pid];
    while let Some(&last) = line.last()
        && let Some(&child) = proc::children(last).first()
    {
        line.push(child);
    }
    for pid in line.into_iter().rev() {
        let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

#[test]
fn without_a_cgroup_a_trusted_judges_caged_or_forked_server_spins() {
    use crate::bridge::sandbox::{Layers, Need};
    if !Layers::test_needs(&[Need::Namespaces]) {
        return;
    }
    let rules = Rules {
        spin: Duration::from_millis(300),
        wait: Duration::from_millis(600),
    };
    let spin = "while :; do :; done";
    // 0: fencelab's own judge starts the server in a cage with a PID
    // namespace of its own. 1 and 2 sleep, while a forking server's child
    // spins, in 1's space (a tmpfs on its directory): the server forked for
    // 1, whose pid only its judge learns. 2 waits.
    let spaces = tempfile::tempdir().unwrap();
    let (one, two) = (spaces.path().join("1"), spaces.path().join("2"));
    std::fs::create_dir(&one).unwrap();
    std::fs::create_dir(&two).unwrap();
    let mut judges = [
        sh(&format!(
            "unshare --user --map-root-user --pid --fork sh -c '{spin}'"
        )),
        sh("exec sleep 60"),
        sh("exec sleep 60"),
    ];
    let mut forking = sh(&format!(
        "unshare --user --map-root-user --mount sh -c \
         'mount -t tmpfs none {} && {spin}' & wait",
        one.display()
    ));
    let watch = Watch::default();
    for (id, judge) in judges.iter().enumerate() {
        let group = format!("g{id}");
        watch
            .begin(id, &group, rules, false)
            .started_as(judge.id() as libc::pid_t);
        let space = [&one, &two].get(id.wrapping_sub(1)).copied();
        let whereabouts = Whereabouts {
            helpers: vec![forking.id() as libc::pid_t],
            space: space.map(|dir| forked::mount_point(dir)),
            ..Whereabouts::default()
        };
        watch.sees(id, whereabouts);
    }
    let stopped = |id| watch.lock().trials[&id].stopped_by.is_some();
    let started = Instant::now();
    while !(0..3).all(stopped) && started.elapsed() < Duration::from_secs(120) {
        watch.look();
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended: Vec<_> = (0..3).map(|id| watch.end(id)).collect();
    for child in judges.iter_mut().chain([&mut forking]) {
        kill_down(child.id() as libc::pid_t);
        child.wait().unwrap();
    }
    assert_eq!(
        ended,
        [
            Some((TimeRule::Spins, rules.spin)),
            Some((TimeRule::Spins, rules.spin)),
            Some((TimeRule::Waits, rules.wait)),
        ]
    );
}

mod calls;
