//! `verify --stryker FILE`: the run as a mutation testing report in the
//! cross-tool schema of Stryker's mutation-testing-elements
//! (`schemas/mutation-testing-report-schema/`, version 3.8.4, schema "2"),
//! which StrykerJS, Stryker.NET, Stryker4s, Infection, pitest's plugin and
//! Mull write and dashboards read.
//!
//! One file (the implementation, with its full source), one entry per mutant:
//! its location is where its `find` text sits in the implementation (1-based,
//! end exclusive), `killedBy` every test that killed it (the full matrix, not
//! the first), `coveredBy` every test that ran against it (verify runs the
//! whole suite on each). `testFiles` has every test of the suite at the line
//! of its `fn`. Nothing here is a scratch path: paths are the project's.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::commands::verify::{MutantReport, Report};
use crate::engine::outcome::MutantOutcome;
use crate::error::Location;
use crate::lab::lang::Lang;
use crate::lab::mutant::Mutant;
use crate::lab::suite;

/// The report's `schemaVersion`: the major version the schema's pattern
/// allows (the npm package's own version, 3.x, is not this).
pub(crate) const SCHEMA_VERSION: &str = "2";

/// What a mutant's outcome is in the schema's `MutantStatus`.
pub(crate) fn status(outcome: MutantOutcome) -> &'static str {
    match outcome {
        MutantOutcome::Killed | MutantOutcome::Crashed => "Killed",
        MutantOutcome::Timeout => "Timeout",
        MutantOutcome::Survived => "Survived",
        MutantOutcome::Unviable => "CompileError",
        MutantOutcome::Stale => "Ignored",
    }
}

/// The schema's `{line, column}`, 1-based, columns in characters.
fn position(at: &Location) -> Value {
    json!({"line": at.line, "column": at.column})
}

/// Where `mutant` sits in `source`: its `find` text when it occurs once;
/// for a stale mutant, the first line it was found on or the line nearest to
/// it, whole (the schema requires a location for every mutant).
pub(crate) fn location(mutant: &Mutant, source: &str) -> (Location, Location) {
    if let Some(span) = mutant.span(source) {
        return (
            Location::at(source, span.start),
            Location::at(source, span.end),
        );
    }
    let line = match mutant.apply(source) {
        Err(stale) => stale.nearest.first().map_or(1, |(line, _)| *line),
        Ok(_) => 1,
    };
    let start = source
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum::<usize>();
    let end = source[start..]
        .find('\n')
        .map_or(source.len(), |n| start + n);
    (Location::at(source, start), Location::at(source, end))
}

