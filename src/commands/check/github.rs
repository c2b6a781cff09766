//! `check` in GitHub Actions (`--github`, or `GITHUB_ACTIONS=true`): an error
//! annotation at the learner's function of the first failing step (its `pub
//! fn <slug>` line in `src/lib.rs`), or where the compiler points when it does
//! not compile, and a per-step Markdown summary for the job's page.

use std::fmt::Write as _;

use crate::commands::check::Checked;
use crate::lab::edition::Edition;
use crate::lab::lang::Lang;
use crate::lab::worksheet::Worksheet;
use crate::output::github::{Annotation, Level, cell, first_compiler_location, line_of_fn};

/// The annotations for `checked`, where `file` is the learner's file (of a
/// lab of `edition`) as the repository names it and `source` its text.
pub(crate) fn annotations(
    checked: &Checked,
    edition: Edition,
    file: &str,
    source: &str,
) -> Vec<Annotation> {
    match checked {
        Checked::DoesNotCompile { errors } => {
            let line = match edition {
                Edition::Rust => first_compiler_location(errors).map(|(_, line)| line),
                Edition::Python => python_error_line(errors),
            };
            vec![
                Annotation::new(
                    Level::Error,
                    format!("{} does not compile", edition.learner_file()),
                    errors.lines().take(12).collect::<Vec<_>>().join("\n"),
                )
                .at(file, line.unwrap_or(1)),
            ]
        }
        Checked::Ran { .. } => {
            let Some(step) = checked.first_failing() else {
                return Vec::new();
            };
            let slug = crate::lab::worksheet::SLUGS[step.step as usize - 1];
            let line = match edition {
                Edition::Rust => line_of_fn(source, slug),
                Edition::Python => line_of_def(source, slug),
            }
            .unwrap_or(1);
            let unwritten = match edition {
                Edition::Rust => "todo!()",
                Edition::Python => "raise NotImplementedError",
            };
            let (title, message) = if step.not_started {
                (
                    format!("step {} {slug} is not started", step.step),
                    format!(
                        "replace its `{unwritten}` with an implementation of the contract; then: fencelab check --step {}",
                        step.step
                    ),
                )
            } else {
                let (test, outcome) = &step.failures[0];
                let observed: Vec<String> = outcome
                    .message()
                    .unwrap_or_default()
                    .lines()
                    .filter(|l| !l.starts_with("panicked at") && !l.trim().is_empty())
                    .take(6)
                    .map(str::to_string)
                    .collect();
                (
                    format!(
                        "step {} {slug} passes {}/{} tests",
                        step.step, step.passed, step.total
                    ),
                    format!(
                        "{test} ({}):\n{}\nrerun: fencelab check --step {}",
                        outcome.label(),
                        observed.join("\n"),
                        step.step
                    ),
                )
            };
            vec![Annotation::new(Level::Error, title, message).at(file, line)]
        }
    }
}

/// The line of Python's "does not compile" message (`File "lease.py", line 71`).
fn python_error_line(errors: &str) -> Option<usize> {
    errors.lines().find_map(|l| {
        let (_, rest) = l
            .trim_start()
            .strip_prefix("File ")?
            .split_once(", line ")?;
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    })
}

/// The line of `def name(` at the top level of a Python module.
fn line_of_def(source: &str, name: &str) -> Option<usize> {
    source
        .lines()
        .position(|l| {
            l.strip_prefix("def ")
                .and_then(|rest| rest.trim_start().strip_prefix(name))
                .is_some_and(|rest| rest.trim_start().starts_with('('))
        })
        .map(|i| i + 1)
}

