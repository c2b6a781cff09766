//! `fencelab check`: a learner's progress, step by step. Builds the learner's
//! `src/lib.rs` (in a Python lab, hosts its `lease.py`: `lab::edition` says
//! which) against the suite with the same engine as `verify` and `grade`,
//! runs the tests (all of them, or one step's), and says per step how many
//! pass or that it is not started yet; for the first step that fails, what
//! its contract asks and what each failing test observed.

pub(crate) mod cli;
pub(crate) mod github;
pub(crate) mod hint;
pub(crate) mod mine;
mod mine_render;
mod render;
pub(crate) mod watch;

pub use mine_render::render_mine;
pub use render::{render_check, render_check_of};

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::engine::builder::Implementation;
use crate::engine::outcome::StepTally;
use crate::engine::policy::{Policy, Trust};
use crate::engine::scratch::Scratch;
use crate::engine::{self, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use crate::error::Error;
use crate::lab::edition::Edition;
use crate::lab::suite;
use crate::lab::suite::SuiteFiles;
use crate::lab::worksheet::Lang;
use crate::output::progress::Progress;

/// What to check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The learner's lab (a crate, or a Python lab's directory; which one,
    /// `lab::edition::of` says).
    pub dir: PathBuf,
    /// Only this step's tests.
    pub step: Option<u32>,
    pub timeout: Option<Duration>,
    pub jobs: usize,
}

/// What `check` found.
#[derive(Debug, Clone)]
pub enum Checked {
    /// The learner's file does not compile: the compiler's messages, with paths
    /// relative to the learner's crate.
    DoesNotCompile { errors: String },
    /// Per step (only the asked step with `--step`).
    Ran { steps: Vec<StepTally> },
}

impl Checked {
    /// The first step with a test that did not pass.
    pub fn first_failing(&self) -> Option<&StepTally> {
        match self {
            Checked::Ran { steps } => steps.iter().find(|s| !s.complete()),
            Checked::DoesNotCompile { .. } => None,
        }
    }
}

/// What to do when `check` is not run in a lab crate.
const NOT_A_LAB: &str = "run `fencelab check` inside the crate `fencelab new` made, or give its directory: `fencelab check DIR` (a new one: `fencelab new my-lab`)";

/// What to do when `check` is not run in a Python lab.
const NOT_A_PYTHON_LAB: &str = "run `fencelab check` inside the directory `fencelab new --python` made, or give its directory: `fencelab check DIR` (a new one: `fencelab new my-lab --python`)";

/// The learner's file in the lab `dir` of `edition`.
pub(crate) fn learner_file_of(dir: &Path, edition: Edition) -> PathBuf {
    dir.join(edition.learner_file())
}

/// The language a learner's crate asked for when it was made
/// (`[package.metadata.fencelab] lang`), if any.
pub(crate) fn crate_lang(dir: &Path) -> Option<Lang> {
    let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()?
        .parse()
        .ok()?;
    let lang = manifest
        .get("package")?
        .get("metadata")?
        .get("fencelab")?
        .get("lang")?
        .as_str()?;
    lang.parse().ok()
}

/// Builds and runs the learner's crate.
pub fn run(
    options: &Options,
    scratch: &Scratch,
    progress: &mut dyn Progress,
) -> Result<Checked, Error> {
    let edition = crate::lab::edition::of(&options.dir)?;
    let file = learner_file_of(&options.dir, edition);
    let (not_a_lab, what) = match edition {
        Edition::Rust => (NOT_A_LAB, "lab crate"),
        Edition::Python => (NOT_A_PYTHON_LAB, "Python lab"),
    };
    let source = std::fs::read_to_string(&file)
        .map_err(|e| Error::io("read", &file, e).with_next(not_a_lab))?;
    // The same check as `grade`'s, before anything is built: a crate that is
    // not a lab gets one sentence, not pages of compiler errors.
    let missing = match edition {
        Edition::Rust => crate::lab::api::missing_api(&source),
        Edition::Python => crate::lab::python::missing_api(&source)
            .into_iter()
            .map(str::to_string)
            .collect(),
    };
    if !missing.is_empty() {
        return Err(Error::input(format!(
            "{} does not have the contract's API, so this is not a {what}: missing {}",
            file.display(),
            missing.join(", ")
        ))
        .with_next(not_a_lab));
    }
    if let Some(step) = options.step
        && !(1..=8).contains(&step)
    {
        return Err(Error::input(format!("--step {step}: the steps are 1 to 8")));
    }
    let tests: Vec<suite::SuiteTest> = suite::tests()
        .into_iter()
        .filter(|t| options.step.is_none_or(|s| s == t.step))
        .collect();
    let request = Request {
        suite: SuiteFiles::builtin(),
        policy: Policy::of(Trust::Learner).with_limits(options.timeout, None),
        implementations: vec![Implementation {
            shown_path: edition.learner_file().to_string(),
            source,
        }],
        scenarios: vec![Scenario {
            kind: ScenarioKind::Tests,
            implementation: 0,
            tests: Tests::Only(tests),
        }],
        jobs: options.jobs,
    };
    let run = engine::run(scratch, &request, &mut |event| progress.engine(&event))?;
    match &run.results[0] {
        ScenarioResult::Unviable { errors } => Ok(Checked::DoesNotCompile {
            errors: errors.clone(),
        }),
        ran => {
            let tests = ran.tests().unwrap_or_default();
            let steps = StepTally::of(tests.iter().map(|t| (&t.test, t.outcome())));
            Ok(Checked::Ran { steps })
        }
    }
}
