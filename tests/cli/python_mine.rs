//! Judging a learner's own Python tests (`grade --tests FILE.py`), on the
//! files of `tests/fixtures/python_mine/`: the Python wheats
//! (`wheats-python/`) are correct, five written differently; a test that
//! over-specifies is invalid naming the freedom it assumed; a thorough file
//! is valid and catches the Python mutants; hostile tests earn nothing and
//! leak nothing; a file judged twice gives the same report.
//!
//! A full judgement runs every test on 68 implementations (three runs of the
//! reference, eleven wheats, 54 mutants), each trial two Python processes:
//! the quick checks here judge against a sample of them, and the full ones
//! (the five wheats graded 100, the thorough file against every mutant) are
//! `#[ignore = "slow: .ci/run step 2"]`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use fencelab::judging::{self as mine, Invalid, Judges, TestsReport};
use fencelab::lab::wheat::Wheats;

use crate::common::root;

/// The full Python wheats, each a file of its own.
const FULL_WHEATS: [&str; 5] = ["exclusive", "lazy", "ledger", "returning", "upsert"];

/// One mutant of each step, a sample the quick checks judge against.
const SAMPLE: [&str; 8] = [
    "init_db-without-primary-key",
    "enqueue-insert-or-replace",
    "state-owner-and-result-swapped",
    "claim-expiry-inclusive",
    "renew-accepts-a-stale-fence",
    "complete-ignores-fence",
    "release-keeps-until",
    "claim_many-answers-reversed",
];

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/python_mine").join(name)
}

fn fencelab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fencelab"))
}

/// The Python judges with only the wheats and mutants named.
fn judges(wheats: &[&str], mutants: &[&str]) -> Judges {
    let mut judges = Judges::load_python(None, None).unwrap();
    judges
        .wheats
        .wheats
        .retain(|w| wheats.contains(&w.id.as_str()));
    judges.mutants.retain(|m| mutants.contains(&m.id.as_str()));
    assert_eq!(judges.wheats.wheats.len(), wheats.len(), "{wheats:?}");
    assert_eq!(judges.mutants.len(), mutants.len(), "{mutants:?}");
    judges
}

/// The variants' ids (single-freedom wheats), which name what a test assumed.
fn variants() -> Vec<String> {
    Wheats::builtin_python()
        .wheats
        .into_iter()
        .filter(|w| w.id.starts_with("variant-"))
        .map(|w| w.id)
        .collect()
}

fn judge(file: &Path, judges: &Judges) -> TestsReport {
    judge_within(file, judges, None)
}

/// `judge` with a time limit per test other than the policy's: for a check
/// whose subject is not time, so that a loaded machine (a Python trial
/// takes seconds at a load of 30 on 2 cores) cannot turn a slow pass into
/// a timeout and a valid test into an invalid one.
fn judge_within(file: &Path, judges: &Judges, timeout: Option<Duration>) -> TestsReport {
    let tests = mine::read(file).unwrap_or_else(|e| panic!("{e}"));
    let options = mine::Options {
        jobs: fencelab::engine::runner::default_jobs(),
        timeout,
        build_timeout: None,
        weights: Default::default(),
    };
    mine::judge(
        &tests,
        judges,
        &options,
        &crate::common::scratch(),
        &mut fencelab::output::progress::Silent,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn test<'a>(report: &'a TestsReport, name: &str) -> &'a mine::JudgedTest {
    report
        .tests
        .iter()
        .find(|t| t.test == name)
        .unwrap_or_else(|| panic!("no test {name} in {:#?}", report.tests))
}

/// Five full wheats, each a file of its own written differently (no two
/// alike, none the reference), with the contract's API; between them and
/// the variants every freedom of the catalogue is taken.
#[test]
fn the_python_wheats_are_five_files_written_differently() {
    let wheats = Wheats::builtin_python();
    let reference = fencelab::lab::python::REFERENCE;
    let mut codes = Vec::new();
    for id in FULL_WHEATS {
        let wheat = wheats.wheats.iter().find(|w| w.id == id).unwrap();
        let code = wheat.code(reference).unwrap();
        assert!(wheat.freedoms.len() >= 5, "{id} takes several freedoms");
        assert!(
            code.contains("def claim_many(") && code.contains("def init_db("),
            "{id} has the API"
        );
        assert_ne!(code, reference);
        assert!(!codes.contains(&code), "{id} is its own");
        codes.push(code);
    }
    let path = |id: &str| root().join("wheats-python").join(format!("{id}.py"));
    let file = |id: &str| std::fs::read_to_string(path(id)).unwrap();
    assert!(file("returning").contains("RETURNING"));
    assert!(file("exclusive").contains("BEGIN EXCLUSIVE"));
    assert!(file("upsert").contains("ON CONFLICT (id) DO UPDATE"));
    assert!(file("returning").contains("journal_mode = WAL"));
    assert!(file("ledger").contains("isolation_level=None"));
    for freedom in ["done-type", "until-type", "claim-many-winner", "error-text"] {
        assert!(
            wheats
                .wheats
                .iter()
                .any(|w| w.freedoms.iter().any(|f| f == freedom) && w.id.starts_with("variant-")),
            "{freedom} has a variant"
        );
    }
}

