//! The instructor's content is checked before it is used, and never breaks a
//! run: equal sources anywhere in one engine run are told apart (each
//! scenario its own result); a wheat equal to a mutant, and a wheat that
//! fails fencelab's suite, are refused naming the files (exit 2) in `check
//! --mine` and `grade --tests`. A single test file written from the lab's
//! template is graded, its helpers supplied, its errors naming it.

use std::path::Path;
use std::process::{Command, Output};

use fencelab::engine::builder::Implementation;
use fencelab::engine::policy::{Policy, Trust};
use fencelab::engine::{self, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use fencelab::lab::reference::REFERENCE;
use fencelab::lab::suite::{self, SuiteFiles};

use crate::common::{changed_reference, root};

/// The mutant the wheats below copy, and the test of the suite that kills it.
const MUTANT: &str = "mutants/claim-expiry-inclusive.toml";
const KILLER: &str = "step4::reclaims_at_exact_expiry";

fn fencelab(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .current_dir(dir)
        .args(["--color", "never"])
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr)
    );
    (status.code(), text)
}

#[test]
fn equal_sources_anywhere_in_a_run_each_get_their_own_result() {
    // The reference, a mutant, the reference again: the server hosts the
    // reference's crate once, and must not be taken for another build
    // because the list of implementations names it twice (this was exit 4).
    let (_, mutated) = changed_reference(&root().join(MUTANT));
    let implementation = |source: &str| Implementation {
        shown_path: "src/lease.rs".to_string(),
        source: source.to_string(),
    };
    let request = Request {
        policy: Policy::of(Trust::Instructor),
        suite: SuiteFiles::builtin(),
        implementations: vec![
            implementation(REFERENCE),
            implementation(&mutated),
            implementation(REFERENCE),
        ],
        scenarios: (0..3)
            .map(|implementation| Scenario {
                kind: ScenarioKind::Tests,
                implementation,
                tests: Tests::Only(vec![suite::test_named(KILLER)]),
            })
            .collect(),
        jobs: 2,
    };
    let scratch = crate::common::scratch();
    let run = engine::run(&scratch, &request, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let passed: Vec<bool> = run
        .results
        .iter()
        .map(|r| match r {
            ScenarioResult::Ran { tests } => tests[0].passed(),
            other => panic!("not run: {other:?}"),
        })
        .collect();
    assert_eq!(passed, [true, false, true]);
}

/// A lab crate whose own tests are one trivial test.
fn lab() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests/mine")).unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"lab\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tests/mine/main.rs"),
        "use lab as lease;\n\n#[test]\nfn nothing() {}\n",
    )
    .unwrap();
    dir
}

/// A wheats directory (fencelab's catalogue of freedoms) holding one wheat,
/// `id`, that changes the reference's `find` into `replace`.
fn wheats(dir: &Path, id: &str, find: &str, replace: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(
        root().join("wheats/freedoms.toml"),
        dir.join("freedoms.toml"),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("{id}.toml")),
        format!(
            "title = {{ ja = \"x\", en = \"x\" }}\nfreedoms = [\"error-text\"]\n\
             find = {find:?}\nreplace = {replace:?}\n[explanation]\nja = \"x\"\nen = \"x\"\n"
        ),
    )
    .unwrap();
}

/// `check --mine` and `grade --tests` with the wheats at `wheats`: each must
/// refuse them, exit 2, saying all of `said`.
fn refused_by_both(wheats: &Path, said: &[&str]) {
    let lab = lab();
    let lab_dir = lab.path().to_str().unwrap();
    let wheats = wheats.to_str().unwrap();
    for args in [
        ["check", "--mine", lab_dir, "--wheats", wheats],
        ["grade", "--tests", lab_dir, "--wheats", wheats],
    ] {
        let (code, text) = fencelab(&args, root());
        assert_eq!(code, Some(2), "{args:?}: {text}");
        for s in said {
            assert!(text.contains(s), "{args:?} does not say {s:?}: {text}");
        }
        assert!(!text.contains("bug in fencelab"), "{text}");
    }
}

