//! `verify` in GitHub Actions (`--github`, or `GITHUB_ACTIONS=true`): an
//! error annotation per mutant not killed as declared, at the lines of the
//! implementation its `find` text covers (a stale mutant's at its own file's
//! `find` line), and a Markdown summary per step for the job's page.

use std::fmt::Write as _;

use crate::commands::verify::{MutantReport, Report};
use crate::engine::outcome::{MutantOutcome, TestOutcome};
use crate::lab::mutant::Mutant;
use crate::lab::suite;
use crate::output::github::{Annotation, Level, cell};

/// The line of `find =` in a mutant's file, if it can be read.
fn find_line(path: &str) -> usize {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            text.lines()
                .position(|l| l.trim_start().starts_with("find"))
                .map(|i| i + 1)
        })
        .unwrap_or(1)
}

fn why(m: &MutantReport) -> String {
    let mut lines = vec![format!("{}: {}", m.outcome.label(), m.title)];
    if !m.missing_killers.is_empty() {
        lines.push(format!(
            "declared killers that did not fail: {}",
            m.missing_killers.join(", ")
        ));
    }
    if !m.failed_survivors.is_empty() {
        lines.push(format!(
            "declared survivors that failed: {}",
            m.failed_survivors.join(", ")
        ));
    }
    if let Some(detail) = &m.detail {
        lines.extend(detail.lines().take(6).map(str::to_string));
    }
    lines.push(format!(
        "mutant file: {}; rerun: fencelab verify --exact {}",
        m.path, m.id
    ));
    lines.join("\n")
}

/// The annotations for `report`.
pub fn annotations(report: &Report, mutants: &[Mutant]) -> Vec<Annotation> {
    let mut out = Vec::new();
    if !report.baseline.passed {
        let failing: Vec<&str> = report
            .baseline
            .tests
            .iter()
            .filter(|t| t.runs.iter().all(|r| !r.passed()))
            .map(|t| t.test.as_str())
            .collect();
        let message = match &report.baseline.compile_errors {
            Some(errors) => format!("the implementation does not compile:\n{errors}"),
            None => format!(
                "the unmutated implementation fails {} test(s) of the suite: {}",
                failing.len(),
                failing.join(", ")
            ),
        };
        out.push(
            Annotation::new(
                Level::Error,
                "fencelab verify: the baseline failed",
                message,
            )
            .at(&report.file, 1),
        );
        return out;
    }
    for m in report.mutants.iter().filter(|m| !m.as_declared) {
        let title = format!("mutant {} {} (step {})", m.id, m.outcome.label(), m.step);
        let annotation = Annotation::new(Level::Error, title, why(m));
        let span = mutants
            .iter()
            .find(|x| x.id == m.id)
            .and_then(|x| x.span(&report.source));
        let annotation = match (m.outcome, span) {
            (MutantOutcome::Stale, _) | (_, None) => {
                let line = find_line(&m.path);
                annotation.at(&m.path, line)
            }
            (_, Some(span)) => {
                let start = crate::error::Location::at(&report.source, span.start);
                let end = crate::error::Location::at(&report.source, span.end);
                let mut a = annotation.at(&report.file, start.line);
                a.end_line = Some(end.line);
                // GitHub takes columns only within one line.
                if start.line == end.line {
                    a.col = Some(start.column);
                    a.end_column = Some(end.column);
                }
                a
            }
        };
        out.push(annotation);
    }
    out
}

/// The Markdown summary of `report`.
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    let s = &report.summary;
    if !report.baseline.passed {
        let _ = writeln!(
            out,
            "## fencelab verify: the baseline failed ❌\n\n`{}` does not pass its own suite, so no mutant was run.\n",
            report.implementation
        );
        if let Some(errors) = &report.baseline.compile_errors {
            let _ = writeln!(out, "```text\n{}\n```\n", errors.trim_end());
        }
        return out;
    }
    let mark = if s.not_as_declared == 0 { "✅" } else { "❌" };
    let _ = writeln!(
        out,
        "## fencelab verify: {} of {} mutants killed as declared {mark}\n",
        s.as_declared, s.mutants
    );
    let _ = writeln!(
        out,
        "Implementation `{}`, mutants from {}, {} tests.\n",
        report.implementation,
        report.mutants_dir,
        suite::tests().len()
    );
    let labels = [
        "killed", "crashed", "timeout", "survived", "unviable", "stale",
    ];
    let _ = writeln!(
        out,
        "| step | mutants | {} | not as declared |",
        labels.join(" | ")
    );
    let _ = writeln!(out, "|---:|---:|{}---:|", "---:|".repeat(labels.len()));
    let mut steps: Vec<u32> = report.mutants.iter().map(|m| m.step).collect();
    steps.dedup();
    for step in steps {
        let of: Vec<&MutantReport> = report.mutants.iter().filter(|m| m.step == step).collect();
        let counts: Vec<String> = labels
            .iter()
            .map(|l| {
                of.iter()
                    .filter(|m| m.outcome.label() == *l)
                    .count()
                    .to_string()
            })
            .collect();
        let bad = of.iter().filter(|m| !m.as_declared).count();
        let _ = writeln!(
            out,
            "| {step} | {} | {} | {} |",
            of.len(),
            counts.join(" | "),
            if bad == 0 {
                "0".to_string()
            } else {
                format!("**{bad}**")
            }
        );
    }
    let problems: Vec<&MutantReport> = report.mutants.iter().filter(|m| !m.as_declared).collect();
    if !problems.is_empty() {
        let _ = writeln!(
            out,
            "\n### Not killed as declared\n\n| mutant | step | outcome | declared killers that did not fail | declared survivors that failed |\n|---|---:|---|---|---|"
        );
        for m in &problems {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                m.id,
                m.step,
                m.outcome.label(),
                cell(&m.missing_killers.join(", ")),
                cell(&m.failed_survivors.join(", "))
            );
        }
        let ids: Vec<&str> = problems.iter().map(|m| m.id.as_str()).collect();
        let _ = writeln!(
            out,
            "\nRerun them with `fencelab verify --exact {}`.",
            ids.join(" ")
        );
    }
    let idle: Vec<String> = suite::tests()
        .into_iter()
        .filter(|t| {
            !report.mutants.is_empty()
                && report
                    .mutants
                    .iter()
                    .all(|m| m.tests.get(&t.name).is_none_or(TestOutcome::passed))
        })
        .map(|t| format!("`{}`", t.name))
        .collect();
    if !idle.is_empty() {
        let _ = writeln!(
            out,
            "\n### Tests that kill nothing ({})\n\n{}",
            idle.len(),
            idle.join(", ")
        );
    }
    if !report.baseline.flaky.is_empty() {
        let _ = writeln!(
            out,
            "\n⚠️ Flaky in the baseline, not trusted for kills: {}",
            report.baseline.flaky.join(", ")
        );
    }
    out.push('\n');
    out
}
