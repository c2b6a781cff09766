//! `fencelab grade` as CI runs it: the binary on fixture submissions
//! (`tests/fixtures/submissions/`). Every hostile case ends as the failure (or
//! timeout) of the tests that reach it, within its limits, with every other
//! test still graded; a correct implementation written differently scores 100;
//! JUnit output is read back with a real XML parser; grading twice gives the
//! same result.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{changed_reference, eventually_none, fixture, processes_under, root};

/// The submissions made from the reference by one change each
/// (`tests/fixtures/submissions/*.toml`), written out as `.rs` files.
fn made() -> &'static (tempfile::TempDir, Vec<PathBuf>) {
    static MADE: OnceLock<(tempfile::TempDir, Vec<PathBuf>)> = OnceLock::new();
    MADE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for entry in std::fs::read_dir(fixture("")).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "toml") {
                let (id, source) = changed_reference(&path);
                let file = dir.path().join(format!("{id}.rs"));
                std::fs::write(&file, source).unwrap();
                files.push(file);
            }
        }
        (dir, files)
    })
}

/// A submission made from `NAME.toml`, as a file.
fn made_file(name: &str) -> String {
    let stem = name.trim_end_matches(".rs");
    made()
        .1
        .iter()
        .find(|p| p.file_stem().unwrap() == stem)
        .unwrap()
        .display()
        .to_string()
}

/// Runs `fencelab grade ARGS`; returns its exit code, stdout and stderr.
fn grade(args: &[&str]) -> (i32, String, String) {
    grade_in(&std::env::temp_dir(), args)
}

/// Runs `fencelab grade ARGS` with TMPDIR `tmp`.
fn grade_in(tmp: &Path, args: &[&str]) -> (i32, String, String) {
    grade_env(tmp, args, &[])
}

/// Runs `fencelab grade ARGS` with TMPDIR `tmp` and the variables `env`.
fn grade_env(tmp: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .arg("grade")
        .args(args)
        .env("TMPDIR", tmp)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .envs(env.iter().copied())
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const HOSTILE: [(&str, u32); 8] = [
    ("exit_zero.rs", 5),
    ("escapes_clean_env.rs", 5),
    ("fake_verdicts.rs", 3),
    ("abort.rs", 6),
    ("stack_overflow.rs", 7),
    ("infinite_loop.rs", 8),
    ("flood.rs", 3),
    ("leaves_child.rs", 5),
];

struct Graded {
    json: Value,
    junit: String,
    csv: String,
    /// What `--github` appended to the step summary, and printed.
    summary: String,
    annotations: Vec<String>,
    stdout: String,
    stderr: String,
    exit: i32,
    /// The command lines of processes of that run still there a moment after.
    leftovers: Vec<String>,
}

/// All hostile fixtures, a broken one, the reference and an alternative
/// correct implementation, graded in one run.
fn graded() -> &'static Graded {
    static GRADED: OnceLock<Graded> = OnceLock::new();
    GRADED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("grade.json");
        let junit = dir.path().join("junit.xml");
        let csv = dir.path().join("grades.csv");
        let summary = dir.path().join("summary.md");
        let mut paths: Vec<String> = HOSTILE.iter().map(|(f, _)| made_file(f)).collect();
        paths.push(made_file("release_resets_fence.rs"));
        paths.push(made_file("init_without_if_not_exists.rs"));
        paths.push(made_file("renew_not_started.rs"));
        paths.push(fixture("alternative.rs").display().to_string());
        paths.push(root().join("src/lease.rs").display().to_string());
        let mut args: Vec<&str> = paths.iter().map(String::as_str).collect();
        let (json_arg, junit_arg) = (json.display().to_string(), junit.display().to_string());
        let csv_arg = csv.display().to_string();
        // Two at a time, so that the spinning submission cannot starve the
        // others. The limit is far above what a correct test takes on a loaded
        // machine (under 1 s with two busy processes beside it; the lock
        // windows are 400 ms), so that only the hostile code reaches it.
        args.extend([
            "--timeout",
            "5",
            "--jobs",
            "2",
            "--min-score",
            "100",
            "--json",
            &json_arg,
            "--junit",
            &junit_arg,
            "--csv",
            &csv_arg,
            "--github",
        ]);
        let tmp = tempfile::tempdir().unwrap();
        let (exit, stdout, stderr) = grade_env(
            tmp.path(),
            &args,
            &[("GITHUB_STEP_SUMMARY", summary.as_os_str())],
        );
        // Everything was killed before grade returned; give the kernel time to
        // take the dead away (as long as it needs, on a loaded machine).
        let leftovers = eventually_none(|| processes_under(tmp.path()));
        let json: Value = serde_json::from_str(
            &std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {stderr}")),
        )
        .unwrap();
        Graded {
            json,
            junit: std::fs::read_to_string(&junit).unwrap(),
            csv: std::fs::read_to_string(&csv).unwrap(),
            summary: std::fs::read_to_string(&summary).unwrap(),
            annotations: stdout
                .lines()
                .filter(|l| l.starts_with("::"))
                .map(str::to_string)
                .collect(),
            stdout,
            stderr,
            exit,
            leftovers,
        }
    })
}

