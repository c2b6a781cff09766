//! Submissions that cannot be graded: a file that is missing, not UTF-8,
//! without the contract's API or reading the grader's files at compile time
//! exits 2; one that does not compile (or whose program does not start)
//! exits 3 with the compiler's message on its own file; in a batch, each costs
//! only its own grade, in every report.

use serde_json::Value;

use super::{grade, grade_env, made_file};
use crate::common::{fixture, root};

/// `text` with every run of whitespace one space: what it says, however it
/// was wrapped to the width.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn unusable_inputs_alone_exit_2_with_a_clear_message() {
    let (exit, stdout, _) = grade(&["no/such/submission.rs"]);
    let stdout = flat(&stdout);
    assert_eq!(exit, 2);
    assert!(
        stdout.contains("no/such/submission.rs does not exist"),
        "{stdout}"
    );
    let (exit, stdout, _) = grade(&[fixture("not_utf8.rs").to_str().unwrap()]);
    let stdout = flat(&stdout);
    assert_eq!(exit, 2);
    assert!(
        stdout.contains("not_utf8.rs:1:") && stdout.contains("not UTF-8"),
        "{stdout}"
    );
    let (exit, stdout, _) = grade(&[fixture("no_api.rs").to_str().unwrap()]);
    let stdout = flat(&stdout);
    assert_eq!(exit, 2);
    assert!(
        stdout.contains("missing pub struct Job, pub enum LeaseError, pub fn init_db"),
        "{stdout}"
    );
}

