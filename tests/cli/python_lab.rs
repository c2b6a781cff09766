//! The Python lab as a learner meets it: `fencelab new --python` writes it,
//! `fencelab check` (no flag: the lab says it is Python) runs the suite
//! against its `lease.py` step by step, in Python's terms; `fencelab
//! worksheet --python` and `fencelab predict` give the Python fragments; a
//! machine without Python 3.10 is told what to install. Snapshots of what a
//! Python learner reads, in both languages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fencelab::commands::check::{self, Checked};
use fencelab::lab::edition::{self, Edition};
use fencelab::lab::python;
use fencelab::lab::worksheet::{Lang, Worksheet};
use fencelab::output::printer::Layout;

use crate::common::scratch;

fn fencelab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fencelab"))
}

/// Runs fencelab in `dir` with `args`, its scratch builds in this checkout's
/// target directory (as the other tests').
fn run_in(dir: &Path, args: &[&str]) -> Output {
    fencelab()
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CARGO_TARGET_DIR", crate::common::root().join("target"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

/// A Python lab made by `fencelab new --python` in a fresh directory.
fn new_lab(lang: Lang) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &["new", "my-lab", "--python", "--lang", lang.code()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lab = dir.path().join("my-lab");
    (dir, lab)
}

fn check_lab(dir: &Path, step: Option<u32>) -> Checked {
    let options = check::Options {
        dir: dir.to_path_buf(),
        step,
        // What is pinned is what check says, not how fast a loaded machine
        // runs the race across processes (a Python server each).
        timeout: Some(std::time::Duration::from_secs(120)),
        jobs: 4,
    };
    check::run(
        &options,
        &scratch(),
        &mut fencelab::output::progress::Silent,
    )
    .unwrap()
}

fn render(checked: &Checked, lang: Lang) -> String {
    check::render_check_of(
        &Layout::plain(),
        checked,
        &Worksheet::python(),
        Edition::Python,
        lang,
    )
}

/// The Python reference with the functions of the steps after `step` back
/// to `raise NotImplementedError`, as a learner who has written that far.
fn written_through(step: usize) -> String {
    let later = &fencelab::lab::worksheet::SLUGS[step..];
    let mut out = String::new();
    for (i, part) in python::REFERENCE.split("\ndef ").enumerate() {
        let name = part.split('(').next().unwrap_or("");
        if i > 0 && later.contains(&name) {
            let signature = part.lines().next().unwrap();
            out.push_str(&format!(
                "\ndef {signature}\n    raise NotImplementedError\n\n"
            ));
        } else if i > 0 {
            out.push_str(&format!("\ndef {part}"));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The Python reference with its mutant `id` applied.
fn mutated(id: &str) -> String {
    let m = python::mutants().into_iter().find(|m| m.id == id).unwrap();
    m.apply(python::REFERENCE).unwrap()
}

macro_rules! snapshot {
    ($name:expr, $text:expr) => {
        insta::assert_snapshot!($name, $text);
    };
}

/// What the lab holds and what the command says are pinned in
/// `commands::new::python`'s unit tests.
#[test]
fn new_python_writes_a_lab_that_remembers_its_edition() {
    // Written by the command: the lab says it is Python, in its language.
    let (_dir, lab) = new_lab(Lang::Ja);
    assert_eq!(edition::of(&lab).unwrap(), Edition::Python);
    assert_eq!(edition::recorded_lang(&lab), Some(Lang::Ja));
    // What Python reads: the skeleton compiles (where there is a python3).
    if let Ok(out) = Command::new("python3")
        .args(["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())"])
        .arg(lab.join("lease.py"))
        .output()
    {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn check_of_a_python_lab_goes_step_by_step_in_pythons_terms() {
    let (_dir, lab) = new_lab(Lang::En);
    // Nothing written yet: every step is not started (NotImplementedError).
    let checked = check_lab(&lab, None);
    let Checked::Ran { steps } = &checked else {
        panic!("{checked:?}");
    };
    assert_eq!(steps.len(), 8);
    assert!(
        steps.iter().all(|s| s.not_started && s.passed == 0),
        "{steps:?}"
    );
    for lang in Lang::ALL {
        snapshot!(
            format!("python_check_not_started_{}", lang.code()),
            render(&checked, lang)
        );
    }
    // The worksheet's step 4 fragment: step 4 fails, in Python's terms.
    std::fs::write(lab.join("lease.py"), mutated("claim-expiry-inclusive")).unwrap();
    let checked = check_lab(&lab, Some(4));
    let first = checked.first_failing().expect("step 4 fails");
    assert_eq!(first.step, 4);
    assert!(!first.not_started);
    let failing: Vec<&str> = first.failures.iter().map(|(t, _)| t.as_str()).collect();
    assert!(
        failing.contains(&"step4::reclaims_at_exact_expiry"),
        "{failing:?}"
    );
    for lang in Lang::ALL {
        let text = render(&checked, lang);
        for rust in ["Some(", "Ok(", "todo!", "cargo test", "tests/behaviour/"] {
            assert!(!text.contains(rust), "{lang:?}: `{rust}` in\n{text}");
        }
        assert!(text.contains("None"), "{text}");
        snapshot!(format!("python_check_failing_step_{}", lang.code()), text);
    }
}

/// An exception the contract does not have (here `ValueError` from
/// `init_db`, whose argument is valid) is told as what the implementation
/// raised, with no path of fencelab's own: in `check`'s screen, in both
/// languages, and in `grade`'s report, where every such message began with
/// the place the bridge's proxy panicked (`crates/bridge-<hash>/src/proxy.rs`).
#[test]
fn an_error_the_contract_does_not_have_is_told_without_fencelabs_paths() {
    let (_dir, lab) = new_lab(Lang::En);
    let source = format!(
        "{}\n\ndef init_db(path):\n    raise ValueError('jobs')\n",
        python::REFERENCE
    );
    std::fs::write(lab.join("lease.py"), source).unwrap();
    let checked = check_lab(&lab, Some(1));
    let first = checked.first_failing().expect("step 1 fails");
    assert_eq!(first.step, 1);
    let internal = ["crates/", "bridge-", "proxy.rs", "panicked at"];
    for lang in Lang::ALL {
        let text = render(&checked, lang);
        assert!(text.contains("ValueError: jobs"), "{text}");
        for path in internal {
            assert!(!text.contains(path), "{lang:?}: `{path}` in\n{text}");
        }
        snapshot!(format!("python_check_foreign_error_{}", lang.code()), text);
    }
    let out = run_in(&lab, &["grade", "lease.py", "--json", "report.json", "-q"]);
    let report = std::fs::read_to_string(lab.join("report.json")).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    assert!(report.contains("ValueError: jobs"), "{report}");
    for path in internal {
        assert!(!report.contains(path), "`{path}` in\n{report}");
    }
}

/// A test's calls, one after another, run on one thread of the Python
/// server, as a learner's own calls would (`import lease` and call it): a
/// module that keeps what its first call made for the thread that made it
/// (as SQLite keeps a connection) passes steps 1 to 3, on every run. A
/// thread per call, before, failed every such test at its second call.
#[test]
fn a_tests_calls_run_on_one_thread_of_the_python_server() {
    let (_dir, lab) = new_lab(Lang::En);
    let source = format!(
        "{}\n\
import threading as _threading
_FIRST = []


def _on_the_first_thread(function):
    def call(*args):
        if not _FIRST:
            _FIRST.append(_threading.get_ident())
        if _FIRST[0] != _threading.get_ident():
            raise RuntimeError(f'{{function.__name__}}() on another thread than the first call')
        return function(*args)
    return call


init_db, enqueue, state = map(_on_the_first_thread, (init_db, enqueue, state))
",
        python::REFERENCE
    );
    std::fs::write(lab.join("lease.py"), source).unwrap();
    for run in 1..=2 {
        let checked = check_lab(&lab, Some(3));
        assert!(
            checked.first_failing().is_none(),
            "run {run}:\n{}",
            render(&checked, Lang::En)
        );
    }
}

/// What fencelab says itself when the implementation's process ends in a
/// call (`os._exit(1)`), or when the call raises, is in the lab's language,
/// as the observations are; before, a Japanese screen said it in English.
#[test]
fn what_fencelab_says_of_a_process_that_ends_is_in_the_labs_language() {
    let (_dir, lab) = new_lab(Lang::Ja);
    let mut checked = Vec::new();
    for (step, change) in [
        (1, "def init_db(path):\n    import os\n    os._exit(1)\n"),
        (
            2,
            "def enqueue(path, job_id):\n    raise TypeError('not a job')\n",
        ),
    ] {
        let source = format!("{}\n\n{change}", python::REFERENCE);
        std::fs::write(lab.join("lease.py"), source).unwrap();
        checked.push(check_lab(&lab, Some(step)));
    }
    let [step1, step2] = &checked[..] else {
        unreachable!()
    };
    let english = [
        "the implementation's process",
        "exited with status",
        "the implementation failed",
    ];
    for (checked, name) in [(step1, "ends"), (step2, "raises")] {
        let ja = render(checked, Lang::Ja);
        for words in english {
            assert!(!ja.contains(words), "`{words}` in\n{ja}");
        }
        snapshot!(format!("python_check_process_{name}_ja"), ja);
        let en = render(checked, Lang::En);
        snapshot!(format!("python_check_process_{name}_en"), en);
    }
    let ja = render(step1, Lang::Ja);
    assert!(
        ja.contains("fencelab: 実装のプロセスが init_db() の途中で終了ステータス 1 で終了しました"),
        "{ja}"
    );
    let ja = render(step2, Lang::Ja);
    assert!(
        ja.contains("fencelab: 実装が enqueue() の中で失敗しました（場所: lease.py:"),
        "{ja}"
    );
    assert!(ja.contains("TypeError: not a job"), "{ja}");
    // The report says what the screen says: an exception failed the call
    // (Python has no panics; before, the JSON said "panicked").
    let out = run_in(&lab, &["grade", "lease.py", "--json", "report.json", "-q"]);
    let report = std::fs::read_to_string(lab.join("report.json")).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    assert!(
        report.contains("fencelab: the implementation failed in enqueue() at lease.py:")
            && !report.contains("panicked in"),
        "{report}"
    );
}

/// A module that raises at import (a typo at its top level, say) is told
/// what `python lease.py` would print: its own frames, never the server's,
/// which name fencelab's scratch files (`.../crates/pyserver-<hash>/
/// fencelab_server.py`, three frames of them before).
#[test]
fn a_module_that_raises_at_import_is_told_without_fencelabs_paths() {
    let (_dir, lab) = new_lab(Lang::En);
    let source = format!(
        "{}\nraise RuntimeError('broken at import')\n",
        python::REFERENCE
    );
    let line = source.lines().count();
    std::fs::write(lab.join("lease.py"), source).unwrap();
    let checked = check_lab(&lab, Some(1));
    // One reason, as a compile error: no test ran (issue 45).
    let Checked::DoesNotCompile { errors } = &checked else {
        panic!("{checked:?}");
    };
    assert_eq!(errors.matches("broken at import").count(), 1, "{errors}");
    // What Python prints, line by line (the screen indents a message).
    let told = [
        "Traceback (most recent call last):".to_string(),
        format!("  File \"lease.py\", line {line}, in <module>"),
        "RuntimeError: broken at import".to_string(),
    ];
    let internal = [
        "crates/",
        "pyserver-",
        "pyroot-",
        "fencelab_server.py",
        "fencelab_forking.py",
    ];
    for lang in Lang::ALL {
        let text = render(&checked, lang);
        let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
        assert!(
            lines
                .windows(3)
                .any(|w| w.iter().zip(&told).all(|(a, b)| *a == b.trim_start())),
            "{text}"
        );
        for path in internal {
            assert!(!text.contains(path), "{lang:?}: `{path}` in\n{text}");
        }
        snapshot!(
            format!("python_check_raises_at_import_{}", lang.code()),
            text
        );
    }
    let out = run_in(&lab, &["grade", "lease.py", "--json", "report.json", "-q"]);
    let report = std::fs::read_to_string(lab.join("report.json")).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let json = serde_json::to_string(&told.join("\n")).unwrap();
    assert!(report.contains(json.trim_matches('"')), "{report}");
    for path in internal {
        assert!(!report.contains(path), "`{path}` in\n{report}");
    }
}

/// The command itself, in a Python lab, with no flag: the edition and the
/// language come from the lab; the reference passes, a broken step fails.
#[test]
fn the_check_command_needs_no_flag_in_a_python_lab() {
    let (_dir, lab) = new_lab(Lang::Ja);
    // Steps 1 and 2 written, the others still raising NotImplementedError.
    std::fs::write(lab.join("lease.py"), written_through(2)).unwrap();
    let out = run_in(&lab, &["check", "--step", "3", "-q"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("ステップ 3  state       未着手"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`raise NotImplementedError` を"),
        "{stdout}"
    );
    let out = run_in(&lab, &["check", "--step", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("ステップ 2  enqueue     7/7 合格"),
        "{stdout}"
    );
    // The answer, now earned, is the Python fragment against the Python reference.
    assert!(
        stdout.contains("+++ enqueue-insert-or-replace")
            && stdout.contains("+|        cursor = conn.execute(\"INSERT OR REPLACE INTO jobs"),
        "{stdout}"
    );
    std::fs::write(
        lab.join("lease.py"),
        mutated("state-default-for-missing-row"),
    )
    .unwrap();
    // From a directory inside the lab, as from inside a crate.
    std::fs::create_dir(lab.join("notes")).unwrap();
    let out = run_in(
        &lab.join("notes"),
        &["check", "--step", "3", "--lang", "en"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("step 3  state"), "{stdout}");
    // A value the contract has no room for is the return value observed,
    // beside what the contract allows: not a failure inside the call.
    assert!(
        stdout.contains("observed: what state() returned")
            && stdout.contains("actual:   {}")
            && stdout.contains("expected: None for a missing job"),
        "{stdout}"
    );
    assert!(!stdout.contains("failed in state()"), "{stdout}");
    assert!(!stdout.contains("printed:"), "{stdout}");
}

#[test]
fn worksheet_python_prints_the_python_worksheet_in_both_languages() {
    for lang in Lang::ALL {
        let md = fencelab::output::worksheet::render_python(lang);
        snapshot!(format!("python_worksheet_{}", lang.code()), md.clone());
        let out = run_in(
            crate::common::root(),
            &["worksheet", "--python", "--lang", lang.code()],
        );
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), md);
    }
    // In a Python lab, without the flag.
    let (_dir, lab) = new_lab(Lang::Ja);
    let out = run_in(&lab, &["worksheet"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        fencelab::output::worksheet::render_python(Lang::Ja)
    );
}

#[test]
fn predict_in_a_python_lab_asks_about_the_python_fragments() {
    let (_dir, lab) = new_lab(Lang::En);
    let out = run_in(&lab, &["predict"]);
    let form = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{form}");
    assert_eq!(form.matches("\n[[prediction]]\n").count(), 8, "{form}");
    assert!(
        form.contains("mutant = \"claim-expiry-inclusive\"\n"),
        "{form}"
    );
    assert!(form.contains("#     row[0] >= now\n"), "{form}");
    assert!(
        form.contains("fencelab verify --python --predictions"),
        "{form}"
    );
    // Every test the form may name is listed without building anything.
    let out = run_in(&lab, &["check", "--list", "--step", "4"]);
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(
        list.lines().any(|l| l == "step4::reclaims_at_exact_expiry"),
        "{list}"
    );
    assert!(list.lines().all(|l| l.starts_with("step4::")), "{list}");
}

/// `verify` in a Python lab (here from a directory inside it) takes the
/// Python edition and the lab's language without a flag, as check and
/// predict do: its list is the Python mutants', in Japanese.
#[test]
fn verify_in_a_python_lab_needs_no_flag() {
    let (_dir, lab) = new_lab(Lang::Ja);
    let inside = lab.join("notes");
    std::fs::create_dir(&inside).unwrap();
    let out = run_in(&inside, &["verify", "--list"]);
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{list}");
    assert_eq!(list.lines().count(), python::mutants().len(), "{list}");
    // A mutant only the Python edition has, and none only the Rust one has.
    assert!(
        list.lines()
            .any(|l| l.starts_with("state-returns-the-tuple ") && l.contains("ステップ 3")),
        "{list}"
    );
    assert!(!list.contains("check_ttl-misses-nan"), "{list}");
}

/// Without Python 3.10 or newer, a Python command says so in one line (and
/// its next step), in the learner's language; `new --python` still writes
/// the lab and warns.
#[test]
fn without_python_a_python_lab_says_what_to_install_in_both_languages() {
    let (_dir, lab) = new_lab(Lang::Ja);
    let empty = tempfile::tempdir().unwrap();
    let without_python = |dir: &Path, args: &[&str]| {
        fencelab()
            .args(args)
            .current_dir(dir)
            .env("PATH", empty.path())
            .env_remove("FENCELAB_PYTHON")
            .output()
            .unwrap()
    };
    for (lang, words, install) in [
        (
            "ja",
            "Python 3.10 以上が必要ですが、PATH に `python3` が見つかりません",
            "Python 3.10 以上をインストールする",
        ),
        (
            "en",
            "needs Python 3.10 or newer, and `python3` is not on PATH",
            "install Python 3.10 or newer",
        ),
    ] {
        let out = without_python(&lab, &["check", "--lang", lang]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(errors[0].contains(words), "{stderr}");
        assert!(stderr.contains(install), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing built or run");
        // verify --python too, which says it before anything is built.
        let out = without_python(
            empty.path(),
            &[
                "verify",
                "--python",
                "--lang",
                lang,
                "claim-expiry-inclusive",
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        assert!(
            stderr.contains(words) && stderr.contains(install),
            "{stderr}"
        );
        let out = without_python(empty.path(), &["new", "lab", "--python", "--lang", lang]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains(words), "{stderr}");
        assert!(empty.path().join("lab/lease.py").is_file());
        std::fs::remove_dir_all(empty.path().join("lab")).unwrap();
    }
}

/// Every report of a Python submission that a learner reads (JUnit,
/// Gradescope, PrairieLearn, GitHub's summary, Classroom's line) says what
/// a failing test expected and got in Python's terms, as `grade` and
/// `check` print it: `False`, not `Ok(false)`, and no Rust test's location.
/// Before, only the terminal did. `--json` keeps the suite's own words.
#[test]
fn a_python_submissions_reports_read_in_pythons_terms() {
    let (_dir, lab) = new_lab(Lang::En);
    std::fs::write(lab.join("lease.py"), mutated("enqueue-insert-or-replace")).unwrap();
    let summary = lab.join("summary.md");
    let out = fencelab()
        .args([
            "grade",
            "lease.py",
            "--junit",
            "report.xml",
            "--gradescope",
            "results.json",
            "--prairielearn",
            "pl.json",
            "--json",
            "report.json",
            "--classroom",
            "--github",
            "-q",
        ])
        .current_dir(&lab)
        .env("NO_COLOR", "1")
        .env("CARGO_TARGET_DIR", crate::common::root().join("target"))
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", lab.join("output"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let read = |name: &str| {
        std::fs::read_to_string(lab.join(name)).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}\n{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    };
    // Classroom's result: JSON in base64, in GitHub's output file.
    let classroom = {
        use base64::Engine;
        let line = read("output");
        let b64 = line.trim().strip_prefix("result=").expect("a result= line");
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap()
    };
    let reports = [
        ("junit", read("report.xml")),
        ("gradescope", read("results.json")),
        ("prairielearn", read("pl.json")),
        ("classroom", classroom),
        ("github summary", read("summary.md")),
        // GitHub's annotations go to the standard output.
        ("stdout", stdout.clone()),
    ];
    for (name, text) in &reports {
        assert!(
            text.contains("enqueue of an id that is already there"),
            "{name}: {text}"
        );
        for rust in [
            "Ok(false)",
            "Ok(true)",
            "panicked at",
            "tests/behaviour/",
            "cargo test",
        ] {
            assert!(!text.contains(rust), "{name} says `{rust}`:\n{text}");
        }
    }
    // Where a report holds the whole message, the values are Python's.
    for (name, text) in &reports[..4] {
        let text = text.replace("\\n", "\n");
        assert!(
            text.contains("expected: False") && text.contains("actual:   True"),
            "{name}: {text}"
        );
    }
    // The JSON report keeps the suite's own words, for the tools that read it.
    let json = read("report.json");
    assert!(json.contains("expected: Ok(false)"), "{json}");
}
