//! A budget per implementation (`grade --budget SECS`): how much time one
//! implementation's tests may spend hanging, so that a submission whose
//! tests hang costs the batch its budget, not every test's limit.
//!
//! What counts is the time a test runs past the grace, ten times the run's
//! median trial (at least one second), while it runs and when it reaches
//! its time limit; a test that ends on its own, however slowly, spends
//! nothing. So a correct submission, or a broken one whose failures are
//! slow (a `todo!()` panics and its server is taken down, seconds under
//! load), keeps every verdict, while tests that hang spend the budget
//! together: eight hanging at once spend 15 s about two seconds past the
//! grace. A test also counts as slow once its implementation's processes
//! (its cage's memory cgroup, where there is one) have used `CPU_GRACE` of
//! the processor, however young: a test that spins takes a core from its
//! neighbours, and under load the wall-time grace grows with them (ten
//! medians of trials slowed by the spinning ones), while a correct test's
//! implementation uses a few hundredths of a second of processor time
//! whatever the load. (Counting every slow test's whole time, as this did first, let
//! eight not-started tests at 2 to 4 s under a load of 60 spend a
//! submission's 15 s and cost it its later steps, 50 for 87.5.) Until the
//! run has a median to go by (`MIN_SAMPLES` trials ended), the grace is
//! `STARTUP_GRACE`: a loaded machine's first trials (servers started cold,
//! every job at once) take seconds each. A submission whose every test
//! hangs still loses little: its first trials pass `STARTUP_GRACE` together
//! and spend its budget then. Verdicts stay exact: a test that ended on its
//! own keeps its outcome, whatever the budget. When an implementation's
//! budget is spent, its tests still running are killed (their processes
//! found by their trial's directory, as the orphan hunt finds them) and
//! those not started are not run; both fail as `TestOutcome::OverBudget`,
//! never as a crash or a timeout of their own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::outcome::TestOutcome;

/// The least time a trial runs before it counts as slow.
const GRACE_FLOOR: Duration = Duration::from_secs(1);
/// How many times the run's median trial a test runs before it counts as slow.
const GRACE_FACTOR: u32 = 10;
/// How many trials must have ended before their median sets the grace.
const MIN_SAMPLES: usize = 16;
/// The grace before then: half the default per-test limit.
const STARTUP_GRACE: Duration = Duration::from_secs(5);
/// The least processor time a trial's implementation may use before the
/// trial counts as slow, whatever its wall time; more where the run's
/// trials use more (ten times their median: a Python server's trial uses
/// about ten times a Rust one's).
const CPU_GRACE: Duration = Duration::from_millis(300);
/// How young a trial is when its processor time is first looked at: most
/// trials have ended by then.
const CPU_LOOK_AFTER: Duration = Duration::from_millis(200);

/// The budgets of a run's implementations.
pub(super) struct Budgets {
    budget: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    groups: HashMap<String, Group>,
    /// Every finished trial's duration, for the median.
    durations: Vec<Duration>,
    grace: Option<Duration>,
    /// Every finished trial's processor time (all its processes'), for
    /// the median.
    cpus: Vec<Duration>,
    cpu_grace: Option<Duration>,
}

#[derive(Default)]
struct Group {
    /// What its finished slow trials took.
    spent: Duration,
    running: Vec<Running>,
    /// When its budget ran out.
    over_at: Option<Instant>,
}

struct Running {
    id: usize,
    started: Instant,
    /// The trial's directory and its start in boot ticks, to find its
    /// processes by.
    dir: PathBuf,
    ticks: u64,
    /// The memory cgroup of its implementation's cage, whose processes'
    /// processor time is looked at (`Budgets::sample`).
    cage: Option<PathBuf>,
    /// When its implementation was found past `CPU_GRACE`.
    spinning_since: Option<Instant>,
}

impl Running {
    /// When it started to count as slow, if it does by `now`.
    fn slow_from(&self, grace: Duration, now: Instant) -> Option<Instant> {
        let by_wall = self.started + grace;
        let from = self.spinning_since.map_or(by_wall, |s| s.min(by_wall));
        (now > from).then_some(from)
    }
}

/// A trial's start, as the budget answers it.
pub(super) enum Start {
    Go,
    /// The implementation's budget is spent: the trial is not run.
    Spent(TestOutcome),
}

impl Budgets {
    pub(super) fn new(budget: Duration) -> Budgets {
        Budgets {
            budget,
            state: Mutex::new(State::default()),
        }
    }

    fn grace(state: &State) -> Duration {
        let known = state.grace.unwrap_or(GRACE_FLOOR);
        if state.durations.len() < MIN_SAMPLES {
            known.max(STARTUP_GRACE)
        } else {
            known
        }
    }