fn submission(name: &str) -> &'static Value {
    graded().json["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("no submission {name}"))
}

fn failing(s: &Value) -> Vec<&Value> {
    s["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["outcome"] != "passed")
        .collect()
}

#[test]
fn each_hostile_case_fails_only_the_tests_that_reach_it() {
    for (file, step) in HOSTILE {
        let s = submission(file);
        let failing = failing(s);
        assert!(!failing.is_empty(), "{file}: something must fail");
        for t in &failing {
            assert_eq!(
                t["step"], step,
                "{file}: {} failed outside step {step}: {t}",
                t["test"]
            );
        }
        for st in s["steps"].as_array().unwrap() {
            if st["step"] != step {
                assert_eq!(
                    st["passed"], st["total"],
                    "{file}: step {} must be fully graded and pass",
                    st["step"]
                );
            } else if file == "fake_verdicts.rs" {
                // Its answer is always None, which is right for a missing job.
                assert_eq!(st["passed"], 2, "{file}: only the missing-job tests pass");
            } else {
                assert_eq!(
                    st["passed"], 0,
                    "{file}: every test of step {step} reaches the hostile code"
                );
            }
        }
        // Each step weighs 12.5 points, shared among its tests.
        let lost: f64 = s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| 1.0 - st["score"].as_f64().unwrap())
            .sum();
        let expected = 100.0 - lost * 12.5;
        assert!(
            (s["score"].as_f64().unwrap() - expected).abs() < 0.01,
            "{file}: {} vs {expected}",
            s["score"]
        );
        assert!(s["score"].as_f64().unwrap() < 100.0, "{file}");
    }
}

