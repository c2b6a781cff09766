//! What `check` prints: progress per step, then what the first failing step
//! needs, in the learner's language and the lab's edition (a Python lab's
//! observations in Python's terms), wrapped to the terminal. A step run on
//! its own (`--step N`) that passes says what was not checked, and shows the
//! worksheet's broken fragment against the reference: the answer, now that
//! it is earned.

use std::fmt::Write as _;

use crate::commands::check::Checked;
use crate::lab::edition::Edition;
use crate::lab::worksheet::{Lang, Worksheet};
use crate::output::observation;
use crate::output::printer::{Layout, indent};
use crate::output::width::{pad_right, unfenced, wrap};

/// The words `check` prints around the worksheet's own text, per language.
struct CheckWords {
    step: &'static str,
    not_started: &'static str,
    passing: &'static str,
    compile: &'static str,
    contract: &'static str,
    rationale: &'static str,
    failing: &'static str,
    rerun: &'static str,
    or_tests: &'static str,
    done: &'static str,
    start_here: &'static str,
    fragment: &'static str,
}

/// The words of `check` in a lab of `edition`: a Python lab's file, its
/// compiler and its unwritten step are Python's.
fn check_words_of(lang: Lang, edition: Edition) -> CheckWords {
    let mut w = check_words(lang);
    if edition == Edition::Python {
        (w.compile, w.start_here) = match lang {
            Lang::Ja => (
                "lease.py を読み込めません（コンパイルできないか、import で例外が起きます）。Python のメッセージ:",
                "は未着手です。`raise NotImplementedError` を契約どおりの実装に置き換えてください。",
            ),
            Lang::En => (
                "lease.py cannot be loaded (it does not compile, or raises as it is imported). Python says:",
                "is not started: replace its `raise NotImplementedError` with an implementation of the contract.",
            ),
        };
    }
    w
}

fn check_words(lang: Lang) -> CheckWords {
    match lang {
        Lang::Ja => CheckWords {
            step: "ステップ",
            not_started: "未着手",
            passing: "合格",
            compile: "src/lib.rs がコンパイルできません。コンパイラのメッセージ:",
            contract: "契約",
            rationale: "判断の根拠",
            failing: "失敗しているテスト",
            rerun: "このステップだけをもう一度",
            or_tests: "テストだけなら",
            done: "すべてのステップが合格しました。各ステップの誤った断片と参照実装の差分は `fencelab check --step N` で見られます。",
            start_here: "は未着手です。`todo!()` を契約どおりの実装に置き換えてください。",
            fragment: "ワークシートの誤った断片と、参照実装との差分:",
        },
        Lang::En => CheckWords {
            step: "step",
            not_started: "not started",
            passing: "passing",
            compile: "src/lib.rs does not compile. The compiler says:",
            contract: "Contract",
            rationale: "Why",
            failing: "Failing tests",
            rerun: "Rerun just this step",
            or_tests: "or only its tests",
            done: "Every step passes. `fencelab check --step N` shows a step's broken fragment against the reference.",
            start_here: "is not started: replace its `todo!()` with an implementation of the contract.",
            fragment: "The worksheet's broken fragment, against the reference:",
        },
    }
}

/// What `check` prints: progress per step, then what the first failing
/// step needs.
pub fn render_check(
    layout: &Layout,
    checked: &Checked,
    worksheet: &Worksheet,
    lang: Lang,
) -> String {
    render_check_of(layout, checked, worksheet, Edition::Rust, lang)
}

