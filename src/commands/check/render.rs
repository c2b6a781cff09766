//! What `check` prints: progress per step, then what the first failing step
//! needs, in the learner's language.

use std::fmt::Write as _;

use crate::output::printer::{Printer, indent};

/// The words `check` prints around the worksheet's own text, per language.
struct CheckWords {
    not_started: &'static str,
    passing: &'static str,
    compile: &'static str,
    contract: &'static str,
    rationale: &'static str,
    failing: &'static str,
    observed: &'static str,
    expected: &'static str,
    actual: &'static str,
    rerun: &'static str,
    or_tests: &'static str,
    done: &'static str,
    start_here: &'static str,
    printed: &'static str,
}

fn check_words(lang: crate::lab::worksheet::Lang) -> CheckWords {
    match lang {
        crate::lab::worksheet::Lang::Ja => CheckWords {
            not_started: "未着手",
            passing: "合格",
            compile: "src/lib.rs がコンパイルできません。コンパイラのメッセージ:",
            contract: "契約",
            rationale: "判断の根拠",
            failing: "失敗しているテスト",
            observed: "観測",
            expected: "期待",
            actual: "実際",
            rerun: "このステップだけをもう一度",
            or_tests: "テストだけなら",
            done: "すべてのステップが合格しました。",
            start_here: "は未着手です。`todo!()` を契約どおりの実装に置き換えてください。",
            printed: "出力",
        },
        crate::lab::worksheet::Lang::En => CheckWords {
            not_started: "not started",
            passing: "passing",
            compile: "src/lib.rs does not compile. The compiler says:",
            contract: "Contract",
            rationale: "Why",
            failing: "Failing tests",
            observed: "observed",
            expected: "expected",
            actual: "actual",
            rerun: "Rerun just this step",
            or_tests: "or only its tests",
            done: "Every step passes.",
            start_here: "is not started: replace its `todo!()` with an implementation of the contract.",
            printed: "printed",
        },
    }
}

impl Printer {
    /// What `check` prints: progress per step, then what the first failing
    /// step needs.
    pub fn render_check(
        &self,
        checked: &crate::commands::check::Checked,
        worksheet: &crate::lab::worksheet::Worksheet,
        lang: crate::lab::worksheet::Lang,
    ) -> String {
        use crate::commands::check::Checked;
        use crate::lab::observation::Observation;
        let w = check_words(lang);
        let s = &self.out;
        let mut out = String::new();
        let steps = match checked {
            Checked::DoesNotCompile { errors } => {
                let _ = writeln!(out, "{}\n\n{}", s.red(w.compile), errors.trim_end());
                return out;
            }
            Checked::Ran { steps } => steps,
        };
        for step in steps {
            let slug = worksheet.step(step.step).map_or("", |st| st.slug.as_str());
            let status = if step.complete() {
                s.green(&format!("{}/{} {}", step.passed, step.total, w.passing))
            } else if step.not_started {
                s.dim(w.not_started)
            } else {
                s.yellow(&format!("{}/{}", step.passed, step.total))
            };
            let _ = writeln!(out, "  step {}  {slug:<11} {status}", step.step);
        }
        let Some(first) = checked.first_failing() else {
            let _ = writeln!(out, "\n{}", s.green(w.done));
            return out;
        };
        let Some(step) = worksheet.step(first.step) else {
            return out;
        };
        let _ = writeln!(
            out,
            "\n{} {}",
            s.bold(&format!(
                "── step {}: {}",
                step.number,
                step.title.get(lang)
            )),
            s.bold("──")
        );
        if first.not_started {
            let _ = writeln!(
                out,
                "{} {}",
                s.yellow(&format!("`{}`", step.slug)),
                w.start_here
            );
        }
        let _ = writeln!(out, "\n{}\n{}", s.bold(w.contract), step.contract.get(lang));
        let _ = writeln!(
            out,
            "\n{}\n{}",
            s.bold(w.rationale),
            step.rationale.get(lang)
        );
        if !first.not_started {
            let _ = writeln!(out, "\n{}", s.bold(w.failing));
            for (test, outcome) in &first.failures {
                let _ = writeln!(out, "\n  {} {}", s.red("✗"), s.bold(test));
                let message = outcome.message().unwrap_or_default();
                match Observation::parse(&message) {
                    Some(o) => {
                        let _ = writeln!(out, "    {}: {}", w.observed, o.what);
                        if o.expected.contains('\n') || o.actual.contains('\n') {
                            let diff = crate::output::diff::unified(
                                &(o.expected.clone() + "\n"),
                                &(o.actual.clone() + "\n"),
                                w.expected,
                                w.actual,
                                *s,
                            );
                            let _ = writeln!(out, "{}", indent(diff.trim_end(), 4));
                        } else {
                            let width = w.expected.chars().count().max(w.actual.chars().count());
                            let pad = |label: &str| " ".repeat(width - label.chars().count());
                            let _ = writeln!(
                                out,
                                "    {}:{} {}",
                                w.expected,
                                pad(w.expected),
                                s.green(&o.expected)
                            );
                            let _ = writeln!(
                                out,
                                "    {}:{} {}",
                                w.actual,
                                pad(w.actual),
                                s.red(&o.actual)
                            );
                        }
                        if let Some(at) = o.location {
                            let _ = writeln!(out, "    {}", s.dim(&format!("at {at}")));
                        }
                        // What was printed during the test (the learner's own
                        // println!s) comes before the panic.
                        let printed: Vec<&str> = message
                            .lines()
                            .take_while(|l| !l.starts_with("panicked at "))
                            .collect();
                        let printed = printed.join("\n");
                        if !printed.trim().is_empty() {
                            let _ = writeln!(out, "    {}:", w.printed);
                            let _ = writeln!(out, "{}", indent(printed.trim_end(), 6));
                        }
                    }
                    None => {
                        let _ = writeln!(out, "{}", indent(message.trim_end(), 4));
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "\n{}: fencelab check --step {}\n{}: cargo test --test behaviour step{}::",
            w.rerun, step.number, w.or_tests, step.number
        );
        out
    }
}
