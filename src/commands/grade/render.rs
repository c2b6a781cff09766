//! What `grade` prints: a line per submission as it is graded (on stderr),
//! then per submission what it lost (a step not started is one line, a
//! failing test its observation), and last the table of submissions and the
//! verdict, so that a CI log ends on the totals.

use std::fmt::Write as _;

use crate::commands::grade::{GradeReport, GradedTest, SubmissionReport, points};
use crate::engine::Event;
use crate::engine::outcome::{FailureKind, TestOutcome, over_budget_message};
use crate::lab::edition::Edition;
use crate::lab::lang::Lang;
use crate::output::observation;
use crate::output::printer::{Layout, Printer, Verb, indent};
use crate::output::progress::Progress;
use crate::output::style::Style;
use crate::output::untrusted::{one_line, visible};
use crate::output::width::{display_width, pad_left, pad_right, wrap};

/// How many failing tests of a step are shown (every one is in the JSON and JUnit).
const FAILURES_SHOWN: usize = 5;

/// What `grade` prints on stdout at the end.
/// How a course file weighs the steps, when not all the same: the steps
/// whose weight differs from most steps', then the others'.
fn weights_said(weights: &std::collections::BTreeMap<String, f64>) -> Option<String> {
    let slugs = crate::lab::worksheet::SLUGS;
    let weight = |slug: &str| weights.get(slug).copied().unwrap_or(1.0);
    let most = (slugs.iter().map(|s| weight(s)))
        .max_by_key(|w| slugs.iter().filter(|s| weight(s) == *w).count())?;
    let odd: Vec<String> = (slugs.iter())
        .filter(|s| weight(s) != most)
        .map(|s| format!("{s} {}", weight(s)))
        .collect();
    (!odd.is_empty()).then(|| format!("steps weighed {}, the others {most}", odd.join(", ")))
}

pub(crate) fn render_grade(layout: &Layout, report: &GradeReport) -> String {
    let s = &layout.out;
    let mut out = String::new();
    if !layout.quiet() {
        for r in &report.submissions {
            out.push_str(&render_submission(layout, r, report.min_score));
        }
    }
    if report.submissions.len() > 1 {
        out.push_str(&render_table(layout, report));
    }
    let at_gate = report.submissions.iter().filter(|r| r.passed_gate).count();
    let unviable = report
        .submissions
        .iter()
        .filter(|r| r.compile_errors.is_some())
        .count();
    let unusable = report
        .submissions
        .iter()
        .filter(|r| r.unusable.is_some())
        .count();
    let mut clauses = vec![format!(
        "{at_gate} of {} at the gate ({})",
        report.submissions.len(),
        report.min_score
    )];
    // One run grades one edition: a .py file among them says which.
    if unviable > 0 {
        let python = (report.submissions.iter()).any(|r| r.edition() == Edition::Python);
        let did = if python {
            "could not be loaded"
        } else {
            "did not compile"
        };
        clauses.push(format!("{unviable} {did}"));
    }
    if unusable > 0 {
        clauses.push(format!("{unusable} could not be graded"));
    }
    clauses.extend(weights_said(&report.weights));
    let all = at_gate == report.submissions.len();
    out.push('\n');
    for (lead, text) in verdict_lines("fencelab grade: ", &clauses, layout.width) {
        let text = if all { s.green(&text) } else { s.red(&text) };
        let _ = writeln!(out, "{lead}{text}");
    }
    out
}