/// Each Python wheat passes the whole suite: `fencelab grade` scores it 100.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn every_python_wheat_is_graded_100() {
    let json = tempfile::NamedTempFile::new().unwrap();
    let mut command = fencelab();
    command.arg("grade");
    for id in FULL_WHEATS {
        command.arg(format!("wheats-python/{id}.py"));
    }
    let output = command
        // A correct implementation is what is graded, not how fast a loaded
        // machine runs five Python servers side by side: no budget to spend.
        .args(["--min-score", "100", "--budget", "3600", "--json"])
        .arg(json.path())
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
    let submissions = report["submissions"].as_array().unwrap();
    assert_eq!(submissions.len(), 5);
    for s in submissions {
        assert_eq!(s["score"].as_f64(), Some(100.0), "{}", s["file"]);
    }
}

/// Asserting the ValueError's message, which owner wins claim_many, the type
/// of `done` or what complete leaves in `owner`: each test passes on the
/// reference, is invalid, and is told the freedom it assumed (the one
/// variant that fails it); the plain test beside them is valid.
#[test]
fn over_specified_python_tests_are_invalid_naming_their_freedom() {
    let mut wheats: Vec<String> = variants();
    wheats.extend(["ledger", "upsert"].map(String::from));
    let wheats: Vec<&str> = wheats.iter().map(String::as_str).collect();
    let judges = judges(
        &wheats,
        &["claim-returns-the-old-fence", "claim-ignores-until"],
    );
    // Named as a learner in the project's root would (the tests run there):
    // the screens below show it.
    let report = judge(
        Path::new("tests/fixtures/python_mine/over_specified.py"),
        &judges,
    );
    assert!(
        report.compile_errors.is_none(),
        "{:?}",
        report.compile_errors
    );
    for (name, freedom) in [
        ("test_invalid_ttl_message", "error-text"),
        ("test_done_is_the_stored_integer", "done-type"),
        ("CompleteRow.test_complete_keeps_the_owner", "complete-row"),
        ("test_first_owner_wins", "claim-many-winner"),
    ] {
        let t = test(&report, name);
        assert!(!t.valid, "{name} over-specifies: {t:#?}");
        assert_eq!(t.assumed, [freedom], "{name}: {t:#?}");
        assert!(t.catches.is_empty());
        if freedom == "claim-many-winner" {
            // The reference's runs each let another owner win.
            assert_eq!(t.invalid, Some(Invalid::Racy), "{t:#?}");
        } else {
            assert_eq!(t.invalid, Some(Invalid::AssumesAFreedom), "{t:#?}");
            assert!(
                t.wrong_on.iter().all(|w| w.implementation != "reference"),
                "{name} passes on the reference: {:?}",
                t.wrong_on
            );
            assert_eq!(t.wrong_on[0].implementation, format!("variant-{freedom}"));
        }
    }
    // Failing on the reference, which answers done as 0, and passing on the
    // variant that answers False: it demands one side of a freedom.
    let t = test(&report, "test_done_is_false_before_completion");
    assert_eq!(t.invalid, Some(Invalid::AssumesAFreedom), "{t:#?}");
    assert_eq!(t.assumed, ["done-type"], "{t:#?}");
    assert_eq!(t.wrong_on[0].implementation, "reference", "{t:#?}");
    assert!(t.misconceptions.is_empty(), "{t:#?}");
    let message = &test(&report, "test_invalid_ttl_message").wrong_on[0].message;
    assert!(
        message.contains("AssertionError: a lease lasts a positive, finite time"),
        "the implementation's own message reached the test: {message}"
    );
    let plain = test(&report, "test_a_plain_valid_test");
    assert!(plain.valid, "{plain:#?}");
    assert!(!plain.catches.is_empty(), "{plain:#?}");
    // What `check --mine FILE.py` prints of it, at 80 columns, in both languages.
    let layout = fencelab::output::printer::Layout::plain().with_width(80);
    for lang in [fencelab::lab::lang::Lang::En, fencelab::lab::lang::Lang::Ja] {
        let screen = fencelab::commands::check::render_mine(&layout, &report, &judges, lang);
        for line in screen.lines() {
            assert!(
                fencelab::output::width::display_width(line) <= 80,
                "wider than 80: {line}"
            );
        }
        insta::assert_snapshot!(format!("python_check_mine_{lang}"), screen);
    }
}