#[test]
fn each_hostile_case_ends_as_what_it_is() {
    let message = |file: &str| {
        failing(submission(file))[0]["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let kind = |file: &str| {
        failing(submission(file))[0]["kind"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(message("exit_zero.rs").contains("exited with status 0 during renew()"));
    assert_eq!(kind("exit_zero.rs"), "crashed");
    assert_eq!(
        kind("fake_verdicts.rs"),
        "assertion",
        "fake verdicts change nothing"
    );
    assert!(message("abort.rs").contains("signal 6 (SIGABRT"));
    assert!(message("stack_overflow.rs").contains("has overflowed its stack"));
    assert_eq!(
        failing(submission("infinite_loop.rs"))[0]["outcome"],
        "timed_out"
    );
    // The flood is named first, whichever stream reached the limit first,
    // and what it printed is capped.
    let flood = message("flood.rs");
    assert!(
        flood.contains("the implementation's process printed more than 4 MiB on std")
            && flood.contains("and was killed during state()"),
        "{flood}"
    );
    assert!(flood.len() < 16 * 1024, "{} bytes", flood.len());
    assert!(message("leaves_child.rs").contains("left processes running after the test"));
}

#[test]
fn hostile_cases_stay_within_their_limits_and_leave_nothing_behind() {
    // A spinning submission is stopped at the limit given, each of its tests
    // on its own.
    for t in failing(submission("infinite_loop.rs")) {
        assert_eq!(t["outcome"], "timed_out", "{t}");
        assert_eq!(t["limit_secs"], 5.0, "{t}");
    }
    // The fixtures start `sleep 300`, `setsid sleep 301` and `setsid env -i
    // sleep 302`: none may survive, nor anything else of the run.
    assert!(graded().leftovers.is_empty(), "{:?}", graded().leftovers);
    let escaped: Vec<String> = eventually_none(|| {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.starts_with("sleep 302"))
            .collect()
    });
    assert!(escaped.is_empty(), "{escaped:?}");
}

#[test]
fn a_correct_implementation_written_differently_scores_100_and_a_broken_one_loses_its_step() {
    assert_eq!(submission("alternative.rs")["score"], 100.0);
    assert_eq!(submission("src/lease.rs")["score"], 100.0);
    let broken = submission("release_resets_fence.rs");
    let lost: Vec<u64> = broken["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["passed"] != s["total"])
        .map(|s| s["step"].as_u64().unwrap())
        .collect();
    assert_eq!(lost, vec![7]);
    assert_eq!(graded().exit, 1, "below the gate of 100");
}

#[test]
fn junit_is_xml_that_gitlab_and_jenkins_can_read() {
    let junit = &graded().junit;
    let doc = roxmltree::Document::parse(junit).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    let submissions = graded().json["submissions"].as_array().unwrap().len();
    assert_eq!(
        suites.len(),
        submissions * 8,
        "a testsuite per submission and step"
    );
    let cases: Vec<_> = suites
        .iter()
        .flat_map(|s| s.children().filter(|n| n.has_tag_name("testcase")))
        .collect();
    assert_eq!(
        cases.len(),
        submissions * fencelab::lab::suite::tests().len()
    );
    for case in &cases {
        assert!(case.attribute("classname").is_some() && case.attribute("name").is_some());
        assert!(case.attribute("time").unwrap().parse::<f64>().is_ok());
    }
    let failures = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .count();
    assert_eq!(
        root.attribute("failures")
            .unwrap()
            .parse::<usize>()
            .unwrap(),
        failures
    );
    let flood = cases
        .iter()
        .find(|c| {
            c.attribute("classname").unwrap().contains("flood.rs")
                && c.children().any(|n| n.has_tag_name("failure"))
        })
        .unwrap();
    assert!(
        flood
            .children()
            .find(|n| n.has_tag_name("failure"))
            .unwrap()
            .attribute("message")
            .is_some()
    );
}

#[test]
fn one_submissions_results_are_what_gradescope_prairielearn_and_classroom_read() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results.json");
    let pl = dir.path().join("pl.json");
    let output = dir.path().join("github_output");
    std::fs::write(&output, "earlier=1\n").unwrap();
    let (out_arg, pl_arg) = (out.display().to_string(), pl.display().to_string());
    let file = made_file("release_resets_fence.rs");
    let (exit, _, stderr) = grade_env(
        &std::env::temp_dir(),
        &[
            &file,
            "--gradescope",
            &out_arg,
            "--gradescope-visibility",
            "after_published",
            "--prairielearn",
            &pl_arg,
            "--classroom",
        ],
        &[("GITHUB_OUTPUT", output.as_os_str())],
    );
    assert_eq!(exit, 0, "{stderr}");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(results["visibility"], "after_published");
    assert_eq!(results["stdout_visibility"], "hidden");
    assert_eq!(results["output_format"], "md");
    assert!(results["execution_time"].is_u64());
    let tests = results["tests"].as_array().unwrap();
    assert_eq!(tests.len(), fencelab::lab::suite::tests().len());
    for t in tests {
        for field in [
            "name",
            "number",
            "score",
            "max_score",
            "status",
            "tags",
            "output",
        ] {
            assert!(t.get(field).is_some(), "{field} in {t}");
        }
    }
    // Per test, hundredths of a point, never more than the test's maximum;
    // the maxima add up to 100, the scores to the score.
    let hundredths = |x: &Value| (x.as_f64().unwrap() * 100.0).round() as i64;
    let score = hundredths(&results["score"]);
    assert!(
        tests
            .iter()
            .all(|t| hundredths(&t["score"]) <= hundredths(&t["max_score"]))
    );
    let sum = |key: &str| tests.iter().map(|t| hundredths(&t[key])).sum::<i64>();
    assert_eq!((sum("score"), sum("max_score")), (score, 10_000));
    let failed: Vec<&Value> = tests.iter().filter(|t| t["status"] == "failed").collect();
    assert!(!failed.is_empty());
    assert!(
        failed
            .iter()
            .all(|t| t["tags"][0] == "step7" && t["number"].as_str().unwrap().starts_with("7."))
    );

    let pl: Value = serde_json::from_str(&std::fs::read_to_string(&pl).unwrap()).unwrap();
    assert_eq!(pl["gradable"], true);
    assert!(
        (pl["score"].as_f64().unwrap() * 100.0 - results["score"].as_f64().unwrap()).abs() < 1e-9
    );
    let pl_tests = pl["tests"].as_array().unwrap();
    let pl_sum = |key: &str| pl_tests.iter().map(|t| hundredths(&t[key])).sum::<i64>();
    assert_eq!((pl_sum("points"), pl_sum("max_points")), (score, 10_000));

    // Classroom's result: appended to $GITHUB_OUTPUT as `result=` base64 JSON.
    let lines = std::fs::read_to_string(&output).unwrap();
    let mut lines = lines.lines();
    assert_eq!(lines.next(), Some("earlier=1"), "appended, not overwritten");
    let b64 = lines.next().unwrap().strip_prefix("result=").unwrap();
    assert_eq!(lines.next(), None, "on one line");
    let result: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["version"], 1);
    assert_eq!(result["max_score"], 100.0);
    assert_eq!(result["status"], "pass", "the gate is 0 by default");
    let total = result["tests"]
        .as_array()
        .unwrap()
        .iter()
        .fold(0.0, |a, t| a + t["score"].as_f64().unwrap());
    assert_eq!(total, results["score"].as_f64().unwrap());
}

#[test]
fn one_format_per_submission_is_refused_for_several() {
    let files = [
        fixture("alternative.rs").display().to_string(),
        made_file("abort.rs"),
    ];
    let output = tempfile::NamedTempFile::new().unwrap();
    let (exit, _, stderr) = grade_env(
        &std::env::temp_dir(),
        &[&files[0], &files[1], "--classroom"],
        &[("GITHUB_OUTPUT", output.path().as_os_str())],
    );
    assert_eq!(exit, 2);
    assert!(
        stderr.contains("--classroom writes the results of one submission, and 2 are graded here"),
        "{stderr}"
    );
    let (exit, _, stderr) = grade(&[&files[0], "--classroom"]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("$GITHUB_OUTPUT, which is not set"),
        "{stderr}"
    );
}

#[test]
fn the_csv_gradebook_reads_back_with_a_row_per_submission() {
    let graded = graded();
    let mut reader = csv::Reader::from_reader(graded.csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[..4], ["submission", "file", "score", "passed_gate"]);
    assert_eq!(header[4], "step1_init_db");
    assert_eq!(header[11], "step8_claim_many");
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let submissions = graded.json["submissions"].as_array().unwrap();
    assert_eq!(rows.len(), submissions.len());
    for (row, s) in rows.iter().zip(submissions) {
        assert_eq!(&row[0], s["name"].as_str().unwrap());
        assert_eq!(row[2].parse::<f64>().unwrap(), s["score"].as_f64().unwrap());
        let cents: i64 = (4..12)
            .map(|i| (row[i].parse::<f64>().unwrap() * 100.0).round() as i64)
            .sum();
        assert_eq!(cents, (s["score"].as_f64().unwrap() * 100.0).round() as i64);
    }
}

#[test]
fn github_annotations_point_at_each_submissions_first_failing_function() {
    let graded = graded();
    let errors: Vec<&String> = graded
        .annotations
        .iter()
        .filter(|a| a.starts_with("::error "))
        .collect();
    assert!(errors.len() <= 10, "{errors:#?}");
    let failing = graded.json["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["score"] != 100.0)
        .count();
    assert_eq!(errors.len(), failing.min(10));
    let file = made_file("release_resets_fence.rs");
    let source = std::fs::read_to_string(&file).unwrap();
    let line = source
        .lines()
        .position(|l| l.starts_with("pub fn release("))
        .unwrap()
        + 1;
    let release = errors
        .iter()
        .find(|a| a.contains("release_resets_fence.rs%3A step 7"))
        .unwrap_or_else(|| panic!("{errors:#?}"));
    assert!(
        release.starts_with(&format!(
            "::error file={},line={line},title=",
            file.replace(':', "%3A").replace(',', "%2C")
        )),
        "{release}"
    );
    for a in &graded.annotations {
        assert!(!a.contains('\r'), "{a}");
    }
    assert!(
        graded
            .summary
            .starts_with("## fencelab grade: 2 of 13 submission(s) at the gate of 100 ❌"),
        "{}",
        graded.summary
    );
    assert!(graded.summary.contains("| 7/7 |") || graded.summary.contains("release"));
    assert!(
        !graded.summary.contains("crates/impl-") && !graded.summary.contains("target/fencelab")
    );
}

#[test]
fn grading_twice_gives_the_same_result() {
    let files = [made_file("release_resets_fence.rs"), made_file("abort.rs")];
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("g.json").display().to_string();
        let (exit, _, _) = grade(&[&files[0], &files[1], "--json", &json]);
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let outcomes: Vec<(String, String)> = report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["tests"].as_array().unwrap().iter())
            .map(|t| {
                (
                    t["test"].as_str().unwrap().to_string(),
                    t["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (exit, outcomes)
    };
    assert_eq!(run(), run());
}

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
fn a_database_error_shows_sqlites_message() {
    let s = submission("init_without_if_not_exists.rs");
    let t = s["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "step1::init_again_on_a_fresh_database_succeeds")
        .unwrap();
    let message = t["message"].as_str().unwrap();
    assert!(message.contains("expected: Ok(())"), "{message}");
    assert!(
        message.contains(
            "Err(Db(\"table jobs already exists in CREATE TABLE jobs ( id TEXT PRIMARY KEY,"
        ),
        "{message}"
    );
}

#[test]
fn a_step_not_started_is_one_line_and_a_wrong_row_is_shown_field_by_field() {
    let out = &graded().stdout;
    let section = |name: &str| -> &str {
        let start = out
            .find(&format!("{name}: score"))
            .unwrap_or_else(|| panic!("no {name} in:\n{out}"));
        let rest = &out[start..];
        &rest[..rest[1..].find("\n\n").map_or(rest.len(), |e| e + 1)]
    };
    let renew = section("renew_not_started.rs");
    assert_eq!(
        renew.matches("step 5 renew: not started").count(),
        1,
        "{renew}"
    );
    assert!(!renew.contains("not yet implemented"), "{renew}");
    assert!(renew.lines().count() <= 3, "{renew}");
    let release = section("release_resets_fence.rs");
    assert!(release.contains("field  expected actual"), "{release}");
    assert!(
        release
            .lines()
            .any(|l| l.trim_start().starts_with("✗ fence") && l.trim_end().ends_with(" 0")),
        "{release}"
    );
    // The table and the verdict come last (before GitHub's annotations,
    // which this run asks for).
    assert!(
        out.trim_end()
            .lines()
            .rfind(|l| !l.starts_with("::"))
            .unwrap()
            .starts_with("fencelab grade: "),
        "{out}"
    );
}

#[test]
fn no_report_of_a_batch_names_a_scratch_path() {
    let g = graded();
    let json = serde_json::to_string(&g.json).unwrap();
    for text in [&json, &g.junit, &g.stdout, &g.stderr] {
        for internal in ["crates/", "/fencelab/ws"] {
            assert!(!text.contains(internal), "{internal} in:\n{text}");
        }
    }
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
fn shards_split_the_submissions_between_runners() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for k in 1..=2 {
        let json = dir.path().join(format!("{k}.json")).display().to_string();
        let files = [
            fixture("alternative.rs").display().to_string(),
            root().join("src/lease.rs").display().to_string(),
            made_file("release_resets_fence.rs"),
        ];
        let shard = format!("{k}/2");
        let (exit, _, stderr) = grade(&[
            &files[0], &files[1], &files[2], "--shard", &shard, "--json", &json,
        ]);
        assert_eq!(exit, 0, "{stderr}");
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        seen.extend(
            report["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap().to_string()),
        );
    }
    seen.sort();
    assert_eq!(seen.len(), 3, "{seen:?}");
    seen.dedup();
    assert_eq!(seen.len(), 3, "no submission in two shards");

    // The shards merge into one report, from which every format is written.
    let (one, two) = (dir.path().join("1.json"), dir.path().join("2.json"));
    let (merged, junit, csv) = (
        dir.path().join("merged.json"),
        dir.path().join("merged.xml"),
        dir.path().join("merged.csv"),
    );
    let (exit, stdout, stderr) = grade(&[
        "--merge",
        two.to_str().unwrap(),
        one.to_str().unwrap(),
        "--json",
        merged.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(exit, 0, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let names: Vec<String> = report["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, seen, "every submission once, in grading order");
    assert_eq!(report["shard"], Value::Null);
    roxmltree::Document::parse(&std::fs::read_to_string(&junit).unwrap()).unwrap();
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        csv::Reader::from_reader(csv_text.as_bytes())
            .records()
            .count(),
        3
    );
    // A shard graded by another suite is refused, naming it and the difference.
    let mut other: Value = serde_json::from_str(&std::fs::read_to_string(&two).unwrap()).unwrap();
    other["suite"] = "sha256:0123".into();
    std::fs::write(&two, other.to_string()).unwrap();
    let (exit, _, stderr) = grade(&["--merge", one.to_str().unwrap(), two.to_str().unwrap()]);
    assert_eq!(exit, 2);
    assert!(
        stderr.contains("2.json: graded with suite sha256:0123, but") && stderr.contains("next:"),
        "{stderr}"
    );
}

#[test]
fn a_submission_cannot_replace_the_judge_or_its_output_for_this_run_or_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json").display().to_string();
    let (forger, broken) = (made_file("forger.rs"), made_file("release_resets_fence.rs"));
    let (_, _, stderr) = grade(&[&forger, &broken, "--json", &json]);
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("{stderr}")),
    )
    .unwrap();
    let score = |name: &str| {
        report["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"].as_str().unwrap().ends_with(name))
            .unwrap()["score"]
            .as_f64()
            .unwrap()
    };
    assert!(
        score("release_resets_fence.rs") < 100.0,
        "the broken submission is still judged"
    );
    // The next run uses the same judge: it must still be the real one.
    let (exit, _, _) = grade(&[&broken, "--min-score", "100"]);
    assert_eq!(
        exit, 1,
        "a later run still finds the broken submission below the gate"
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

#[test]
fn the_graders_environment_does_not_reach_a_submission() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json").display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["grade", &made_file("leaks_environment.rs"), "--json", &json])
        .env("FENCELAB_TEST_SECRET", "s3cr3t-token")
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(
        report.contains("InvalidParameterName") || report.contains("TMPDIR="),
        "the leak ran: {report}"
    );
    assert!(!report.contains("s3cr3t-token"), "the secret leaked");
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
fn identical_submissions_are_graded_each() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("alice.rs"), dir.path().join("bob.rs"));
    std::fs::copy(fixture("alternative.rs"), &a).unwrap();
    std::fs::copy(fixture("alternative.rs"), &b).unwrap();
    let (exit, stdout, stderr) = grade(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--min-score",
        "100",
    ]);
    assert_eq!(exit, 0, "{stdout}{stderr}");
    assert_eq!(stdout.matches("score 100.00 / 100").count(), 2, "{stdout}");
}

/// A report of one submission, as `grade --json` writes it, for what `--merge`
/// writes from it without grading anything.
fn one_report(dir: &Path) -> PathBuf {
    use fencelab::commands::grade::{GradeReport, StepScore, SubmissionReport, exit_code_of};
    let submissions = vec![SubmissionReport {
        name: "alice.rs".into(),
        file: "alice.rs".into(),
        score: 0.0,
        passed_gate: false,
        compile_errors: None,
        unusable: Some("alice.rs does not have the contract's API".into()),
        invalid_tests: None,
        steps: fencelab::lab::worksheet::SLUGS
            .iter()
            .enumerate()
            .map(|(i, slug)| StepScore {
                step: i as u32 + 1,
                slug,
                passed: 0,
                total: 2,
                score: 0.0,
            })
            .collect(),
        tests: Vec::new(),
    }];
    let report = GradeReport {
        schema: 1,
        fencelab_version: env!("CARGO_PKG_VERSION").into(),
        suite: "sha256:x".into(),
        min_score: 0.0,
        test_limit_secs: 10.0,
        build_limit_secs: 600.0,
        shard: None,
        exit_code: exit_code_of(&submissions),
        submissions,
    };
    let path = dir.join("one.json");
    std::fs::write(&path, serde_json::to_string(&report).unwrap()).unwrap();
    path
}

#[test]
fn github_without_a_step_summary_says_so_once_and_with_one_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let report = one_report(dir.path());
    let report = report.to_str().unwrap();
    let (exit, stdout, stderr) = grade(&["--merge", report, "--github"]);
    assert_eq!(exit, 2, "{stdout}{stderr}");
    assert!(
        stdout.contains("::error "),
        "the annotations are printed: {stdout}"
    );
    assert_eq!(
        stderr
            .matches("--github: $GITHUB_STEP_SUMMARY is not set, so no step summary was")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("next: run it as a step of a GitHub Actions job"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("## fencelab grade"),
        "not on stdout: {stdout}"
    );
    // With one, it is written there and nothing is said.
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "").unwrap();
    let (exit, _, stderr) = grade_env(
        &std::env::temp_dir(),
        &["--merge", report, "--github"],
        &[("GITHUB_STEP_SUMMARY", summary.as_os_str())],
    );
    assert_eq!(exit, 2);
    assert!(!stderr.contains("GITHUB_STEP_SUMMARY"), "{stderr}");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.starts_with("## fencelab grade: 0 of 1"),
        "{written}"
    );
}
