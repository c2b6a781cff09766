//! `fencelab class` as an instructor runs it after the deadline: on grade's
//! JSON report, it prints the class, writes its JSON and its page, and the
//! same report gives the same JSON twice. A fixture class of learners' tests
//! is in `learners`.

use std::process::Command;

mod learners;

fn class(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .arg("class")
        .args(args)
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn class_prints_the_class_and_writes_its_json_and_page() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    // Two submissions: one fails a test of step 7, one passes all.
    let sub = |name: &str, failed: bool| {
        serde_json::json!({"name": name, "file": name, "steps": [
            {"step": 7, "slug": "release", "passed": if failed { 0 } else { 1 }, "total": 1}],
            "tests": [{"test": "step7::fence_keeps_growing_across_releases", "step": 7,
                       "outcome": if failed { "failed" } else { "passed" }}]})
    };
    let json = serde_json::json!({"schema": 1, "suite": "sha256:x",
        "submissions": [sub("ben.rs", true), sub("ada.rs", false)]});
    std::fs::write(&report, json.to_string()).unwrap();
    let (out, page) = (dir.path().join("class.json"), dir.path().join("class.html"));
    let args = [
        report.as_os_str(),
        "--json".as_ref(),
        out.as_os_str(),
        "--html".as_ref(),
        page.as_os_str(),
    ];
    let (exit, stdout, stderr) = class(&args);
    assert_eq!(exit, 0, "{stderr}");
    assert!(
        stdout.contains("fencelab class: 2 submissions (rust), 2 graded"),
        "{stdout}"
    );
    assert!(stdout.contains("1 submission fails"), "{stdout}");
    let first = std::fs::read_to_string(&out).unwrap();
    assert!(
        first.contains("\"members\": [\n        \"ben.rs\""),
        "{first}"
    );
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    class(&args);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        first,
        "the same bytes twice"
    );
    // With the source of the group no mutant explains beside the report,
    // --skeletons writes the mutant file it starts from.
    let reference = std::fs::read_to_string(crate::common::root().join("src/lease.rs")).unwrap();
    std::fs::write(
        dir.path().join("ben.rs"),
        reference.replacen("fence + 1", "fence + 2", 1),
    )
    .unwrap();
    let found = dir.path().join("found");
    let (exit, stdout, stderr) = class(&[
        report.as_os_str(),
        "--skeletons".as_ref(),
        found.as_os_str(),
    ]);
    assert_eq!(exit, 0, "{stderr}");
    assert!(stdout.contains("--skeletons DIR"), "{stdout}");
    let skeleton = std::fs::read_to_string(found.join("found-1.toml")).unwrap();
    assert!(
        skeleton.contains("replace = ") && skeleton.contains("fence + 2"),
        "{skeleton}"
    );
    // A report that is not one: exit 2, the file named.
    std::fs::write(&report, "[]").unwrap();
    let (exit, _, stderr) = class(&[report.as_os_str()]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("report.json:1:") && stderr.contains("next:"),
        "{stderr}"
    );
}

/// A class made of every mutant, the wheats and two bugs no mutant has,
/// graded, then summarised: each mutant's submission is in a group matched
/// to it, the wheats in none, each hand-written bug in a group no mutant
/// explains, with its change and a mutant file.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn a_class_made_of_the_mutants_groups_each_under_its_own() {
    use crate::common::{changed_reference, fixture, root};
    let dir = tempfile::tempdir().unwrap();
    let reference = std::fs::read_to_string(root().join("src/lease.rs")).unwrap();
    let mut files = Vec::new();
    let mutants = fencelab::lab::mutant::builtin();
    for m in &mutants {
        let file = dir.path().join(format!("m-{}.rs", m.id));
        std::fs::write(
            &file,
            fencelab::lab::mutant::apply(&reference, &m.find, &m.replace).unwrap(),
        )
        .unwrap();
        files.push(file);
    }
    for entry in std::fs::read_dir(root().join("wheats")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "rs") {
            let file = dir
                .path()
                .join(format!("w-{}", entry.file_name().to_string_lossy()));
            std::fs::copy(entry.path(), &file).unwrap();
            files.push(file);
        }
    }
    for bug in ["complete_trims", "enqueue_lowercases"] {
        let file = dir.path().join(format!("h-{bug}.rs"));
        std::fs::write(&file, changed_reference(&fixture(&format!("{bug}.toml"))).1).unwrap();
        files.push(file);
    }
    let report = dir.path().join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .arg("grade")
        .args(&files)
        .arg("--json")
        .arg(&report)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(report.exists(), "{out:?}");
    let json = dir.path().join("class.json");
    let (exit, stdout, stderr) = class(&[report.as_os_str(), "--json".as_ref(), json.as_os_str()]);
    assert_eq!(exit, 0, "{stderr}");
    let class: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let groups = class["groups"].as_array().unwrap();
    let group_of = |name: &str| {
        groups.iter().find(|g| {
            g["members"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m.as_str().unwrap().ends_with(name))
        })
    };
    for m in mutants.iter().filter(|m| !m.killers.is_empty()) {
        let g = group_of(&format!("m-{}.rs", m.id))
            .unwrap_or_else(|| panic!("{}: in no group\n{stdout}", m.id));
        let matched: Vec<&str> = (g["matches"].as_array().unwrap().iter())
            .map(|x| x["mutant"].as_str().unwrap())
            .collect();
        assert!(
            matched.contains(&m.id.as_str()),
            "{}: matched to {matched:?}",
            m.id
        );
    }
    for wheat in ["w-exclusive.rs", "w-ledger.rs"] {
        assert!(group_of(wheat).is_none(), "{wheat} fails nothing");
    }
    for bug in ["h-complete_trims.rs", "h-enqueue_lowercases.rs"] {
        let g = group_of(bug).unwrap_or_else(|| panic!("{bug}: in no group"));
        assert!(g["matches"].as_array().unwrap().is_empty(), "{bug}: {g}");
        let mutant = g["representative"]["mutant"].as_str().unwrap();
        assert!(mutant.contains("killers = [\"step"), "{mutant}");
    }
}
