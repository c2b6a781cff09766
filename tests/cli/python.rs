//! The Python edition: the Python reference (`python/lease.py`) passes every
//! test of the suite, and every Python mutant (`mutants-python/`) is killed as
//! its file declares, through the same engine as `fencelab verify --python`.
//! Every test of the suite applies to Python (python/CONTRACT.md).
//!
//! The whole Python matrix is slow (every test of every mutant, one Python
//! server a trial): it is `#[ignore]`d and run by `.ci/run`'s step 2
//! (`cargo test -- --ignored`); step 1 runs the reference and three mutants.

use std::path::{Path, PathBuf};
use std::process::Command;

use fencelab::commands::verify::{self, Report, Update};
use fencelab::engine::Event;
use fencelab::lab::mutant::Mutant;
use fencelab::lab::python;
use fencelab::output::printer::Layout;
use fencelab::output::progress::Progress;

struct Quiet;

impl Progress<Update> for Quiet {
    fn engine(&mut self, _: &Event<'_>) {}
}

fn options(filters: &[&str]) -> verify::Options {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    verify::Options {
        mutants: Some(root.join(python::MUTANTS_DIR)),
        implementation: Some(root.join(python::FILE)),
        root: root.to_path_buf(),
        filters: filters.iter().map(|f| f.to_string()).collect(),
        exact: true,
        timeout: None,
        build_timeout: None,
        jobs: fencelab::engine::runner::default_jobs(),
        python: true,
    }
}

/// Runs `verify --python` on the mutants `filters` (all when empty) and
/// fails, with verify's own details, unless the baseline passed every test
/// and every mutant is as declared.
fn verify_python(filters: &[&str]) -> Report {
    let options = options(filters);
    let mutants = verify::load(&options).expect("the Python mutants load");
    let scratch = crate::common::scratch();
    let report = verify::run(&options, &mutants, &scratch, &mut Quiet).expect("verify runs");
    assert!(
        report.baseline.passed && report.baseline.compile_errors.is_none(),
        "the Python reference fails the suite: {:?}",
        report
            .baseline
            .tests
            .iter()
            .filter(|t| !t.runs.iter().all(|r| r.passed()))
            .map(|t| t.test.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        report.baseline.tests.len(),
        fencelab::lab::suite::tests().len(),
        "every test of the suite applies to Python"
    );
    let layout = Layout::plain();
    let wrong: Vec<String> = report
        .mutants
        .iter()
        .filter(|m| !m.as_declared)
        .map(|m| verify::render_mutant_details(&layout, m))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(report.mutants.len(), mutants.len());
    report
}

#[test]
fn the_python_reference_passes_the_suite_and_three_mutants_are_killed_as_declared() {
    verify_python(&[
        "enqueue-insert-or-replace",
        "claim-expiry-inclusive",
        "release-resets-fence",
    ]);
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn every_python_mutant_is_killed_as_declared() {
    let report = verify_python(&[]);
    // Every test of the suite is a declared killer of at least one Python
    // mutant. (The race across processes is claim-ignores-until's, as in
    // the Rust edition: with until ignored every claim wins, in whatever
    // order the processes come, so no load can save that mutant.)
    let declared: std::collections::BTreeSet<&str> = report
        .mutants
        .iter()
        .flat_map(|m| m.killers.iter().map(String::as_str))
        .collect();
    let idle: Vec<String> = fencelab::lab::suite::tests()
        .into_iter()
        .map(|t| t.name)
        .filter(|t| !declared.contains(t.as_str()))
        .collect();
    assert!(idle.is_empty(), "no Python mutant declares {idle:?}");
}

/// The worksheet's eight broken fragments (the original worksheet is written
/// for Python), exactly as it prints them, one per step.
const WORKSHEET_FRAGMENTS: [&str; 8] = [
    "CREATE TABLE jobs",
    "INSERT OR REPLACE INTO jobs",
    "if row else {}",
    "row[0] >= now",
    "AND until>=?\", (now+ttl",
    "AND done>=0 AND until>?\", (result",
    "SET owner=NULL,until=0,fence=0 WHERE",
    "return [claim(path,job_id,owners[0],now,ttl)]",
];

#[test]
fn each_worksheet_fragment_is_the_python_mutant_of_its_step() {
    let mutants = python::mutants();
    for (i, fragment) in WORKSHEET_FRAGMENTS.iter().enumerate() {
        let step = i as u32 + 1;
        let shown: Vec<&Mutant> = mutants
            .iter()
            .filter(|m| m.step == step && m.worksheet)
            .collect();
        assert_eq!(shown.len(), 1, "step {step}: one worksheet mutant");
        let m = shown[0];
        assert!(
            m.replace.contains(fragment) && !m.find.contains(fragment),
            "step {step}: {} does not put the worksheet's fragment {fragment:?} in",
            m.id
        );
        let mutated = m.apply(python::REFERENCE).expect("it applies");
        assert!(mutated.contains(fragment));
        assert!(!python::REFERENCE.contains(fragment), "{fragment}");
    }
}

#[test]
fn every_python_mutant_applies_to_the_python_reference_and_explains_itself() {
    let mutants = python::mutants();
    assert!(mutants.len() >= 40, "{}", mutants.len());
    for m in &mutants {
        assert_eq!(m.file, Path::new(python::FILE), "{}", m.id);
        m.apply(python::REFERENCE)
            .unwrap_or_else(|_| panic!("{} is stale", m.id));
        assert!(!m.explanation.ja.is_empty() && !m.explanation.en.is_empty());
    }
}

fn fencelab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fencelab"))
}

/// A filter that matches no Python mutant points to the list of the Python
/// mutants, not of the Rust ones (whose ids it would not find there).
#[test]
fn a_python_filter_matching_nothing_points_to_the_python_list() {
    let output = fencelab()
        .args(["verify", "--python", "--exact", "no-such-mutant"])
        .current_dir(crate::common::root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no mutant in mutants-python matches no-such-mutant"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`fencelab verify --python --list`"),
        "{stderr}"
    );
}

#[test]
fn without_python_a_python_command_says_what_to_install_in_one_line() {
    let empty = tempfile::tempdir().unwrap();
    let output = fencelab()
        .args([
            "verify",
            "--python",
            "--lang",
            "en",
            "claim-expiry-inclusive",
        ])
        .env("PATH", empty.path())
        .env_remove("FENCELAB_PYTHON")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(error.len(), 1, "{stderr}");
    assert!(
        error[0].contains("Python 3.10 or newer") && error[0].contains("python3"),
        "{stderr}"
    );
    assert!(stderr.contains("install Python 3.10 or newer"), "{stderr}");
}

#[test]
fn a_python_too_old_is_named_with_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("python3");
    std::fs::write(
        &old,
        "#!/bin/sh\necho '[\"/usr/bin/python3.8\", [3, 8, 10], \"/usr\", \"/usr\"]'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = fencelab()
        .args([
            "verify",
            "--python",
            "--lang",
            "en",
            "claim-expiry-inclusive",
        ])
        .env("FENCELAB_PYTHON", &old)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("is Python 3.8.10"), "{stderr}");
}

