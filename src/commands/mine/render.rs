//! What `check --mine` prints: which of the learner's tests are valid (and for
//! each invalid one, where it failed, what it assumed, and the misunderstanding
//! it was likely written from), then per step how many mutants the valid tests
//! catch, and each missed mutant's title with the kind of observation that
//! would expose it. In the learner's language.

use std::fmt::Write as _;

use super::{Judges, TestsReport};
use crate::lab::lang::Lang;
use crate::output::printer::{Printer, indent};

struct Words {
    tests: &'static str,
    valid: &'static str,
    against: &'static str,
    invalid_heading: &'static str,
    fails_on: &'static str,
    wheat: &'static str,
    and_more: &'static str,
    more_missed: &'static str,
    assumed: &'static str,
    message: &'static str,
    misconception: &'static str,
    thoroughness: &'static str,
    caught_of: &'static str,
    missed_heading: &'static str,
    exposed_by: &'static str,
    compile: &'static str,
    all_valid: &'static str,
    no_tests: &'static str,
    rerun: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::Ja => Words {
            tests: "件のテスト",
            valid: "件が妥当",
            against: "正しい実装と壊れた実装（ミュータント）で判定しました",
            invalid_heading: "妥当でないテスト（網羅度には数えません）",
            fails_on: "失敗する正しい実装",
            wheat: "正しい実装",
            and_more: "ほか",
            more_missed: "ほか",
            assumed: "前提にしていること",
            message: "テストのメッセージ",
            misconception: "この誤解から書かれたようです",
            thoroughness: "網羅度（妥当なテストのみ）",
            caught_of: "個のミュータントのうち捕まえたもの",
            missed_heading: "捕まえていないミュータント",
            exposed_by: "見るべきもの",
            compile: "テストがコンパイルできません。コンパイラのメッセージ:",
            all_valid: "すべてのテストが、どの正しい実装でも通ります。",
            no_tests: "テストが1つもありません。`#[test]` の関数を書いてください。",
            rerun: "もう一度",
        },
        Lang::En => Words {
            tests: "tests",
            valid: "valid",
            against: "judged against correct implementations and broken ones (mutants)",
            invalid_heading: "Invalid tests (not counted for thoroughness)",
            fails_on: "fails on",
            wheat: "the correct implementation",
            and_more: "and more",
            more_missed: "more",
            assumed: "it assumed",
            message: "its message",
            misconception: "it looks written from this misunderstanding",
            thoroughness: "Thoroughness (valid tests only)",
            caught_of: "mutants caught",
            missed_heading: "Mutants no valid test catches",
            exposed_by: "exposed by",
            compile: "Your tests do not compile. The compiler says:",
            all_valid: "Every test passes on every correct implementation.",
            no_tests: "There is no test yet: write `#[test]` functions.",
            rerun: "Rerun",
        },
    }
}

/// What an observation kind is called, per language.
fn observation(kind: &str, lang: Lang) -> &'static str {
    match (kind, lang) {
        ("return value", Lang::Ja) => "戻り値",
        ("error", Lang::Ja) => "エラー",
        ("state", Lang::Ja) => "保存された状態",
        ("return value", Lang::En) => "a return value",
        ("error", Lang::En) => "an error",
        (_, Lang::En) => "the stored state",
        (_, Lang::Ja) => "保存された状態",
    }
}

