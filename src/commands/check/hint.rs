//! `fencelab hint [STEP]`: one hint more on each call, for the first test
//! of a step that does not pass. First which observation to look at, then
//! the step's contract, then what the test expected and saw. Never the
//! reference's code: only the worksheet and the learner's own run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::commands::{default_lang, jobs, parse_lang, scratch};
use crate::engine::outcome::TestOutcome;
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::edition::Edition;
use crate::lab::lang::Lang;
use crate::lab::observation::ObservationKind;
use crate::lab::worksheet::Worksheet;
use crate::output::observation;
use crate::output::printer::{Layout, Printer, Verb};
use crate::output::width::{unfenced, wrap};

#[derive(Debug, Args)]
pub(crate) struct HintArgs {
    /// The step (1 to 8) [default: the first step that does not pass].
    pub step: Option<u32>,
    /// The learner's lab [default: the lab around the current directory].
    #[arg(long, value_name = "DIR")]
    pub lab: Option<PathBuf>,
    /// ja or en [default: the lab's, then the locale's].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
}

/// The hints there are for one failing test.
pub(crate) const LEVELS: u32 = 3;

/// Where a lab remembers the hints it was given (beside its own files).
const MEMORY: &str = ".fencelab/hints.json";

/// What a lab remembers: the test the last hint was about, and how many
/// hints it was given.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Given {
    test: String,
    level: u32,
}

/// One hint, all a screen needs.
#[derive(Debug, Clone)]
pub struct Hint {
    pub step: u32,
    pub test: String,
    /// 1 to `LEVELS`.
    pub level: u32,
    /// The test's outcome on the learner's file.
    pub outcome: TestOutcome,
}

/// The next level for `test`, given what the lab remembers: one more for
/// the same test (at most `LEVELS`), else the first.
fn next_level(given: Option<&Given>, test: &str) -> u32 {
    match given {
        Some(g) if g.test == test => (g.level + 1).min(LEVELS),
        _ => 1,
    }
}

