//! Scenarios: what the engine runs, one implementation's tests at a time, and
//! what comes of them. The baseline is a scenario like any other, run first.

use std::time::Duration;

use super::outcome::TestOutcome;
use super::runner::TrialResult;
use crate::lab::suite::SuiteTest;

/// One implementation's tests, run as a unit (cargo-mutants' scenario).
#[derive(Debug, Clone)]
pub struct Scenario {
    pub kind: ScenarioKind,
    /// Index into `Request::implementations`.
    pub implementation: usize,
    pub tests: Tests,
}

/// Which tests of the suite a scenario runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tests {
    /// Every test the judge lists (for a learner's tests, only the judge knows).
    All,
    /// These, in this order.
    Only(Vec<SuiteTest>),
}

impl Tests {
    /// The tests to run, given the judge's inventory.
    pub(crate) fn resolve(&self, inventory: &[SuiteTest]) -> Vec<SuiteTest> {
        match self {
            Tests::All => inventory.to_vec(),
            Tests::Only(tests) => tests.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioKind {
    /// The unmutated implementation, every test run twice: a test that passes
    /// once and fails once is flaky. Every other scenario runs only when each
    /// test of the baseline passed at least once, and takes its limits from it.
    Baseline,
    /// Each test once.
    Tests,
}

/// How many times the tests of a scenario run.
impl ScenarioKind {
    pub(super) fn runs(self) -> usize {
        match self {
            ScenarioKind::Baseline => 2,
            ScenarioKind::Tests => 1,
        }
    }
}

/// What became of a scenario.
#[derive(Debug, Clone)]
pub enum ScenarioResult {
    /// Its implementation does not compile (or its program would not start):
    /// the compiler's messages, with the implementation's shown paths.
    Unviable { errors: String },
    /// Not run, because the baseline failed.
    NotRun,
    /// Every test's runs, in the order of the scenario's tests.
    Ran { tests: Vec<TestRuns> },
}

/// One test's runs in a scenario.
#[derive(Debug, Clone)]
pub struct TestRuns {
    pub test: SuiteTest,
    pub(crate) runs: Vec<TrialResult>,
}

impl TestRuns {
    /// Whether it passed every time.
    pub fn passed(&self) -> bool {
        self.runs.iter().all(|r| r.outcome.passed())
    }

    /// Whether it passed once and failed once.
    pub(crate) fn flaky(&self) -> bool {
        let passes = self.runs.iter().filter(|r| r.outcome.passed()).count();
        passes > 0 && passes < self.runs.len()
    }

    /// The outcome of its first run.
    pub fn outcome(&self) -> &TestOutcome {
        &self.runs[0].outcome
    }

    /// Its slowest run.
    pub(crate) fn slowest(&self) -> Duration {
        self.runs
            .iter()
            .map(|r| r.duration)
            .max()
            .unwrap_or_default()
    }
}

impl ScenarioResult {
    /// Whether it ran and every test passed at least once (what a baseline
    /// must do).
    pub(crate) fn passed_at_least_once(&self) -> bool {
        match self {
            ScenarioResult::Ran { tests } => tests
                .iter()
                .all(|t| t.runs.iter().any(|r| r.outcome.passed())),
            _ => false,
        }
    }

    /// The runs of each test, if it ran.
    pub fn tests(&self) -> Option<&[TestRuns]> {
        match self {
            ScenarioResult::Ran { tests } => Some(tests),
            _ => None,
        }
    }
}
