//! Attacks on the build, which runs outside the cage: a flood of warnings,
//! a macro that doubles until it has taken the memory, and constant
//! evaluation that never ends, in one batch beside correct submissions.
//! Each bomb fails alone with its reason, and only the bombs meet the build
//! limit; the correct ones score 100, each test's verdict as without them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::common::root;

/// The build limit of these batches: every bomb meets it, nothing else.
const LIMIT: f64 = 30.0;

/// Grades `files` with `--build-timeout LIMIT`: the report.
fn grade(dir: &Path, files: &[PathBuf]) -> serde_json::Value {
    let json = dir.join(format!("grade-{}.json", files.len()));
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .arg("grade")
        .args(files)
        .args(["--build-timeout", &LIMIT.to_string(), "--json"])
        .arg(&json)
        .env("NO_COLOR", "1")
        .current_dir(root())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("no report: {out:?}"));
    serde_json::from_str(&text).unwrap()
}

/// The submission whose name ends with `name`.
fn submission<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

/// Each test of the submission `name`: its name, outcome and message.
fn verdicts(report: &serde_json::Value, name: &str) -> Vec<(String, String, String)> {
    let field = |t: &serde_json::Value, key: &str| t[key].as_str().unwrap_or_default().to_string();
    submission(report, name)["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (field(t, "test"), field(t, "outcome"), field(t, "message")))
        .collect()
}

fn reason(report: &serde_json::Value, name: &str) -> String {
    let s = submission(report, name);
    assert_eq!(s["score"], 0.0, "{name}: {s}");
    s["compile_errors"].as_str().unwrap_or_default().to_string()
}

/// What the bombs cost is counted, not timed: which builds met the limit
/// (the bombs' alone), and whether the others' verdicts changed (none did).
#[test]
fn build_bombs_fail_alone_and_leave_every_other_verdict_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let reference = fencelab::lab::reference::REFERENCE;
    // Each run's files are new to the scratch cache, so both runs build.
    let tag = format!(
        "{:x}",
        std::process::id() as u64 ^ Instant::now().elapsed().as_nanos() as u64
    );
    let write = |name: &str, source: String| {
        let file = dir.path().join(name);
        std::fs::write(&file, format!("{source}\n// {tag}\n")).unwrap();
        file
    };
    let flood: String = (0..60_000)
        .map(|i| format!("    let a{i} = {i};\n"))
        .collect();
    let correct = vec![
        write("correct.rs", reference.to_string()),
        write(
            "warnings.rs",
            format!("{reference}\n#[allow(dead_code)]\nfn flood() {{\n{flood}}}\n"),
        ),
    ];
    let alone = grade(dir.path(), &correct);
    for s in alone["submissions"].as_array().unwrap() {
        assert_eq!(s["score"], 100.0, "{s}");
    }
    let bomb = "macro_rules! bomb {\n    () => {};\n    ($t:tt $($rest:tt)*) => { bomb!($($rest)* $($rest)*); };\n}\n\
                bomb!(x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x);\n";
    let forever = |name: &str| {
        format!(
            "#![allow(long_running_const_eval)]\n{reference}\npub const {name}: u64 = {{\n    \
             let mut i = 0u64;\n    while i < u64::MAX {{\n        i += 1;\n    }}\n    i\n}};\n"
        )
    };
    let mut batch = vec![
        write("correct2.rs", reference.to_string()),
        write(
            "warnings2.rs",
            format!("{reference}\n#[allow(dead_code)]\nfn flood() {{\n{flood}}}\n"),
        ),
        write("memory_bomb.rs", format!("{reference}\n{bomb}")),
        write("forever.rs", forever("FOREVER")),
        write("forever_too.rs", forever("FOREVER_TOO")),
    ];
    batch.sort();
    let report = grade(dir.path(), &batch);
    // Beside the bombs, each correct file's tests end as they did alone.
    for (name, beside) in [
        ("correct.rs", "correct2.rs"),
        ("warnings.rs", "warnings2.rs"),
    ] {
        let s = submission(&report, beside);
        assert_eq!(s["score"], 100.0, "{beside}: {s}");
        assert!(s["compile_errors"].is_null(), "{beside}: {s}");
        assert_eq!(
            verdicts(&report, beside),
            verdicts(&alone, name),
            "{beside}"
        );
    }
    // Which limit a memory bomb meets first is the machine's: on a loaded
    // one, 30 s come before 4 GiB. Either way it fails alone, with it said.
    let bomb = reason(&report, "memory_bomb.rs");
    assert!(
        bomb.contains("more than 4 GiB of memory") || bomb.contains("took longer than 30 s"),
        "{report}"
    );
    for name in ["forever.rs", "forever_too.rs"] {
        assert!(
            reason(&report, name).contains("took longer than 30 s"),
            "{name}: {report}"
        );
    }
    // The builds that met the limit: the bombs', and no other.
    let limited: Vec<&str> = (report["submissions"].as_array().unwrap().iter())
        .filter(|s| {
            (s["compile_errors"].as_str()).is_some_and(|e| e.contains("took longer than 30 s"))
        })
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        limited.len() >= 2
            && limited
                .iter()
                .all(|n| n.contains("forever") || n.contains("bomb")),
        "{limited:?}"
    );
}

