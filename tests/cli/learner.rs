//! The learner's workflow end to end: `fencelab new` makes a crate, the crate
//! is filled step by step with the reference's functions, and `fencelab check`
//! turns each step green in turn, with `cargo test` in the crate agreeing test
//! by test. Also snapshots of what a learner reads, in both languages.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use fencelab::commands::check::{self, Checked};
use fencelab::commands::new as starter;
use fencelab::lab::reference::{REFERENCE, items};
use fencelab::lab::worksheet::{Lang, SLUGS, Worksheet};
use fencelab::output::printer::Layout;

use crate::common::{root, scratch};

/// The learner's `src/lib.rs` with the first `steps` functions taken from the
/// reference (and the reference's private helpers, which they use).
fn filled(lib: &str, steps: usize) -> String {
    let mut lib = lib.to_string();
    let reference = items(REFERENCE);
    for slug in &SLUGS[..steps] {
        let item = reference
            .iter()
            .find(|i| i.function_name() == Some(slug))
            .unwrap();
        let (signature, body) = item.split_body().unwrap();
        let todo = format!("{signature} {{\n    todo!()\n}}");
        assert!(lib.contains(&todo), "the starter has {slug} as a todo");
        lib = lib.replace(&todo, &format!("{signature} {}", body.trim_end()));
    }
    if steps > 0 {
        lib.push_str("\n#[allow(unused_imports)]\nuse rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};\nuse std::time::Duration;\n");
        for item in &reference {
            let private_fn = item.function_name().is_some() && !item.text.starts_with("pub ");
            if private_fn || item.text.starts_with("const ") {
                lib.push_str(&format!("\n{}{}", item.head, item.text));
            }
        }
    }
    lib
}

/// (passed, failed) test names from `cargo test` in the learner's crate.
/// A lab crate made by `new` in a fresh directory (kept as long as the
/// `TempDir`), and its starter `src/lib.rs`.
fn new_crate(lang: Lang) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("lab");
    starter::create(&krate, &Worksheet::builtin(), lang).unwrap();
    let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    (dir, krate, lib)
}

fn cargo_test(dir: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let out = Command::new(env!("CARGO"))
        .args([
            "test",
            "--offline",
            "--test",
            "behaviour",
            "--",
            "--test-threads",
            "4",
        ])
        .current_dir(dir)
        // Share fencelab's target directory, so that SQLite is not compiled again.
        .env("CARGO_TARGET_DIR", root().join("target"))
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("test result:"),
        "cargo test ran: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut passed = BTreeSet::new();
    let mut failed = BTreeSet::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("test ") {
            if let Some(name) = rest.strip_suffix(" ... ok") {
                passed.insert(name.to_string());
            } else if let Some(name) = rest.strip_suffix(" ... FAILED") {
                failed.insert(name.to_string());
            }
        }
    }
    (passed, failed)
}

fn check(dir: &Path) -> Checked {
    check_step(dir, None)
}

fn check_step(dir: &Path, step: Option<u32>) -> Checked {
    let options = check::Options {
        dir: dir.to_path_buf(),
        step,
        timeout: None,
        jobs: 4,
    };
    check::run(
        &options,
        &scratch(),
        &mut fencelab::output::progress::Silent,
    )
    .unwrap()
}

/// The quick form's stage: half the lab written, so that `check` says some
/// steps complete and the others not started in one build.
const QUICK_STAGE: usize = 4;

/// The quick form: [`QUICK_STAGE`]. The other eight stages are `.ci/run`'s
/// second step, below, so that every `.ci/run` checks all nine (a stage is a
/// build and a run of `check` and of `cargo test`) and none twice.
#[test]
fn check_and_cargo_test_agree_on_a_half_written_lab() {
    steps_green_in_turn(&[QUICK_STAGE]);
}

/// The stages the quick form above leaves out: with it, each of the nine.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn check_turns_each_step_green_in_turn_and_cargo_test_agrees() {
    let others: Vec<usize> = (0..=8).filter(|s| *s != QUICK_STAGE).collect();
    assert_eq!(others, [0, 1, 2, 3, 5, 6, 7, 8]);
    steps_green_in_turn(&others);
}

