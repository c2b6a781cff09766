//! What a run trusts, in one place: the trust policy. Every choice that keeps
//! untrusted code from deciding its verdict, or from harming the machine, the
//! other implementations or the reports, is a field here. It is fixed per kind
//! of run; front ends pick a kind and never set these one by one.
//!
//! Every trial has two sides (see `bridge`): the suite, in the judge process,
//! and the implementation, in its server process. The implementation is the
//! untrusted side, except under `LearnerTests`: there it is a learner's tests.
//! The implementation is caged in every run, so a learner's code runs under
//! `check` as it will under `grade`. What differs is what untrusted code could
//! do to a neighbour or a verdict.
//!
//! The time-limit policy is here too: how long a test and a build may take.

use std::time::Duration;

/// Who the code under test is, as far as trust goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// The reference and its mutants: an instructor's code (`verify`).
    Instructor,
    /// A learner's implementation, checked on the learner's own machine (`check`).
    Learner,
    /// Submissions graded in CI (`grade`): code from many students, each
    /// untrusted, graded side by side.
    Submissions,
    /// A learner's own tests judged against trusted implementations (`check
    /// --mine`, `grade --tests`): the suite is the untrusted side.
    LearnerTests,
}

/// Who starts the implementation's server for a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Launch {
    /// The judge, on its first call (it is fencelab's code, and it watches the
    /// implementation: how it ended, what it printed, what it left running).
    ByJudge,
    /// The runner, before the judge, telling it which implementation on its
    /// standard input: the judge only gets a socket to connect to.
    ByRunner,
}

/// How implementations share server programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Servers {
    /// One server program hosts them all: one link for the reference and
    /// every mutant.
    Shared,
    /// A server program each: one implementation's code (its constructors
    /// included) never runs in another's process.
    Separate,
}

/// How long each test of a run may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum TestLimit {
    /// The same limit for every test.
    Fixed(Duration),
    /// Each test gets max(floor, factor x its slower baseline run): a hang is
    /// caught quickly, and a slow machine slows the limit down with it.
    FromBaseline { floor: Duration, factor: u32 },
}

/// The time a baseline test gets (or the fixed limit, if longer): a limit
/// meant for mutants must not make the reference's own tests fail.
pub(crate) const BASELINE_LIMIT: Duration = Duration::from_secs(60);
/// The least time a test under a mutant gets, and how many times its slower
/// baseline run it may take.
pub(crate) const LIMIT_FLOOR: Duration = Duration::from_secs(10);
pub(crate) const LIMIT_FACTOR: u32 = 5;
/// A test's time when nothing else decides it.
pub(crate) const DEFAULT_TEST_LIMIT: Duration = Duration::from_secs(10);
/// How much one implementation's confirmations that stop again may spend
/// (`engine::hangs`; `grade --budget`), in what their rules allow: a
/// submission that hangs in every call then costs about 30 s in all, well
/// within PrairieLearn's default of 60 s.
pub(crate) const DEFAULT_BUDGET: Duration = Duration::from_secs(15);
/// How long a build of submissions may take before it is split up.
pub(crate) const DEFAULT_BUILD_LIMIT: Duration = Duration::from_secs(600);

/// Everything a run's trust decides.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub trust: Trust,
    pub(crate) servers: Servers,
    /// How many bytes of a judge's output (each stream) are kept.
    pub judge_output_cap: usize,
    /// Whether to look for processes that escaped a trial's process group
    /// (`setsid`) and kill them; costs a scan of /proc per trial, so the
    /// runner does it only where the cage has no PID namespace (which takes
    /// every process of the trial with it).
    pub hunt_orphans: bool,
    /// The default time limit of a test (`--timeout` replaces it).
    pub(crate) test_limit: TestLimit,
    /// The default time limit of the build (`--build-timeout` replaces it).
    pub build_limit: Option<Duration>,
    /// When the build runs out of time: build each implementation alone, so
    /// that one that makes the compiler loop fails alone, at its own cost.
    pub build_alone_on_timeout: bool,
    /// Whether the judge runs in the cage too (its suite is untrusted).
    pub judge_caged: bool,
    /// Who starts the implementation's server.
    pub(crate) launch: Launch,
    /// Whether trials run in a shuffled order, in randomly named directories,
    /// so that a trial's place in the run says nothing of its implementation.
    pub shuffle: bool,
    /// How much one implementation's confirmations may spend
    /// (`engine::hangs`; `grade --budget`), if there is a bound; a
    /// learner's test's, where the tests are the learner's.
    pub budget: Option<Duration>,
    /// Whether a Python module is imported once in its cage before any
    /// trial, so that one that cannot be is one reason, not a crash per
    /// test (the implementations are a learner's or submissions).
    pub(crate) import_first: bool,
}