    /// Trial `id` of implementation `group` is about to run in `dir`.
    pub(super) fn start(&self, group: &str, id: usize, dir: PathBuf, ticks: u64) -> Start {
        let mut state = self.state.lock().unwrap();
        let g = state.groups.entry(group.to_string()).or_default();
        if g.over_at.is_some() {
            return Start::Spent(self.not_run());
        }
        g.running.push(Running {
            id,
            started: Instant::now(),
            dir,
            ticks,
            cage: None,
            spinning_since: None,
        });
        Start::Go
    }

    /// Trial `id` of `group` runs its implementation in the memory cgroup
    /// `cgroup`: its processor time counts (`sample`).
    pub(super) fn caged(&self, group: &str, id: usize, cgroup: &Path) {
        let mut state = self.state.lock().unwrap();
        if let Some(g) = state.groups.get_mut(group)
            && let Some(r) = g.running.iter_mut().find(|r| r.id == id)
        {
            r.cage = Some(cgroup.to_path_buf());
        }
    }

    /// A trial ended having used `cpu` of the processor, all its
    /// processes together.
    pub(super) fn used(&self, cpu: Duration) {
        let mut state = self.state.lock().unwrap();
        state.cpus.push(cpu);
        let n = state.cpus.len();
        if n.is_power_of_two() || n.is_multiple_of(64) {
            let mut sorted = state.cpus.clone();
            let (_, median, _) = sorted.select_nth_unstable(n / 2);
            state.cpu_grace = Some((*median * GRACE_FACTOR).max(CPU_GRACE));
        }
    }

    /// Looks at the processor time of the running trials' implementations
    /// (those past `CPU_LOOK_AFTER`, not yet found spinning): those past
    /// the processor grace (`CPU_GRACE`, or ten times the run's median
    /// trial) count as slow from now on.
    pub(super) fn sample(&self) {
        let now = Instant::now();
        let (due, grace): (Vec<(String, usize, PathBuf)>, Duration) = {
            let state = self.state.lock().unwrap();
            let grace = state.cpu_grace.unwrap_or(CPU_GRACE);
            let due = state
                .groups
                .iter()
                .flat_map(|(name, g)| g.running.iter().map(move |r| (name, r)))
                .filter(|(_, r)| r.spinning_since.is_none() && now - r.started >= CPU_LOOK_AFTER)
                .filter_map(|(name, r)| Some((name.clone(), r.id, r.cage.clone()?)))
                .collect();
            (due, grace)
        };
        let spinning: Vec<(String, usize)> = due
            .into_iter()
            .filter(|(_, _, cage)| processor_time(cage) >= grace)
            .map(|(name, id, _)| (name, id))
            .collect();
        if spinning.is_empty() {
            return;
        }
        let mut state = self.state.lock().unwrap();
        for (name, id) in spinning {
            if let Some(g) = state.groups.get_mut(&name)
                && let Some(r) = g.running.iter_mut().find(|r| r.id == id)
            {
                r.spinning_since.get_or_insert(now);
            }
        }
    }

    /// Trial `id` of `group` ended after `took` with `outcome`: the outcome to
    /// report (the budget's reason if the budget stopped it).
    pub(super) fn end(
        &self,
        group: &str,
        id: usize,
        took: Duration,
        outcome: TestOutcome,
    ) -> TestOutcome {
        let mut state = self.state.lock().unwrap();
        state.durations.push(took);
        let n = state.durations.len();
        if n.is_power_of_two() || n.is_multiple_of(64) {
            let mut sorted = state.durations.clone();
            let (_, median, _) = sorted.select_nth_unstable(n / 2);
            state.grace = Some((*median * GRACE_FACTOR).max(GRACE_FLOOR));
        }
        let grace = Self::grace(&state);
        let budget = self.budget;
        let g = state.groups.entry(group.to_string()).or_default();
        // Its grace: the run's, or less if it was found spinning before.
        let grace = g
            .running
            .iter()
            .find(|r| r.id == id)
            .and_then(|r| r.spinning_since.map(|s| s - r.started))
            .map_or(grace, |spinning| spinning.min(grace));
        g.running.retain(|r| r.id != id);
        // Only a test stopped by its limit spent its time hanging; one that
        // ended on its own spends nothing, however slow.
        if took > grace && matches!(outcome, TestOutcome::TimedOut { .. }) {
            g.spent += took - grace;
        }
        match g.over_at {
            // A test that ended on its own keeps its verdict; one that was
            // still running when the budget ran out was stopped by it.
            Some(over) if !outcome.passed() && Instant::now() >= over => TestOutcome::OverBudget {
                budget_secs: budget.as_secs_f64(),
                stopped_after_secs: Some(took.as_secs_f64()),
            },
            _ => outcome,
        }
    }