/// The starter crate with steps 1 to `done` filled in, for each of
/// `stages`: `check` says those steps complete and the others not started,
/// and `cargo test` fails exactly the tests `check` says fail.
fn steps_green_in_turn(stages: &[usize]) {
    let (_dir, krate, starter_lib) = new_crate(Lang::En);
    for &done in stages {
        std::fs::write(krate.join("src/lib.rs"), filled(&starter_lib, done)).unwrap();
        let Checked::Ran { steps } = check(&krate) else {
            panic!("stage {done} does not compile")
        };
        for step in &steps {
            if step.step as usize <= done {
                assert!(
                    step.complete(),
                    "stage {done}: step {} is {}/{}: {:#?}",
                    step.step,
                    step.passed,
                    step.total,
                    step.failures
                );
            } else {
                assert!(
                    step.not_started,
                    "stage {done}: step {} should be not started: {step:?}",
                    step.step
                );
            }
        }
        let failing: BTreeSet<String> = steps
            .iter()
            .flat_map(|s| s.failures.iter().map(|(t, _)| t.clone()))
            .collect();
        let (passed, failed) = cargo_test(&krate);
        // A step's random calls do not count where its other tests fail
        // (check says those); cargo test runs them all.
        let counted: BTreeSet<String> = failed
            .iter()
            .filter(|t| {
                !t.ends_with("::random_calls_agree_with_the_contract")
                    || !failed.iter().any(|o| {
                        o.split("::").next() == t.split("::").next()
                            && !o.ends_with("::random_calls_agree_with_the_contract")
                    })
            })
            .cloned()
            .collect();
        assert_eq!(
            counted, failing,
            "stage {done}: cargo test and check disagree on what fails"
        );
        assert_eq!(
            passed.len() + failed.len(),
            fencelab::lab::suite::tests().len(),
            "stage {done}"
        );
    }
}

#[test]
fn new_refuses_a_directory_that_is_not_empty_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let err = starter::create(dir.path(), &Worksheet::builtin(), Lang::En).unwrap_err();
    assert!(
        err.to_string()
            .contains("exists and is not empty; nothing was written"),
        "{err}"
    );
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "nothing was added");
}

#[test]
fn a_learner_file_that_does_not_compile_shows_the_compiler_with_the_learners_paths() {
    let (_dir, krate, lib) = new_crate(Lang::En);
    std::fs::write(
        krate.join("src/lib.rs"),
        lib.replacen(
            "{\n    todo!()\n}",
            "{\n    let x: i64 = \"no\";\n    todo!()\n}",
            1,
        ),
    )
    .unwrap();
    let Checked::DoesNotCompile { errors } = check(&krate) else {
        panic!("it must not compile")
    };
    assert!(errors.contains("--> src/lib.rs:"), "{errors}");
    assert!(!errors.contains("crates/impl-"), "{errors}");
}

/// A learner's crate at step 4 with the worksheet's own bug (`until >= now`).
fn crate_with_a_boundary_bug(lang: Lang) -> (tempfile::TempDir, Checked) {
    let (dir, krate, lib) = new_crate(lang);
    let buggy = filled(&lib, 4).replace("if done || until > now {", "if done || until >= now {");
    std::fs::write(krate.join("src/lib.rs"), buggy).unwrap();
    let checked = check(&krate);
    (dir, checked)
}

macro_rules! snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"tests/behaviour/(step\d|support)\.rs:\d+:\d+", "tests/behaviour/$1.rs:[line]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn what_check_says_about_a_failing_step_in_both_languages() {
    for lang in Lang::ALL {
        let (_dir, checked) = crate_with_a_boundary_bug(lang);
        let first = checked.first_failing().unwrap();
        assert_eq!(first.step, 4);
        assert!(!first.not_started);
        let failing: Vec<&str> = first.failures.iter().map(|(t, _)| t.as_str()).collect();
        assert!(
            failing.contains(&"step4::reclaims_at_exact_expiry"),
            "{failing:?}"
        );
        let text = fencelab::commands::check::render_check(
            &Layout::plain(),
            &checked,
            &Worksheet::builtin(),
            lang,
        );
        let quiet = fencelab::commands::check::render_check(
            &Layout::plain().at(fencelab::output::printer::Verbosity::Quiet),
            &checked,
            &Worksheet::builtin(),
            lang,
        );
        assert!(quiet.contains("step4::reclaims_at_exact_expiry"), "{quiet}");
        assert!(quiet.lines().count() < text.lines().count(), "{quiet}");
        let contract = Worksheet::builtin()
            .step(4)
            .unwrap()
            .contract
            .get(lang)
            .to_string();
        let first_words: String = contract.chars().take(20).collect();
        assert!(
            text.contains(&first_words) && !quiet.contains(&first_words),
            "{quiet}"
        );
        if lang == Lang::Ja {
            // Every line of an observation is Japanese, the suite's own words too.
            for label in ["観測: ", "場所: "] {
                let lines: Vec<&str> = text.lines().filter(|l| l.contains(label)).collect();
                assert_eq!(lines.len(), 3, "{label}: {text}");
                if label == "観測: " {
                    for line in lines {
                        let what = line.split_once(label).unwrap().1;
                        assert!(!what.is_ascii(), "in English: {line}");
                    }
                }
            }
        }
        snapshot!(format!("check_failing_step_{}", lang.code()), text);
    }
}