impl Policy {
    /// The policy of a kind of run.
    pub const fn of(trust: Trust) -> Policy {
        match trust {
            Trust::Instructor => Policy {
                trust,
                servers: Servers::Shared,
                judge_output_cap: 64 * 1024,
                hunt_orphans: false,
                test_limit: TestLimit::FromBaseline {
                    floor: LIMIT_FLOOR,
                    factor: LIMIT_FACTOR,
                },
                build_limit: None,
                build_alone_on_timeout: false,
                judge_caged: false,
                launch: Launch::ByJudge,
                shuffle: false,
                // An instructor sees every hang confirmed: no budget.
                budget: None,
                import_first: false,
            },
            Trust::Learner => Policy {
                trust,
                servers: Servers::Shared,
                judge_output_cap: 64 * 1024,
                hunt_orphans: false,
                test_limit: TestLimit::Fixed(DEFAULT_TEST_LIMIT),
                build_limit: None,
                build_alone_on_timeout: false,
                judge_caged: false,
                launch: Launch::ByJudge,
                shuffle: false,
                budget: Some(DEFAULT_BUDGET),
                import_first: true,
            },
            Trust::Submissions => Policy {
                trust,
                servers: Servers::Separate,
                judge_output_cap: 16 * 1024,
                hunt_orphans: true,
                test_limit: TestLimit::Fixed(DEFAULT_TEST_LIMIT),
                build_limit: Some(DEFAULT_BUILD_LIMIT),
                build_alone_on_timeout: true,
                judge_caged: false,
                launch: Launch::ByJudge,
                shuffle: false,
                budget: Some(DEFAULT_BUDGET),
                import_first: true,
            },
            Trust::LearnerTests => Policy {
                trust,
                // One program for every implementation: nothing about its
                // program tells a mutant from a wheat.
                servers: Servers::Shared,
                judge_output_cap: 16 * 1024,
                hunt_orphans: true,
                test_limit: TestLimit::Fixed(DEFAULT_TEST_LIMIT),
                build_limit: Some(DEFAULT_BUILD_LIMIT),
                build_alone_on_timeout: false,
                judge_caged: true,
                launch: Launch::ByRunner,
                shuffle: true,
                budget: Some(DEFAULT_BUDGET),
                import_first: false,
            },
        }
    }

    /// This policy with the limits a user gave (`--timeout`, `--build-timeout`).
    pub(crate) fn with_limits(mut self, test: Option<Duration>, build: Option<Duration>) -> Policy {
        if let Some(test) = test {
            self.test_limit = TestLimit::Fixed(test);
        }
        if build.is_some() {
            self.build_limit = build;
        }
        self
    }

    /// This policy with the budget per implementation a user gave (`grade
    /// --budget`).
    pub(crate) fn with_budget(mut self, budget: Option<Duration>) -> Policy {
        if budget.is_some() {
            self.budget = budget;
        }
        self
    }

    /// The limit of a baseline test.
    pub(crate) fn baseline_limit(&self) -> Duration {
        match self.test_limit {
            TestLimit::Fixed(limit) => limit.max(BASELINE_LIMIT),
            TestLimit::FromBaseline { .. } => BASELINE_LIMIT,
        }
    }

    /// The limit of a test whose slower baseline run took `baseline` (if there
    /// was a baseline).
    pub(crate) fn limit_after(&self, baseline: Option<Duration>) -> Duration {
        match self.test_limit {
            TestLimit::Fixed(limit) => limit,
            TestLimit::FromBaseline { floor, factor } => {
                floor.max(baseline.unwrap_or_default() * factor)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_submissions_get_a_server_each_and_their_orphans_hunted() {
        let p = Policy::of(Trust::Submissions);
        assert_eq!(p.servers, Servers::Separate);
        assert!(p.hunt_orphans && p.build_alone_on_timeout);
        assert!(p.judge_output_cap < Policy::of(Trust::Instructor).judge_output_cap);
    }

    #[test]
    fn a_learners_tests_are_caged_and_cannot_tell_the_implementations_apart() {
        let p = Policy::of(Trust::LearnerTests);
        assert!(p.judge_caged && p.hunt_orphans && p.shuffle);
        assert_eq!(p.servers, Servers::Shared);
        assert_eq!(p.launch, Launch::ByRunner);
        for trusted in [Trust::Instructor, Trust::Learner, Trust::Submissions] {
            assert!(!Policy::of(trusted).judge_caged, "{trusted:?}");
        }
    }

    #[test]
    fn limits_follow_the_baseline_unless_fixed_and_the_baseline_keeps_its_own() {
        let verify = Policy::of(Trust::Instructor);
        assert_eq!(
            verify.limit_after(Some(Duration::from_secs(1))),
            LIMIT_FLOOR
        );
        assert_eq!(
            verify.limit_after(Some(Duration::from_secs(3))),
            Duration::from_secs(15)
        );
        let fixed = verify
            .clone()
            .with_limits(Some(Duration::from_secs(2)), None);
        assert_eq!(
            fixed.limit_after(Some(Duration::from_secs(3))),
            Duration::from_secs(2)
        );
        assert_eq!(fixed.baseline_limit(), BASELINE_LIMIT);
        let long = verify.with_limits(Some(Duration::from_secs(120)), None);
        assert_eq!(long.baseline_limit(), Duration::from_secs(120));
    }
}
