//! What `grade` prints: a line per submission as it is graded (on stderr),
//! then per submission what it lost (a step not started is one line, a
//! failing test its observation), and last the table of submissions and the
//! verdict, so that a CI log ends on the totals.

use std::fmt::Write as _;

use crate::commands::grade::{GradeReport, GradedTest, Progress, SubmissionReport};
use crate::engine::Event;
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::output::observation;
use crate::output::printer::{Printer, Verb, indent};
use crate::output::width::{display_width, pad_left, pad_right, truncate, wrap};

/// How many failing tests of a step are shown (every one is in the JSON and JUnit).
const FAILURES_SHOWN: usize = 5;

impl Printer {
    /// What `grade` prints on stdout at the end.
    pub fn render_grade(&self, report: &GradeReport) -> String {
        let s = &self.out;
        let mut out = String::new();
        if !self.quiet() {
            for r in &report.submissions {
                out.push_str(&self.render_submission(r, report.min_score));
            }
        }
        if report.submissions.len() > 1 {
            out.push_str(&self.render_table(report));
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
        let mut verdict = format!(
            "{at_gate} of {} at the gate ({})",
            report.submissions.len(),
            report.min_score
        );
        if unviable > 0 {
            let _ = write!(verdict, "; {unviable} did not compile");
        }
        if unusable > 0 {
            let _ = write!(verdict, "; {unusable} could not be graded");
        }
        let verdict = if at_gate == report.submissions.len() {
            s.green(&verdict)
        } else {
            s.red(&verdict)
        };
        let _ = writeln!(out, "\nfencelab grade: {verdict}");
        out
    }

    /// One submission: its score, and what it lost.
    fn render_submission(&self, r: &SubmissionReport, min_score: f64) -> String {
        let s = &self.out;
        let mut out = String::new();
        let gate = if r.passed_gate {
            s.green("passed")
        } else {
            s.red("below")
        };
        let name = if r.name == r.file {
            s.bold(&r.name)
        } else {
            format!("{} {}", s.bold(&r.name), s.dim(&format!("({})", r.file)))
        };
        if let Some(reason) = &r.unusable {
            let _ = writeln!(
                out,
                "\n{name}: {}\n{}",
                s.red("cannot be graded (score 0):"),
                wrap(&indent(reason, 2), self.width)
            );
            return out;
        }
        if let Some(errors) = &r.compile_errors {
            let _ = writeln!(
                out,
                "\n{name}: {}\n{}",
                s.red("does not compile (score 0):"),
                indent(errors.trim_end(), 4)
            );
            return out;
        }
        let _ = writeln!(
            out,
            "\n{name}: score {:.2} / 100 (gate {min_score}: {gate})",
            r.score
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
                wrap(&indent(&why, 2), self.width),
                s.dim("next: fencelab check --mine shows why each one fails and what it assumed")
            );
            return out;
        }
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
                let _ = writeln!(out, "    {} {} ({})", s.red("✗"), t.test, t.outcome.label());
                if let Some(message) = t.outcome.message() {
                    let _ = writeln!(
                        out,
                        "{}",
                        observation::render(&message, *s, self.lang, 6, self.width)
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
    fn render_table(&self, report: &GradeReport) -> String {
        let s = &self.out;
        let mut out = String::new();
        let _ = writeln!(out, "\n{}", s.bold("Submissions"));
        // Everything but the name takes this much; the name gets the rest.
        let steps_width = 40;
        let room = self
            .width
            .saturating_sub(2 + 2 + 7 + 2 + 4 + 2 + steps_width)
            .max(12);
        let name_width = report
            .submissions
            .iter()
            .map(|r| display_width(&r.name))
            .max()
            .unwrap_or(10)
            .clamp(10, room);
        let _ = writeln!(
            out,
            "  {}  {}  gate  steps 1-8",
            pad_right("submission", name_width),
            pad_left("score", 7)
        );
        for r in &report.submissions {
            let gate = if r.passed_gate {
                s.green("pass")
            } else {
                s.red("FAIL")
            };
            let steps = if r.unusable.is_some() {
                "cannot be graded".to_string()
            } else if r.compile_errors.is_some() {
                "does not compile".to_string()
            } else {
                r.steps
                    .iter()
                    .map(|st| format!("{}/{}", st.passed, st.total))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let _ = writeln!(
                out,
                "  {}  {:>7.2}  {gate}  {steps}",
                pad_right(&truncate(&r.name, name_width), name_width),
                r.score
            );
        }
        out
    }

    /// A submission's line as it is graded.
    fn graded_line(&self, r: &SubmissionReport) -> String {
        let s = &self.err;
        let what = if r.unusable.is_some() {
            s.red("cannot be graded")
        } else if r.compile_errors.is_some() {
            s.red("does not compile")
        } else if r.passed_gate {
            format!("{:.2} / 100", r.score)
        } else {
            format!("{:.2} / 100 {}", r.score, s.red("(below the gate)"))
        };
        format!("[{}/{}] {} {what}", self.done, self.total, r.name)
    }
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

impl Progress for Printer {
    fn event(&mut self, event: &Event<'_>) {
        self.engine_event(event);
    }

    fn graded(&mut self, submission: &SubmissionReport) {
        self.done += 1;
        let line = self.graded_line(submission);
        self.status(Verb::Graded, &line);
    }
}
