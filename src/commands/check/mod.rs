//! `fencelab check`: a learner's progress, step by step. Builds the learner's
//! `src/lib.rs` against the suite with the same engine as `verify` and
//! `grade`, runs the tests (all of them, or one step's), and says per step how
//! many pass or that it is not started yet; for the first step that fails, what
//! its contract asks and what each failing test observed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::engine::builder::{self, Hosting, Implementation};
use crate::engine::outcome::{StepTally, TestOutcome};
use crate::engine::runner::{Runner, Trial};
use crate::engine::scratch::Scratch;
use crate::error::Error;
use crate::lab::suite;
use crate::lab::worksheet::Lang;

/// The time a test gets, unless `--timeout` says otherwise.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(10);

/// What to check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The learner's crate.
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

/// Exit codes of `check`.
pub mod exit {
    /// Every test checked passes.
    pub const ALL_PASS: i32 = 0;
    /// Some test does not pass yet.
    pub const SOME_FAIL: i32 = 1;
    /// The input could not be used.
    pub const UNUSABLE_INPUT: i32 = 2;
    /// The learner's file does not compile.
    pub const DOES_NOT_COMPILE: i32 = 3;
}

/// The learner's file in `dir`.
pub fn learner_file(dir: &Path) -> PathBuf {
    dir.join("src").join("lib.rs")
}

/// The language a learner's crate asked for when it was made
/// (`[package.metadata.fencelab] lang`), if any.
pub fn crate_lang(dir: &Path) -> Option<Lang> {
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
    mut progress: impl FnMut(usize, usize),
) -> Result<Checked, Error> {
    let file = learner_file(&options.dir);
    let source = std::fs::read_to_string(&file).map_err(|e| {
        Error::io("read", &file, e).with_next(
            "run `fencelab check` inside the crate `fencelab new` made, or give its directory: `fencelab check DIR`",
        )
    })?;
    if let Some(step) = options.step
        && !(1..=8).contains(&step)
    {
        return Err(Error::input(format!("--step {step}: the steps are 1 to 8")));
    }
    let implementation = Implementation {
        shown_path: "src/lib.rs".to_string(),
        source,
    };
    let build = builder::build(scratch, &[implementation], None, builder::Servers::Shared)?;
    let (key, server) = match &build.hosting[0] {
        Hosting::Hosted { key, server } => (key.clone(), server.clone()),
        Hosting::Unviable { errors } => {
            return Ok(Checked::DoesNotCompile {
                errors: errors.clone(),
            });
        }
    };
    let tests: Vec<suite::SuiteTest> = suite::tests()
        .into_iter()
        .filter(|t| options.step.is_none_or(|s| s == t.step))
        .collect();
    let limit = options.timeout.unwrap_or(DEFAULT_LIMIT);
    let trials: Vec<Trial> = tests
        .iter()
        .map(|t| Trial {
            server: server.clone(),
            key: key.clone(),
            test: t.name.clone(),
            limit,
        })
        .collect();
    let runner = Runner {
        judge: build.judge,
        jobs: options.jobs,
        output_cap: 64 * 1024,
        hunt_orphans: false,
    };
    let mut outcomes: Vec<Option<TestOutcome>> = vec![None; trials.len()];
    let total = trials.len();
    let mut done = 0;
    runner.run(&trials, |index, result| {
        outcomes[index] = Some(result.outcome);
        done += 1;
        progress(done, total);
    })?;
    let outcomes: Vec<TestOutcome> = outcomes
        .into_iter()
        .map(|o| o.expect("every trial ran"))
        .collect();
    let steps = StepTally::of(tests.iter().zip(&outcomes));
    Ok(Checked::Ran { steps })
}

/// What a failing test observed, read from its message (the suite's `observe`
/// writes `observation:`, `expected:` and `actual:`, a value spanning several
/// lines following on lines indented by four spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// Where in the suite (`tests/behaviour/step4.rs:106:5`).
    pub location: Option<String>,
    pub what: String,
    pub expected: String,
    pub actual: String,
}

impl Observation {
    pub fn parse(message: &str) -> Option<Observation> {
        let location = message
            .lines()
            .find_map(|l| l.strip_prefix("panicked at "))
            .map(|l| l.trim_end_matches(':').to_string());
        let mut lines = message
            .lines()
            .skip_while(|l| !l.starts_with("observation: "))
            .peekable();
        let what = lines.next()?.strip_prefix("observation: ")?.to_string();
        let mut field = |name: &str| -> Option<String> {
            let line = lines.next()?;
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            if !rest.trim().is_empty() {
                return Some(rest.trim().to_string());
            }
            let mut value = Vec::new();
            while let Some(next) = lines.peek().and_then(|l| l.strip_prefix("    ")) {
                value.push(next.to_string());
                lines.next();
            }
            Some(value.join("\n"))
        };
        let expected = field("expected")?;
        let actual = field("actual")?;
        Some(Observation {
            location,
            what,
            expected,
            actual,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observation_reads_back_from_its_message() {
        let message = "panicked at tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)";
        assert_eq!(
            Observation::parse(message),
            Some(Observation {
                location: Some("tests/behaviour/step4.rs:106:5".into()),
                what: "claim at now == until".into(),
                expected: "Ok(Some(2))".into(),
                actual: "Ok(None)".into(),
            })
        );
    }

    #[test]
    fn a_multi_line_value_is_read_whole() {
        let message =
            "observation: state\nexpected:\n    Ok(\n        Some(1),\n    )\nactual: Ok(None)\n";
        let o = Observation::parse(message).unwrap();
        assert_eq!(o.expected, "Ok(\n    Some(1),\n)");
        assert_eq!(o.actual, "Ok(None)");
        assert_eq!(o.location, None);
    }

    #[test]
    fn a_plain_panic_is_no_observation() {
        assert_eq!(
            Observation::parse("panicked at x.rs:1:1:\nsomething else"),
            None
        );
    }
}