#[test]
fn what_check_says_before_anything_is_written_in_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("lab");
    starter::create(&krate, &Worksheet::builtin(), Lang::Ja).unwrap();
    let checked = check(&krate);
    for lang in Lang::ALL {
        let text = fencelab::commands::check::render_check(
            &Layout::plain(),
            &checked,
            &Worksheet::builtin(),
            lang,
        );
        snapshot!(format!("check_not_started_{}", lang.code()), text);
    }
}

#[test]
fn what_new_writes_in_both_languages() {
    for lang in Lang::ALL {
        let files = starter::files("my_lab", &Worksheet::builtin(), lang);
        let get = |name: &str| {
            files
                .iter()
                .find(|(p, _)| p == Path::new(name))
                .map(|(_, c)| c.clone())
                .unwrap()
        };
        snapshot!(format!("new_readme_{}", lang.code()), get("README.md"));
        snapshot!(format!("new_lib_{}", lang.code()), get("src/lib.rs"));
        // What the README points to is in the crate.
        let readme = get("README.md");
        for command in [
            "fencelab predict",
            "fencelab verify --predictions",
            "mutants/README.md",
        ] {
            assert!(readme.contains(command), "{command}: {readme}");
        }
        assert!(get("mutants/README.md").contains("## Format"));
        assert!(get("tests/behaviour.rs").contains("use my_lab as lease;"));
        assert!(get("Cargo.toml").contains(&format!("lang = \"{}\"", lang.code())));
    }
}

#[test]
fn the_worksheet_in_both_languages() {
    for lang in Lang::ALL {
        let md = fencelab::output::worksheet::render(&Worksheet::builtin(), lang);
        snapshot!(format!("worksheet_{}", lang.code()), md);
    }
}

#[test]
fn a_learner_can_verify_mutants_of_their_own_code() {
    let (_dir, krate, lib) = new_crate(Lang::En);
    std::fs::write(krate.join("src/lib.rs"), filled(&lib, 8)).unwrap();
    let mutants = krate.join("my-mutants");
    std::fs::create_dir(&mutants).unwrap();
    std::fs::write(
        mutants.join("no-done-check.toml"),
        r#"step = 7
title = "my release forgets done"
file = "src/lib.rs"
find = "AND fence = ?3 AND done = 0\",\n        params![job_id, owner, fence],"
replace = "AND fence = ?3\",\n        params![job_id, owner, fence],"
killers = ["step7::refuses_a_done_job"]

[explanation]
ja = "完了した仕事も返却できてしまう"
en = "a done job can be released"
"#,
    )
    .unwrap();
    let options = fencelab::commands::verify::Options {
        mutants: Some(mutants),
        implementation: Some(krate.join("src/lib.rs")),
        root: krate.clone(),
        filters: Vec::new(),
        exact: false,
        timeout: None,
        build_timeout: None,
        jobs: 4,
        python: false,
    };
    let chosen = fencelab::commands::verify::load(&options).unwrap();
    let report =
        fencelab::commands::verify::run(&options, &chosen, &scratch(), &mut Quiet).unwrap();
    assert!(
        report.baseline.passed,
        "the learner's finished crate passes the suite"
    );
    assert_eq!(report.implementation, "src/lib.rs");
    let m = &report.mutants[0];
    assert!(m.as_declared, "{m:#?}");
    assert_eq!(report.summary.exit_code, fencelab::exit::ExitCode::Success);
}

