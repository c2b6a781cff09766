//! What `check --mine` prints: which of the learner's tests are valid (and for
//! each invalid one, where it failed, what it assumed, and the misunderstanding
//! it was likely written from), then per step how many mutants the valid tests
//! catch, and each missed mutant's title with the kind of observation that
//! would expose it. In the learner's language.

use std::fmt::Write as _;

use super::{Judges, TestsReport};
use crate::lab::lang::Lang;
use crate::output::printer::{Printer, indent};
use crate::output::width::{display_width, truncate, wrap};

struct Words {
    against: &'static str,
    invalid_heading: &'static str,
    wheat: &'static str,
    and_more: &'static str,
    more_missed: &'static str,
    assumed: &'static str,
    message: &'static str,
    misconception: &'static str,
    thoroughness: &'static str,
    missed_heading: &'static str,
    exposed_by: &'static str,
    compile: &'static str,
    all_valid: &'static str,
    no_tests: &'static str,
    rerun: &'static str,
    step: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::Ja => Words {
            against: "正しい実装と壊れた実装（ミュータント）で判定しました",
            invalid_heading: "妥当でないテスト（網羅度には数えません）",
            wheat: "正しい実装",
            and_more: "ほか",
            more_missed: "ほか",
            assumed: "前提にしていること",
            message: "テストのメッセージ",
            misconception: "この誤解から書かれたようです",
            thoroughness: "網羅度（妥当なテストのみ）",
            missed_heading: "捕まえていないミュータント",
            exposed_by: "手がかり",
            compile: "テストがコンパイルできません。コンパイラのメッセージ:",
            all_valid: "すべてのテストが、どの正しい実装でも通ります。",
            no_tests: "テストが1つもありません。`#[test]` の関数を書いてください。",
            rerun: "もう一度",
            step: "ステップ",
        },
        Lang::En => Words {
            against: "judged against correct implementations and broken ones (mutants)",
            invalid_heading: "Invalid tests (not counted for thoroughness)",
            wheat: "the correct implementation",
            and_more: "and more",
            more_missed: "more",
            assumed: "it assumed",
            message: "its message",
            misconception: "it looks written from this misunderstanding",
            thoroughness: "Thoroughness (valid tests only)",
            missed_heading: "Mutants no valid test catches",
            exposed_by: "exposed by",
            compile: "Your tests do not compile. The compiler says:",
            all_valid: "Every test passes on every correct implementation.",
            no_tests: "There is no test yet: write `#[test]` functions.",
            rerun: "Rerun",
            step: "step",
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
            (Lang::En, 1) => format!("1 test, {valid} valid"),
            (Lang::En, n) => format!("{n} tests, {valid} valid"),
            (Lang::Ja, n) => format!("テスト {n} 件のうち {valid} 件が妥当"),
        };
        let width = self.width;
        let _ = writeln!(out, "{}: {count}", s.bold(&report.file));
        let _ = writeln!(out, "{}", s.dim(&wrap(w.against, width)));
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
            let which = match (first.implementation == "reference", lang) {
                (true, _) => first.title.get(lang).to_string(),
                (false, Lang::En) => format!(
                    "{} `{}` ({})",
                    w.wheat,
                    first.implementation,
                    first.title.get(lang)
                ),
                (false, Lang::Ja) => format!(
                    "{} `{}`（{}）",
                    w.wheat,
                    first.implementation,
                    first.title.get(lang)
                ),
            };
            let fails = match (lang, first.outcome) {
                (Lang::En, "crashed") => format!("crashes on {which}{more}"),
                (Lang::En, "timeout") => format!("times out on {which}{more}"),
                (Lang::En, _) => format!("fails on {which}{more}"),
                (Lang::Ja, "crashed") => format!("{which}{more}でクラッシュします"),
                (Lang::Ja, "timeout") => format!("{which}{more}で時間切れになります"),
                (Lang::Ja, _) => format!("{which}{more}で失敗します"),
            };
            let _ = writeln!(out, "{}", indent(&wrap(&fails, width.saturating_sub(4)), 4));
            for freedom in &t.assumed {
                if let Some(f) = judges.wheats.freedom(freedom) {
                    let assumed = format!("{}: {}", w.assumed, f.assumed.get(lang));
                    let _ = writeln!(
                        out,
                        "{}",
                        indent(&wrap(&assumed, width.saturating_sub(4)), 4)
                    );
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
                let lines: Vec<String> = message
                    .iter()
                    .map(|l| truncate(l, width.saturating_sub(6)))
                    .collect();
                let _ = writeln!(out, "{}", indent(&lines.join("\n"), 6));
            }
            if let Some(m) = t
                .misconceptions
                .first()
                .and_then(|id| judges.mutants.iter().find(|m| m.id == *id))
            {
                let heading = match lang {
                    Lang::En => format!("{} ({}):", w.misconception, m.titles.get(lang)),
                    Lang::Ja => format!("{}（{}）:", w.misconception, m.titles.get(lang)),
                };
                let _ = writeln!(
                    out,
                    "{}\n{}",
                    indent(&wrap(&heading, width.saturating_sub(4)), 4),
                    indent(&wrap(m.explanation.get(lang), width.saturating_sub(6)), 6)
                );
            }
        }
        let caught: usize = report.steps.iter().map(|st| st.caught).sum();
        let total: usize = report.steps.iter().map(|st| st.total).sum();
        let caught_line = match lang {
            Lang::En => format!("{caught}/{total} mutants caught, {:.2} / 100", report.score),
            Lang::Ja => format!(
                "捕まえたミュータント {caught}/{total}（{:.2} / 100）",
                report.score
            ),
        };
        let _ = writeln!(out, "\n{}: {caught_line}", s.bold(w.thoroughness));
        for st in &report.steps {
            let status = if st.caught == st.total {
                s.green(&format!("{}/{}", st.caught, st.total))
            } else {
                s.yellow(&format!("{}/{}", st.caught, st.total))
            };
            let _ = writeln!(out, "  {} {}  {:<11} {status}", w.step, st.step, st.slug);
        }
        if report.steps.iter().any(|st| !st.missed.is_empty()) {
            let _ = writeln!(out, "\n{}", s.bold(w.missed_heading));
        }
        // A few per step: enough to say what to observe next, without a flood.
        const SHOWN: usize = 3;
        for st in &report.steps {
            for m in st.missed.iter().take(SHOWN) {
                let title = format!("  {} {}  {}", w.step, st.step, m.title.get(lang));
                let hint = m.observation.map(|o| match lang {
                    Lang::En => format!("({}: {})", w.exposed_by, observation(o.name(), lang)),
                    Lang::Ja => format!("（{}: {}）", w.exposed_by, observation(o.name(), lang)),
                });
                match hint {
                    // The hint beside the title when both fit, else under it.
                    // A full-width bracket carries its own space.
                    Some(hint) if display_width(&title) + 1 + display_width(&hint) <= width => {
                        let gap = if lang == Lang::Ja { "" } else { " " };
                        let _ = writeln!(out, "{title}{gap}{}", s.dim(&hint));
                    }
                    Some(hint) => {
                        let _ = writeln!(
                            out,
                            "{}\n           {}",
                            truncate(&title, width),
                            s.dim(&hint)
                        );
                    }
                    None => {
                        let _ = writeln!(out, "{}", truncate(&title, width));
                    }
                }
            }
            if st.missed.len() > SHOWN {
                let more = match lang {
                    Lang::Ja => format!("{}{}件", w.more_missed, st.missed.len() - SHOWN),
                    Lang::En => format!("and {} {}", st.missed.len() - SHOWN, w.more_missed),
                };
                let more = match lang {
                    Lang::En => format!("({more})"),
                    Lang::Ja => format!("（{more}）"),
                };
                let _ = writeln!(out, "  {} {}  {}", w.step, st.step, s.dim(&more));
            }
        }
        let _ = writeln!(out, "\n{}: fencelab check --mine", w.rerun);
        out
    }
}
