//! The instructor's content (the wheats and the mutants a learner's tests are
//! judged against), checked before it is used, so that a mistake in it is
//! refused with the files named instead of misjudging a learner's tests:
//!
//! - a wheat whose code equals a mutant's is a contradiction (one
//!   implementation cannot be both correct and broken), and a wheat equal to
//!   the reference or a mutant equal to it takes no freedom or breaks nothing;
//!   each is refused. Two equal wheats, or two equal mutants, are harmless:
//!   the engine hosts equal sources once and runs each scenario on its own.
//! - every wheat must pass fencelab's own suite, as the reference does; one
//!   that fails would make each learner test that agrees with the suite look
//!   invalid. A wheat's pass is remembered in the scratch workspace, by its
//!   code and the suite's sources (`verify` records the shipped ones too), so
//!   the suite runs on a wheat once, not at every `check --mine`.

use std::path::{Path, PathBuf};

use super::Judges;
use crate::engine::builder::Implementation;
use crate::engine::policy::{Policy, Trust};
use crate::engine::scratch::{Scratch, hash_of};
use crate::engine::{self, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use crate::error::Error;
use crate::lab::mutant::{self, Mutant};
use crate::lab::observation::Observation;
use crate::lab::reference::DEFAULT_FILE;
use crate::lab::suite::SuiteFiles;
use crate::lab::wheat::{Wheat, Wheats};
use crate::output::paths::shown_path;
use crate::output::printer::indent;
use crate::output::progress::Progress;
use crate::output::width::{terminal_width, truncate, wrap};

/// A wheat's code, or why it has none.
pub(crate) fn wheat_code(wheat: &Wheat, reference: &str) -> Result<String, Error> {
    wheat.code(reference).map_err(|stale| {
        Error::input(format!(
            "{}: {}",
            shown(&wheat.path),
            stale.describe(Path::new(DEFAULT_FILE))
        ))
        .with_next("fix the wheat's `find` text so that it occurs exactly once in the reference")
    })
}

/// Refuses the contradictions among `judges` (see the module's header); returns
/// each wheat's code.
pub(crate) fn contradictions(judges: &Judges) -> Result<Vec<String>, Error> {
    let reference = &judges.reference;
    let codes: Vec<String> = judges
        .wheats
        .wheats
        .iter()
        .map(|w| wheat_code(w, reference))
        .collect::<Result<_, _>>()?;
    let fix = "change or remove one of the two files, then run again";
    for m in &judges.mutants {
        let Ok(code) = m.apply(reference) else {
            continue;
        };
        if code == *reference {
            return Err(Error::input(format!(
                "{}: the mutant changes nothing (its code is the reference's), so no test can \
                 catch it",
                mutant_named(m)
            ))
            .with_next("make `replace` differ from `find`, or remove the mutant"));
        }
        if let Some(w) = codes.iter().position(|c| *c == code) {
            return Err(Error::input(format!(
                "{} and {} are the same implementation: a wheat is correct and a mutant is \
                 broken, so one of them is wrong",
                wheat_named(&judges.wheats.wheats[w]),
                mutant_named(m)
            ))
            .with_next(fix));
        }
    }
    for (wheat, code) in judges.wheats.wheats.iter().zip(&codes) {
        if code == reference {
            return Err(Error::input(format!(
                "{}: the wheat is the reference itself, so it takes none of the freedoms it names",
                wheat_named(wheat)
            ))
            .with_next("make the wheat differ from the reference where it takes its freedoms"));
        }
    }
    Ok(codes)
}

/// Checks `judges` before a learner's tests are judged against them: the
/// contradictions first, then every wheat not yet known to pass fencelab's
/// own suite is run through it (`progress` sees the trials), and one that
/// fails is refused with its failing tests.
pub(crate) fn check(
    judges: &Judges,
    scratch: &Scratch,
    jobs: usize,
    progress: &mut dyn Progress,
) -> Result<(), Error> {
    let codes = contradictions(judges)?;
    let suite = SuiteFiles::builtin();
    let unchecked: Vec<usize> = (0..codes.len())
        .filter(|&w| !passed(scratch, &suite, &codes[w]))
        .collect();
    if unchecked.is_empty() {
        return Ok(());
    }
    let request = Request {
        policy: Policy::of(Trust::Instructor),
        suite: suite.clone(),
        implementations: unchecked
            .iter()
            .map(|&w| Implementation {
                shown_path: shown(&wheat_source_path(&judges.wheats.wheats[w], judges.python)),
                source: codes[w].clone(),
            })
            .collect(),
        scenarios: (0..unchecked.len())
            .map(|implementation| Scenario {
                kind: ScenarioKind::Tests,
                implementation,
                tests: Tests::All,
            })
            .collect(),
        jobs,
    };
    let run = engine::run(scratch, &request, &mut |event| progress.engine(&event))?;
    let mut refusals = Vec::new();
    for (&w, result) in unchecked.iter().zip(&run.results) {
        let wheat = &judges.wheats.wheats[w];
        match failures(result) {
            Ok(()) => record_pass(scratch, &suite, &codes[w]),
            Err(why) => refusals.push(format!("{} is not correct: {why}", wheat_named(wheat))),
        }
    }
    if refusals.is_empty() {
        return Ok(());
    }
    Err(Error::input(refusals.join("\n"))
        .with_next("fix or remove the wheat: like the reference, a wheat passes every test"))
}

/// Why a wheat's run through the suite is not a pass, if it is not: the
/// compiler's messages, or its failing tests (each with the first line of
/// what it observed).
pub(crate) fn failures(result: &ScenarioResult) -> Result<(), String> {
    match result {
        ScenarioResult::Unviable { errors } => Err(format!("it does not compile:\n{errors}")),
        ScenarioResult::NotRun => Err("it was not run".to_string()),
        ScenarioResult::Ran { tests } => {
            let failing: Vec<String> = tests
                .iter()
                .filter(|t| !t.passed())
                .map(|t| {
                    let said = in_one_line(&t.outcome().message().unwrap_or_default());
                    let width = terminal_width().saturating_sub(4).max(40);
                    format!("  {}\n{}", t.test.name, indent(&wrap(&said, width), 4))
                })
                .collect();
            if failing.is_empty() {
                return Ok(());
            }
            Err(format!(
                "it fails {} of the suite's tests:\n{}",
                failing.len(),
                failing.join("\n")
            ))
        }
    }
}

/// A failing test's message in one line: what it observed, and expected
/// beside actual when each is short; else its first line that is not where
/// the judge panicked.
fn in_one_line(message: &str) -> String {
    if let Some(o) = Observation::parse(message) {
        let short = |v: &str| (!v.contains('\n')).then(|| truncate(v, 40));
        return match (short(&o.expected), short(&o.actual)) {
            (Some(expected), Some(actual)) => {
                format!("{}: expected {expected}, actual {actual}", o.what)
            }
            _ => o.what,
        };
    }
    message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("panicked at "))
        .unwrap_or_default()
        .to_string()
}

