//! Why something is not as it should be: a mutant not killed as declared
//! (its diff, what the compiler or the file said, the relevant tests'
//! observations, and what to do next), and a baseline that failed (one line
//! per step not started, the failing tests' observations, a summary last).

use std::fmt::Write as _;

use super::words::{self, words};
use super::{MutantReport, Report};
use crate::engine::outcome::{MutantOutcome, StepTally, TestOutcome};
use crate::lab::lang::Lang;
use crate::lab::suite::SuiteTest;
use crate::lab::worksheet::SLUGS;
use crate::output::observation;
use crate::output::printer::{Layout, indent};
use crate::output::width::{pad_right, wrap};

/// The outcome's label, padded to `width`, coloured by how it went.
pub(super) fn outcome_label(
    layout: &Layout,
    outcome: MutantOutcome,
    as_declared: bool,
    width: usize,
) -> String {
    let label = pad_right(words::outcome(outcome, layout.lang), width);
    match (outcome, as_declared) {
        (_, true) => layout.out.green(&label),
        (MutantOutcome::Survived | MutantOutcome::Stale | MutantOutcome::Unviable, _) => {
            layout.out.red(&label)
        }
        _ => layout.out.yellow(&label),
    }
}

/// How many of a mutant's undeclared killers are shown (the JSON has them all).
const KILLS_SHOWN: usize = 5;

/// Why a mutant was not killed as declared: its diff, what the compiler or
/// the file said, the relevant tests' observations, and the next step.
pub fn render_mutant_details(layout: &Layout, m: &MutantReport) -> String {
    let w = words(layout.lang);
    let s = &layout.out;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} {} {}  {}",
        s.bold("──"),
        s.bold(&m.id),
        s.dim(&format!("({}, {} {})", m.path, w.step, m.step)),
        outcome_label(layout, m.outcome, m.as_declared, 0)
    );
    let _ = writeln!(out, "{}", m.titles.get(layout.lang));
    if !m.diff.is_empty() {
        // The report keeps the plain diff; colour it again here if allowed.
        for line in m.diff.lines() {
            let painted = if line.starts_with("---") || line.starts_with("+++") {
                s.bold(line)
            } else if line.starts_with("@@") {
                s.cyan(line)
            } else if line.starts_with('-') {
                s.red(line)
            } else if line.starts_with('+') {
                s.green(line)
            } else {
                s.dim(line)
            };
            let _ = writeln!(out, "  {painted}");
        }
    }
    if let Some(detail) = &m.detail {
        let heading = match m.outcome {
            crate::engine::outcome::MutantOutcome::Unviable => w.does_not_compile,
            _ => w.cannot_apply,
        };
        let _ = writeln!(out, "{}", s.yellow(heading));
        let _ = writeln!(out, "{}", indent(detail, 2));
    }
    for test in &m.missing_killers {
        match m.tests.get(test) {
            _ if m.tests.is_empty() => {}
            Some(TestOutcome::Passed) | None => {
                let _ = writeln!(out, "{} {test} {}", s.red("✗"), w.should_kill);
            }
            _ => {
                let _ = writeln!(out, "{} {test} {}", s.red("✗"), w.should_kill_flaky);
            }
        }
    }
    for test in &m.failed_survivors {
        let _ = writeln!(out, "{} {test} {}", s.red("✗"), w.should_pass);
        if let Some(message) = m.tests.get(test).and_then(TestOutcome::marked_message) {
            let _ = writeln!(
                out,
                "{}",
                observation::render(&message, *s, layout.lang, 4, layout.width)
            );
        }
    }
    let others: Vec<_> = m
        .killed_by
        .iter()
        .filter(|k| !m.killers.contains(&k.test))
        .collect();
    if !others.is_empty() && (m.equivalent.is_some() || !m.missing_killers.is_empty()) {
        let _ = writeln!(out, "{}", s.yellow(w.killed_by_others));
        for kill in others.iter().take(KILLS_SHOWN) {
            let _ = writeln!(
                out,
                "  {} ({})",
                s.bold(&kill.test),
                words::test_outcome(kill.outcome, layout.lang)
            );
            let _ = writeln!(
                out,
                "{}",
                observation::render(&kill.marked, *s, layout.lang, 4, layout.width)
            );
        }
        if others.len() > KILLS_SHOWN {
            let _ = writeln!(
                out,
                "  {}",
                s.dim(&match layout.lang {
                    Lang::En => format!(
                        "and {} more (every one in verify --json FILE)",
                        others.len() - KILLS_SHOWN
                    ),
                    Lang::Ja => format!(
                        "ほか {} 件（すべて verify --json FILE にあります）",
                        others.len() - KILLS_SHOWN
                    ),
                })
            );
        }
    }
    let next = match m.outcome {
        crate::engine::outcome::MutantOutcome::Survived if m.equivalent.is_none() => {
            Some(words::survived_next(layout.lang, &m.path))
        }
        _ if m.equivalent.is_some() && !m.as_declared && !m.killed_by.is_empty() => {
            Some(words::equivalent_killed_next(layout.lang, &m.path))
        }
        _ if !m.missing_killers.is_empty() && !others.is_empty() => {
            let killers: Vec<&str> = others
                .iter()
                .take(KILLS_SHOWN)
                .map(|k| k.test.as_str())
                .collect();
            Some(words::wrong_killer_next(
                layout.lang,
                &m.path,
                &killers.join(", "),
            ))
        }
        _ => None,
    };
    if let Some(next) = next {
        let text = format!("{} {next}", s.bold(w.next));
        let _ = writeln!(out, "{}", wrap(&text, layout.width));
    }
    out
}

