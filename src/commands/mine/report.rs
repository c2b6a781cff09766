//! What judging a learner's tests found, as `--json` writes it: each test's
//! validity (and, when invalid, where and why), and per step the mutants the
//! valid tests catch and those they miss.

use serde::Serialize;

use crate::commands::predict::ObservationKind;
use crate::exit::ExitCode;
use crate::lab::lang::Text;

/// The whole judgement of one learner's tests.
#[derive(Debug, Clone, Serialize)]
pub struct TestsReport {
    /// The version of this schema.
    pub schema: u32,
    /// The tests' path as given, and the root file.
    pub name: String,
    pub file: String,
    /// The compiler's messages, when the tests do not compile.
    pub compile_errors: Option<String>,
    pub tests: Vec<JudgedTest>,
    /// Every test is valid.
    pub valid: bool,
    /// Per step of the worksheet: the mutants of the step caught.
    pub steps: Vec<StepThoroughness>,
    /// Thoroughness, 0 to 100, from valid tests only; each step weighs the same.
    pub score: f64,
    /// How many correct implementations each test ran against (the reference
    /// twice, and the wheats), and how many mutants.
    pub correct_implementations: usize,
    pub mutants: usize,
    pub exit_code: ExitCode,
}

/// One of the learner's tests, judged.
#[derive(Debug, Clone, Serialize)]
pub struct JudgedTest {
    pub test: String,
    /// Passed on every correct implementation.
    pub valid: bool,
    /// The correct implementations it failed on, with what it said.
    pub wrong_on: Vec<WrongOn>,
    /// The freedoms it most likely assumed (ids of the wheats' catalogue).
    pub assumed: Vec<String>,
    /// The mutants whose behaviour it expects (it failed on the reference and
    /// passed on them): the misunderstanding it was most likely written from.
    pub misconceptions: Vec<String>,
    /// The mutants it catches (counted only when it is valid).
    pub catches: Vec<String>,
}

/// A correct implementation a test failed on.
#[derive(Debug, Clone, Serialize)]
pub struct WrongOn {
    /// `reference`, or the wheat's id.
    pub implementation: String,
    pub title: Text,
    /// `failed`, `crashed`, `timeout`.
    pub outcome: &'static str,
    /// The test's own message.
    pub message: String,
}

/// One step's mutants, and which the valid tests catch.
#[derive(Debug, Clone, Serialize)]
pub struct StepThoroughness {
    pub step: u32,
    pub slug: &'static str,
    pub caught: usize,
    pub total: usize,
    /// The ids of the mutants caught.
    pub caught_mutants: Vec<String>,
    pub missed: Vec<MissedMutant>,
}

/// A mutant no valid test catches.
#[derive(Debug, Clone, Serialize)]
pub struct MissedMutant {
    pub id: String,
    pub title: Text,
    /// What kind of observation exposes it (from the tests of fencelab's own
    /// suite that kill it), if known.
    pub observation: Option<ObservationKind>,
}

impl TestsReport {
    /// The exit code of `check --mine`: every test valid and every mutant
    /// caught, or not; tests that do not compile cannot be judged.
    pub fn exit(&self) -> ExitCode {
        if self.compile_errors.is_some() {
            ExitCode::NotJudgeable
        } else if self.valid && self.steps.iter().all(|s| s.caught == s.total) {
            ExitCode::Success
        } else {
            ExitCode::Failed
        }
    }
}