/// Where a wheat's code is, to name in compiler messages: its own `.rs`, or
/// the reference it changes; a Python wheat's is named as a `.py` file
/// whichever it is (the extension is what hosts it in Python).
fn wheat_source_path(wheat: &Wheat, python: bool) -> PathBuf {
    match wheat.source {
        _ if python => wheat.path.with_extension("py"),
        crate::lab::wheat::WheatSource::File(_) => wheat.path.with_extension("rs"),
        crate::lab::wheat::WheatSource::Change { .. } => wheat.path.clone(),
    }
}

fn shown(path: &Path) -> String {
    shown_path(path, &std::env::current_dir().unwrap_or_default())
}

/// A mutant as an instructor finds it: its file, or, for one of fencelab's
/// own (whose file is in fencelab's sources, not beside the user), its id.
fn mutant_named(m: &Mutant) -> String {
    let own = (mutant::builtin().iter())
        .chain(crate::lab::python::mutants().iter())
        .any(|b| b.path == m.path && b.find == m.find && b.replace == m.replace);
    if own {
        format!("fencelab's built-in mutant {} ({})", m.id, shown(&m.path))
    } else {
        shown(&m.path)
    }
}

/// A wheat as an instructor finds it (see `mutant_named`).
fn wheat_named(w: &Wheat) -> String {
    let own = (Wheats::builtin().wheats.iter())
        .chain(Wheats::builtin_python().wheats.iter())
        .any(|b| b.path == w.path && b.source == w.source);
    if own {
        format!("fencelab's built-in wheat {} ({})", w.id, shown(&w.path))
    } else {
        shown(&w.path)
    }
}