/// What `check` prints in a lab of `edition` (its worksheet is
/// `Worksheet::of(edition)`).
pub fn render_check_of(
    layout: &Layout,
    checked: &Checked,
    worksheet: &Worksheet,
    edition: Edition,
    lang: Lang,
) -> String {
    let w = check_words_of(lang, edition);
    let s = &layout.out;
    let mut out = String::new();
    let steps = match checked {
        Checked::DoesNotCompile { errors } => {
            let errors = crate::output::untrusted::visible(errors.trim_end());
            let _ = writeln!(out, "{}\n\n{errors}", s.red(&wrap(w.compile, layout.width)));
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
        let _ = writeln!(
            out,
            "  {} {}  {} {status}",
            w.step,
            step.step,
            pad_right(slug, 11)
        );
    }
    let Some(first) = checked.first_failing() else {
        out.push_str(&render_all_passed(layout, steps, edition, lang));
        return out;
    };
    let Some(step) = worksheet.step(first.step) else {
        return out;
    };
    let _ = writeln!(
        out,
        "\n{} {}",
        s.bold(&format!(
            "── {} {}: {}",
            w.step,
            step.number,
            step.title.get(lang)
        )),
        s.bold("──")
    );
    if first.not_started {
        let text = format!("{} {}", s.yellow(&format!("`{}`", step.slug)), w.start_here);
        let _ = writeln!(out, "{}", wrap(&text, layout.width));
    }
    // Quiet: what fails, without the worksheet's text.
    if !layout.quiet() {
        let _ = writeln!(
            out,
            "\n{}\n{}",
            s.bold(w.contract),
            wrap(&unfenced(step.contract.get(lang)), layout.width)
        );
        let _ = writeln!(
            out,
            "\n{}\n{}",
            s.bold(w.rationale),
            wrap(step.rationale.get(lang), layout.width)
        );
    }
    if !first.not_started {
        let _ = writeln!(out, "\n{}", s.bold(w.failing));
        for (test, outcome) in &first.failures {
            let _ = writeln!(out, "\n  {} {}", s.red("✗"), s.bold(test));
            let message = outcome.marked_message().unwrap_or_default();
            let _ = writeln!(
                out,
                "{}",
                observation::render_for(edition, &message, *s, lang, 4, layout.width)
            );
        }
    }
    let _ = writeln!(out, "\n{}: fencelab check --step {}", w.rerun, step.number);
    // A Python lab has no cargo: `check --step` is the one way to rerun.
    if edition == Edition::Rust {
        let _ = writeln!(
            out,
            "{}: cargo test --test behaviour step{}::",
            w.or_tests, step.number
        );
    }
    out
}

/// Every step that ran passes: with every step, say so; with some (a
/// `--step` run), say which were not checked, and show the fragment of
/// the one asked for against the reference.
fn render_all_passed(
    layout: &Layout,
    steps: &[crate::engine::outcome::StepTally],
    edition: Edition,
    lang: Lang,
) -> String {
    let w = check_words(lang);
    let s = &layout.out;
    let mut out = String::new();
    let ran: Vec<u32> = steps.iter().map(|t| t.step).collect();
    if ran.len() == crate::lab::worksheet::SLUGS.len() {
        let _ = writeln!(out, "\n{}", s.green(&wrap(w.done, layout.width)));
        return out;
    }
    let left: Vec<String> = (1..=crate::lab::worksheet::SLUGS.len() as u32)
        .filter(|n| !ran.contains(n))
        .map(|n| n.to_string())
        .collect();
    let asked: Vec<String> = ran.iter().map(u32::to_string).collect();
    let text = match lang {
        Lang::En => format!(
            "Step {} passes. Not checked here: steps {} (`fencelab check` checks every step).",
            asked.join(", "),
            left.join(", ")
        ),
        Lang::Ja => format!(
            "ステップ {} は合格です。ここで確かめていないステップ: {}（すべては `fencelab check` で確かめます）。",
            asked.join("、"),
            left.join("、")
        ),
    };
    let _ = writeln!(out, "\n{}", s.green(&wrap(&text, layout.width)));
    for &number in &ran {
        if let Some(diff) = fragment_diff(number, edition, *s, lang) {
            let _ = writeln!(
                out,
                "\n{}\n{}",
                s.bold(w.fragment),
                indent(diff.trim_end(), 2)
            );
        }
    }
    out
}

/// The worksheet's broken fragment of step `number` as a diff against the
/// reference.
fn fragment_diff(
    number: u32,
    edition: Edition,
    style: crate::output::style::Style,
    lang: Lang,
) -> Option<String> {
    let (reference, mutants) = match edition {
        Edition::Rust => (
            crate::lab::reference::REFERENCE,
            crate::lab::mutant::builtin(),
        ),
        Edition::Python => (crate::lab::python::REFERENCE, crate::lab::python::mutants()),
    };
    let mutant = mutants
        .into_iter()
        .find(|m| m.step == number && m.worksheet)?;
    let broken = mutant.apply(reference).ok()?;
    let reference_name = match lang {
        Lang::En => "reference",
        Lang::Ja => "参照実装",
    };
    Some(crate::output::diff::unified(
        reference,
        &broken,
        reference_name,
        &mutant.id,
        style,
    ))
}