/// What no report of a Python submission may hold: the grader's
/// environment, and a classmate's submission.
const TOKEN: &str = "fencelab-attack-token-93c1";
const PEER_MARKER: &str = "PEER-SECRET-7f3a9c";

/// The hostile Python submissions of tests/fixtures/python/ and the Python
/// reference, graded in one run: each hostile one earns nothing for the
/// calls it subverts, the reference beside them still scores 100, a syntax
/// error is "does not compile" with Python's message and line, nothing is
/// written outside a trial and no process is left running.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn hostile_python_submissions_get_no_credit_and_break_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    // Each hostile submission is the reference with one change
    // (tests/fixtures/python/NAME.toml, in the mutants' format).
    let python_reference = std::fs::read_to_string(root.join(python::FILE)).unwrap();
    // A listener on the grader's own loopback, which no trial may reach.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let fixtures = dir.path().join("submissions");
    std::fs::create_dir(&fixtures).unwrap();
    // Where a submission that got out would write: the grader's home (in
    // the cage, HOME is the trial's own directory) and the submissions'.
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()));
    for entry in std::fs::read_dir(root.join("tests/fixtures/python")).unwrap() {
        let change = entry.unwrap().path();
        let (_, source) = crate::common::changed(&change, &python_reference);
        let source = source
            .replace("GRADER_PORT", &port)
            .replace(
                "PEER_PATH",
                &dir.path().join("honest.py").display().to_string(),
            )
            .replace("ROOT_DIR", &root.display().to_string())
            .replace("HOME_DIR", &home.display().to_string())
            .replace("SUBMISSIONS_DIR", &fixtures.display().to_string());
        let name = change.with_extension("py");
        std::fs::write(fixtures.join(name.file_name().unwrap()), source).unwrap();
    }
    // A classmate's submission, marked so that a copy of it would show.
    let reference = dir.path().join("honest.py");
    std::fs::write(
        &reference,
        python_reference.replacen('\n', &format!("\n# {PEER_MARKER}\n"), 1),
    )
    .unwrap();
    // The links the judge must never follow (`links_for_the_judge`) point
    // at the first of them, and at it with a journal's suffix.
    let escapes = [
        PathBuf::from("/tmp/fencelab-python-escape"),
        PathBuf::from("/tmp/fencelab-python-escape-journal"),
        PathBuf::from("/tmp/fencelab-python-escape-wal"),
        home.join("fencelab-python-escape"),
        fixtures.join("fencelab-python-escape"),
    ];
    for escape in &escapes {
        let _ = std::fs::remove_file(escape);
    }
    let hostile = [
        "exits_in_claim.py",
        "prints_a_fake_summary.py",
        "loops_in_claim.py",
        "forks_in_claim.py",
        "writes_outside.py",
        "links_for_the_judge.py",
        "reaches_out_in_claim.py",
        "reads_what_is_not_its_own.py",
        "syntax_error.py",
    ];
    let json = dir.path().join("grade.json");
    let output = fencelab()
        .env("FENCELAB_ATTACK_TOKEN", TOKEN)
        .env("PATH", crate::common::graders_path())
        .arg("grade")
        .args(hostile.iter().map(|f| fixtures.join(f)))
        .arg(&reference)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let text = std::fs::read_to_string(&json).unwrap_or_else(|_| {
        panic!(
            "grade wrote no report:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let of = |name: &str| {
        report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} is not in the report"))
            .clone()
    };
    let claim_passed = |s: &serde_json::Value| s["steps"][3]["passed"].as_u64().unwrap();
    assert_eq!(of("honest.py")["score"].as_f64(), Some(100.0), "{stdout}");
    // What they subvert earns nothing in claim's step: not even the race
    // across processes, whose claiming children each find the fork's
    // leftover and fail (before, the parent took their printed answers and
    // passed the forking submission).
    for name in [
        "exits_in_claim.py",
        "loops_in_claim.py",
        "forks_in_claim.py",
        "reads_what_is_not_its_own.py",
    ] {
        let s = of(name);
        assert_eq!(claim_passed(&s), 0, "{name}: {stdout}");
        assert!(s["score"].as_f64().unwrap() < 80.0, "{name}: {stdout}");
    }
    // Printing libtest's own success line and a score changes no verdict:
    // only the tests a constant fence 1 happens to satisfy pass.
    let fake = of("prints_a_fake_summary.py");
    assert!(claim_passed(&fake) <= 2, "{stdout}");
    assert!(fake["score"].as_f64().unwrap() < 80.0, "{stdout}");
    // Its writes outside the trial were refused; otherwise it is correct.
    assert_eq!(of("writes_outside.py")["score"].as_f64(), Some(100.0));
    // The links it planted fail its own tests: the judge refuses to follow.
    let links = of("links_for_the_judge.py");
    assert!(links["score"].as_f64().unwrap() < 100.0, "{stdout}");
    for escape in &escapes {
        let escaped = escape.exists();
        let _ = std::fs::remove_file(escape);
        assert!(!escaped, "a submission wrote {}", escape.display());
    }
    // Nothing it tried on the network reached anything (it returns a wrong
    // fence when something answered): the server forked per trial is in the
    // submission's closed network, as a server its judge starts.
    assert_eq!(
        of("reaches_out_in_claim.py")["score"].as_f64(),
        Some(100.0),
        "{stdout}"
    );
    assert!(
        listener.accept().is_err(),
        "a submission reached the grader's loopback"
    );
    // What it looked for reached it (it says so in every claim), and none
    // of what is not its own did: the grader's environment, the classmate,
    // the instructor's files, another process, the forking server's objects.
    let looked = of("reads_what_is_not_its_own.py");
    let told: Vec<&str> = looked["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["message"].as_str())
        .filter(|m| m.contains("STOLEN ["))
        .collect();
    assert!(!told.is_empty(), "the probe ran: {stdout}");
    // Its server's frames are there (where claim runs on the server's
    // thread, not claim_many's pool), named as the server is shown.
    assert!(
        told.iter()
            .any(|m| m.contains("File \"fencelab_server.py\", line")),
        "{told:?}"
    );
    assert!(
        told.iter()
            .all(|m| m.contains(&format!("PATH={} | ", crate::common::SYSTEM_PATH))),
        "it read its environment: {told:?}"
    );
    for secret in [
        TOKEN,
        "fencelab-attack-token",
        PEER_MARKER,
        "deliberate break of an implementation",
        ".toml",
        "CARGO",
        "root:x:0",
        // The grader's PATH and home, fencelab's own variables (the
        // server's path, under the scratch workspace, and its key).
        "grader-7c1e",
        ".cargo",
        "FENCELAB_",
        "pyserver-",
        // Where fencelab keeps its server (its frames in a traceback the
        // submission printed or raised, its command line).
        "pyroot-",
        "target/fencelab",
        "impl-",
    ] {
        assert!(
            !text.contains(secret) && !stdout.contains(secret),
            "{secret} reached the report: {told:?}"
        );
    }
    let broken = of("syntax_error.py");
    let errors = broken["compile_errors"].as_str().unwrap();
    assert!(
        errors.contains("syntax_error.py\", line 112") && errors.contains("SyntaxError"),
        "{errors}"
    );
    // No server of theirs outlives its trial (the fork's child included).
    let keys: Vec<String> = hostile
        .iter()
        .map(|f| {
            let source = std::fs::read_to_string(fixtures.join(f)).unwrap();
            format!(
                "fencelab_server.py serve py-{}",
                fencelab::engine::scratch::hash_of([source.as_str()])
            )
        })
        .collect();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| keys.iter().any(|k| c.contains(k.as_str())))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_grade_mixing_python_and_rust_submissions_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("alice.py");
    let rs = dir.path().join("bob.rs");
    std::fs::write(&py, python::REFERENCE).unwrap();
    std::fs::write(&rs, fencelab::lab::reference::REFERENCE).unwrap();
    let output = fencelab().arg("grade").arg(&py).arg(&rs).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("alice.py is a Python submission") && stderr.contains("next:"),
        "{stderr}"
    );
}