#[test]
fn a_wheat_equal_to_a_mutant_is_refused_naming_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let wheats_dir = dir.path().join("my-wheats");
    wheats(
        &wheats_dir,
        "same",
        "if done || until > now {",
        "if done || until >= now {",
    );
    refused_by_both(
        &wheats_dir,
        &[
            &format!(
                "{} and fencelab's built-in mutant claim-expiry-inclusive ({MUTANT})",
                wheats_dir.join("same.toml").display()
            ),
            "are the same implementation",
            "next:",
        ],
    );
}

#[test]
fn a_wheat_that_fails_the_suite_is_refused_with_its_failing_tests() {
    let dir = tempfile::tempdir().unwrap();
    let wheats_dir = dir.path().join("my-wheats");
    // The mutant's bug, written otherwise: not equal to it, and broken.
    wheats(
        &wheats_dir,
        "broken",
        "if done || until > now {",
        "if done || now <= until {",
    );
    refused_by_both(
        &wheats_dir,
        &[
            &format!(
                "{} is not correct: it fails",
                wheats_dir.join("broken.toml").display()
            ),
            KILLER,
            "fix or remove the wheat: like the reference, a wheat passes every test",
            "next:",
        ],
    );
}

#[test]
fn grade_tests_grades_a_single_file_written_from_the_template() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text) = fencelab(&["new", "--lang", "en", "alice-lab"], dir.path());
    assert_eq!(code, Some(0), "{text}");
    let template =
        std::fs::read_to_string(dir.path().join("alice-lab/tests/mine/main.rs")).unwrap();
    assert!(template.contains("mod helpers;"), "{template}");
    std::fs::write(dir.path().join("alice_tests.rs"), &template).unwrap();
    // What the file is judged against does not matter here (the judges are
    // `learner_tests`' subject): one wheat, and two mutants, one of which
    // the template's example test catches.
    let judges = dir.path().join("judges");
    let (wheats_dir, mutants_dir) = (judges.join("wheats"), judges.join("mutants"));
    std::fs::create_dir_all(&wheats_dir).unwrap();
    std::fs::create_dir_all(&mutants_dir).unwrap();
    for file in ["freedoms.toml", "variant-error-text.toml"] {
        std::fs::copy(root().join("wheats").join(file), wheats_dir.join(file)).unwrap();
    }
    for file in ["enqueue-always-true.toml", "claim-expiry-inclusive.toml"] {
        std::fs::copy(root().join("mutants").join(file), mutants_dir.join(file)).unwrap();
    }
    let json = dir.path().join("grade.json");
    let grade_tests = [
        "grade",
        "--tests",
        "alice_tests.rs",
        "--wheats",
        wheats_dir.to_str().unwrap(),
        "--mutants",
        mutants_dir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    let (code, text) = fencelab(&grade_tests, dir.path());
    assert_eq!(code, Some(0), "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let alice = &report["submissions"][0];
    assert!(alice["compile_errors"].is_null(), "{alice}");
    assert!(alice["invalid_tests"].is_null(), "{alice}");
    assert!(alice["score"].as_f64().unwrap() > 0.0, "{alice}");
    assert_eq!(alice["file"], "alice_tests.rs", "{alice}");

    // An error in it is named by the path given, never by the judge crate's.
    std::fs::write(
        dir.path().join("alice_tests.rs"),
        format!("{template}\nfn broken() -> u32 {{ \"not a number\" }}\n"),
    )
    .unwrap();
    let (code, text) = fencelab(&grade_tests, dir.path());
    assert_eq!(code, Some(3), "{text}");
    let report = std::fs::read_to_string(&json).unwrap();
    for shown in [&text, &report] {
        assert!(shown.contains("alice_tests.rs:"), "{shown}");
        assert!(!shown.contains("tests/mine/main.rs"), "{shown}");
    }
}

/// Every shipped wheat through every test of the suite, inside `verify` of
/// the reference (~2,300 trials) whose one mutant is as declared, so that
/// passing wheats leave the exit code 0: `.ci/run`'s second step. In
/// `cargo test`, `verify_outcomes::every_shipped_wheat_passes_...` reads
/// the wheats of its shared `verify` of src/lease.rs (each through every
/// test; its exit code is another's, its fixture mutants not as declared),
/// and `verify`'s report of the wheats is pinned by `verify::render`'s unit
/// tests.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn verify_runs_the_shipped_wheats_beside_the_mutants_and_reports_them() {
    use fencelab::commands::verify::{self, Options, Update};
    use fencelab::output::progress::Progress;
    struct Quiet;
    impl Progress<Update> for Quiet {
        fn engine(&mut self, _: &fencelab::engine::Event<'_>) {}
    }
    // One mutant of the reference, so that the run is small; every wheat joins
    // it. The implementation is fencelab's own src/lease.rs, given as a file,
    // as `verify` in fencelab's project runs it (the README's main job).
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join(MUTANT),
        dir.path().join("claim-expiry-inclusive.toml"),
    )
    .unwrap();
    let options = Options {
        mutants: Some(dir.path().to_path_buf()),
        implementation: Some(root().join("src/lease.rs")),
        root: root().to_path_buf(),
        filters: Vec::new(),
        exact: false,
        timeout: None,
        build_timeout: None,
        jobs: fencelab::engine::runner::default_jobs(),
        python: false,
    };
    let mutants = verify::load(&options).unwrap();
    let scratch = crate::common::scratch();
    let report = verify::run(&options, &mutants, &scratch, &mut Quiet).unwrap();
    let shipped = fencelab::lab::wheat::Wheats::builtin().wheats.len();
    let wheats = report
        .wheats
        .as_ref()
        .expect("the shipped wheats were checked");
    assert_eq!(
        (wheats.checked, wheats.passed),
        (shipped, shipped),
        "{:#?}",
        wheats.failed
    );
    assert_eq!(report.summary.exit_code.code(), 0);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["wheats"]["checked"], shipped);
    assert_eq!(json["wheats"]["failed"], serde_json::json!([]));
    let printer = fencelab::output::printer::Layout::plain();
    let text = fencelab::commands::verify::render_verify_report(&printer, &report);
    assert!(
        text.contains(&format!("all {shipped} wheats pass the suite")),
        "{text}"
    );
}

