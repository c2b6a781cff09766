//! The worksheet's predictions exercise, end to end: `fencelab predict` writes
//! a form holding the worksheet's eight fragments, and `fencelab verify
//! --predictions` runs those and scores the form out of them. What a learner
//! reads (the form, and the predictions beside what happened) is pinned with
//! snapshots in both languages, at 80 columns.
//!
//! One run of the eight fragments (through the library, stored on disk)
//! serves every screen; the command line is run once more, as a learner
//! would, for the "done when" check: a form filled in from the fragments'
//! declarations scores full marks (the Python edition's in `cargo test`, the
//! Rust edition's in `.ci/run`'s second step).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use fencelab::commands::predict::{self, ObservationKind, Prediction, Selection};
use fencelab::commands::verify::predictions::score;
use fencelab::commands::verify::{self, Options, Update};
use fencelab::lab::lang::Lang;
use fencelab::lab::mutant::{self, Mutant};
use fencelab::output::printer::Layout;
use fencelab::output::progress::Progress;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::root;

fn fragments() -> Vec<Mutant> {
    predict::select(&mutant::builtin(), &Selection::Worksheet, "mutants").unwrap()
}

struct Quiet;

impl Progress<Update> for Quiet {
    fn engine(&mut self, _: &fencelab::engine::Event<'_>) {}
}

/// What the tests read of the eight fragments verified against the built-in
/// reference. A `Report` is not read back: the batch holds two forms'
/// scorecards, and the screen of the second.
#[derive(Serialize, Deserialize)]
struct Run {
    baseline_passed: bool,
    /// A form that got every fragment right (`perfect`).
    perfect: Card,
    /// A form that got some right (`some_right`), and its screen by language code.
    some_right: Card,
    screens: BTreeMap<String, String>,
}

/// A scorecard as `verify --json` writes it, as far as the tests read it.
#[derive(Serialize, Deserialize)]
struct Card {
    mutants: Vec<Scored>,
    scored: usize,
    points: f64,
    max_points: f64,
}

#[derive(Serialize, Deserialize)]
struct Scored {
    mutant: String,
    observations: Vec<ObservationKind>,
    killers: Vec<String>,
}

/// The run, built once (`common::stored`) by whichever test needs it first.
fn run() -> &'static Run {
    static READ: OnceLock<Run> = OnceLock::new();
    let run = READ.get_or_init(|| crate::common::stored::stored("predictions", &[], build));
    assert!(run.baseline_passed, "the reference passes");
    run
}

fn build() -> Run {
    let options = Options {
        mutants: None,
        implementation: None,
        root: root().to_path_buf(),
        filters: fragments().into_iter().map(|m| m.id).collect(),
        exact: true,
        timeout: None,
        build_timeout: None,
        jobs: fencelab::engine::runner::default_jobs(),
        python: false,
    };
    let mutants = verify::load(&options).expect("the fragments load");
    let scratch = crate::common::scratch();
    let report = verify::run(&options, &mutants, &scratch, &mut Quiet).expect("verify runs");
    let scored = |fill: fn(&Mutant) -> Prediction| {
        let predictions: Vec<Prediction> = fragments().iter().map(fill).collect();
        score(&predictions, &report.mutants)
    };
    let some_right = scored(some_right);
    let card = |card| serde_json::from_value(serde_json::to_value(card).unwrap()).unwrap();
    Run {
        baseline_passed: report.baseline.passed,
        perfect: card(scored(perfect)),
        screens: Lang::ALL
            .into_iter()
            .map(|lang| {
                let mut printer = Layout::plain().in_lang(lang);
                printer.width = 80;
                let text = verify::render_predictions(&printer, &some_right, &fragments(), lang);
                (lang.code().to_string(), text)
            })
            .collect(),
        some_right: card(some_right),
    }
}

/// The predictions a learner who got each fragment right would write: its
/// declared observation and its declared killers.
fn perfect(m: &Mutant) -> Prediction {
    Prediction {
        mutant: m.id.clone(),
        observation: Some(m.observation.expect("a fragment declares its observation")),
        tests: m.killers.clone(),
    }
}