/// `grade --tests` holds as `grade` does: a learner's compile bomb fails at
/// `--build-timeout`, alone; a suite that sleeps costs its tests their
/// validity, not the class its run; a plain file beside them is graded.
#[test]
fn a_learners_bomb_and_sleeping_tests_cost_only_their_own_grade() {
    let dir = tempfile::tempdir().unwrap();
    let plain = "use lab as lease;\n\n#[test]\nfn a_new_job_is_enqueued_once() {\n    \
                 let dir = tempfile::tempdir().unwrap();\n    let db = dir.path().join(\"jobs.db\");\n    \
                 lease::init_db(&db).unwrap();\n    assert!(lease::enqueue(&db, \"job-1\").unwrap());\n    \
                 assert!(!lease::enqueue(&db, \"job-1\").unwrap());\n}\n";
    let sleeping = format!(
        "{plain}\n#[test]\nfn waits_a_while() {{\n    std::thread::sleep(std::time::Duration::from_secs(9));\n}}\n"
    );
    let bomb = format!(
        "#![allow(long_running_const_eval)]\n{plain}\npub const FOREVER: u64 = {{\n    \
         let mut i = 0u64;\n    while i < u64::MAX {{\n        i += 1;\n    }}\n    i\n}};\n"
    );
    let files: Vec<PathBuf> = [
        ("bomb.rs", bomb),
        ("plain.rs", plain.to_string()),
        ("sleeping.rs", sleeping),
    ]
    .into_iter()
    .map(|(name, text)| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        file
    })
    .collect();
    // One wheat and two mutants (the judges are not the subject here).
    let (wheats, mutants) = (dir.path().join("wheats"), dir.path().join("mutants"));
    std::fs::create_dir_all(&wheats).unwrap();
    std::fs::create_dir_all(&mutants).unwrap();
    for file in ["freedoms.toml", "variant-error-text.toml"] {
        std::fs::copy(root().join("wheats").join(file), wheats.join(file)).unwrap();
    }
    for file in ["enqueue-always-true.toml", "claim-expiry-inclusive.toml"] {
        std::fs::copy(root().join("mutants").join(file), mutants.join(file)).unwrap();
    }
    let json = dir.path().join("tests.json");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["grade", "--tests"])
        .args(&files)
        .args(["--build-timeout", &LIMIT.to_string(), "--wheats"])
        .arg(&wheats)
        .arg("--mutants")
        .arg(&mutants)
        .arg("--json")
        .arg(&json)
        .env("NO_COLOR", "1")
        .current_dir(root())
        .output()
        .unwrap();
    let secs = started.elapsed().as_secs_f64();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(3), "{said}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let of = |name: &str| {
        report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name}: {report}"))
            .clone()
    };
    let bomb = of("bomb.rs");
    assert!(
        bomb["compile_errors"]
            .as_str()
            .unwrap_or_default()
            .contains("took longer than 30 s"),
        "{bomb}"
    );
    assert_eq!(report["build_limit_secs"], LIMIT, "{report}");
    let sleeping = of("sleeping.rs");
    assert_eq!(sleeping["score"], 0.0, "{sleeping}");
    assert!(
        sleeping["invalid_tests"]
            .as_str()
            .unwrap_or_default()
            .contains("waits_a_while"),
        "{sleeping}"
    );
    let plain = of("plain.rs");
    assert!(plain["score"].as_f64().unwrap() > 0.0, "{plain}");
    eprintln!("grade --tests of a bomb, a sleeping suite and a plain file: {secs:.1} s");
}
