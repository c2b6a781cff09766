//! The kill matrix of the page: tests by mutants, both grouped by step, each
//! cell one letter for what the test did under the mutant, with the declared
//! killers and survivors marked and the test's observation on hover.

use std::fmt::Write as _;

use super::{Page, escape, first_line, short};
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::lab::suite::SuiteTest;

/// The one-letter mark of a test's outcome under a mutant, and its class.
fn mark(outcome: Option<&TestOutcome>) -> (&'static str, &'static str) {
    match outcome {
        None => ("–", "n"),
        Some(TestOutcome::Passed) => ("·", "p"),
        // Only grade spends budgets; a budget spent is time, as for
        // `MutantOutcome::from_tests`.
        Some(TestOutcome::TimedOut { .. } | TestOutcome::OverBudget { .. }) => ("T", "t"),
        Some(TestOutcome::Failed {
            kind: FailureKind::Crashed,
            ..
        }) => ("C", "c"),
        Some(TestOutcome::Failed { .. }) => ("F", "f"),
    }
}

/// The `<section id="matrix">` of the page.
pub(super) fn write(page: &Page, out: &mut String) {
    let (w, report) = (&page.w, page.report);
    let _ = write!(
        out,
        "<section id=\"matrix\">\n<h2>{}</h2>\n<p class=\"legend\">{} {}</p>\n<div class=\"matrix-wrap\">\n<table class=\"matrix\">\n<thead>\n<tr><th class=\"corner\" rowspan=\"2\">{} \\ {}</th>",
        w.matrix,
        escape(w.legend),
        escape(w.click),
        w.tests,
        w.mutants
    );
    for st in &page.steps {
        let n = report.mutants.iter().filter(|m| m.step == *st).count();
        if n > 0 {
            let _ = write!(
                out,
                "<th class=\"step-head\" colspan=\"{n}\" data-ms=\"{st}\" title=\"{}\">{} {st}</th>",
                escape(&page.step_title(*st)),
                w.step
            );
        }
    }
    out.push_str("</tr>\n<tr>");
    for m in &report.mutants {
        let problem = if m.as_declared { "" } else { " problem" };
        let _ = write!(
            out,
            "<th class=\"mut o-{}{problem}\" data-ms=\"{}\" data-ok=\"{}\" title=\"{} — {} ({})\"><a href=\"#m-{}\"><span>{}</span></a></th>",
            m.outcome.label(),
            m.step,
            m.as_declared,
            escape(&m.id),
            escape(&page.title_of(m)),
            super::super::words::outcome(m.outcome, page.lang),
            escape(&m.id),
            escape(&m.id)
        );
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    let width = report.mutants.len();
    for st in &page.steps {
        let of_step: Vec<&SuiteTest> = page.tests.iter().filter(|t| t.step == *st).collect();
        if of_step.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<tr class=\"step-row\" data-ts=\"{st}\"><th class=\"test\">{} {st} · {}</th><td colspan=\"{width}\"></td></tr>",
            w.step,
            escape(&page.step_title(*st))
        );
        for t in &of_step {
            row(page, t, out);
        }
    }
    let _ = write!(
        out,
        "</tbody>\n</table>\n</div>\n<div id=\"panel\" class=\"panel\" aria-live=\"polite\" hidden></div>\n</section>\n"
    );
}

/// One test's row: its name, then one cell per mutant.
fn row(page: &Page, t: &SuiteTest, out: &mut String) {
    let _ = write!(
        out,
        "<tr data-ts=\"{}\" data-test=\"{}\"><th class=\"test{}\" title=\"{}\">{}</th>",
        t.step,
        escape(&t.name),
        if page.kills_nothing(t) { " idle" } else { "" },
        escape(&t.name),
        escape(short(&t.name))
    );
    for (mi, m) in page.report.mutants.iter().enumerate() {
        let outcome = m.tests.get(&t.name);
        let (letter, class) = mark(outcome);
        let killer = m.killers.contains(&t.name);
        let survivor = m.survivors.contains(&t.name);
        let mut classes = class.to_string();
        if killer {
            classes.push_str(" killer");
            if m.missing_killers.contains(&t.name) {
                classes.push_str(" missing");
            }
        }
        if survivor && m.failed_survivors.contains(&t.name) {
            classes.push_str(" bad-survivor");
        }
        if page.flaky.contains(t.name.as_str()) {
            classes.push_str(" flaky");
        }
        let mut hover = format!(
            "{} × {}: {}",
            m.id,
            short(&t.name),
            outcome.map_or(page.w.not_run, |o| super::super::words::test_outcome(
                o.label(),
                page.lang
            ))
        );
        if killer {
            let _ = write!(hover, " ({})", page.w.declared_killer);
        }
        if let Some(message) = outcome.and_then(TestOutcome::message) {
            let line = first_line(&message);
            if !line.is_empty() {
                let _ = write!(hover, "\n{line}");
            }
        }
        let shown = if killer && m.missing_killers.contains(&t.name) {
            "!"
        } else {
            letter
        };
        let _ = write!(
            out,
            "<td class=\"{classes}\" data-ms=\"{}\" data-m=\"{mi}\" title=\"{}\">{shown}</td>",
            m.step,
            escape(&hover)
        );
    }
    out.push_str("</tr>\n");
}