/// The form with each fragment's entry filled in as `fill` says.
/// The fragments are among `mutants` (an edition's).
fn filled(form: &str, mutants: &[Mutant], fill: impl Fn(&Mutant) -> Prediction) -> String {
    let mut out = String::new();
    for (i, block) in form.split("\n[[prediction]]\n").enumerate() {
        if i == 0 {
            out.push_str(block);
            continue;
        }
        let id = block
            .lines()
            .find_map(|l| l.strip_prefix("mutant = \""))
            .and_then(|l| l.strip_suffix('"'))
            .expect("each entry names its mutant");
        let m = mutants.iter().find(|m| m.id == id).unwrap();
        let p = fill(m);
        let observation = p.observation.map_or("", ObservationKind::name);
        let tests: Vec<String> = p.tests.iter().map(|t| format!("{t:?}")).collect();
        let block = block
            .replace(
                "observation = \"\"",
                &format!("observation = \"{observation}\""),
            )
            .replace("tests = []", &format!("tests = [{}]", tests.join(", ")));
        out.push_str("\n[[prediction]]\n");
        out.push_str(&block);
    }
    out
}

macro_rules! snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"tests/behaviour/(step\d|support)\.rs:\d+:\d+", "tests/behaviour/$1.rs:[line]"),
            (r"src/lease\.rs:\d+:\d+", "src/lease.rs:[line]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

/// `fencelab predict ARGS` in a directory of its own: the exit code, stdout,
/// stderr and the form written to `predictions.toml`, if any.
fn predict_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .arg("predict")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let form = std::fs::read_to_string(dir.join("predictions.toml")).unwrap_or_default();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
        form,
    )
}

#[test]
fn the_form_in_both_languages() {
    for lang in Lang::ALL {
        let dir = tempfile::tempdir().unwrap();
        let args = ["--lang", lang.code(), "-o", "predictions.toml"];
        let (code, stdout, stderr, form) = predict_in(dir.path(), &args);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, "");
        let shown = format!(
            "$ fencelab predict {}\n{stderr}\n--- predictions.toml\n{form}",
            args.join(" ")
        );
        snapshot!(format!("form_{}", lang.code()), shown);
        // The prose fits 80 columns; code is shown as the worksheet shows it.
        for line in form.lines().filter(|l| !l.starts_with("#     ")) {
            assert!(
                fencelab::output::width::display_width(line) <= 80,
                "{lang:?}: {line}"
            );
        }
    }
}