impl Printer {
    /// What `check --mine` prints.
    pub fn render_mine(&self, report: &TestsReport, judges: &Judges, lang: Lang) -> String {
        let w = words(lang);
        let s = &self.out;
        let mut out = String::new();
        if let Some(errors) = &report.compile_errors {
            let _ = writeln!(out, "{}\n\n{}", s.red(w.compile), errors.trim_end());
            return out;
        }
        let valid = report.tests.iter().filter(|t| t.valid).count();
        let count = match (lang, report.tests.len()) {
            (Lang::En, 1) => "1 test".to_string(),
            (_, n) => format!("{n} {}", w.tests),
        };
        let _ = writeln!(
            out,
            "{}: {count}, {valid} {}; {}",
            s.bold(&report.file),
            w.valid,
            s.dim(w.against)
        );
        if report.tests.is_empty() {
            let _ = writeln!(out, "\n{}", s.yellow(w.no_tests));
            return out;
        }
        let invalid: Vec<_> = report.tests.iter().filter(|t| !t.valid).collect();
        if invalid.is_empty() {
            let _ = writeln!(out, "{}", s.green(w.all_valid));
        } else {
            let _ = writeln!(out, "\n{}", s.bold(w.invalid_heading));
        }
        for t in invalid {
            let _ = writeln!(out, "\n  {} {}", s.red("✗"), s.bold(&t.test));
            let first = &t.wrong_on[0];
            let more = match (t.wrong_on.len(), lang) {
                (1, _) => String::new(),
                (n, Lang::Ja) => format!("（{}{}件）", w.and_more, n - 1),
                (n, Lang::En) => format!(" (and {} more)", n - 1),
            };
            let which = if first.implementation == "reference" {
                first.title.get(lang).to_string()
            } else {
                format!(
                    "{} `{}`: {}",
                    w.wheat,
                    first.implementation,
                    first.title.get(lang)
                )
            };
            let _ = writeln!(out, "    {}: {which} ({}){more}", w.fails_on, first.outcome);
            for freedom in &t.assumed {
                if let Some(f) = judges.wheats.freedom(freedom) {
                    let _ = writeln!(out, "    {}: {}", w.assumed, f.assumed.get(lang));
                }
            }
            let message: Vec<&str> = first
                .message
                .lines()
                .filter(|l| !l.starts_with("panicked at") && !l.trim().is_empty())
                .take(6)
                .collect();
            if !message.is_empty() {
                let _ = writeln!(out, "    {}:", w.message);
                let _ = writeln!(out, "{}", indent(&message.join("\n"), 6));
            }
            if let Some(m) = t
                .misconceptions
                .first()
                .and_then(|id| judges.mutants.iter().find(|m| m.id == *id))
            {
                let _ = writeln!(
                    out,
                    "    {} ({}):\n{}",
                    w.misconception,
                    m.titles.get(lang),
                    indent(m.explanation.get(lang), 6)
                );
            }
        }
        let caught: usize = report.steps.iter().map(|st| st.caught).sum();
        let total: usize = report.steps.iter().map(|st| st.total).sum();
        let _ = writeln!(
            out,
            "\n{}: {caught}/{total} {}, {:.2} / 100",
            s.bold(w.thoroughness),
            w.caught_of,
            report.score
        );
        for st in &report.steps {
            let status = if st.caught == st.total {
                s.green(&format!("{}/{}", st.caught, st.total))
            } else {
                s.yellow(&format!("{}/{}", st.caught, st.total))
            };
            let _ = writeln!(out, "  step {}  {:<11} {status}", st.step, st.slug);
        }
        if report.steps.iter().any(|st| !st.missed.is_empty()) {
            let _ = writeln!(out, "\n{}", s.bold(w.missed_heading));
        }
        // A few per step: enough to say what to observe next, without a flood.
        const SHOWN: usize = 3;
        for st in &report.steps {
            for m in st.missed.iter().take(SHOWN) {
                let hint = m
                    .observation
                    .map(|o| {
                        format!(
                            " {}",
                            s.dim(&format!(
                                "({}: {})",
                                w.exposed_by,
                                observation(o.name(), lang)
                            ))
                        )
                    })
                    .unwrap_or_default();
                let _ = writeln!(out, "  step {}  {}{hint}", st.step, m.title.get(lang));
            }
            if st.missed.len() > SHOWN {
                let more = match lang {
                    Lang::Ja => format!("{}{}件", w.more_missed, st.missed.len() - SHOWN),
                    Lang::En => format!("and {} {}", st.missed.len() - SHOWN, w.more_missed),
                };
                let _ = writeln!(out, "  step {}  {}", st.step, s.dim(&format!("({more})")));
            }
        }
        let _ = writeln!(out, "\n{}: fencelab check --mine", w.rerun);
        out
    }
}
