//! `grade` in GitHub Actions (`--github`, or `GITHUB_ACTIONS=true`): per
//! submission an error annotation at the learner's function of the first
//! failing step (the `pub fn <slug>` line of the submission's file), or at the
//! compiler's first location when it does not compile; and a Markdown summary
//! (score, per-step table, what failed) for the job's page.

use crate::output::untrusted::{one_line, visible};
use std::fmt::Write as _;

use crate::commands::grade::{GradeReport, SubmissionReport};
use crate::output::markup::{self, Markup};

fn escape(text: &str) -> String {
    markup::escape(text, Markup::Html)
}
use crate::output::github::{Annotation, Level, cell, first_compiler_location, line_of_fn};

/// The lines of a failure that say what was observed.
fn observation(message: &str, lines: usize) -> String {
    message
        .lines()
        .filter(|l| !l.starts_with("panicked at") && !l.trim().is_empty())
        .take(lines)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The annotation for one submission, if something in it failed.
pub(crate) fn annotation(submission: &SubmissionReport) -> Option<Annotation> {
    if let Some(errors) = submission.not_graded() {
        let (file, line) =
            first_compiler_location(errors).unwrap_or_else(|| (submission.file.clone(), 1));
        return Some(
            Annotation::new(
                Level::Error,
                format!("{}: cannot be graded", submission.name),
                errors.lines().take(12).collect::<Vec<_>>().join("\n"),
            )
            .at(&file, line),
        );
    }
    let step = submission.steps.iter().find(|s| s.passed < s.total)?;
    let failing: Vec<_> = submission
        .tests
        .iter()
        .filter(|t| t.step == step.step && !t.outcome.passed())
        .collect();
    let source = std::fs::read_to_string(&submission.file).unwrap_or_default();
    let line = line_of_fn(&source, step.slug).unwrap_or(1);
    let first = failing.first()?;
    let mut message = format!(
        "{} ({}):\n{}",
        first.test,
        first.outcome.label(),
        observation(&submission.message(first).unwrap_or_default(), 6)
    );
    if failing.len() > 1 {
        let _ = write!(
            message,
            "\nand {} more failing in step {}: {}",
            failing.len() - 1,
            step.step,
            failing[1..]
                .iter()
                .map(|t| t.test.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = write!(message, "\nrerun: fencelab check --step {}", step.step);
    // A Rust lab holds the suite too; a Python lab has `check` alone.
    if submission.edition() == crate::lab::edition::Edition::Rust {
        let _ = write!(
            message,
            " (or cargo test --test behaviour step{}::)",
            step.step
        );
    }
    Some(
        Annotation::new(
            Level::Error,
            format!(
                "{}: step {} {} passes {}/{} tests",
                submission.name, step.step, step.slug, step.passed, step.total
            ),
            message,
        )
        .at(&submission.file, line),
    )
}

/// The annotations for `report`, one per submission with a failure.
pub(crate) fn annotations(report: &GradeReport) -> Vec<Annotation> {
    report.submissions.iter().filter_map(annotation).collect()
}

/// The Markdown summary of `report`.
pub(crate) fn summary(report: &GradeReport) -> String {
    let mut out = String::new();
    let passed = report.submissions.iter().filter(|s| s.passed_gate).count();
    let mark = if passed == report.submissions.len() {
        "✅"
    } else {
        "❌"
    };
    let _ = writeln!(
        out,
        "## fencelab grade: {passed} of {} submission(s) at the gate of {} {mark}\n",
        report.submissions.len(),
        report.min_score
    );
    let steps = crate::lab::worksheet::SLUGS;
    let _ = writeln!(
        out,
        "| submission | score | gate | {} |",
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{} {s}", i + 1))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(out, "|---|---:|---|{}", "---:|".repeat(steps.len()));
    for s in &report.submissions {
        let cells: Vec<String> = if s.not_graded().is_some() {
            std::iter::once("cannot be graded".to_string())
                .chain(std::iter::repeat_n(String::new(), steps.len() - 1))
                .collect()
        } else {
            s.steps
                .iter()
                .map(|st| {
                    if st.passed == st.total {
                        format!("{}/{}", st.passed, st.total)
                    } else {
                        format!("**{}/{}**", st.passed, st.total)
                    }
                })
                .collect()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&one_line(&s.name)),
            crate::commands::grade::points::score_shown(s),
            if s.passed_gate { "pass" } else { "**below**" },
            cells.join(" | ")
        );
    }
    for s in &report.submissions {
        if let Some(errors) = s.not_graded() {
            let _ = writeln!(
                out,
                "\n<details><summary><b>{}</b>: cannot be graded</summary>\n\n```text\n{}\n```\n</details>",
                escape(&one_line(&s.name)),
                visible(errors)
                    .lines()
                    .take(40)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            continue;
        }
        let failing: Vec<_> = s.tests.iter().filter(|t| !t.outcome.passed()).collect();
        if failing.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n<details><summary><b>{}</b>: {} test(s) failed</summary>\n\n| test | outcome | observed |\n|---|---|---|",
            escape(&one_line(&s.name)),
            failing.len()
        );
        for t in &failing {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                t.test,
                t.outcome.label(),
                cell(&observation(&visible(&s.message(t).unwrap_or_default()), 1))
            );
        }
        out.push_str("\n</details>\n");
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::GradeReport;
    use crate::commands::grade::points::tests::submission;

    #[test]
    fn the_annotation_points_at_the_learners_function_of_the_first_failing_step() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("alice.rs");
        std::fs::write(
            &file,
            "pub fn init_db() {}\npub fn enqueue() {}\n\n/// claims\npub fn claim() {}\n",
        )
        .unwrap();
        let mut s = submission(&[2, 2, 2, 3, 2, 2, 2, 2], &[2, 2, 2, 1, 2, 0, 2, 2]);
        s.file = file.display().to_string();
        let a = annotation(&s).unwrap();
        assert_eq!(a.line, Some(5), "pub fn claim, not complete");
        assert!(a.title.contains("step 4 claim passes 1/3"), "{}", a.title);
        assert!(
            a.message
                .starts_with("step4::test_1 (failed):\nobservation: x")
        );
        assert!(
            a.message
                .contains("and 1 more failing in step 4: step4::test_2")
        );
        let command = a.command();
        assert!(command.starts_with("::error file="), "{command}");
        assert!(!command[2..].contains("::error"), "one line");
        assert!(!command.contains('\n'));
        let full = submission(&[2; 8], &[2; 8]);
        assert!(annotation(&full).is_none());
    }

    #[test]
    fn a_submission_that_cannot_be_graded_is_annotated_where_the_compiler_says() {
        let mut s = submission(&[2; 8], &[0; 8]);
        s.compile_errors =
            Some("error[E0308]: mismatched types\n  --> subs/carol.rs:7:12\n   |".into());
        let a = annotation(&s).unwrap();
        assert_eq!(
            (a.file.as_deref(), a.line),
            (Some("subs/carol.rs"), Some(7))
        );
    }

    #[test]
    fn the_summary_has_a_row_per_submission_and_what_failed() {
        let mut carol = submission(&[2; 8], &[0; 8]);
        carol.name = "carol|x.rs".into();
        carol.compile_errors = Some("error: expected `;`".into());
        carol.passed_gate = false;
        carol.score = 0.0;
        let submissions = vec![submission(&[2; 8], &[2, 2, 2, 1, 2, 2, 2, 2]), carol];
        let report = GradeReport::of_test(submissions, 80.0);
        insta::assert_snapshot!(summary(&report));
    }
}
