//! What `check --mine` prints: which of the learner's tests are valid (and for
//! each invalid one, where it failed, what it assumed, and the misunderstanding
//! it was likely written from), then per step how many mutants the valid tests
//! catch, and each missed mutant's title with the kind of observation that
//! would expose it. In the learner's language.

use std::fmt::Write as _;

use crate::judging::{Invalid, Judges, TestsReport, WrongOn};
use crate::lab::lang::Lang;
use crate::output::printer::{Layout, indent};
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
    catches_heading: &'static str,
    catches_nothing: &'static str,
    second_misconception: &'static str,
    no_variant: &'static str,
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
            catches_heading: "妥当なテストが捕まえるミュータント",
            catches_nothing: "どのミュータントも捕まえていません",
            second_misconception: "あるいはこの誤解",
            no_variant: "自由を1つだけ使う実装（variant）ではどれも通るので、どの自由を前提にしたのかは特定できません。",
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
            catches_heading: "What each valid test catches",
            catches_nothing: "catches no mutant",
            second_misconception: "or from this one",
            no_variant: "it passes on every variant that takes a single freedom, so which freedom it assumed cannot be named",
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

/// What `check --mine` prints.
pub fn render_mine(layout: &Layout, report: &TestsReport, judges: &Judges, lang: Lang) -> String {
    let mut w = words(lang);
    if judges.python {
        python_words(&mut w, lang);
    }
    let s = &layout.out;
    let mut out = String::new();
    if let Some(errors) = &report.compile_errors {
        let errors = crate::output::untrusted::visible(errors.trim_end());
        let _ = writeln!(out, "{}\n\n{errors}", s.red(w.compile));
        return out;
    }
    let valid = report.tests.iter().filter(|t| t.valid).count();
    let count = match (lang, report.tests.len()) {
        (Lang::En, 1) => format!("1 test, {valid} valid"),
        (Lang::En, n) => format!("{n} tests, {valid} valid"),
        (Lang::Ja, n) => format!("テスト {n} 件のうち {valid} 件が妥当"),
    };
    let width = layout.width;
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
    let verbose = layout.verbose();
    let wide = width.saturating_sub(4);
    let para = |out: &mut String, text: &str| {
        let _ = writeln!(out, "{}", indent(&wrap(text, wide), 4));
    };
    for t in invalid {
        let _ = writeln!(out, "\n  {} {}", s.red("✗"), s.bold(&t.test));
        let Some(first) = t.wrong_on.first() else {
            continue;
        };
        match t.invalid {
            Some(Invalid::Racy) => {
                for wrong in t.wrong_on.iter().filter(|w| w.racy()) {
                    para(&mut out, &racy(wrong, lang));
                }
                for wrong in t.wrong_on.iter().filter(|w| !w.racy()) {
                    para(&mut out, &every_run(wrong, lang));
                }
            }
            Some(Invalid::FailsOnReference) => {
                para(&mut out, &contradicts(first, lang));
            }
            Some(Invalid::NoVerdict) => {
                para(&mut out, &no_verdict(first, lang, judges.python));
                // What the harness printed before the end says nothing more.
                continue;
            }
            _ => {
                let shown = if verbose { t.wrong_on.len() } else { 1 };
                for (i, wrong) in t.wrong_on.iter().take(shown).enumerate() {
                    let more = match (t.wrong_on.len() - shown, lang) {
                        (0, _) => String::new(),
                        _ if i > 0 => String::new(),
                        (n, Lang::Ja) => format!("（{}{n}件）", w.and_more),
                        (n, Lang::En) => format!(" (and {n} more)"),
                    };
                    para(&mut out, &fails(wrong, &more, lang));
                }
            }
        }
        for freedom in &t.assumed {
            if let Some(f) = judges.wheats.freedom(freedom) {
                para(&mut out, &format!("{}: {}", w.assumed, f.assumed.get(lang)));
            }
        }
        if t.invalid == Some(Invalid::FailsOnAFullWheat) {
            para(&mut out, w.no_variant);
        }
        // The learner's test wrote it: shown, never obeyed.
        let shown = crate::output::untrusted::visible(&first.message);
        let mut message: Vec<&str> = shown
            .lines()
            .filter(|l| !l.starts_with("panicked at") && !l.trim().is_empty())
            // Python's marks under the failing expression say nothing here.
            .filter(|l| !l.trim().chars().all(|c| c == '^' || c == '~'))
            .collect();
        // A Python traceback says what happened last; a Rust panic first.
        let keep = if judges.python {
            message.len().saturating_sub(6)..message.len()
        } else {
            0..message.len().min(6)
        };
        let message: Vec<&str> = message.drain(keep).collect();
        if !message.is_empty() {
            let _ = writeln!(out, "    {}:", w.message);
            let lines: Vec<String> = message
                .iter()
                .map(|l| truncate(l, width.saturating_sub(6)))
                .collect();
            let _ = writeln!(out, "{}", indent(&lines.join("\n"), 6));
        }
        let mut misconceptions = t
            .misconceptions
            .iter()
            .filter_map(|id| judges.mutants.iter().find(|m| m.id == *id));
        if let Some(m) = misconceptions.next() {
            let heading = match lang {
                Lang::En => format!("{} ({}):", w.misconception, m.titles.get(lang)),
                Lang::Ja => format!("{}（{}）:", w.misconception, m.titles.get(lang)),
            };
            let _ = writeln!(
                out,
                "{}\n{}",
                indent(&wrap(&heading, wide), 4),
                indent(&wrap(m.explanation.get(lang), width.saturating_sub(6)), 6)
            );
        }
        if let Some(m) = misconceptions.next() {
            let or = match lang {
                Lang::En => format!("{}: {}", w.second_misconception, m.titles.get(lang)),
                Lang::Ja => format!("{}: {}", w.second_misconception, m.titles.get(lang)),
            };
            para(&mut out, &or);
        }
    }
    // A course that reveals a count keeps which mutants a test catches.
    if report.reveal != crate::lab::course::Reveal::Count {
        out.push_str(&render_catches(layout, report, judges, lang));
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
    let missing = report.steps.iter().any(|st| st.caught < st.total);
    if report.reveal == crate::lab::course::Reveal::Count && missing {
        let said = match lang {
            Lang::En => {
                "This course shows how many mutants your tests miss, not which: \
                         write a test for each clause of the contract the steps above \
                         still miss."
            }
            Lang::Ja => {
                "このコースでは、見逃したミュータントの数だけを示し、どれかは示しません。\
                         上で見逃しのあるステップの契約の各項目にテストを書いてください。"
            }
        };
        let _ = writeln!(out, "\n{}", wrap(said, width));
    }
    // A few per step: enough to say what to observe next, without a flood
    // (every one with --verbose).
    let shown = if verbose { usize::MAX } else { 3 };
    for st in &report.steps {
        for m in st.missed.iter().take(shown) {
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
            // The course reveals each one's change: shown under its title.
            if let Some(diff) = &m.diff {
                // A changed line wraps (its change may be at its end); the
                // context is cut.
                let fit = width.saturating_sub(6);
                let lines: Vec<String> = (diff.lines())
                    .map(crate::output::untrusted::visible)
                    .map(|l| match l.chars().next() {
                        Some(c @ ('+' | '-')) if !l.starts_with("+++") && !l.starts_with("---") => {
                            crate::output::width::wrap_hanging(&l, fit, &format!("{c}    "))
                        }
                        _ => truncate(&l, fit),
                    })
                    .collect();
                let _ = writeln!(out, "{}", indent(&lines.join("\n"), 6));
            }
        }
        if st.missed.len() > shown {
            let more = match lang {
                Lang::Ja => format!("{}{}件", w.more_missed, st.missed.len() - shown),
                Lang::En => format!("and {} {}", st.missed.len() - shown, w.more_missed),
            };
            let more = match lang {
                Lang::En => format!("({more})"),
                Lang::Ja => format!("（{more}）"),
            };
            let _ = writeln!(out, "  {} {}  {}", w.step, st.step, s.dim(&more));
        }
    }
    if judges.python {
        let _ = writeln!(out, "\n{}: fencelab check --mine {}", w.rerun, report.file);
    } else {
        let _ = writeln!(out, "\n{}: fencelab check --mine", w.rerun);
    }
    out
}

/// The words that differ for a learner's Python tests.
fn python_words(w: &mut Words, lang: Lang) {
    match lang {
        Lang::Ja => {
            w.compile = "テストを集められません。Python のメッセージ:";
            w.no_tests = "テストが1つもありません。`def test_...()` の関数か、\
                          `unittest.TestCase` のクラスを書いてください。";
        }
        Lang::En => {
            w.compile = "Your tests cannot be collected. Python says:";
            w.no_tests = "There is no test yet: write `def test_...()` functions or \
                          `unittest.TestCase` classes.";
        }
    }
}

/// Per valid test, what it catches: a count per step, and with
/// `--verbose` each mutant's title.
fn render_catches(layout: &Layout, report: &TestsReport, judges: &Judges, lang: Lang) -> String {
    let w = words(lang);
    let s = &layout.out;
    let mut out = String::new();
    let valid: Vec<_> = report.tests.iter().filter(|t| t.valid).collect();
    if valid.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\n{}", s.bold(w.catches_heading));
    for t in valid {
        let mut per_step: Vec<(u32, Vec<&crate::lab::mutant::Mutant>)> = Vec::new();
        for m in t
            .catches
            .iter()
            .filter_map(|id| judges.mutants.iter().find(|m| m.id == *id))
        {
            match per_step.iter_mut().find(|(step, _)| *step == m.step) {
                Some((_, ms)) => ms.push(m),
                None => per_step.push((m.step, vec![m])),
            }
        }
        per_step.sort_by_key(|(step, _)| *step);
        let summary = if per_step.is_empty() {
            w.catches_nothing.to_string()
        } else {
            per_step
                .iter()
                .map(|(step, ms)| match lang {
                    Lang::En => format!("{} {step}: {}", w.step, ms.len()),
                    Lang::Ja => format!("{} {step}: {}件", w.step, ms.len()),
                })
                .collect::<Vec<_>>()
                .join(if lang == Lang::Ja { "、" } else { ", " })
        };
        let head = format!("  {} {}", s.green("✓"), t.test);
        let plain = format!("  ✓ {}", t.test);
        if display_width(&plain) + 2 + display_width(&summary) <= layout.width {
            let _ = writeln!(out, "{head}  {}", s.dim(&summary));
        } else {
            let _ = writeln!(out, "{head}\n      {}", s.dim(&summary));
        }
        if layout.verbose() {
            for (step, ms) in &per_step {
                for m in ms {
                    let line = format!("      {} {step}  {}", w.step, m.titles.get(lang));
                    let _ = writeln!(out, "{}", truncate(&line, layout.width));
                }
            }
        }
    }
    out
}

/// Which correct implementation, as a learner reads it.
fn which(w: &WrongOn, lang: Lang) -> String {
    let words = words(lang);
    match (w.implementation == "reference", lang) {
        (true, _) => w.title.get(lang).to_string(),
        (false, Lang::En) => format!(
            "{} `{}` ({})",
            words.wheat,
            w.implementation,
            w.title.get(lang)
        ),
        (false, Lang::Ja) => format!(
            "{} `{}`（{}）",
            words.wheat,
            w.implementation,
            w.title.get(lang)
        ),
    }
}

/// "fails on X (and N more)", by how it failed.
fn fails(w: &WrongOn, more: &str, lang: Lang) -> String {
    let which = which(w, lang);
    match (lang, w.outcome) {
        (Lang::En, "crashed") => format!("crashes on {which}{more}"),
        (Lang::En, "timeout") => format!("times out on {which}{more}"),
        (Lang::En, _) => format!("fails on {which}{more}"),
        (Lang::Ja, "crashed") => format!("{which}{more}でクラッシュします"),
        (Lang::Ja, "timeout") => format!("{which}{more}で時間切れになります"),
        (Lang::Ja, _) => format!("{which}{more}で失敗します"),
    }
}

/// A correct implementation that gave both verdicts.
fn racy(w: &WrongOn, lang: Lang) -> String {
    let which = which(w, lang);
    let (runs, failed) = (w.runs, w.failed);
    let reference = w.implementation == "reference";
    match lang {
        Lang::En => format!(
            "racy: on {which} it failed {failed} of {runs} runs and passed the others{}; \
             its verdict depends on a race, which the contract leaves open",
            if reference {
                " (each run lets a different owner go first in claim_many)"
            } else {
                ""
            }
        ),
        Lang::Ja => format!(
            "競合に左右されます: {which}で {runs} 回中 {failed} 回失敗し、残りは通りました{}。\
             結果が競合で決まるテストで、契約はその競合の結果を決めていません。",
            if reference {
                "（実行ごとに claim_many で先に進む owner を変えています）"
            } else {
                ""
            }
        ),
    }
}

/// A correct implementation that failed it on every run (beside a race).
fn every_run(w: &WrongOn, lang: Lang) -> String {
    let which = which(w, lang);
    match lang {
        Lang::En => format!("it also fails on every run of {which}"),
        Lang::Ja => format!("{which}でも、毎回失敗します。"),
    }
}

/// The reference failed it every time.
/// Why a test that ends its own process earns nothing, and what to do.
fn no_verdict(w: &WrongOn, lang: Lang, python: bool) -> String {
    let which = which(w, lang);
    let runs = w.runs;
    let exit = match python {
        true => "sys.exit() or os._exit()",
        false => "std::process::exit()",
    };
    match lang {
        Lang::En => format!(
            "ends its own process before it reports, on all {runs} runs of {which}: \
             no verdict can be read from it, on any implementation. next: let the \
             test return, and assert what it observes; never call {exit}."
        ),
        Lang::Ja => format!(
            "{which}の {runs} 回とも、結果を報告する前に自分のプロセスを終えています。\
             どの実装でも判定を読み取れません。次に：テストは最後まで戻らせ、\
             観測したことを assert してください。{exit} は呼ばないでください。"
        ),
    }
}

fn contradicts(w: &WrongOn, lang: Lang) -> String {
    let which = which(w, lang);
    let runs = w.runs;
    match (lang, w.outcome) {
        (Lang::En, "crashed") => {
            format!("crashes on {which} on all {runs} runs: it contradicts the contract")
        }
        (Lang::En, "timeout") => {
            format!("times out on {which} on all {runs} runs: it contradicts the contract")
        }
        (Lang::En, _) => {
            format!("fails on {which} on all {runs} runs: it contradicts the contract")
        }
        (Lang::Ja, "crashed") => {
            format!("{which}で {runs} 回ともクラッシュします。契約と食い違っています。")
        }
        (Lang::Ja, "timeout") => {
            format!("{which}で {runs} 回とも時間切れになります。契約と食い違っています。")
        }
        (Lang::Ja, _) => format!("{which}で {runs} 回とも失敗します。契約と食い違っています。"),
    }
}
