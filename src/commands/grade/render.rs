//! What `grade` prints: a table of submissions, then per submission its steps
//! and each failing test.

use std::fmt::Write as _;

use crate::output::printer::{Printer, indent};

impl Printer {
    /// What `grade` prints: per submission its score, per step its tests, and
    /// each failing test with its observation; with several submissions a
    /// table of them first.
    pub fn render_grade(&self, report: &crate::commands::grade::GradeReport) -> String {
        let s = &self.out;
        let mut out = String::new();
        if report.submissions.len() > 1 {
            let _ = writeln!(out, "{}", s.bold("Submissions"));
            let width = report
                .submissions
                .iter()
                .map(|r| r.name.len())
                .max()
                .unwrap_or(10)
                .max(10);
            let _ = writeln!(
                out,
                "  {:width$}  {:>7}  gate  steps 1-8",
                "submission", "score"
            );
            for r in &report.submissions {
                let gate = if r.passed_gate {
                    s.green("pass")
                } else {
                    s.red("FAIL")
                };
                let steps: Vec<String> = if r.compile_errors.is_some() {
                    vec!["does not compile".to_string()]
                } else {
                    r.steps
                        .iter()
                        .map(|st| format!("{}/{}", st.passed, st.total))
                        .collect()
                };
                let _ = writeln!(
                    out,
                    "  {:width$}  {:>7.2}  {gate}  {}",
                    r.name,
                    r.score,
                    steps.join(" ")
                );
            }
            let _ = writeln!(out);
        }
        for r in &report.submissions {
            let _ = writeln!(
                out,
                "{} {}",
                s.bold(&r.name),
                s.dim(&format!("({})", r.file))
            );
            if let Some(errors) = &r.compile_errors {
                let _ = writeln!(
                    out,
                    "  {}\n{}",
                    s.red("does not compile:"),
                    indent(errors.trim_end(), 4)
                );
                continue;
            }
            for st in &r.steps {
                let status = if st.passed == st.total {
                    s.green(&format!("{}/{}", st.passed, st.total))
                } else {
                    s.yellow(&format!("{}/{}", st.passed, st.total))
                };
                let _ = writeln!(out, "  step {}  {:<11} {status}", st.step, st.slug);
            }
            let gate = if r.passed_gate {
                s.green("passed")
            } else {
                s.red("below")
            };
            let _ = writeln!(
                out,
                "  score {:.2} / 100 (gate {}: {gate})",
                r.score, report.min_score
            );
            for t in r.tests.iter().filter(|t| !t.outcome.passed()) {
                let _ = writeln!(out, "  {} {} ({})", s.red("✗"), t.test, t.outcome.label());
                if let Some(message) = t.outcome.message() {
                    let lines: Vec<&str> = message
                        .lines()
                        .filter(|l| !l.starts_with("panicked at"))
                        .take(6)
                        .collect();
                    let _ = writeln!(out, "{}", indent(&lines.join("\n"), 6));
                }
            }
        }
        out
    }
}