/// Where a wheat that passed the suite is remembered: a file named by its
/// code and the suite's sources.
fn record(scratch: &Scratch, suite: &SuiteFiles, code: &str) -> PathBuf {
    let key = hash_of(
        [env!("CARGO_PKG_VERSION"), suite.binding.as_str(), code]
            .into_iter()
            .chain(
                suite
                    .files
                    .iter()
                    .flat_map(|(p, c)| [p.as_str(), c.as_str()]),
            ),
    );
    scratch.records_dir().join(format!("wheat-passed-{key}"))
}

/// Whether the wheat with `code` is known to pass `suite`.
pub(crate) fn passed(scratch: &Scratch, suite: &SuiteFiles, code: &str) -> bool {
    record(scratch, suite, code).is_file()
}

/// Remembers that the wheat with `code` passed `suite` (best effort: without
/// the record it is run again next time).
pub(crate) fn record_pass(scratch: &Scratch, suite: &SuiteFiles, code: &str) {
    let path = record(scratch, suite, code);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(path, "");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::reference::REFERENCE;

    fn builtin() -> Judges {
        Judges {
            reference: REFERENCE.to_string(),
            wheats: Wheats::builtin(),
            mutants: mutant::builtin(),
            python: false,
        }
    }

    #[test]
    fn the_shipped_python_content_has_no_contradiction() {
        contradictions(&Judges::load_python(None, None).unwrap()).unwrap();
    }

    #[test]
    fn the_shipped_content_has_no_contradiction() {
        contradictions(&builtin()).unwrap();
    }

    #[test]
    fn a_wheat_equal_to_a_mutant_is_refused_naming_both_files() {
        let mut judges = builtin();
        let m = judges.mutants[3].clone();
        let wheat = &mut judges.wheats.wheats[0];
        wheat.source = crate::lab::wheat::WheatSource::Change {
            find: m.find.clone(),
            replace: m.replace.clone(),
        };
        let wheat_path = shown(&wheat.path);
        let err = contradictions(&judges).unwrap_err();
        assert_eq!(err.exit_code(), crate::exit::ExitCode::UnusableInput);
        assert!(err.message.contains(&wheat_path), "{}", err.message);
        assert!(
            err.message
                .contains(&format!("built-in mutant {} ({})", m.id, shown(&m.path))),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("same implementation"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_mutant_or_a_wheat_equal_to_the_reference_is_refused() {
        let mut judges = builtin();
        judges.mutants[0].replace = judges.mutants[0].find.clone();
        let err = contradictions(&judges).unwrap_err();
        assert!(err.message.contains("changes nothing"), "{}", err.message);
        let mut judges = builtin();
        judges.wheats.wheats[1].source = crate::lab::wheat::WheatSource::File(REFERENCE.into());
        let err = contradictions(&judges).unwrap_err();
        assert!(
            err.message.contains("the reference itself"),
            "{}",
            err.message
        );
    }
}