    fn not_run(&self) -> TestOutcome {
        TestOutcome::OverBudget {
            budget_secs: self.budget.as_secs_f64(),
            stopped_after_secs: None,
        }
    }

    /// How many trials are running past the grace: slow, most likely
    /// hanging, and no longer counted among the trials that run at once
    /// (`Runner::run` starts others beside them, up to as many again).
    pub(super) fn slow(&self) -> usize {
        let state = self.state.lock().unwrap();
        let grace = Self::grace(&state);
        let now = Instant::now();
        state
            .groups
            .values()
            .flat_map(|g| &g.running)
            .filter(|r| r.slow_from(grace, now).is_some())
            .count()
    }

    /// Looks at every implementation's running trials: the trials of one
    /// whose budget has just run out are returned, to be killed.
    pub(super) fn overrun(&self) -> Vec<(PathBuf, u64)> {
        let mut state = self.state.lock().unwrap();
        let grace = Self::grace(&state);
        let now = Instant::now();
        let mut kill = Vec::new();
        for g in state.groups.values_mut() {
            if g.over_at.is_some() {
                continue;
            }
            let running: Duration = g
                .running
                .iter()
                .filter_map(|r| r.slow_from(grace, now))
                .map(|from| now - from)
                .sum();
            if g.spent + running >= self.budget {
                g.over_at = Some(now);
                kill.extend(g.running.iter().map(|r| (r.dir.clone(), r.ticks)));
            }
        }
        kill
    }
}