#[test]
fn one_unusable_file_costs_only_its_own_grade_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (dir.path().join("g.json"), dir.path().join("j.xml"));
    let bad = [
        fixture("no_api.rs").display().to_string(),
        "no/such/submission.rs".to_string(),
        fixture("not_utf8.rs").display().to_string(),
        made_file("reads_grader_files.rs"),
    ];
    let good = fixture("alternative.rs").display().to_string();
    let (exit, stdout, stderr) = grade(&[
        &bad[0],
        &good,
        &bad[1],
        &bad[2],
        &bad[3],
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(exit, 3, "some could not be graded: {stdout}{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let subs = report["submissions"].as_array().unwrap();
    assert_eq!(subs.len(), 5, "every path has a report, in order");
    assert_eq!(subs[1]["score"], 100.0, "the good one is graded in full");
    assert!(subs[1]["unusable"].is_null());
    for (s, why) in [
        (&subs[0], "does not have the contract's API"),
        (&subs[2], "does not exist"),
        (&subs[3], "not UTF-8"),
        (&subs[4], "reads files or the environment while compiling"),
    ] {
        assert_eq!(s["score"], 0.0, "{s}");
        assert_eq!(s["passed_gate"], false, "{s}");
        assert!(s["unusable"].as_str().unwrap().contains(why), "{s}");
        assert_eq!(s["steps"].as_array().unwrap().len(), 8, "{s}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    // Each one a `build` testcase with an `error`, as the README says.
    let unusable: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("error") && n.attribute("type") == Some("unusable"))
        .collect();
    assert!(
        unusable
            .iter()
            .all(|e| e.parent().unwrap().attribute("name") == Some("usable")),
        "{xml}"
    );
    assert_eq!(unusable.len(), 4, "{xml}");
    assert!(
        unusable[1].text().unwrap().contains("does not exist"),
        "{xml}"
    );
    // A line per submission as it is graded, and the summary last.
    assert_eq!(stderr.matches("Graded [").count(), 5, "{stderr}");
    assert!(stderr.contains("no_api.rs cannot be graded"), "{stderr}");
    assert!(
        stdout
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("fencelab grade: 1 of 5 at the gate (0); 4 could not be graded"),
        "{stdout}"
    );
    // Gradescope gets the reason too, for the one submission it reports.
    let results = dir.path().join("results.json");
    let (exit, _, _) = grade(&[&bad[0], "--gradescope", results.to_str().unwrap()]);
    assert_eq!(exit, 2, "nothing at all could be graded");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    assert_eq!(results["score"], 0.0);
    assert!(
        results["output"]
            .as_str()
            .unwrap()
            .contains("does not have the contract's API"),
        "{results}"
    );
}

#[test]
fn a_compile_error_shows_only_what_rustc_says_of_the_submissions_file() {
    let file = made_file("compares_with_a_str.rs");
    let (exit, stdout, _) = grade(&[&file]);
    assert_eq!(exit, 3);
    assert!(
        stdout.contains("can't compare `i64` with `&str`"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("--> {file}:")), "{stdout}");
    for foreign in ["serde_json", "/rustc/", "registry", "crates/"] {
        assert!(!stdout.contains(foreign), "{foreign} in:\n{stdout}");
    }
}

#[test]
fn a_submission_that_does_not_compile_exits_3_with_the_compilers_message_and_no_grader_paths() {
    let file = made_file("does_not_compile.rs");
    let dir = tempfile::tempdir().unwrap();
    let (junit, csv, pl, output) = (
        dir.path().join("j.xml"),
        dir.path().join("g.csv"),
        dir.path().join("pl.json"),
        dir.path().join("output"),
    );
    let (exit, stdout, _) = grade_env(
        &std::env::temp_dir(),
        &[
            &file,
            "--junit",
            junit.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "--prairielearn",
            pl.to_str().unwrap(),
            "--classroom",
        ],
        &[("GITHUB_OUTPUT", output.as_os_str())],
    );
    assert_eq!(exit, 3);
    // Every format says it cannot be graded, with the reason, and scores 0.
    let junit = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let error = doc.descendants().find(|n| n.has_tag_name("error")).unwrap();
    assert!(error.text().unwrap().contains("cannot add `&str` to `i64`"));
    assert_eq!(doc.root_element().attribute("errors"), Some("1"));
    let csv = std::fs::read_to_string(&csv).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let row = reader.records().next().unwrap().unwrap();
    assert_eq!(&row[2], "0.00");
    assert!(
        row[14].contains("cannot add `&str` to `i64`") || row[14].starts_with("error"),
        "{row:?}"
    );
    let pl: Value = serde_json::from_str(&std::fs::read_to_string(&pl).unwrap()).unwrap();
    assert_eq!(pl["gradable"], false);
    assert!(
        pl["format_errors"][0]
            .as_str()
            .unwrap()
            .contains("cannot add")
    );
    let output = std::fs::read_to_string(&output).unwrap();
    use base64::Engine as _;
    let result: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(output.trim_end().strip_prefix("result=").unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["status"], "error");
    for text in [&junit, &csv, &output] {
        assert!(!text.contains("crates/impl-") && !text.contains("target/fencelab"));
    }
    assert!(stdout.contains("cannot add `&str` to `i64`"), "{stdout}");
    assert!(stdout.contains(&format!("--> {file}:")), "{stdout}");
    assert!(
        !stdout.contains("crates/impl-") && !stdout.contains("target/fencelab"),
        "{stdout}"
    );
}

#[test]
fn reading_the_graders_files_at_compile_time_is_refused() {
    let file = made_file("reads_grader_files.rs");
    let (exit, stdout, _) = grade(&[&file]);
    let stdout = flat(&stdout);
    assert_eq!(exit, 2);
    assert!(
        stdout.contains("include_str")
            && stdout.contains("reads files or the environment while compiling"),
        "{stdout}"
    );
}

#[test]
fn code_that_runs_before_main_harms_only_its_own_submission() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json").display().to_string();
    let reference = root().join("src/lease.rs").display().to_string();
    let (exit, stdout, _) = grade(&[&made_file("constructor.rs"), &reference, "--json", &json]);
    assert_eq!(exit, 3, "{stdout}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let subs = report["submissions"].as_array().unwrap();
    assert!(
        subs[0]["compile_errors"]
            .as_str()
            .unwrap()
            .contains("its program did not start"),
        "{}",
        subs[0]
    );
    assert_eq!(
        subs[1]["score"], 100.0,
        "the other submission is graded in full"
    );
}

/// The reference with an attribute and no item after it: cargo rejects it,
/// and so does grade, though fencelab appends its bridge to the file.
#[test]
fn a_file_ending_in_a_stray_attribute_does_not_compile() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stray.rs");
    let source = format!(
        "{}\n#[allow(dead_code)]\n",
        fencelab::lab::reference::REFERENCE
    );
    std::fs::write(&file, source).unwrap();
    let (exit, stdout, _) = grade(&[file.to_str().unwrap()]);
    assert_eq!(exit, 3, "{stdout}");
    let stdout = flat(&stdout);
    assert!(
        stdout.contains("expected item after attributes") && !stdout.contains("__fencelab"),
        "{stdout}"
    );
}

/// A function whose parameters are not the contract's: the learner reads
/// which function, where, and the contract's signature, never fencelab's
/// generated call of it.
#[test]
fn a_changed_signature_is_told_with_the_contracts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sig.rs");
    let reference = fencelab::lab::reference::REFERENCE;
    let source = reference.replacen("pub fn state(", "pub fn state(oops: u8, ", 1);
    assert_ne!(source, reference);
    std::fs::write(&file, source).unwrap();
    let (exit, stdout, _) = grade(&[file.to_str().unwrap()]);
    assert_eq!(exit, 3, "{stdout}");
    assert!(
        stdout.contains("`state` does not have the contract's signature")
            && stdout.contains("the contract: pub fn state(path: impl AsRef<Path>, job_id: &str)")
            && !stdout.contains("Request::State")
            && !stdout.contains("fencelab's calls"),
        "{stdout}"
    );
}