#[test]
fn the_rerun_hint_of_verify_runs_the_same_mutants_of_the_same_code() {
    // Outside fencelab's project, with its own implementation and mutants:
    // a hint without --impl and --mutants ran the built-in ones instead.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lease.rs"), REFERENCE).unwrap();
    let mutants = dir.path().join("my mutants");
    std::fs::create_dir(&mutants).unwrap();
    // A killer that does not kill: not as declared, so a hint is printed.
    let text = std::fs::read_to_string(root().join(MUTANT))
        .unwrap()
        .replace(KILLER, "step1::creates_the_six_columns");
    std::fs::write(mutants.join("claim-expiry-inclusive.toml"), text).unwrap();
    // No --impl: the built-in reference, named so by the terminal and the
    // JSON alike (the JSON said src/lease.rs). Named, so that the shipped
    // wheats (a whole run's, ~2,300 trials) stay out: the hint names no filter.
    let args = [
        "verify",
        "claim-expiry-inclusive",
        "--mutants",
        "my mutants",
        "--json",
        "r.json",
    ];
    let (code, first) = fencelab(&args, dir.path());
    assert_eq!(code, Some(1), "{first}");
    assert!(
        first.contains("1 mutant of the built-in reference"),
        "{first}"
    );
    let json = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["implementation"], "the built-in reference");
    let hint = first
        .lines()
        .find_map(|l| l.strip_prefix("rerun them with: "))
        .unwrap_or_else(|| panic!("no hint in:\n{first}"));
    assert!(hint.starts_with("fencelab verify "), "{hint}");
    let bin = Path::new(env!("CARGO_BIN_EXE_fencelab")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), crate::common::graders_path());
    let again = Command::new("sh")
        .args(["-c", &format!("{hint} --color never")])
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(again.status.code(), Some(1), "{hint}:\n{text}");
    assert!(
        text.contains("1 mutant of the built-in reference from my mutants"),
        "{text}"
    );
    assert_eq!(
        text.lines()
            .find_map(|l| l.strip_prefix("rerun them with: ")),
        Some(hint),
        "{text}"
    );
}
