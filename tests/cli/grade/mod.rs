//! `fencelab grade` as CI runs it: the binary on fixture submissions
//! (`tests/fixtures/submissions/`). Here, one batch of every hostile case, a
//! broken submission, the reference and a correct implementation written
//! differently, graded once and read in every format: every hostile case ends
//! as the failure (or timeout) of the tests that reach it, within its limits,
//! with every other test still graded; a correct implementation written
//! differently scores 100; JUnit is read back with a real XML parser, the CSV
//! gradebook with a CSV reader. Runs of their own are in the modules below.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::stored::stored;
use crate::common::{changed_reference, eventually_none, fixture, processes_under, root};

mod course;
mod escaped;
mod formats;
mod isolation;
mod refused;
mod words;

/// The submissions made from the reference by one change each
/// (`tests/fixtures/submissions/*.toml`), written out as `.rs` files. Every
/// test process writes them at the same paths: a stored batch's reports name
/// them, and a test of another process looks for those names.
fn made() -> &'static Vec<PathBuf> {
    static MADE: OnceLock<Vec<PathBuf>> = OnceLock::new();
    MADE.get_or_init(|| {
        let dir = made_dir();
        let mut files = Vec::new();
        for entry in std::fs::read_dir(fixture("")).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "toml") {
                let (id, source) = changed_reference(&path);
                let file = dir.join(format!("{id}.rs"));
                if std::fs::read_to_string(&file).ok() != Some(source.clone()) {
                    // Whole or not at all, for a grade another process runs.
                    let partial = dir.join(format!("{id}.rs.{}", std::process::id()));
                    std::fs::write(&partial, source).unwrap();
                    std::fs::rename(&partial, &file).unwrap();
                }
                files.push(file);
            }
        }
        files
    })
}

/// Where `made` writes: the same directory for every test process of this
/// checkout and user, outside the checkout, so grade shows its files' whole
/// paths as it would a class's.
fn made_dir() -> PathBuf {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/self").unwrap().uid();
    let mut checkout = std::hash::DefaultHasher::new();
    env!("CARGO_TARGET_TMPDIR").hash(&mut checkout);
    let name = format!("fencelab-grade-made-{me}-{:016x}", checkout.finish());
    let dir = std::env::temp_dir().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let owner = std::fs::symlink_metadata(&dir).unwrap();
    assert!(
        owner.is_dir() && owner.uid() == me,
        "{} is not a directory of this user's",
        dir.display()
    );
    dir
}

/// A submission made from `NAME.toml`, as a file.
fn made_file(name: &str) -> String {
    let stem = name.trim_end_matches(".rs");
    made()
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
    ("hangs_in_claim_many.rs", 8),
    ("flood.rs", 3),
    ("leaves_child.rs", 5),
];

#[derive(serde::Serialize, serde::Deserialize)]
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
/// correct implementation, graded in one run: a batch on disk
/// (`common::stored`), read once a process.
fn graded() -> &'static Graded {
    static GRADED: OnceLock<Graded> = OnceLock::new();
    GRADED.get_or_init(|| stored("grade-hostile", &[&fixture("")], grade_the_batch))
}

/// What `graded` reads: one grade run of the batch, in every format.
fn grade_the_batch() -> Graded {
    {
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
        // Two at a time. The limit is far above what a correct test takes on
        // a loaded machine (under 1 s with two busy processes beside it; the
        // one lock window, step 4's busy database, is 400 ms), so that only
        // the hostile code reaches it.
        // A budget above 9 tests x 5 s, so that the hanging submission's
        // tests meet the per-test limit this test is about.
        args.extend([
            "--timeout",
            "5",
            "--budget",
            "100",
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
    }
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
        failing(submission("hangs_in_claim_many.rs"))[0]["outcome"],
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
    // A submission that sleeps is stopped once its tests have waited with
    // nothing running for a fifth of the limit given (1 s of 5 s), each
    // test on its own, and confirmed alone: nine at 1 s each fit in the
    // 15 s budget. A spinning submission is graded in
    // `shards::a_submission_that_spins_...` and `engine::hangs`' tests, and
    // in step 2 in `python::`'s hostile batch.
    for t in failing(submission("hangs_in_claim_many.rs")) {
        assert_eq!(t["outcome"], "timed_out", "{t}");
        assert_eq!(t["limit_secs"], 5.0, "{t}");
        assert_eq!(t["stopped_by"], "waits", "{t}");
        assert_eq!(t["confirmed"], true, "{t}");
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