/// Why a mutant has its status, in a line or a few: the schema asks for the
/// killing tests' messages for a killed mutant and the error for an error.
fn status_reason(m: &MutantReport) -> String {
    match m.outcome {
        MutantOutcome::Killed | MutantOutcome::Crashed | MutantOutcome::Timeout => m
            .killed_by
            .iter()
            .take(3)
            .map(|k| {
                let first = k
                    .message
                    .lines()
                    .find(|l| !l.trim().is_empty() && !l.starts_with("panicked at"))
                    .unwrap_or(k.outcome);
                format!("{} ({}): {first}", k.test, k.outcome)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        MutantOutcome::Survived => "every test passed".to_string(),
        MutantOutcome::Unviable | MutantOutcome::Stale => m.detail.clone().unwrap_or_default(),
    }
}

/// The report as the schema's JSON value. `mutants` are the ones `report`
/// was run with (for their `find` and `replace`); `lang` picks the language
/// of their titles and explanations.
pub fn report(report: &Report, mutants: &[Mutant], lang: Lang) -> Value {
    let source = &report.source;
    let worksheet = crate::lab::worksheet::SLUGS;
    let entries: Vec<Value> = report
        .mutants
        .iter()
        .filter_map(|m| {
            let mutant = mutants.iter().find(|x| x.id == m.id)?;
            let (start, end) = location(mutant, source);
            let mut entry = json!({
                "id": m.id,
                "mutatorName": format!(
                    "step {} {}",
                    m.step,
                    worksheet.get(m.step as usize - 1).copied().unwrap_or("")
                ),
                "replacement": mutant.replace,
                "description": format!(
                    "{}\n\n{}\n\n({})",
                    mutant.titles.get(lang),
                    mutant.explanation.get(lang),
                    m.path
                ),
                "location": {"start": position(&start), "end": position(&end)},
                "status": status(m.outcome),
                "statusReason": status_reason(m),
            });
            let ran = !m.tests.is_empty();
            if ran {
                entry["killedBy"] = json!(m.killed_by.iter().map(|k| &k.test).collect::<Vec<_>>());
                entry["coveredBy"] = json!(m.tests.keys().collect::<Vec<_>>());
                entry["testsCompleted"] = json!(m.tests.len());
                entry["duration"] = json!((m.secs * 1000.0).round());
            }
            Some(entry)
        })
        .collect();
    let mut test_files: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for l in suite::locations() {
        test_files.entry(l.file.clone()).or_default().push(json!({
            "id": l.test.name,
            "name": l.test.name,
            "location": {"start": {"line": l.line, "column": l.column}},
        }));
    }
    let test_files: serde_json::Map<String, Value> = test_files
        .into_iter()
        .map(|(file, tests)| {
            let source = suite::MODULES
                .iter()
                .find(|(p, _)| format!("tests/{p}") == file)
                .map_or("", |(_, s)| s);
            (file, json!({"source": source, "tests": tests}))
        })
        .collect();
    let build_ms = (report.build_secs * 1000.0).round();
    let baseline_ms = ((report.baseline.secs - report.build_secs).max(0.0) * 1000.0).round();
    let mutation_ms = ((report.secs - report.baseline.secs).max(0.0) * 1000.0).round();
    json!({
        "schemaVersion": SCHEMA_VERSION,
        // Every mutant must be killed as declared: below 100 is not the goal.
        "thresholds": {"high": 100, "low": 80},
        "files": {
            report.file.clone(): {
                "language": "rust",
                "source": source,
                "mutants": entries,
            }
        },
        "testFiles": test_files,
        "framework": {
            "name": "fencelab",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "performance": {"setup": build_ms, "initialRun": baseline_ms, "mutation": mutation_ms},
        "system": {"ci": std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")},
        "config": {
            "mutants": report.mutants_dir,
            "filtered": report.filtered,
            "limit": {
                "fixed_secs": report.limit.fixed_secs,
                "floor_secs": report.limit.floor_secs,
                "factor": report.limit.factor,
            },
        },
    })
}

/// The report as the file `--stryker` writes.
pub(crate) fn render(report: &Report, mutants: &[Mutant], lang: Lang) -> String {
    serde_json::to_string_pretty(&self::report(report, mutants, lang)).expect("JSON serializes")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutant(find: &str) -> Mutant {
        let mut m = crate::lab::mutant::builtin().remove(0);
        m.find = find.to_string();
        m
    }

    #[test]
    fn a_location_is_where_find_sits_end_exclusive() {
        let source = "fn a() {\n    x > y\n}\n";
        let (start, end) = location(&mutant("x > y"), source);
        assert_eq!((start.line, start.column), (2, 5));
        assert_eq!((end.line, end.column), (2, 10));
        let (start, end) = location(&mutant("y\n}"), source);
        assert_eq!((start.line, start.column), (2, 9));
        assert_eq!((end.line, end.column), (3, 2));
        // Characters, not bytes.
        let (start, _) = location(&mutant("b"), "// é\na b");
        assert_eq!((start.line, start.column), (2, 3));
    }

    #[test]
    fn a_stale_mutant_points_at_the_nearest_line() {
        let source = "one\nif until >= now {\nthree\n";
        let (start, end) = location(&mutant("if until > now {"), source);
        assert_eq!((start.line, start.column), (2, 1));
        assert_eq!((end.line, end.column), (2, 18));
    }

    #[test]
    fn outcomes_map_to_the_schemas_statuses() {
        assert_eq!(status(MutantOutcome::Killed), "Killed");
        assert_eq!(status(MutantOutcome::Crashed), "Killed");
        assert_eq!(status(MutantOutcome::Timeout), "Timeout");
        assert_eq!(status(MutantOutcome::Survived), "Survived");
        assert_eq!(status(MutantOutcome::Unviable), "CompileError");
        assert_eq!(status(MutantOutcome::Stale), "Ignored");
    }
}
