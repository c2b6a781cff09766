//! What judging a learner's tests found, as `--json` writes it: each test's
//! validity (and, when invalid, why, from the evidence alone), and per step
//! the mutants the valid tests catch and those they miss.
//!
//! Invariant: everything here follows from the trials' verdicts, and a test
//! whose verdicts do not change between runs gets the same report on every
//! judgement (no field depends on the order trials ran in).

use serde::Serialize;

use crate::exit::ExitCode;
use crate::lab::course::Reveal;
use crate::lab::lang::Text;
use crate::lab::observation::ObservationKind;

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
    /// Thoroughness, 0 to 100, from valid tests only; each step weighs as the
    /// course file says (the same by default).
    pub score: f64,
    /// How many correct implementations each test ran against (each run of
    /// the reference counted, and the wheats), and how many mutants.
    pub correct_implementations: usize,
    /// How many times each test ran on the reference (each run decides
    /// `claim_many`'s race differently). A test that fails on a correct
    /// implementation runs again: once more on each run of the reference and
    /// twice more on each other correct implementation it failed on.
    pub reference_runs: usize,
    pub mutants: usize,
    /// How much it says of the mutants (the course file's `[mine] reveal`).
    pub reveal: Reveal,
    pub exit_code: ExitCode,
}

/// One of the learner's tests, judged.
#[derive(Debug, Clone, Serialize)]
pub struct JudgedTest {
    pub test: String,
    /// Passed on every run of every correct implementation.
    pub valid: bool,
    /// Why it is not valid (absent when it is).
    pub invalid: Option<Invalid>,
    /// The correct implementations it failed on, with what it said: the
    /// reference first, then the single-freedom variants, then the full
    /// wheats. For a racy test, those that gave both verdicts and the variants
    /// that failed it on every run.
    pub wrong_on: Vec<WrongOn>,
    /// The freedoms it assumed: those of the single-freedom variants that fail
    /// it on every run, and no others.
    pub assumed: Vec<String>,
    /// For a test that fails on the reference: the mutants whose behaviour it
    /// expects, best first (at most two: the closest to the reference among
    /// those it passes on; none when it passes on none).
    pub misconceptions: Vec<String>,
    /// The mutants it catches (only for a valid test: an invalid one catches
    /// nothing that counts).
    pub catches: Vec<String>,
}

/// Why a test is not valid, from the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Invalid {
    /// A correct implementation gave it both verdicts across runs: its
    /// verdict depends on a race, not on the contract.
    Racy,
    /// It fails on every run of the reference: it contradicts the contract.
    FailsOnReference,
    /// It fails on a single-freedom variant: it assumed that freedom.
    AssumesAFreedom,
    /// It fails on a full wheat only, on no variant: which of the wheat's
    /// freedoms it assumed is not known.
    FailsOnAFullWheat,
    /// It ends its own process before it reports (`std::process::exit(0)`):
    /// no verdict of it can be read, on any implementation.
    NoVerdict,
}

/// A correct implementation a test failed on.
#[derive(Debug, Clone, Serialize)]
pub struct WrongOn {
    /// `reference`, or the wheat's id.
    pub implementation: String,
    pub title: Text,
    /// `failed`, `crashed`, `timeout`.
    pub outcome: &'static str,
    /// The test's own message (of its first failing run, in the runs' order).
    pub message: String,
    /// How many times it ran there, and how many of those failed.
    pub runs: usize,
    pub failed: usize,
}

impl WrongOn {
    /// It gave both verdicts there.
    pub fn racy(&self) -> bool {
        self.failed < self.runs
    }
}

impl JudgedTest {
    /// Why it is invalid, in a few words (for a line of a grade report).
    pub(crate) fn why(&self) -> String {
        let on = self
            .wrong_on
            .first()
            .map_or("?", |w| w.implementation.as_str());
        match self.invalid {
            None => String::new(),
            Some(Invalid::Racy) => format!("racy on {on}"),
            Some(Invalid::FailsOnReference) => "fails on the reference".to_string(),
            Some(Invalid::AssumesAFreedom) => format!("assumes {}", self.assumed.join(", ")),
            Some(Invalid::FailsOnAFullWheat) => format!("fails on {on}"),
            Some(Invalid::NoVerdict) => "ends its process before its verdict".to_string(),
        }
    }
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
    /// Its change to the reference as a patch, when the course reveals diffs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl TestsReport {
    /// The report as the course lets a learner read it: with `count`, no
    /// mutant named (caught, missed, or the misconception of an invalid
    /// test); with `diffs`, each missed one's change to `reference`.
    pub fn revealing(
        mut self,
        reveal: Reveal,
        mutants: &[crate::lab::mutant::Mutant],
        reference: &str,
    ) -> TestsReport {
        self.reveal = reveal;
        match reveal {
            Reveal::Titles => {}
            Reveal::Count => {
                for st in &mut self.steps {
                    st.missed.clear();
                    st.caught_mutants.clear();
                }
                // A misconception is named by its mutant: kept too.
                for t in &mut self.tests {
                    t.catches.clear();
                    t.misconceptions.clear();
                }
            }
            Reveal::Diffs => {
                for m in self.steps.iter_mut().flat_map(|st| st.missed.iter_mut()) {
                    let mutant = mutants.iter().find(|x| x.id == m.id);
                    m.diff = mutant.and_then(|x| x.apply(reference).ok()).map(|broken| {
                        crate::output::diff::patch(reference, &broken, "reference", &m.id)
                    });
                }
            }
        }
        self
    }

    /// The exit code of `check --mine`: every test valid and every mutant
    /// caught, or not; tests that do not compile cannot be judged.
    pub(crate) fn exit(&self) -> ExitCode {
        if self.compile_errors.is_some() {
            ExitCode::NotJudgeable
        } else if self.valid && self.steps.iter().all(|s| s.caught == s.total) {
            ExitCode::Success
        } else {
            ExitCode::Failed
        }
    }
}