#[test]
fn the_commands_work_from_inside_a_new_crate() {
    let dir = tempfile::tempdir().unwrap();
    let fencelab = |cwd: &Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(args)
            .current_dir(cwd)
            .env("NO_COLOR", "1")
            .env("CARGO_TARGET_DIR", root().join("target"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = fencelab(dir.path(), &["new", "lab", "--lang", "en"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, _, stderr) = fencelab(dir.path(), &["new", "lab"]);
    assert_eq!(
        code,
        Some(2),
        "a second new into the same directory is refused"
    );
    assert!(
        stderr.contains("exists and is not empty; nothing was written"),
        "{stderr}"
    );
    // No arguments: the crate around the current directory, even from a subdirectory.
    let (code, stdout, stderr) = fencelab(&dir.path().join("lab/src"), &["check"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("step 1  init_db     not started"),
        "{stdout}"
    );
    assert!(stdout.contains("fencelab check --step 1"), "{stdout}");
    // In GitHub Actions: an annotation at the learner's first function, and
    // the steps' table in the step summary.
    let summary = dir.path().join("summary.md");
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["check", "lab"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("CARGO_TARGET_DIR", root().join("target"))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lib = std::fs::read_to_string(dir.path().join("lab/src/lib.rs")).unwrap();
    let line = lib
        .lines()
        .position(|l| l.starts_with("pub fn init_db"))
        .unwrap()
        + 1;
    let annotation = stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no annotation: {stdout}"));
    assert!(
        annotation.starts_with(&format!(
            "::error file=lab/src/lib.rs,line={line},title=step 1 init_db is not started::"
        )),
        "{annotation}"
    );
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.starts_with("## fencelab check: 0 of 8 step(s) pass ❌"),
        "{summary}"
    );
    assert!(summary.contains("| 1 | `init_db` "), "{summary}");
    // --list names every mutant without building anything.
    let (code, stdout, stderr) = fencelab(&dir.path().join("lab"), &["verify", "--list"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout.lines().count(),
        fencelab::lab::mutant::builtin().len(),
        "{stdout}"
    );
    assert!(stdout.contains("claim-expiry-inclusive"), "{stdout}");
    assert!(!stderr.contains("Building"), "{stderr}");
    // In Japanese, every line is Japanese.
    let (code, stdout, stderr) = fencelab(dir.path(), &["new", "lab-ja", "--lang", "ja"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("作成") && !stderr.contains("Created"),
        "{stderr}"
    );
    assert!(
        stdout.contains("次に") && !stdout.contains("Next"),
        "{stdout}"
    );
    let (code, stdout, stderr) = fencelab(&dir.path().join("lab-ja"), &["check", "--step", "1"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("確認中") && !stderr.contains("Checking"),
        "{stderr}"
    );
    assert!(
        stdout.contains("ステップ 1") && !stdout.contains("  step 1 "),
        "{stdout}"
    );
    let (code, stdout, _) = fencelab(
        &dir.path().join("lab-ja"),
        &["verify", "--list", "--lang", "ja"],
    );
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("claim が until == now をまだ保持中とみなす"),
        "{stdout}"
    );
    assert!(stdout.contains("ステップ 4"), "{stdout}");
    // A name cargo would refuse is refused, with one to use.
    let (code, _, stderr) = fencelab(dir.path(), &["new", "test"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("e.g. `fencelab new test-lab`"), "{stderr}");
    assert!(!dir.path().join("test").exists(), "nothing was written");
}

#[test]
fn check_outside_a_lab_crate_says_so_in_one_line_without_building() {
    // fencelab's own crate has a src/lib.rs, but not the contract's API.
    let options = check::Options {
        dir: root().to_path_buf(),
        step: None,
        timeout: None,
        jobs: 1,
    };
    struct Events(usize);
    impl fencelab::output::progress::Progress for Events {
        fn engine(&mut self, _: &fencelab::engine::Event<'_>) {
            self.0 += 1;
        }
    }
    let mut events = Events(0);
    let err = check::run(&options, &scratch(), &mut events).unwrap_err();
    assert_eq!(events.0, 0, "nothing was built");
    assert_eq!(err.exit_code(), fencelab::exit::ExitCode::UnusableInput);
    assert!(
        err.message
            .contains("does not have the contract's API, so this is not a lab crate"),
        "{err}"
    );
    assert_eq!(err.message.lines().count(), 1, "{err}");
    assert!(
        err.next.as_deref().unwrap().contains("fencelab new"),
        "{err}"
    );
}

#[test]
fn a_step_checked_alone_says_what_was_not_checked_and_shows_its_fragment() {
    let (_dir, krate, lib) = new_crate(Lang::En);
    std::fs::write(krate.join("src/lib.rs"), filled(&lib, 2)).unwrap();
    let checked = check_step(&krate, Some(2));
    let text = fencelab::commands::check::render_check(
        &Layout::plain(),
        &checked,
        &Worksheet::builtin(),
        Lang::En,
    );
    assert!(!text.contains("Every step passes"), "{text}");
    assert!(
        text.contains("Step 2 passes. Not checked here: steps 1, 3, 4, 5, 6, 7, 8"),
        "{text}"
    );
    assert!(text.contains("+++ enqueue-"), "the fragment's diff: {text}");
    snapshot!("check_one_step_passes_en", text);
    let ja = fencelab::commands::check::render_check(
        &Layout::plain(),
        &checked,
        &Worksheet::builtin(),
        Lang::Ja,
    );
    snapshot!("check_one_step_passes_ja", ja);
}

/// Whether `text` (what `check` printed) shows `printed` in the printed block
/// of every failing test.
fn every_failure_shows(text: &str, printed: &str) -> Result<(), String> {
    let failures: Vec<&str> = text.split("\n  ✗ ").skip(1).collect();
    if failures.is_empty() {
        return Err(format!("no failing test in:\n{text}"));
    }
    for failure in failures {
        let block = failure.split("\n\n").next().unwrap_or("");
        if !(block.contains("printed:") && block.contains(printed)) {
            return Err(format!("no printed block in:\n{block}"));
        }
    }
    Ok(())
}

/// Three checks here (at least six failures that must each show the output),
/// seven more in `.ci/run`'s second step: ten in every `.ci/run`.
#[test]
fn what_the_learners_code_prints_shows_with_every_failing_test_every_time() {
    printed_output_shows_with_every_failure(3);
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn what_the_learners_code_prints_shows_with_every_failing_test_in_ten_checks() {
    printed_output_shows_with_every_failure(10 - 3);
}

/// A learner's `dbg!` names their file as they know it (`src/lib.rs`), never
/// the scratch crate fencelab builds it in (`crates/impl-<hash>/src/lib.rs`,
/// as before), in both languages; pinned as the learner reads it.
#[test]
fn a_dbg_in_the_learners_code_names_their_own_file() {
    let (_dir, krate, lib) = new_crate(Lang::En);
    // The worksheet's step 2 fragment, and a dbg! to see what enqueue got.
    let lib = filled(&lib, 2).replacen(
        "INSERT OR IGNORE INTO jobs",
        "INSERT OR REPLACE INTO jobs",
        1,
    );
    let at = lib.find("INSERT OR REPLACE").expect("enqueue's insert");
    let line_start = lib[..at].rfind('\n').unwrap() + 1;
    let lib = format!(
        "{}    dbg!(job_id);\n{}",
        &lib[..line_start],
        &lib[line_start..]
    );
    let line = lib[..lib.find("dbg!(job_id)").unwrap()].lines().count();
    std::fs::write(krate.join("src/lib.rs"), lib).unwrap();
    let checked = check_step(&krate, Some(2));
    assert_eq!(checked.first_failing().map(|s| s.step), Some(2));
    for lang in Lang::ALL {
        let text = fencelab::commands::check::render_check(
            &Layout::plain(),
            &checked,
            &Worksheet::builtin(),
            lang,
        );
        let dbg = format!("[src/lib.rs:{line}:5] job_id = \"job-1\"");
        match lang {
            Lang::En => every_failure_shows(&text, &dbg).unwrap_or_else(|p| panic!("{p}")),
            Lang::Ja => assert!(text.contains("出力:") && text.contains(&dbg), "{text}"),
        }
        assert!(
            !text.contains("crates/") && !text.contains("impl-"),
            "{text}"
        );
        snapshot!(format!("check_dbg_names_src_lib_rs_{}", lang.code()), text);
    }
}

/// `runs` checks of step 4 with a line printed in `claim`: every failure shows it.
fn printed_output_shows_with_every_failure(runs: usize) {
    let (_dir, krate, lib) = new_crate(Lang::En);
    // One eprintln! in claim, and the worksheet's bug, so that tests fail.
    let lib = filled(&lib, 4)
        .replace("if done || until > now {", "if done || until >= now {")
        .replacen(
            "let mut conn = open(path.as_ref())?;",
            "eprintln!(\"claim of {job_id} by {owner}\");\n    let mut conn = open(path.as_ref())?;",
            1,
        );
    assert!(
        lib.contains("eprintln!(\"claim of"),
        "the eprintln is in claim"
    );
    std::fs::write(krate.join("src/lib.rs"), lib).unwrap();
    // The race this guards against lost the output in most runs; ten runs
    // of step 4 find it however the threads fall.
    for run in 0..runs {
        let checked = check_step(&krate, Some(4));
        let first = checked.first_failing().expect("step 4 fails");
        assert!(first.failures.len() >= 2, "{first:?}");
        let text = fencelab::commands::check::render_check(
            &Layout::plain(),
            &checked,
            &Worksheet::builtin(),
            Lang::En,
        );
        if let Err(problem) = every_failure_shows(&text, "claim of job-1 by worker-") {
            panic!("run {run}: {problem}");
        }
    }
}

#[test]
fn verify_of_a_half_done_lab_says_one_line_per_step_not_started_and_ends_on_a_summary() {
    let (_dir, krate, lib) = new_crate(Lang::En);
    std::fs::write(krate.join("src/lib.rs"), filled(&lib, 4)).unwrap();
    let options = fencelab::commands::verify::Options {
        mutants: None,
        implementation: Some(krate.join("src/lib.rs")),
        root: krate.clone(),
        filters: vec!["claim-expiry-inclusive".to_string()],
        exact: true,
        timeout: None,
        build_timeout: None,
        jobs: 4,
        python: false,
    };
    let chosen = fencelab::commands::verify::load(&options).unwrap();
    let report =
        fencelab::commands::verify::run(&options, &chosen, &scratch(), &mut Quiet).unwrap();
    assert!(!report.baseline.passed);
    let text = fencelab::commands::verify::render_verify_report(&Layout::plain(), &report);
    for step in [
        "step 5 renew: not started",
        "step 8 claim_many: not started",
    ] {
        assert_eq!(text.matches(step).count(), 1, "{step}: {text}");
    }
    assert!(!text.contains("not yet implemented"), "{text}");
    let json = serde_json::to_string(&report).unwrap();
    for text in [&text, &json] {
        assert!(
            !text.contains("crates/") && !text.contains("/fencelab/ws"),
            "{text}"
        );
    }
    let last: Vec<&str> = text.trim_end().lines().rev().take(2).collect();
    assert!(last[1].starts_with("baseline failed: "), "{text}");
    assert!(last[1].contains("steps 5, 6, 7, 8 not started"), "{text}");
    assert!(last[0].contains("fencelab check"), "{text}");
    assert!(text.lines().count() < 20, "{text}");
}

/// Progress that says nothing.
struct Quiet;

impl fencelab::output::progress::Progress<fencelab::commands::verify::Update> for Quiet {
    fn engine(&mut self, _: &fencelab::engine::Event<'_>) {}
}

/// What the machine does not enforce is said in the learner's language: the
/// one `--lang` or the lab gives, not only the locale's (it was said in
/// English to a Japanese lab). `check --list` builds nothing.
#[test]
fn what_the_cage_cannot_enforce_is_said_in_the_labs_language() {
    let dir = tempfile::tempdir().unwrap();
    let lab = dir.path().join("lab");
    let fencelab = env!("CARGO_BIN_EXE_fencelab");
    let new = std::process::Command::new(fencelab)
        .args(["new", lab.to_str().unwrap(), "--lang", "ja"])
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert!(new.status.success(), "{new:?}");
    for (args, said) in [
        (
            vec!["check", "--list"],
            "試行のプロセス全体のメモリ: 上限なし",
        ),
        (
            vec!["check", "--list", "--lang", "en"],
            "memory across a trial's processes: not bounded",
        ),
    ] {
        let out = std::process::Command::new(fencelab)
            .args(&args)
            .current_dir(&lab)
            .env("LANG", "C.UTF-8")
            .env("FENCELAB_CAGE_WITHOUT", "memory")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}