/// A baseline that failed: the implementation does not compile, or tests
/// fail on it. A step that is not started is one line; a summary comes last.
pub(crate) fn render_baseline_failure(layout: &Layout, report: &Report) -> String {
    let w = words(layout.lang);
    let s = &layout.out;
    let mut out = String::new();
    let what = &report.implementation;
    if let Some(errors) = &report.baseline.compile_errors {
        let _ = writeln!(out, "{}", errors.trim_end());
        let summary = match layout.lang {
            Lang::En => format!("{what} does not compile, so no mutant can be judged"),
            Lang::Ja => {
                format!("{what} がコンパイルできないため、ミュータントを判定できません")
            }
        };
        let _ = writeln!(out, "\n{} {summary}", s.red(w.baseline_failed));
        return out;
    }
    let tests: Vec<(SuiteTest, TestOutcome)> = report
        .baseline
        .tests
        .iter()
        .map(|t| {
            let outcome = if t.runs.iter().any(TestOutcome::passed) {
                TestOutcome::Passed
            } else {
                t.runs[0].clone()
            };
            (
                SuiteTest {
                    step: t.step,
                    name: t.test.clone(),
                },
                outcome,
            )
        })
        .collect();
    let tallies = StepTally::of(tests.iter().map(|(t, o)| (t, o)));
    let mut not_started = Vec::new();
    let mut failing = 0;
    for tally in tallies.iter().filter(|t| !t.complete()) {
        let slug = SLUGS[tally.step as usize - 1];
        if tally.not_started {
            not_started.push(tally.step);
            let _ = writeln!(
                out,
                "  {} {} {slug}: {}",
                w.step,
                tally.step,
                s.dim(w.not_started)
            );
            continue;
        }
        failing += tally.failures.len();
        let _ = writeln!(
            out,
            "  {} {} {slug}: {}/{}",
            w.step, tally.step, tally.passed, tally.total
        );
        for (test, outcome) in &tally.failures {
            let _ = writeln!(
                out,
                "    {} {} ({})",
                s.red("✗"),
                test,
                words::test_outcome(outcome.label(), layout.lang)
            );
            if let Some(message) = outcome.marked_message() {
                let _ = writeln!(
                    out,
                    "{}",
                    observation::render(&message, *s, layout.lang, 6, layout.width)
                );
            }
        }
    }
    let failed = tests.iter().filter(|(_, o)| !o.passed()).count();
    let steps: Vec<String> = not_started.iter().map(u32::to_string).collect();
    let summary = match (layout.lang, not_started.is_empty()) {
        (Lang::En, true) => format!(
            "{failed} of {} tests fail on {what}, so no mutant can be judged",
            tests.len()
        ),
        (Lang::En, false) => format!(
            "{failed} of {} tests fail on {what} (steps {} not started{}), so no mutant can be judged",
            tests.len(),
            steps.join(", "),
            if failing > 0 {
                format!("; {failing} tests fail in the others")
            } else {
                String::new()
            }
        ),
        (Lang::Ja, true) => format!(
            "{what} で {} 個中 {failed} 個のテストが失敗するため、ミュータントを判定できません",
            tests.len()
        ),
        (Lang::Ja, false) => format!(
            "{what} で {} 個中 {failed} 個のテストが失敗するため（ステップ {} は未着手）、ミュータントを判定できません",
            tests.len(),
            steps.join("、")
        ),
    };
    let next = match layout.lang {
        Lang::En => {
            "make every step pass first (`fencelab check` shows what each needs), then verify again"
        }
        Lang::Ja => {
            "先にすべてのステップを通してください（各ステップに必要なことは `fencelab check` が示します）。その後でもう一度 verify を実行します"
        }
    };
    let _ = writeln!(
        out,
        "\n{} {}",
        s.red(w.baseline_failed),
        wrap(&summary, layout.width)
    );
    let _ = writeln!(out, "  {} {next}", w.next);
    out
}
