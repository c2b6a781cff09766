//! A Japanese screen of a report read back (`--merge`, `--results`) says
//! fencelab's own sentences in Japanese, as the run's own screen does
//! (issue 47: they are data in the JSON, never English matched back).

use super::{grade_env, made_file};

#[test]
fn a_crash_reads_the_same_in_japanese_from_a_merged_report() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("grade.json");
    let json = json.to_str().unwrap();
    let ja = [("LANG", "ja_JP.UTF-8".as_ref())];
    let abort = made_file("abort.rs");
    let (_, direct, stderr) = grade_env(
        dir.path(),
        &[&abort, "--timeout", "10", "--json", json],
        &ja,
    );
    // The run's own screen, worded from the outcomes in memory.
    assert!(direct.contains("実装のプロセスが"), "{direct}{stderr}");
    assert!(!direct.contains("during"), "{direct}");
    // Read back: worded from the outcomes' `said`, not their English `message`.
    let (_, merged, stderr) = grade_env(dir.path(), &["--merge", json], &ja);
    assert_eq!(merged, direct, "{stderr}");
    // `--results` words what it stored and read back, a retry too.
    let results = dir.path().join("results");
    let results = results.to_str().unwrap();
    for _ in 0..2 {
        let args = [abort.as_str(), "--timeout", "10", "--results", results];
        let (_, stored, stderr) = grade_env(dir.path(), &args, &ja);
        assert_eq!(stored, direct, "{stderr}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let crashed = report["submissions"][0]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "crashed")
        .expect("abort.rs crashes a test");
    // The English message is there for every other reader.
    assert!(
        crashed["message"]
            .as_str()
            .unwrap()
            .contains("signal 6 (SIGABRT")
    );
    assert!(crashed["said"].as_str().unwrap().contains("\u{1}said\u{1}"));
}