fn remembered(lab: &Path) -> Option<Given> {
    let text = std::fs::read_to_string(lab.join(MEMORY)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes what was given; a lab that cannot keep it gets the first hint
/// again next time, nothing worse.
fn remember(lab: &Path, given: &Given) {
    let path = lab.join(MEMORY);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(&path, serde_json::to_string(given).expect("JSON"));
}

pub(crate) fn main(
    args: HintArgs,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<ExitCode, Error> {
    let dir = match &args.lab {
        Some(dir) => dir.clone(),
        None => crate::lab::edition::lab_root(&std::env::current_dir().unwrap_or_default()),
    };
    let edition = crate::lab::edition::of(&dir)?;
    let lang = args
        .lang
        .or_else(|| super::crate_lang(&dir))
        .or_else(|| crate::lab::edition::recorded_lang(&dir))
        .unwrap_or_else(default_lang);
    printer.lang = lang;
    if let Some(step) = args.step
        && !(1..=8).contains(&step)
    {
        return Err(Error::input(format!("hint {step}: the steps are 1 to 8")));
    }
    if edition == Edition::Python {
        crate::engine::python::interpreter_in(lang)?;
    }
    let options = super::Options {
        dir: dir.clone(),
        step: args.step,
        timeout: None,
        jobs: jobs(None),
    };
    let scratch = scratch(cache, &dir)?;
    printer.status(Verb::Checking, edition.learner_file());
    let checked = super::run(&options, &scratch, printer)?;
    let layout = printer.layout();
    let text = match &checked {
        super::Checked::DoesNotCompile { .. } => {
            printer.line(&no_hint(&layout, edition, args.step, true));
            return Ok(ExitCode::NotJudgeable);
        }
        super::Checked::Ran { steps } => match steps.iter().find(|s| !s.complete()) {
            None => no_hint(&layout, edition, args.step, false),
            Some(tally) => {
                let (test, outcome) = tally.failures[0].clone();
                let level = next_level(remembered(&dir).as_ref(), &test);
                remember(
                    &dir,
                    &Given {
                        test: test.clone(),
                        level,
                    },
                );
                let hint = Hint {
                    step: tally.step,
                    test,
                    level,
                    outcome,
                };
                render_hint(&layout, &hint, &Worksheet::of(edition), edition)
            }
        },
    };
    printer.line(text.trim_end());
    Ok(ExitCode::Success)
}

/// Why there is no hint: the file does not compile, or the step (every
/// step) passes.
fn no_hint(layout: &Layout, edition: Edition, step: Option<u32>, unviable: bool) -> String {
    let file = edition.learner_file();
    let text = match (layout.lang, unviable, step) {
        (Lang::En, true, _) => format!(
            "{file} does not compile, so no test ran. next: `fencelab check` shows what the compiler says."
        ),
        (Lang::Ja, true, _) => format!(
            "{file} がコンパイルできないため、テストは実行されていません。次に：`fencelab check` でコンパイラのメッセージを確認してください。"
        ),
        (Lang::En, false, Some(n)) => format!("step {n} passes every test: no hint needed."),
        (Lang::Ja, false, Some(n)) => {
            format!("ステップ {n} はすべてのテストに合格しています。ヒントは不要です。")
        }
        (Lang::En, false, None) => "every step passes every test: no hint needed.".to_string(),
        (Lang::Ja, false, None) => {
            "すべてのステップがすべてのテストに合格しています。ヒントは不要です。".to_string()
        }
    };
    wrap(&text, layout.width)
}

/// One hint as the learner reads it, in the lab's language and edition.
pub fn render_hint(
    layout: &Layout,
    hint: &Hint,
    worksheet: &Worksheet,
    edition: Edition,
) -> String {
    let (lang, s) = (layout.lang, &layout.out);
    let step = worksheet.step(hint.step).expect("a step of the suite");
    let mut out = String::new();
    let head = match lang {
        Lang::En => format!(
            "Hint {} of {LEVELS}: step {} ({}), {}",
            hint.level, hint.step, step.slug, hint.test
        ),
        Lang::Ja => format!(
            "ヒント {}/{LEVELS}: ステップ {}（{}）、{}",
            hint.level, hint.step, step.slug, hint.test
        ),
    };
    let _ = writeln!(out, "{}", s.bold(&head));
    let message = hint.outcome.marked_message().unwrap_or_default();
    let observed = observation::observed(edition, &message, lang);
    let kind = ObservationKind::of_failure(&message);
    match (hint.level, lang) {
        (1, _) if matches!(hint.outcome, TestOutcome::TimedOut { .. }) => {
            let text = match lang {
                Lang::En => {
                    "The test ran out of time: look for a loop that never ends, or a lock that is never let go."
                }
                Lang::Ja => {
                    "テストが時間切れになりました。終わらないループや、解放されないロックを探してください。"
                }
            };
            let _ = writeln!(out, "{}", wrap(text, layout.width));
        }
        (1, Lang::En) => {
            let what = match (kind, observed) {
                (Some(kind), Some(what)) => {
                    format!("Look at the {}: the test observes {what}.", kind.label(lang))
                }
                _ => "Look at what your function does before it answers: the test got no answer it could read.".to_string(),
            };
            let _ = writeln!(out, "{}", wrap(&what, layout.width));
        }
        (1, Lang::Ja) => {
            let what = match (kind, observed) {
                (Some(kind), Some(what)) => {
                    format!("{}を見てください。テストが観測しているのは: {what}", kind.label(lang))
                }
                _ => "関数が答えを返す前に何をしているかを見てください。テストは読める答えを受け取れませんでした。".to_string(),
            };
            let _ = writeln!(out, "{}", wrap(&what, layout.width));
        }
        (2, _) => {
            let said = match lang {
                Lang::En => format!("What the contract of `{}` says:", step.slug),
                Lang::Ja => format!("`{}` の契約:", step.slug),
            };
            let _ = writeln!(out, "{said}");
            let contract = unfenced(step.contract.get(lang));
            let _ = writeln!(out, "{}", wrap(&contract, layout.width));
        }
        _ => {
            let said = match lang {
                Lang::En => "What the test expected, and what your file gave:",
                Lang::Ja => "テストが期待したものと、あなたのファイルが返したもの:",
            };
            let _ = writeln!(out, "{said}");
            let _ = writeln!(
                out,
                "{}",
                observation::render_for(edition, &message, *s, lang, 2, layout.width)
            );
        }
    }
    let next = match (hint.level < LEVELS, lang) {
        (true, Lang::En) => "next: `fencelab hint` again gives the next hint.".to_string(),
        (true, Lang::Ja) => "次に：もう一度 `fencelab hint` で次のヒントが出ます。".to_string(),
        (false, Lang::En) => format!(
            "next: change {} so that it gives what the test expects, then `fencelab check --step {}`.",
            edition.learner_file(),
            hint.step
        ),
        (false, Lang::Ja) => format!(
            "次に：テストの期待どおりになるよう {} を直し、`fencelab check --step {}` を実行してください。",
            edition.learner_file(),
            hint.step
        ),
    };
    let _ = writeln!(out, "\n{}", wrap(&next, layout.width));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcome::FailureKind;

    #[test]
    fn each_call_gives_the_next_hint_of_the_same_test_and_a_new_test_starts_again() {
        let given = |test: &str, level| Given {
            test: test.into(),
            level,
        };
        assert_eq!(next_level(None, "a"), 1);
        assert_eq!(next_level(Some(&given("a", 1)), "a"), 2);
        assert_eq!(next_level(Some(&given("a", 3)), "a"), 3);
        assert_eq!(next_level(Some(&given("a", 2)), "b"), 1);
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(remembered(dir.path()), None);
        remember(dir.path(), &given("a", 2));
        assert_eq!(remembered(dir.path()), Some(given("a", 2)));
    }

    fn hint(level: u32) -> Hint {
        Hint {
            step: 4,
            test: "step4::reclaims_at_exact_expiry".into(),
            level,
            outcome: TestOutcome::Failed {
                kind: FailureKind::Assertion,
                message: "panicked at tests/behaviour/step4.rs:120:5:\nobservation: claim at now == until (the lease has just ended)\nexpected: Ok(Some(2))\nactual: Ok(None)".into(),
            },
        }
    }

    /// Every hint, in both languages and editions, at 80 columns.
    #[test]
    fn every_hint_in_both_languages_and_editions() {
        let mut shown = String::new();
        for edition in [Edition::Rust, Edition::Python] {
            for lang in [Lang::En, Lang::Ja] {
                let layout = Layout::plain().with_width(80).in_lang(lang);
                for level in 1..=LEVELS {
                    let text = render_hint(&layout, &hint(level), &Worksheet::of(edition), edition);
                    for line in text.lines() {
                        assert!(crate::output::width::display_width(line) <= 80, "{line}");
                    }
                    let _ = writeln!(shown, "--- {edition:?}, {lang}, {level}\n{text}");
                }
            }
        }
        insta::assert_snapshot!(shown);
    }

    /// No hint holds a line of the reference that the worksheet does not
    /// show: a hint points, it never hands over the code.
    #[test]
    fn no_hint_holds_the_references_code() {
        for (edition, reference) in [
            (Edition::Rust, crate::lab::reference::REFERENCE.to_string()),
            (Edition::Python, crate::lab::python::REFERENCE.to_string()),
        ] {
            let worksheet = Worksheet::of(edition);
            let shown: String = (worksheet.steps.iter())
                .flat_map(|s| [s.contract.en.clone(), s.contract.ja.clone()])
                .collect();
            let code: Vec<&str> = (reference.lines())
                .map(str::trim)
                .filter(|l| l.len() >= 16 && !l.starts_with("//") && !l.starts_with('#'))
                .filter(|l| !shown.contains(*l))
                .collect();
            assert!(code.len() > 50, "{edition:?}: {}", code.len());
            for lang in [Lang::En, Lang::Ja] {
                let layout = Layout::plain().with_width(200).in_lang(lang);
                for level in 1..=LEVELS {
                    for step in 1..=8 {
                        let mut h = hint(level);
                        h.step = step;
                        let text = render_hint(&layout, &h, &worksheet, edition);
                        for line in &code {
                            assert!(!text.contains(line), "{edition:?} step {step}: {line}");
                        }
                    }
                }
            }
        }
    }
}