/// The thorough file (20 tests: plain functions and a unittest class) is
/// valid on the reference and two of the full wheats (the one that decides
/// in Python, the one that writes in one statement), and catches one mutant
/// of each step. Valid on all five, and on every variant, is the step-2
/// check below (`grade --tests` with every wheat and mutant).
#[test]
fn a_thorough_python_file_is_valid_and_catches_a_mutant_of_each_step() {
    let judges = judges(&["ledger", "returning"], &SAMPLE);
    let report = judge_within(
        &fixture("thorough.py"),
        &judges,
        Some(Duration::from_secs(60)),
    );
    assert_eq!(report.tests.len(), 20, "{:#?}", report.tests);
    let invalid: Vec<&mine::JudgedTest> = report.tests.iter().filter(|t| !t.valid).collect();
    assert!(invalid.is_empty(), "{invalid:#?}");
    assert!(test(&report, "ClaimMany.test_one_winner_in_order").valid);
    let caught: usize = report.steps.iter().map(|s| s.caught).sum();
    assert_eq!(caught, SAMPLE.len(), "{:#?}", report.steps);
    assert_eq!(report.score, 100.0);
}

/// The thorough file against every Python mutant, as `grade --tests` runs it
/// (its wheats checked against the suite first): valid, and it catches
/// every one of the 54.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn a_thorough_python_file_catches_every_python_mutant() {
    let json = tempfile::NamedTempFile::new().unwrap();
    let output = fencelab()
        .args([
            "grade",
            "--tests",
            "tests/fixtures/python_mine/thorough.py",
            "--json",
        ])
        .arg(json.path())
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
    let s = &report["submissions"][0];
    assert!(s["invalid_tests"].is_null(), "{}", s["invalid_tests"]);
    let caught: u64 = (s["steps"].as_array().unwrap().iter())
        .map(|st| st["passed"].as_u64().unwrap())
        .sum();
    let total: u64 = (s["steps"].as_array().unwrap().iter())
        .map(|st| st["total"].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, fencelab::lab::python::mutants().len());
    assert_eq!(caught, total, "{}", s["steps"]);
}

/// Ending the process with success, printing a fake verdict, looping for
/// ever, forking a process that outlives the test, reading the
/// implementations' sources, reaching the network: none earns anything, the
/// plain test beside them still counts, nothing of an implementation reaches
/// the report, and nothing is left running.
#[test]
fn hostile_python_tests_earn_nothing_and_leak_nothing() {
    let judges = judges(&["ledger"], &["claim-ignores-until", "release-keeps-until"]);
    // The policy's limit (10 s): the endless loop costs it on every
    // implementation, and a Python trial takes seconds on a loaded machine.
    let report = judge(&fixture("hostile.py"), &judges);
    for name in [
        "test_ends_the_process_with_success",
        "test_loops_for_ever",
        "test_forks_a_process_that_outlives_it",
        "test_reads_the_implementations_sources",
    ] {
        let t = test(&report, name);
        assert!(!t.valid, "{name} fails on the reference: {t:#?}");
        assert!(t.catches.is_empty());
    }
    for name in ["test_prints_a_fake_verdict", "test_reaches_the_network"] {
        // Passing everywhere, it catches nothing.
        let t = test(&report, name);
        assert!(t.valid && t.catches.is_empty(), "{name}: {t:#?}");
    }
    let plain = test(&report, "test_a_plain_valid_test");
    assert!(plain.valid && !plain.catches.is_empty(), "{plain:#?}");
    let caught: usize = report.steps.iter().map(|s| s.caught).sum();
    assert_eq!(caught, plain.catches.len());
    // What the fork left is the test's, and the message says so.
    let forked = &test(&report, "test_forks_a_process_that_outlives_it").wrong_on[0].message;
    assert!(
        forked.contains("the test left processes running") && !forked.contains("implementation"),
        "{forked}"
    );
    let snooped = &test(&report, "test_reads_the_implementations_sources").wrong_on[0].message;
    assert!(
        snooped.contains("found 0 implementation sources"),
        "{snooped}"
    );
    assert!(
        snooped.contains("['fencelab_tests.py', '--exact'"),
        "its command line, named: {snooped}"
    );
    let json = serde_json::to_string(&report).unwrap();
    for secret in [
        "BEGIN IMMEDIATE",
        "fencelab_calls",
        "def claim_many",
        "hosted.json",
        "pyserver-",
        "impls/",
        // The judge's own scratch directory (in the stack and the command
        // line the test printed).
        "pyjudge-",
    ] {
        assert!(!json.contains(secret), "{secret} leaked into the report");
    }
    assert!(
        crate::common::eventually_none(|| crate::common::processes_named("sleep 304")).is_empty(),
        "what the fork left was killed"
    );
}