/// The processor time the processes of the cgroup `dir` have used, their
/// reaped children's included (a process that is gone by now is not).
fn processor_time(dir: &Path) -> Duration {
    // SAFETY: a plain query.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    let ticks: u64 = procs
        .lines()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).ok())
        .map(|stat| {
            // utime, stime, cutime, cstime: fields 14 to 17, the 12th to the
            // 15th after the name (which is in parentheses).
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after
                .split_whitespace()
                .skip(11)
                .take(4)
                .filter_map(|f| f.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum();
    Duration::from_millis(ticks * 1000 / hz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_tests_that_end_on_their_own_spend_nothing_and_timeouts_their_excess() {
        let budgets = Budgets::new(Duration::from_secs(15));
        for id in 0..1000 {
            budgets.end("quick", id, Duration::from_millis(50), TestOutcome::Passed);
        }
        // A step not started: every test panics slowly (3 s on a loaded
        // machine), and ends on its own.
        let not_started = TestOutcome::Failed {
            kind: crate::engine::outcome::FailureKind::NotStarted,
            message: "not yet implemented".into(),
        };
        for id in 1000..1100 {
            let outcome = budgets.end("todo", id, Duration::from_secs(3), not_started.clone());
            assert_eq!(outcome, not_started);
        }
        // A test at its 10 s limit spent what it ran past the 1 s grace.
        budgets.end(
            "todo",
            2000,
            Duration::from_secs(10),
            TestOutcome::TimedOut { limit_secs: 10.0 },
        );
        let state = budgets.state.lock().unwrap();
        assert_eq!(state.groups["todo"].spent, Duration::from_secs(9));
        assert!(state.groups["todo"].over_at.is_none());
    }

    #[test]
    fn a_slow_start_spends_nothing_before_the_run_has_a_median() {
        // A loaded machine: eight trials at once, none ended yet, each past
        // the 1 s floor. With a tiny budget they would be killed at once if
        // the floor were the grace; they are not, until the startup grace.
        let budgets = Budgets::new(Duration::from_millis(100));
        for id in 0..8 {
            assert!(matches!(
                budgets.start("correct", id, PathBuf::from(format!("/t/{id}")), 0),
                Start::Go
            ));
        }
        std::thread::sleep(Duration::from_millis(1100));
        assert!(budgets.overrun().is_empty(), "no median yet: 5 s of grace");
        // Ended slowly, they do not count either; once the run has its
        // median, the grace is the median's (here the 1 s floor).
        for id in 0..8 {
            let outcome = budgets.end(
                "correct",
                id,
                Duration::from_millis(1100),
                TestOutcome::Passed,
            );
            assert!(outcome.passed());
        }
        for id in 8..32 {
            budgets.end("other", id, Duration::from_millis(50), TestOutcome::Passed);
        }
        let state = budgets.state.lock().unwrap();
        assert_eq!(state.groups["correct"].spent, Duration::ZERO);
        assert_eq!(Budgets::grace(&state), GRACE_FLOOR);
    }

    #[test]
    fn slow_tests_spend_the_budget_and_quick_ones_never_do() {
        let budgets = Budgets::new(Duration::from_millis(300));
        // Thousands of quick tests cost nothing.
        for id in 0..2000 {
            assert!(matches!(
                budgets.start("quick", id, PathBuf::new(), 0),
                Start::Go
            ));
            let outcome = budgets.end("quick", id, Duration::from_millis(50), TestOutcome::Passed);
            assert!(outcome.passed());
        }
        assert!(budgets.overrun().is_empty());
        // Two slow ones running at once: past the grace (10 x 50 ms, at least
        // 1 s) they spend it together, and both are to be killed.
        for id in [1, 2] {
            assert!(matches!(
                budgets.start("hangs", id, PathBuf::from(format!("/t/{id}")), 0),
                Start::Go
            ));
        }
        std::thread::sleep(Duration::from_millis(600));
        assert!(
            budgets.overrun().is_empty(),
            "within the grace, nothing is spent"
        );
        std::thread::sleep(Duration::from_millis(600));
        let kill = budgets.overrun();
        assert_eq!(kill.len(), 2, "both past the grace: 2 x 0.2 s > 0.3 s");
        assert!(budgets.overrun().is_empty(), "killed once");
        let stopped = budgets.end(
            "hangs",
            1,
            Duration::from_millis(1200),
            TestOutcome::TimedOut { limit_secs: 10.0 },
        );
        assert_eq!(
            stopped,
            TestOutcome::OverBudget {
                budget_secs: 0.3,
                stopped_after_secs: Some(1.2)
            },
            "stopped by the budget, not crashed"
        );
        assert_eq!(
            stopped.message().unwrap(),
            "stopped after 1.2 s: the submission's budget of 0.3 s was spent (--budget)"
        );
        // One that passed as it was killed keeps its verdict.
        assert!(
            budgets
                .end("hangs", 2, Duration::from_millis(1200), TestOutcome::Passed)
                .passed()
        );
        let Start::Spent(not_run) = budgets.start("hangs", 3, PathBuf::new(), 0) else {
            panic!("a spent budget runs nothing more");
        };
        assert_eq!(not_run.label(), "over budget");
        assert_eq!(
            not_run.message().unwrap(),
            "not run: the submission's budget of 0.3 s was spent (--budget)"
        );
        // Another implementation's budget is its own.
        assert!(matches!(
            budgets.start("quick", 9999, PathBuf::new(), 0),
            Start::Go
        ));
    }

    #[test]
    fn a_test_that_spins_is_slow_by_its_processor_time_long_before_its_grace() {
        // A run whose trials take 2 s each: its grace is 20 s of wall time.
        let budgets = Budgets::new(Duration::from_millis(500));
        for id in 0..16 {
            budgets.start("other", id, PathBuf::new(), 0);
            budgets.end("other", id, Duration::from_secs(2), TestOutcome::Passed);
        }
        // Two implementations' cages, as their memory cgroups list them: one
        // spins, one waits.
        let mut spinner = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let mut sleeper = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let cages = tempfile::tempdir().unwrap();
        for (name, child) in [("spins", &spinner), ("waits", &sleeper)] {
            let dir = cages.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("cgroup.procs"), format!("{}\n", child.id())).unwrap();
            budgets.start(name, 100, PathBuf::from(format!("/t/{name}")), 0);
            budgets.caged(name, 100, &dir);
        }
        let started = Instant::now();
        let mut killed = Vec::new();
        while killed.is_empty() && started.elapsed() < Duration::from_secs(15) {
            budgets.sample();
            killed = budgets.overrun();
            std::thread::sleep(Duration::from_millis(50));
        }
        let slow = budgets.slow();
        for child in [&mut spinner, &mut sleeper] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        // The spinner spent its budget once past 0.3 s of processor time,
        // the other waits within its grace (a wall-time grace alone would
        // have seen neither for 20 s).
        assert_eq!(killed, vec![(PathBuf::from("/t/spins"), 0)]);
        assert_eq!(slow, 1);
        let outcome = budgets.end(
            "spins",
            100,
            started.elapsed(),
            TestOutcome::TimedOut { limit_secs: 10.0 },
        );
        assert_eq!(outcome.label(), "over budget");
        assert!(
            budgets
                .end("waits", 100, started.elapsed(), TestOutcome::Passed)
                .passed()
        );
    }

    #[test]
    fn the_processor_grace_is_ten_times_the_runs_median_trial_at_least_its_floor() {
        let budgets = Budgets::new(Duration::from_secs(15));
        for _ in 0..16 {
            budgets.used(Duration::from_millis(5));
        }
        assert_eq!(budgets.state.lock().unwrap().cpu_grace, Some(CPU_GRACE));
        // A Python run: each trial starts an interpreter.
        for _ in 0..48 {
            budgets.used(Duration::from_millis(120));
        }
        assert_eq!(
            budgets.state.lock().unwrap().cpu_grace,
            Some(Duration::from_millis(1200))
        );
    }
}