/// The Markdown summary of `checked`, in a lab of `edition`.
pub(crate) fn summary(
    checked: &Checked,
    worksheet: &Worksheet,
    edition: Edition,
    lang: Lang,
) -> String {
    let mut out = String::new();
    let steps = match checked {
        Checked::DoesNotCompile { errors } => {
            let _ = writeln!(
                out,
                "## fencelab check: {} does not compile ❌\n\n```text\n{}\n```\n",
                edition.learner_file(),
                errors.lines().take(60).collect::<Vec<_>>().join("\n")
            );
            return out;
        }
        Checked::Ran { steps } => steps,
    };
    let passing = steps.iter().filter(|s| s.complete()).count();
    let mark = if passing == steps.len() { "✅" } else { "❌" };
    let _ = writeln!(
        out,
        "## fencelab check: {passing} of {} step(s) pass {mark}\n\n| step | | tests passed |\n|---:|---|---:|",
        steps.len()
    );
    for s in steps {
        let title = worksheet.step(s.step).map_or(String::new(), |st| {
            format!("`{}` {}", st.slug, cell(st.title.get(lang)))
        });
        let status = if s.complete() {
            format!("{}/{}", s.passed, s.total)
        } else if s.not_started {
            "not started".to_string()
        } else {
            format!("**{}/{}**", s.passed, s.total)
        };
        let _ = writeln!(out, "| {} | {title} | {status} |", s.step);
    }
    if let Some(first) = checked.first_failing()
        && !first.not_started
    {
        let _ = writeln!(
            out,
            "\n### Step {} fails\n\n| test | outcome | observed |\n|---|---|---|",
            first.step
        );
        for (test, outcome) in &first.failures {
            let observed = outcome
                .message()
                .unwrap_or_default()
                .lines()
                .find(|l| !l.starts_with("panicked at") && !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            let _ = writeln!(
                out,
                "| `{test}` | {} | {} |",
                outcome.label(),
                cell(&observed)
            );
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcome::{FailureKind, StepTally, TestOutcome};

    fn checked() -> Checked {
        let failed = TestOutcome::Failed {
            kind: FailureKind::Assertion,
            message: "panicked at tests/behaviour/step4.rs:9:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)".into(),
        };
        Checked::Ran {
            steps: vec![
                StepTally {
                    step: 1,
                    passed: 3,
                    total: 3,
                    not_started: false,
                    failures: vec![],
                },
                StepTally {
                    step: 4,
                    passed: 1,
                    total: 2,
                    not_started: false,
                    failures: vec![("step4::reclaims_at_exact_expiry".into(), failed)],
                },
            ],
        }
    }

    #[test]
    fn the_annotation_points_at_the_first_failing_steps_function() {
        let source = "pub fn init_db() {}\n\npub fn claim(x: u8) {}\n";
        let a = annotations(&checked(), Edition::Rust, "src/lib.rs", source);
        assert_eq!(a.len(), 1);
        assert_eq!(
            a[0].command(),
            "::error file=src/lib.rs,line=3,title=step 4 claim passes 1/2 tests::step4::reclaims_at_exact_expiry (failed):%0Aobservation: claim at now == until%0Aexpected: Ok(Some(2))%0Aactual: Ok(None)%0Arerun: fencelab check --step 4"
        );
    }

    #[test]
    fn the_summary_shows_each_step_and_what_failed() {
        insta::assert_snapshot!(summary(
            &checked(),
            &Worksheet::builtin(),
            Edition::Rust,
            Lang::En
        ));
    }

    #[test]
    fn a_python_lab_is_annotated_at_its_def_and_at_pythons_line() {
        let source = "import sqlite3\n\ndef init_db(path):\n    pass\n\ndef claim(path, job_id, owner, now, ttl):\n    raise NotImplementedError\n";
        let a = annotations(&checked(), Edition::Python, "lease.py", source);
        assert!(
            a[0].command().starts_with("::error file=lease.py,line=6,"),
            "{}",
            a[0].command()
        );
        let unviable = Checked::DoesNotCompile {
            errors: "  File \"lease.py\", line 71\n    def state(path, job_id)\n                           ^\nSyntaxError: expected ':'".into(),
        };
        let a = annotations(&unviable, Edition::Python, "lab/lease.py", "");
        assert!(
            a[0].command()
                .starts_with("::error file=lab/lease.py,line=71,title=lease.py does not compile::"),
            "{}",
            a[0].command()
        );
        let text = summary(&unviable, &Worksheet::python(), Edition::Python, Lang::En);
        assert!(
            text.starts_with("## fencelab check: lease.py does not compile"),
            "{text}"
        );
    }
}
