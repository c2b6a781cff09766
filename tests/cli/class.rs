//! `fencelab class` as an instructor runs it after the deadline: on grade's
//! JSON report, it prints the class, writes its JSON and its page, and the
//! same report gives the same JSON twice.

use std::process::Command;

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
    // A report that is not one: exit 2, the file named.
    std::fs::write(&report, "[]").unwrap();
    let (exit, _, stderr) = class(&[report.as_os_str()]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("report.json:1:") && stderr.contains("next:"),
        "{stderr}"
    );
}