/// One submission: its score, and what it lost.
fn render_submission(layout: &Layout, r: &SubmissionReport, min_score: f64) -> String {
    let s = &layout.out;
    let mut out = String::new();
    let gate = if r.passed_gate {
        s.green("passed")
    } else {
        s.red("below")
    };
    // A file's name is the submitter's: shown, never obeyed.
    let (shown_name, shown_file) = (one_line(&r.name), one_line(&r.file));
    let name = if r.name == r.file {
        s.bold(&shown_name)
    } else {
        format!(
            "{} {}",
            s.bold(&shown_name),
            s.dim(&format!("({shown_file})"))
        )
    };
    if let Some(reason) = &r.unusable {
        let _ = writeln!(
            out,
            "\n{name}: {}\n{}",
            s.red("cannot be graded (score 0):"),
            wrap(&indent(&visible(reason), 2), layout.width)
        );
        return out;
    }
    if let Some(errors) = &r.compile_errors {
        let _ = writeln!(
            out,
            "\n{name}: {}\n{}",
            s.red(&format!("{} (score 0):", r.unviable())),
            indent(&visible(errors.trim_end()), 4)
        );
        return out;
    }
    let _ = writeln!(
        out,
        "\n{name}: score {} / 100 (gate {min_score}: {gate})",
        points::score_shown(r)
    );
    if let Some(tests) = &r.invalid_tests {
        // Said once: every mutant would repeat it.
        let why = format!(
            "{} these tests fail on a correct implementation: {tests}",
            s.red("not valid, so no mutant counts:")
        );
        let _ = writeln!(
            out,
            "{}\n  {}",
            wrap(&indent(&why, 2), layout.width),
            s.dim("next: fencelab check --mine shows why each one fails and what it assumed")
        );
        return out;
    }
    // A Python submission's failures read in Python's terms (None, True, a
    // dict, ValueError), as `check` shows them in a Python lab.
    let edition = r.edition();
    for st in r.steps.iter().filter(|st| st.passed < st.total) {
        let tests: Vec<&GradedTest> = r.tests.iter().filter(|t| t.step == st.step).collect();
        let failing: Vec<&&GradedTest> = tests.iter().filter(|t| !t.outcome.passed()).collect();
        let not_started = st.passed == 0 && failing.iter().any(|t| reached_todo(&t.outcome));
        let head = format!("  step {} {}", st.step, st.slug);
        if not_started {
            let _ = writeln!(out, "{head}: {}", s.dim("not started"));
            continue;
        }
        let _ = writeln!(out, "{head}: {}/{}", st.passed, st.total);
        for t in failing.iter().take(FAILURES_SHOWN) {
            let (label, message) = outcome_words(&t.outcome, layout.lang);
            let _ = writeln!(out, "    {} {} ({label})", s.red("✗"), t.test);
            if let Some(message) = message {
                let _ = writeln!(
                    out,
                    "{}",
                    observation::render_for(edition, &message, *s, layout.lang, 6, layout.width)
                );
            }
        }
        if failing.len() > FAILURES_SHOWN {
            let _ = writeln!(
                out,
                "    {}",
                s.dim(&format!(
                    "and {} more (every one in --json and --junit)",
                    failing.len() - FAILURES_SHOWN
                ))
            );
        }
    }
    out
}

