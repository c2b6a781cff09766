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
//! grace. (Counting every slow test's whole time, as this did first, let
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
use std::path::PathBuf;
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
        });
        Start::Go
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
            .filter(|r| now - r.started > grace)
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
                .map(|r| (now - r.started).saturating_sub(grace))
                .sum();
            if g.spent + running >= self.budget {
                g.over_at = Some(now);
                kill.extend(g.running.iter().map(|r| (r.dir.clone(), r.ticks)));
            }
        }
        kill
    }
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
}