#[test]
fn predict_all_or_by_name_and_an_unknown_name() {
    let dir = tempfile::tempdir().unwrap();
    let (code, all, stderr, _) = predict_in(dir.path(), &["--all", "--lang", "en"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        all.matches("[[prediction]]").count(),
        mutant::builtin().len()
    );
    let (code, two, _, _) = predict_in(
        dir.path(),
        &[
            "renew-revives-at-expiry",
            "claim-ignores-done",
            "--lang",
            "en",
        ],
    );
    assert_eq!(code, Some(0));
    assert!(
        two.starts_with("# fencelab predictions: 2 mutants.\n"),
        "{two}"
    );
    assert_eq!(two.matches("[[prediction]]").count(), 2);
    let (code, _, stderr, _) = predict_in(dir.path(), &["claim-ignore-done", "--lang", "en"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("there is no mutant `claim-ignore-done` in fencelab's built-in mutants (did you mean `claim-ignores-done`?)"),
        "{stderr}"
    );
    assert!(stderr.contains("next:"), "{stderr}");
}

/// A learner who got some right: the first fragment perfectly, the second
/// with a wrong test too, the third with the wrong observation, and nothing
/// for the others.
fn some_right(m: &Mutant) -> Prediction {
    let order: Vec<String> = fragments().into_iter().map(|m| m.id).collect();
    let p = perfect(m);
    match order.iter().position(|id| id == &m.id) {
        Some(0) => p,
        Some(1) => Prediction {
            tests: vec![p.tests[0].clone(), "step4::held_job_is_refused".into()],
            ..p
        },
        Some(2) => Prediction {
            observation: Some(ObservationKind::Error),
            ..p
        },
        _ => Prediction {
            observation: None,
            tests: Vec::new(),
            ..p
        },
    }
}

#[test]
fn what_verify_says_of_the_predictions_in_both_languages() {
    assert_eq!(run().some_right.scored, 8);
    for lang in Lang::ALL {
        let text = &run().screens[lang.code()];
        snapshot!(format!("verify_predictions_{}", lang.code()), text);
        for line in text.lines() {
            assert!(
                fencelab::output::width::display_width(line) <= 80,
                "{lang:?}: {line}"
            );
        }
        // Every entry says what happened: a kind of observation and its tests.
        let happened = match lang {
            Lang::En => "    what happened:",
            Lang::Ja => "    結果：",
        };
        assert_eq!(text.matches(happened).count(), 8, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with(happened) {
                let next = lines[i + 1];
                assert!(
                    next.starts_with("      - ") && next.contains("step"),
                    "{lang:?}: an empty what happened: {next}"
                );
            }
        }
    }
}

#[test]
fn the_fragments_declare_what_happens_to_them() {
    // The form's answers are the fragments' declarations: each killer it
    // declares is its whole kill set, and its observation is one the killers
    // made. Then a perfect form scores full marks, out of eight.
    let card = &run().perfect;
    for s in &card.mutants {
        let m = fragments().into_iter().find(|m| m.id == s.mutant).unwrap();
        let mut declared = m.killers.clone();
        declared.sort();
        let mut killers = s.killers.clone();
        killers.sort();
        assert_eq!(declared, killers, "{}: the declared killers", m.id);
        assert!(
            s.observations.contains(&m.observation.unwrap()),
            "{}: declared {:?}, observed {:?}",
            m.id,
            m.observation,
            s.observations
        );
    }
    assert_eq!((card.scored, card.points, card.max_points), (8, 16.0, 16.0));
}

/// The command line's run of the Rust fragments: `.ci/run`'s second step. In
/// `cargo test` the library's run scores the same form (`the_fragments_...`)
/// and the command line runs the Python fragments (below).
#[test]
#[ignore = "slow: .ci/run step 2"]
fn predict_then_verify_scores_a_perfect_form_out_of_the_eight_fragments() {
    perfect_form_scores_sixteen(&[], &mutant::builtin());
}

/// In the Python edition too: each fragment's declared observation earns its
/// point (a `{}` where the contract says `None` is a return value, not an
/// exception: the form totalled 15).
#[test]
fn predict_then_verify_scores_a_perfect_form_of_the_python_fragments() {
    perfect_form_scores_sixteen(&["--python"], &fencelab::lab::python::mutants());
}

fn perfect_form_scores_sixteen(edition: &[&str], mutants: &[Mutant]) {
    let dir = tempfile::tempdir().unwrap();
    let fencelab = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("COLUMNS", "80")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let mut args = vec!["predict", "--lang", "en", "-o", "form.toml"];
    args.extend(edition);
    let (code, _, stderr) = fencelab(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("form.toml (the worksheet's 8 fragments, one per step)"),
        "{stderr}"
    );
    let form = std::fs::read_to_string(dir.path().join("form.toml")).unwrap();
    assert_eq!(form.matches("[[prediction]]").count(), 8);
    std::fs::write(
        dir.path().join("form.toml"),
        filled(&form, mutants, perfect),
    )
    .unwrap();

    let mut args = vec![
        "verify",
        "--lang",
        "en",
        "--predictions",
        "form.toml",
        "--json",
        "run.json",
    ];
    args.extend(edition);
    let (code, stdout, stderr) = fencelab(&args);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("\nScore: 16.00/16 (100%) for 8 predictions\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("(nothing)"), "{stdout}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run.json")).unwrap())
            .unwrap();
    // Only the form's mutants were run, and all of them are scored.
    assert_eq!(json["mutants"].as_array().unwrap().len(), 8);
    let predictions = &json["predictions"];
    assert_eq!(predictions["mutants"].as_array().unwrap().len(), 8);
    assert_eq!(predictions["scored"], 8);
    assert_eq!(predictions["points"], 16.0);
    assert_eq!(predictions["max_points"], 16.0);
}

#[test]
fn an_unknown_test_in_the_form_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("form.toml"),
        "[[prediction]]\nmutant = \"claim-expiry-inclusive\"\nobservation = \"return value\"\ntests = [\"step4::reclaim_at_exact_expiry\"]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["verify", "--predictions", "form.toml"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "form.toml:4:10: `step4::reclaim_at_exact_expiry` is not a test of the suite (did you mean `step4::reclaims_at_exact_expiry`?)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("next:"), "{stderr}");
}