/// The table of submissions: name, score, gate, each step's tally.
fn render_table(layout: &Layout, report: &GradeReport) -> String {
    let s = &layout.out;
    let mut out = String::new();
    // Quiet: only what failed, the submissions short of the gate.
    let rows: Vec<&SubmissionReport> = (report.submissions.iter())
        .filter(|r| !layout.quiet() || !r.passed_gate)
        .collect();
    if rows.is_empty() {
        return out;
    }
    // The directory they share is said once, so that each name keeps its
    // own part (`submissions/2026-spring/` of every file).
    let names: Vec<String> = rows.iter().map(|r| one_line(&r.name)).collect();
    let shared = crate::output::paths::shared_directory(&names);
    match shared.is_empty() {
        true => _ = writeln!(out, "\n{}", s.bold("Submissions")),
        false => _ = writeln!(out, "\n{} {}", s.bold("Submissions in"), s.bold(shared)),
    }
    let names: Vec<&str> = names.iter().map(|n| &n[shared.len()..]).collect();
    let steps: Vec<String> = rows
        .iter()
        .map(|r| {
            if r.unusable.is_some() {
                "cannot be graded".to_string()
            } else if r.compile_errors.is_some() {
                r.unviable().to_string()
            } else {
                r.steps
                    .iter()
                    .map(|st| format!("{}/{}", st.passed, st.total))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        })
        .collect();
    // Everything but the name takes this much; the name gets the rest.
    let steps_width = steps.iter().map(|s| display_width(s)).max().unwrap_or(0);
    let room = layout
        .width
        .saturating_sub(2 + 2 + 7 + 2 + 4 + 2 + steps_width)
        .max(12);
    let name_width = (names.iter())
        .map(|n| display_width(n))
        .max()
        .unwrap_or(10)
        .clamp(10, room);
    let _ = writeln!(
        out,
        "  {}  {}  gate  steps 1-8",
        pad_right("submission", name_width),
        pad_left("score", 7)
    );
    for ((r, name), steps) in rows.iter().zip(&names).zip(&steps) {
        let gate = if r.passed_gate {
            s.green("pass")
        } else {
            s.red("FAIL")
        };
        let _ = writeln!(
            out,
            "  {}  {:>7}  {gate}  {steps}",
            pad_right(&keep_end(name, name_width), name_width),
            points::score_shown(r)
        );
    }
    out
}

/// A submission's line as it is graded (on stderr, in its style): the
/// count so far, its name and its score.
fn graded_line(s: &Style, r: &SubmissionReport, done: usize, total: usize) -> String {
    let what = if r.unusable.is_some() {
        s.red("cannot be graded")
    } else if r.compile_errors.is_some() {
        s.red(r.unviable())
    } else if r.passed_gate {
        format!("{} / 100", points::score_shown(r))
    } else {
        format!(
            "{} / 100 {}",
            points::score_shown(r),
            s.red("(below the gate)")
        )
    };
    format!("[{done}/{total}] {} {what}", one_line(&r.name))
}

/// The verdict's clauses after `head`, joined by "; " on as few lines of at
/// most `width` columns as they fit, each line as (lead, text): `head` on the
/// first, two spaces on the others. A CI log still ends on the totals.
fn verdict_lines(
    head: &'static str,
    clauses: &[String],
    width: usize,
) -> Vec<(&'static str, String)> {
    let mut lines: Vec<(&'static str, String)> = Vec::new();
    for (i, clause) in clauses.iter().enumerate() {
        let piece = if i + 1 < clauses.len() {
            format!("{clause};")
        } else {
            clause.clone()
        };
        match lines.last_mut() {
            Some((lead, text))
                if display_width(lead) + display_width(text) + 1 + display_width(&piece)
                    <= width =>
            {
                text.push(' ');
                text.push_str(&piece);
            }
            Some(_) => lines.push(("  ", piece)),
            None => lines.push((head, piece)),
        }
    }
    lines
}

/// A submission's name cut to `width` columns from the left, with `…`
/// where it was cut: names in a batch share their directories and differ in
/// their file names.
fn keep_end(name: &str, width: usize) -> String {
    if display_width(name) <= width {
        return name.to_string();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in name.chars().rev() {
        if used + display_width(c.encode_utf8(&mut [0; 4])) > width {
            break;
        }
        used += display_width(c.encode_utf8(&mut [0; 4]));
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

/// A failing test's label and message as the screen says them in `lang`:
/// the suite's messages are translated where they are observations
/// (`observation::render`), the budget's reason here.
fn outcome_words(outcome: &TestOutcome, lang: Lang) -> (&'static str, Option<String>) {
    if let TestOutcome::OverBudget { budget_secs, .. } = outcome {
        let label = match lang {
            Lang::En => outcome.label(),
            Lang::Ja => "予算切れ",
        };
        return (label, Some(over_budget_message(*budget_secs, lang)));
    }
    let label = match (lang, outcome.label()) {
        (Lang::Ja, "passed") => "合格",
        (Lang::Ja, "crashed") => "クラッシュ",
        (Lang::Ja, "not started") => "未着手",
        (Lang::Ja, "failed") => "失敗",
        (Lang::Ja, "timeout") => "タイムアウト",
        (_, label) => label,
    };
    (label, outcome.marked_message())
}

/// Whether a test failed by reaching a `todo!()`.
fn reached_todo(outcome: &TestOutcome) -> bool {
    matches!(
        outcome,
        TestOutcome::Failed {
            kind: FailureKind::NotStarted,
            ..
        }
    )
}

/// `grade`'s live display: the printer's progress for the engine's events,
/// and a status line per submission as it is graded, counted.
pub(crate) struct Live<'p> {
    printer: &'p mut Printer,
    done: usize,
    total: usize,
}

impl<'p> Live<'p> {
    /// A display of the grading of `total` submissions.
    pub(crate) fn new(printer: &'p mut Printer, total: usize) -> Live<'p> {
        Live {
            printer,
            done: 0,
            total,
        }
    }
}

impl Progress<SubmissionReport> for Live<'_> {
    fn engine(&mut self, event: &Event<'_>) {
        self.printer.engine(event);
    }

    fn own(&mut self, submission: &SubmissionReport) {
        self.done += 1;
        let line = graded_line(&self.printer.err, submission, self.done, self.total);
        self.printer.status(Verb::Graded, &line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::points::tests::submission;
    use crate::output::printer::Verbosity;

    /// Six submissions with long paths: passed, below, not compiling,
    /// unusable, not started.
    fn report() -> GradeReport {
        let sizes = [8, 6, 7, 25, 16, 12, 11, 9];
        let named = |name: &str, passed: [usize; 8]| {
            let mut s = submission(&sizes, &passed);
            s.name = format!("submissions/2026-spring/{name}");
            s.file = s.name.clone();
            s.passed_gate = s.score >= 80.0;
            s
        };
        let mut carol = named("carol.rs", [0; 8]);
        carol.compile_errors = Some("error[E0277]: cannot add `&str` to `i64`".into());
        carol.tests.clear();
        carol.score = 0.0;
        carol.passed_gate = false;
        let mut dave = named("dave.rs", [0; 8]);
        dave.unusable = Some("dave.rs does not have the contract's API".into());
        dave.tests.clear();
        dave.score = 0.0;
        dave.passed_gate = false;
        let submissions = vec![
            named("alice.rs", sizes),
            named("bob.rs", [8, 6, 7, 25, 16, 12, 8, 9]),
            carol,
            dave,
            named("erin.rs", [8, 6, 7, 0, 0, 0, 0, 0]),
            named("frank-with-a-rather-long-name.rs", sizes),
        ];
        GradeReport::of_test(submissions, 80.0)
    }

    /// Quiet: the verdict and the submissions short of the gate, no other.
    #[test]
    fn a_python_module_that_cannot_be_loaded_is_not_said_to_not_compile() {
        let layout = Layout::plain().with_width(80);
        let mut s = submission(&[2; 8], &[0; 8]);
        s.name = "hank.py".into();
        s.file = "hank.py".into();
        s.compile_errors = Some("ModuleNotFoundError: No module named 'numpy'".into());
        let text = render_grade(&layout, &GradeReport::of_test(vec![s.clone()], 0.0));
        assert!(
            text.contains("hank.py: cannot be loaded (score 0):"),
            "{text}"
        );
        assert!(text.contains("1 could not be loaded"), "{text}");
        assert!(!text.contains("compile"), "{text}");
        let shown = super::super::gradescope::Shown::all();
        let gradescope = super::super::gradescope::results(&s, &shown);
        let build = &gradescope.tests[0].output;
        assert!(build.contains("**cannot be loaded**"), "{build}");
        s.file = "hank.rs".into();
        let text = render_grade(&layout, &GradeReport::of_test(vec![s], 0.0));
        assert!(text.contains("does not compile (score 0)") && text.contains("1 did not compile"));
    }

    #[test]
    fn the_verdict_says_how_a_course_file_weighs_the_steps() {
        let layout = Layout::plain().with_width(80);
        let mut r = report();
        assert!(!render_grade(&layout, &r).contains("weighed"));
        r.weights.insert("release".into(), 3.0);
        r.weights.insert("claim_many".into(), 0.5);
        let text = render_grade(&layout, &r);
        assert!(
            text.contains("steps weighed release 3, claim_many 0.5, the others 1"),
            "{text}"
        );
    }

    #[test]
    fn quiet_says_only_what_failed() {
        let text = render_grade(
            &Layout::plain().with_width(80).at(Verbosity::Quiet),
            &report(),
        );
        for name in ["carol.rs", "dave.rs", "erin.rs"] {
            assert!(text.contains(name), "{text}");
        }
        for name in ["alice.rs", "bob.rs", "rather-long-name.rs"] {
            assert!(!text.contains(name), "{text}");
        }
    }

    #[test]
    fn the_table_and_the_verdict_fit_80_columns() {
        let printer = Layout::plain().with_width(80).at(Verbosity::Quiet);
        let all = Layout::plain().with_width(80);
        let text = render_table(&all, &report()) + &render_grade(&printer, &report());
        for line in text.lines() {
            assert!(
                display_width(line) <= 80,
                "{} columns: {line}",
                display_width(line)
            );
        }
        // The verdict (81 columns on one line) is kept whole, clause by
        // clause, and the log still ends on it.
        assert!(
            text.ends_with(
                "fencelab grade: 3 of 6 at the gate (80); 1 did not compile;\n  1 could not be graded\n"
            ),
            "{text}"
        );
        insta::assert_snapshot!(text);
    }

    /// A submission whose claim_many hangs: of step 8's three tests, one
    /// passed, one was stopped for spinning (confirmed alone), and one was
    /// stopped but not confirmed: the budget was spent.
    pub(crate) fn over_budget() -> GradeReport {
        let mut s = submission(&[2, 2, 2, 2, 2, 2, 2, 3], &[2, 2, 2, 2, 2, 2, 2, 1]);
        s.name = "spins.rs".into();
        s.file = s.name.clone();
        s.tests[15].outcome = TestOutcome::TimedOut {
            limit_secs: 10.0,
            stopped_by: crate::engine::outcome::TimeRule::Spins,
            rule_secs: Some(0.5),
            confirmed: true,
        };
        s.tests[15].secs = 0.62;
        s.tests[16].outcome = TestOutcome::OverBudget {
            budget_secs: 15.0,
            stopped_after_secs: Some(2.1),
        };
        s.tests[16].secs = 2.1;
        GradeReport::of_test(vec![s], 80.0)
    }

    #[test]
    fn the_json_and_junit_record_the_budget_and_why_tests_were_not_run() {
        let report = over_budget();
        let json = crate::output::report_file::json(&report);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["budget_secs"], 15.0);
        let tests = &value["submissions"][0]["tests"];
        assert_eq!(tests[15]["outcome"], "timed_out");
        assert_eq!(tests[15]["stopped_by"], "spins");
        assert_eq!(tests[15]["confirmed"], true);
        assert_eq!(tests[16]["outcome"], "over_budget");
        // Read back (`--merge`, `--results`) as written.
        let back: GradeReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back.budget_secs, Some(15.0));
        for t in [15, 16] {
            assert_eq!(
                back.submissions[0].tests[t].outcome,
                report.submissions[0].tests[t].outcome
            );
        }
        let header: Vec<&str> = json.lines().take(9).collect();
        let step8: Vec<String> = tests.as_array().unwrap()[14..]
            .iter()
            .map(|t| t.to_string())
            .collect();
        let junit = crate::commands::grade::junit::render(&report);
        assert!(
            junit.contains("<property name=\"budget_secs\" value=\"15\"/>"),
            "{junit}"
        );
        let failures: Vec<&str> = junit.lines().filter(|l| l.contains("<failure")).collect();
        insta::assert_snapshot!(format!(
            "{}\n...\n{}\n\n{}",
            header.join("\n"),
            step8.join("\n"),
            failures.join("\n")
        ));
    }

    #[test]
    fn tests_stopped_for_time_say_why_and_whether_confirmed_in_both_languages() {
        let report = over_budget();
        let text: String = [Lang::En, Lang::Ja]
            .into_iter()
            .map(|lang| {
                let layout = Layout::plain().with_width(80).in_lang(lang);
                format!("--- {lang}\n{}", render_grade(&layout, &report))
            })
            .collect();
        assert!(!text.contains("crashed"), "{text}");
        let words: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("not run again alone to confirm it: the budget of 15 s")
                && words.contains("it was stopped again")
                && words.contains("(it spins)")
                && text.contains("15 秒を使い切りました")
                && text.contains("確認済み"),
            "{text}"
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn a_python_submissions_failures_read_in_pythons_terms() {
        let failing = |name: &str| {
            let mut s = submission(&[8, 6, 7, 25, 16, 12, 11, 9], &[8, 6, 7, 25, 16, 12, 10, 9]);
            s.name = name.to_string();
            s.file = name.to_string();
            let t = s.tests.iter_mut().find(|t| t.step == 7).unwrap();
            t.outcome = TestOutcome::Failed {
                kind: FailureKind::Assertion,
                message: "panicked at tests/behaviour/step7.rs:10:5:\n\
                          observation: what release returned\n\
                          expected: Ok(true)\nactual: Ok(false)\n"
                    .to_string(),
            };
            s
        };
        let report = GradeReport::of_test(vec![failing("alice.py"), failing("bob.rs")], 80.0);
        let text = render_grade(&Layout::plain().with_width(80), &report);
        let (python, rust) = text.split_once("bob.rs").unwrap();
        assert!(
            python.contains("expected: True") && python.contains("actual:   False"),
            "{text}"
        );
        assert!(!python.contains("Ok("), "{text}");
        assert!(rust.contains("expected: Ok(true)"), "{text}");
    }

    #[test]
    fn a_long_name_keeps_its_file_name() {
        assert_eq!(
            keep_end("submissions/2026-spring/alice.rs", 12),
            "…ng/alice.rs"
        );
        assert_eq!(keep_end("alice.rs", 12), "alice.rs");
        assert_eq!(display_width(&keep_end("提出/花子の解答.rs", 10)), 10);
    }

    #[test]
    fn no_score_shows_as_minus_zero() {
        // A report read back (`--merge`) may hold -0.0, which `{:.2}` shows
        // as -0.00.
        let mut report = report();
        report.submissions[4].steps.iter_mut().for_each(|st| {
            st.passed = 0;
            st.score = -0.0;
        });
        report.submissions[4].score = -0.0;
        let text = render_grade(&Layout::plain(), &report);
        assert!(!text.contains("-0"), "{text}");
        assert!(text.contains("erin.rs: score 0.00 / 100"), "{text}");
        let summary = crate::commands::grade::github::summary(&report);
        assert!(!summary.contains("-0"), "{summary}");
    }

    #[test]
    fn a_verdict_that_fits_stays_on_one_line() {
        let printer = Layout::plain().at(Verbosity::Quiet);
        let text = render_grade(&printer, &report());
        assert!(
            text.ends_with(
                "\nfencelab grade: 3 of 6 at the gate (80); 1 did not compile; 1 could not be graded\n"
            ),
            "{text}"
        );
    }
}