/// The report of `grade --tests` as JSON with the wheats and mutants given,
/// with 60 s a test: its subject is what a judgement says, not time, and at
/// a load of 40 a Python trial past the default 10 s made a valid test racy
/// in one judgement of two.
fn graded_json(file: &str, wheats: &Path, mutants: &Path) -> String {
    let json = tempfile::NamedTempFile::new().unwrap();
    let output = fencelab()
        .args(["grade", "--tests", file, "--timeout", "60", "--json"])
        .arg(json.path())
        .arg("--wheats")
        .arg(wheats)
        .arg("--mutants")
        .arg(mutants)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(json.path()).unwrap()
}

/// Judged twice, the same file gets the same JSON, byte for byte (there are
/// no timings in it), and what it says of the racy test is the same.
#[test]
fn a_python_file_judged_twice_gives_the_same_json() {
    // One wheat: `grade --tests` runs each through the whole suite before
    // it judges, twice here; the racy test is racy on the reference alone.
    let wheats = tempfile::tempdir().unwrap();
    for name in ["freedoms.toml", "variant-claim-many-winner.toml"] {
        std::fs::copy(
            root().join("wheats-python").join(name),
            wheats.path().join(name),
        )
        .unwrap();
    }
    let mutants = tempfile::tempdir().unwrap();
    for id in &SAMPLE[3..6] {
        let name = format!("{id}.toml");
        std::fs::copy(
            root().join("mutants-python").join(&name),
            mutants.path().join(&name),
        )
        .unwrap();
    }
    let file = "tests/fixtures/python_mine/over_specified.py";
    let first = graded_json(file, wheats.path(), mutants.path());
    let second = graded_json(file, wheats.path(), mutants.path());
    assert!(
        first.contains("test_first_owner_wins (racy on reference)"),
        "{first}"
    );
    if first != second {
        let diff = similar::TextDiff::from_lines(&first, &second)
            .unified_diff()
            .to_string();
        panic!("two judgements of one file differ:\n{diff}");
    }
}

/// A test file that does not compile cannot be judged: Python's message,
/// with the file as given and the line; one run judges one edition's tests.
#[test]
fn a_python_test_file_that_does_not_compile_or_mixes_editions_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("test_broken.py");
    std::fs::write(&broken, "import lease\n\ndef test_x(:\n    pass\n").unwrap();
    let report = judge(&broken, &judges(&["ledger"], &SAMPLE[..1]));
    let errors = report.compile_errors.expect("it does not compile");
    assert!(
        errors.contains(&format!("{}\", line 3", broken.display()))
            && errors.contains("SyntaxError"),
        "{errors}"
    );
    assert_eq!(report.exit_code, fencelab::exit::ExitCode::NotJudgeable);
    let rust = root().join("tests/fixtures/learner_tests/happy_path.rs");
    let output = fencelab()
        .args(["grade", "--tests"])
        .arg(&broken)
        .arg(&rust)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("one edition of the lab"), "{stderr}");
}

/// `check --mine FILE.py` judges a Python test file where it lies, against
/// the wheats and mutants given, in the learner's language.
#[test]
fn check_mine_judges_a_python_file() {
    let dir = tempfile::tempdir().unwrap();
    for (sub, from, name) in [
        ("w", "wheats-python", "freedoms.toml"),
        ("w", "wheats-python", "variant-done-type.toml"),
        ("m", "mutants-python", "claim-ignores-until.toml"),
    ] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::copy(
            root().join(from).join(name),
            dir.path().join(sub).join(name),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("test_mine.py"),
        "import lease\n\n\ndef test_claim(tmp_path):\n    db = tmp_path / \"jobs.db\"\n    \
         lease.init_db(db)\n    lease.enqueue(db, \"j\")\n    \
         assert lease.claim(db, \"j\", \"a\", 1.0, 5.0) == 1\n    \
         assert lease.claim(db, \"j\", \"b\", 2.0, 5.0) is None\n",
    )
    .unwrap();
    for (lang, said) in [
        ("en", "1 test, 1 valid"),
        ("ja", "テスト 1 件のうち 1 件が妥当"),
    ] {
        let output = fencelab()
            .args([
                "check",
                "--mine",
                "test_mine.py",
                "--wheats",
                "w",
                "--mutants",
                "m",
            ])
            .args(["--lang", lang])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains(said), "{stdout}");
        assert!(
            stdout.contains("fencelab check --mine test_mine.py"),
            "{stdout}"
        );
    }
}
