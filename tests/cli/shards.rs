//! Grading past one machine: a class split between processes started as each
//! engine starts them (`--shard auto` with Kubernetes', Slurm's, GitLab's
//! variables, or `FENCELAB_SHARD`), merged back into the report one
//! unsharded run gives.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common;
use common::{changed_reference, fixture, root};

/// Every variable `--shard auto` reads, removed from each run unless set.
const SHARD_VARIABLES: [&str; 10] = [
    "FENCELAB_SHARD",
    "FENCELAB_SHARDS",
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_STEP",
    "CI_NODE_INDEX",
    "CI_NODE_TOTAL",
    "GITHUB_ACTIONS",
];

/// A class of four (`submissions/{ada,ben,cho,dev}.rs`: the reference, a
/// correct one written differently, a broken one, one that does not compile)
/// in a directory of its own; grade runs there, so the shard keys are the
/// same paths every time.
fn class() -> &'static (tempfile::TempDir, Vec<String>) {
    static CLASS: OnceLock<(tempfile::TempDir, Vec<String>)> = OnceLock::new();
    CLASS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let subs = dir.path().join("submissions");
        std::fs::create_dir(&subs).unwrap();
        let reference = std::fs::read_to_string(root().join("src/lease.rs")).unwrap();
        let alternative = std::fs::read_to_string(fixture("alternative.rs")).unwrap();
        let (_, broken) = changed_reference(&fixture("release_resets_fence.toml"));
        let (_, not_compiling) = changed_reference(&fixture("does_not_compile.toml"));
        let mut names = Vec::new();
        for (name, source) in [
            ("ada.rs", reference),
            ("ben.rs", alternative),
            ("cho.rs", broken),
            ("dev.rs", not_compiling),
        ] {
            std::fs::write(subs.join(name), source).unwrap();
            names.push(format!("submissions/{name}"));
        }
        (dir, names)
    })
}

/// An exit code, stdout and stderr.
type Ran = (i32, String, String);

/// Runs `fencelab grade ARGS` in `cwd` with only the shard variables `env`;
/// returns its exit code, stdout and stderr.
fn grade(cwd: &Path, args: &[&str], env: &[(&str, String)]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencelab"));
    command.arg("grade").args(args).current_dir(cwd);
    for name in SHARD_VARIABLES {
        command.env_remove(name);
    }
    let out = command
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "C.UTF-8")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A report without what differs between two gradings of the same class:
/// the tests' timings and the shard.
fn comparable(mut report: Value) -> Value {
    report["shard"] = Value::Null;
    for s in report["submissions"].as_array_mut().unwrap() {
        for t in s["tests"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("secs");
        }
    }
    report
}

pub(crate) fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The class graded in one run: the report every merge must equal.
fn unsharded() -> &'static Value {
    static ONE: OnceLock<Value> = OnceLock::new();
    ONE.get_or_init(|| {
        crate::common::stored::stored("shards-unsharded", &[&fixture("")], grade_unsharded)
    })
}

/// What `unsharded` reads: the class graded in one run.
fn grade_unsharded() -> Value {
    {
        let (dir, names) = class();
        let json = dir.path().join("all.json");
        let mut args: Vec<&str> = names.iter().map(String::as_str).collect();
        args.extend(["--json", json.to_str().unwrap()]);
        let (exit, _, stderr) = grade(dir.path(), &args, &[]);
        assert_eq!(exit, 3, "one does not compile: {stderr}");
        read(&json)
    }
}

/// Runs shards 1..=n of the class as n processes, each with the variables
/// `env_of(k)`; merges their reports. Returns the merged report and each
/// shard's stderr.
fn shard_and_merge(
    tag: &str,
    n: usize,
    env_of: impl Fn(usize) -> Vec<(&'static str, String)>,
) -> (Value, Vec<String>) {
    let (dir, names) = class();
    let out = dir.path().join(tag);
    std::fs::create_dir_all(&out).unwrap();
    let children: Vec<(PathBuf, std::thread::JoinHandle<Ran>)> = (1..=n)
        .map(|k| {
            let json = out.join(format!("shard-{k}.json"));
            let mut args: Vec<String> = names.clone();
            args.extend([
                "--shard".into(),
                "auto".into(),
                "--json".into(),
                json.display().to_string(),
            ]);
            let env = env_of(k);
            let cwd = dir.path().to_path_buf();
            let handle = std::thread::spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                grade(&cwd, &args, &env)
            });
            (json, handle)
        })
        .collect();
    let mut stderrs = Vec::new();
    let mut jsons = Vec::new();
    for (json, handle) in children {
        let (exit, _, stderr) = handle.join().unwrap();
        assert!(exit == 0 || exit == 3, "{tag}: exit {exit}\n{stderr}");
        stderrs.push(stderr);
        jsons.push(json.display().to_string());
    }
    let merged = out.join("merged.json");
    let mut args: Vec<&str> = vec!["--merge"];
    args.extend(jsons.iter().map(String::as_str));
    args.extend(["--json", merged.to_str().unwrap()]);
    let (_, stdout, stderr) = grade(dir.path(), &args, &[]);
    assert!(merged.is_file(), "{tag}: {stdout}{stderr}");
    (read(&merged), stderrs)
}

/// The quick form: GitLab's parallel jobs, one shard of which takes nobody.
/// Each engine's variables are also step 1's in `examples::`, each run as
/// its example writes it; the others here are the full form's, step 2.
#[test]
fn an_empty_shard_says_so_and_merges_with_the_others_into_the_unsharded_report() {
    let whole = comparable(unsharded().clone());
    assert_eq!(whole["submissions"].as_array().unwrap().len(), 4);
    // GitLab's parallel: 4, CI_NODE_INDEX from 1; shard 3 of 4 takes nobody
    // and says so, and its empty report merges with the others.
    let (merged, stderrs) = shard_and_merge("gitlab", 4, |k| {
        vec![
            ("CI_NODE_INDEX", k.to_string()),
            ("CI_NODE_TOTAL", "4".into()),
        ]
    });
    assert_eq!(comparable(merged), whole, "GitLab");
    assert!(
        stderrs[2].contains("shard 3/4 (from CI_NODE_INDEX=3, CI_NODE_TOTAL=4): none of the 4 submissions falls in this shard"),
        "{}",
        stderrs[2]
    );
}

#[test]
#[ignore = "slow: .ci/run step 2"]
fn shards_started_as_each_engine_starts_them_merge_into_the_unsharded_report() {
    let whole = comparable(unsharded().clone());

    // Kubernetes' Indexed Job: JOB_COMPLETION_INDEX from 0.
    let (merged, stderrs) = shard_and_merge("kubernetes", 2, |k| {
        vec![
            ("JOB_COMPLETION_INDEX", (k - 1).to_string()),
            ("FENCELAB_SHARDS", "2".into()),
        ]
    });
    assert_eq!(comparable(merged), whole, "Kubernetes");
    assert!(
        stderrs[0].contains(
            "shard 1/2 (from JOB_COMPLETION_INDEX=0, FENCELAB_SHARDS=2): 1 of 4 submissions"
        ),
        "{}",
        stderrs[0]
    );

    // A Slurm array run as --array=1-3.
    let (merged, stderrs) = shard_and_merge("slurm", 3, |k| {
        vec![
            ("SLURM_ARRAY_TASK_ID", k.to_string()),
            ("SLURM_ARRAY_TASK_COUNT", "3".into()),
            ("SLURM_ARRAY_TASK_MIN", "1".into()),
        ]
    });
    assert_eq!(comparable(merged), whole, "Slurm");
    assert!(
        stderrs[2].contains("shard 3/3 (from SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_COUNT=3)"),
        "{}",
        stderrs[2]
    );

    // FENCELAB_SHARD, as --shard takes it.
    let (merged, _) = shard_and_merge("fencelab", 3, |k| {
        vec![("FENCELAB_SHARD", format!("{k}/3"))]
    });
    assert_eq!(comparable(merged), whole, "FENCELAB_SHARD");
}

#[test]
fn auto_without_a_shard_in_the_environment_exits_2_saying_what_to_set() {
    let (dir, names) = class();
    let (exit, stdout, stderr) = grade(dir.path(), &[&names[0], "--shard", "auto"], &[]);
    assert_eq!(exit, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("--shard auto: no shard in the environment")
            && stderr.contains("next:")
            && stderr.contains("FENCELAB_SHARD=K/N"),
        "{stderr}"
    );
    let (exit, _, stderr) = grade(
        dir.path(),
        &[&names[0], "--shard", "auto"],
        &[
            ("JOB_COMPLETION_INDEX", "1".into()),
            ("LANG", "ja_JP.UTF-8".into()),
        ],
    );
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("JOB_COMPLETION_INDEX=1 はありますが、FENCELAB_SHARDS"),
        "{stderr}"
    );
}

/// The results directory's stored results: file name and modification time.
fn stored(dir: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut all: Vec<(String, std::time::SystemTime)> = std::fs::read_dir(dir.join("submissions"))
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().modified().unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn a_shard_run_twice_with_results_grades_nothing_again_and_writes_the_same_report() {
    let (dir, names) = class();
    let results = dir.path().join("results");
    let run = |k: usize, json: &str| {
        let mut args: Vec<&str> = names.iter().map(String::as_str).collect();
        args.extend(["--shard", "auto", "--results", "results", "--json", json]);
        grade(dir.path(), &args, &[("FENCELAB_SHARD", format!("{k}/2"))])
    };
    // Shard 2 of 2 takes ada, cho and dev; dev does not compile (exit 3).
    let (exit, _, first) = run(2, "first.json");
    assert_eq!(exit, 3, "{first}");
    assert!(
        first.contains("3 to grade; results go to results"),
        "{first}"
    );
    let before = stored(&results);
    assert_eq!(before.len(), 3, "one result per submission: {before:?}");

    let (exit, _, again) = run(2, "again.json");
    assert_eq!(exit, 3, "{again}");
    assert!(
        again.contains("nothing: all 3 already graded in results"),
        "{again}"
    );
    assert!(!again.contains("Building"), "{again}");
    assert_eq!(stored(&results), before, "no result written again");
    assert_eq!(
        std::fs::read(dir.path().join("first.json")).unwrap(),
        std::fs::read(dir.path().join("again.json")).unwrap(),
        "the same report, byte for byte"
    );

    // A missing shard is refused by name; with it, the directory merges into
    // the unsharded report.
    let merged = dir.path().join("from-results.json");
    let merge = |extra: &[&str]| {
        let mut args = vec!["--merge", "results", "--json", merged.to_str().unwrap()];
        args.extend(extra);
        grade(dir.path(), &args, &[])
    };
    let (exit, _, stderr) = merge(&[]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(stderr.contains("shard(s) 1/2 missing"), "{stderr}");
    let (exit, _, stderr) = run(1, "one.json");
    assert_eq!(exit, 0, "{stderr}");
    let (_, _, stderr) = merge(&[]);
    assert!(merged.is_file(), "{stderr}");
    assert_eq!(comparable(read(&merged)), comparable(unsharded().clone()));

    // A shard report that says otherwise of a submission is refused, naming
    // both; so is a report of another suite, naming each.
    let mut other = read(&dir.path().join("one.json"));
    other["submissions"][0]["score"] = 12.5.into();
    std::fs::write(dir.path().join("other.json"), other.to_string()).unwrap();
    let (exit, _, stderr) = merge(&["other.json"]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("other.json: submission submissions/ben.rs has another result in")
            && stderr.contains("(score 100 and 12.5)")
            && stderr.contains("next:"),
        "{stderr}"
    );
    let mut other = read(&dir.path().join("one.json"));
    other["suite"] = "sha256:0123".into();
    std::fs::write(dir.path().join("other.json"), other.to_string()).unwrap();
    let (exit, _, stderr) = merge(&["other.json"]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("other.json: suite sha256:0123")
            && stderr.contains("1-of-2-")
            && stderr.contains("2-of-2-"),
        "{stderr}"
    );
}

/// Runs `script` (bash) with `env`, as the platform would; returns its exit
/// code and what it printed.
pub(crate) fn run_script(script: &Path, env: &[(&str, &Path)]) -> (i32, String) {
    let mut command = Command::new("bash");
    command.arg(script);
    for name in SHARD_VARIABLES {
        command.env_remove(name);
    }
    let out = command
        .envs(env.iter().map(|(k, v)| (k, v)))
        // The builds this test suite already made, and no network (cargo
        // fetch finds every crate cached).
        .env("CARGO_TARGET_DIR", root().join("target"))
        .env_remove("FENCELAB_CACHE")
        .env("CARGO_NET_OFFLINE", "true")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Writes the bundle for `platform` into `dir` with `fencelab autograder`.
pub(crate) fn bundle(platform: &str, dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["autograder", platform, "-o"])
        .arg(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("next:"),
        "{out:?}"
    );
}

/// Gradescope's results.json as its documentation lists the fields
/// (gradescope-autograders.readthedocs.io, "Autograder Specifications",
/// "Output format"): nothing else, each of its type and values.
fn gradescope_schema() -> Value {
    let format = serde_json::json!({ "enum": ["text", "html", "simple_format", "md", "ansi"] });
    let visibility =
        serde_json::json!({ "enum": ["hidden", "after_due_date", "after_published", "visible"] });
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["score", "tests"],
        "properties": {
            "score": { "type": "number", "minimum": 0 },
            "execution_time": { "type": "integer", "minimum": 0 },
            "output": { "type": "string" },
            "output_format": format,
            "test_output_format": format,
            "test_name_format": format,
            "visibility": visibility,
            "stdout_visibility": visibility,
            "extra_data": { "type": "object" },
            "leaderboard": { "type": "array" },
            "tests": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["name", "score", "max_score", "status"],
                    "properties": {
                        "score": { "type": "number", "minimum": 0 },
                        "max_score": { "type": "number", "minimum": 0 },
                        "status": { "enum": ["passed", "failed"] },
                        "name": { "type": "string", "minLength": 1 },
                        "name_format": format,
                        "number": { "type": "string" },
                        "output": { "type": "string" },
                        "output_format": format,
                        "tags": { "type": "array", "items": { "type": "string" } },
                        "visibility": visibility,
                        "extra_data": { "type": "object" }
                    }
                }
            }
        }
    })
}

/// PrairieLearn's external grader results.json as its documentation lists
/// the fields (docs.prairielearn.com, "External Grading", "Grading
/// results"): `score` from 0 to 1 when gradable, `format_errors` when not.
fn prairielearn_schema() -> Value {
    let images = serde_json::json!({ "type": "array" });
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["gradable"],
        "properties": {
            "gradable": { "type": "boolean" },
            "score": { "type": "number", "minimum": 0, "maximum": 1 },
            "format_errors": { "type": "array", "items": { "type": "string" } },
            "message": { "type": "string" },
            "output": { "type": "string" },
            "images": images,
            "tests": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["name", "points", "max_points"],
                    "properties": {
                        "name": { "type": "string", "minLength": 1 },
                        "description": { "type": "string" },
                        "points": { "type": "number", "minimum": 0 },
                        "max_points": { "type": "number", "minimum": 0 },
                        "message": { "type": "string" },
                        "output": { "type": "string" },
                        "images": images
                    }
                }
            }
        },
        "if": { "properties": { "gradable": { "const": true } } },
        "then": { "required": ["score"] },
        "else": { "required": ["format_errors"], "properties": { "format_errors": { "minItems": 1 } } }
    })
}

/// `results` valid against `schema`, every error said.
fn assert_valid(schema: &Value, results: &Value) {
    let validator = jsonschema::draft7::new(schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(results)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{results:#}");
}

/// The points a test earned and could earn, by its name (`score`/`max_score`
/// for Gradescope, `points`/`max_points` for PrairieLearn).
fn test_points(results: &Value, name: &str, earned: &str, max: &str) -> (f64, f64) {
    let t = results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no test {name} in {results}"));
    (t[earned].as_f64().unwrap(), t[max].as_f64().unwrap())
}

/// The test the hostile submission (`fake_verdicts`) forges a pass for.
const FORGED: &str = "step3::held_job_reads_every_field";

#[test]
fn the_gradescope_bundle_grades_in_gradescopes_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let root_dir = tmp.path().join("autograder");
    let source = root_dir.join("source");
    bundle("gradescope", &source);
    for file in [
        "setup.sh",
        "run_autograder",
        "fencelab",
        "prebuild.sh",
        "env.sh",
        "warm.rs",
    ] {
        assert!(source.join(file).is_file(), "{file}");
    }
    let env = [("FENCELAB_AUTOGRADER_ROOT", root_dir.as_path())];
    let (exit, said) = run_script(&source.join("setup.sh"), &env);
    assert_eq!(exit, 0, "{said}");
    assert!(said.contains("ready to grade offline"), "{said}");

    let submission = root_dir.join("submission");
    let results = root_dir.join("results/results.json");
    let grade_one = |file: &str, source_text: &str| -> (Value, f64) {
        let _ = std::fs::remove_dir_all(&submission);
        std::fs::create_dir_all(&submission).unwrap();
        std::fs::write(submission.join(file), source_text).unwrap();
        let started = std::time::Instant::now();
        let (exit, said) = run_script(&source.join("run_autograder"), &env);
        let secs = started.elapsed().as_secs_f64();
        assert_eq!(exit, 0, "{said}");
        (read(&results), secs)
    };
    let reference = std::fs::read_to_string(root().join("src/lease.rs")).unwrap();
    let (correct, secs) = grade_one("lib.rs", &reference);
    assert_eq!(correct["score"], 100.0, "{correct}");
    eprintln!("a warm submission in Gradescope's layout: {secs:.1} s");
    // Gradescope's fields: a score, and tests each with its score and max.
    for t in correct["tests"].as_array().unwrap() {
        assert!(t["name"].is_string() && t["max_score"].is_number() && t["score"].is_number());
        assert!(["passed", "failed"].contains(&t["status"].as_str().unwrap()));
    }
    let (_, broken) = changed_reference(&fixture("release_resets_fence.toml"));
    let (partial, _) = grade_one("lease.rs", &broken);
    let score = partial["score"].as_f64().unwrap();
    assert!(score > 0.0 && score < 100.0, "{partial}");
    let (_, not_compiling) = changed_reference(&fixture("does_not_compile.toml"));
    let (zero, _) = grade_one("lib.rs", &not_compiling);
    assert_eq!(zero["score"], 0.0, "{zero}");
    assert!(
        zero["output"].as_str().unwrap().contains("cannot add"),
        "the compiler's message, readable: {zero}"
    );
    // The file as the student named it, not where the grader keeps it.
    let output = zero["output"].as_str().unwrap();
    assert!(
        output.contains("lib.rs:") && !output.contains("autograder/submission"),
        "{output}"
    );
    // A hostile submission earns nothing for the pass it prints.
    let (_, forger) = changed_reference(&fixture("fake_verdicts.toml"));
    let (hostile, _) = grade_one("lib.rs", &forger);
    assert!(hostile["score"].as_f64().unwrap() < 100.0, "{hostile}");
    let (earned, max) = test_points(&hostile, FORGED, "score", "max_score");
    assert!(earned == 0.0 && max > 0.0, "{hostile}");
    // The course file the bundle carries (fencelab's defaults unless given),
    // edited as an instructor would: release weighs 3 of 10, a test hidden.
    let course = source.join("course.toml");
    assert!(
        std::fs::read_to_string(&course)
            .unwrap()
            .starts_with("# fencelab's defaults")
    );
    std::fs::write(
        &course,
        format!("{WEIGHED}\n[gradescope.tests]\n\"{HIDDEN}\" = \"hidden\"\n"),
    )
    .unwrap();
    let (weighed, _) = grade_one("lease.rs", &broken);
    assert_eq!(step7_max(&weighed, "max_score"), 30.0, "{weighed}");
    let (_, max) = test_points(&weighed, HIDDEN, "score", "max_score");
    assert!(max > 0.0, "a hidden test still counts: {weighed}");
    let hidden = weighed["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == HIDDEN);
    assert_eq!(hidden.unwrap()["visibility"], "hidden", "{weighed}");
    for results in [&correct, &partial, &zero, &hostile, &weighed] {
        assert_valid(&gradescope_schema(), results);
    }
}

/// A course file's weights, as both bundles are tested with them.
const WEIGHED: &str = "[weights]\nrelease = 3\n";
/// A test of step 7 the Gradescope bundle's course file hides.
const HIDDEN: &str = "step7::refuses_a_stale_fence_of_the_same_owner";

/// What step 7's tests are worth in `results` (`max`: the field), to 1/100.
fn step7_max(results: &Value, max: &str) -> f64 {
    let sum: f64 = (results["tests"].as_array().unwrap().iter())
        .filter(|t| t["name"].as_str().unwrap().starts_with("step7::"))
        .map(|t| t[max].as_f64().unwrap())
        .sum();
    (sum * 100.0).round() / 100.0
}

#[test]
fn the_prairielearn_bundle_grades_in_prairielearns_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let image = tmp.path().join("fencelab");
    bundle("prairielearn", &image);
    let dockerfile = std::fs::read_to_string(image.join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("RUN chmod +x"), "{dockerfile}");
    // What the image's RUN does, here; then each submission as the grader
    // runs it, in /grade's layout.
    let (exit, said) = run_script(&image.join("prebuild.sh"), &[]);
    assert_eq!(exit, 0, "{said}");
    let grade_root = tmp.path().join("grade");
    let student = grade_root.join("student");
    let results = grade_root.join("results/results.json");
    let env = [("FENCELAB_GRADE_ROOT", grade_root.as_path())];
    let grade_one = |source_text: &str| -> Value {
        let _ = std::fs::remove_dir_all(&student);
        std::fs::create_dir_all(&student).unwrap();
        std::fs::write(student.join("lib.rs"), source_text).unwrap();
        let (exit, said) = run_script(&image.join("run.sh"), &env);
        assert_eq!(exit, 0, "{said}");
        read(&results)
    };
    let reference = std::fs::read_to_string(root().join("src/lease.rs")).unwrap();
    let correct = grade_one(&reference);
    assert_eq!(correct["gradable"], true, "{correct}");
    assert_eq!(correct["score"], 1.0, "{correct}");
    let (_, broken) = changed_reference(&fixture("release_resets_fence.toml"));
    let partial = grade_one(&broken);
    let score = partial["score"].as_f64().unwrap();
    assert!(
        partial["gradable"] == true && score > 0.0 && score < 1.0,
        "{partial}"
    );
    for t in correct["tests"].as_array().unwrap() {
        assert!(t["name"].is_string() && t["points"].is_number() && t["max_points"].is_number());
    }
    // Its course file weighs the steps (then back to the defaults).
    std::fs::write(image.join("course.toml"), WEIGHED).unwrap();
    let weighed = grade_one(&broken);
    assert_eq!(step7_max(&weighed, "max_points"), 30.0, "{weighed}");
    std::fs::write(image.join("course.toml"), "").unwrap();
    let (_, not_compiling) = changed_reference(&fixture("does_not_compile.toml"));
    let unviable = grade_one(&not_compiling);
    assert_eq!(unviable["gradable"], false, "{unviable}");
    assert!(
        unviable["format_errors"][0]
            .as_str()
            .unwrap()
            .contains("cannot add"),
        "{unviable}"
    );
    let said = unviable["format_errors"][0].as_str().unwrap();
    assert!(
        said.contains("lib.rs:") && !said.contains("grade/student"),
        "{said}"
    );
    // A hostile submission earns nothing for what it forges.
    let (_, forger) = changed_reference(&fixture("fake_verdicts.toml"));
    let hostile = grade_one(&forger);
    assert!(hostile["score"].as_f64().unwrap() < 1.0, "{hostile}");
    let (earned, max) = test_points(&hostile, FORGED, "points", "max_points");
    assert!(earned == 0.0 && max > 0.0, "{hostile}");
    for results in [&correct, &partial, &unviable, &hostile] {
        assert_valid(&prairielearn_schema(), results);
    }
}

#[test]
fn a_submission_that_spins_fails_the_tests_that_call_it_each_confirmed_and_no_other() {
    let (dir, _) = class();
    let (_, spins) = changed_reference(&fixture("infinite_loop.toml"));
    std::fs::write(dir.path().join("spins.rs"), spins).unwrap();
    let started = std::time::Instant::now();
    let (exit, stdout, stderr) = grade(
        dir.path(),
        &["spins.rs", "submissions/ada.rs", "--json", "spins.json"],
        &[],
    );
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(exit, 0, "{stdout}{stderr}");
    let report = read(&dir.path().join("spins.json"));
    let spins = &report["submissions"][0];
    // Every step but claim_many's is whole; claim_many's 10 tests each spun
    // past 0.3 s of processor time, and again when run alone: 3 s of the
    // 15 s budget, so each is confirmed, none crashed.
    assert_eq!(spins["score"], 87.5, "{stdout}");
    let step8: Vec<&Value> = spins["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["step"] == 8)
        .collect();
    assert_eq!(step8.len(), 10);
    assert_eq!(report["budget_secs"], 15.0, "the report records the budget");
    for t in &step8 {
        assert_eq!(t["outcome"], "timed_out", "not crashed: {t}");
        assert_eq!(t["stopped_by"], "spins", "{t}");
        assert_eq!(t["rule_secs"], 0.3, "{t}");
        assert_eq!(t["confirmed"], true, "{t}");
    }
    let said = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        said.contains("(timeout)")
            && said
                .contains("used more than 0.3 s of processor time before it answered (it spins)")
            && said.contains("confirmed: run again alone")
            && !said.contains("crashed"),
        "{stdout}"
    );
    let costs: Vec<f64> = step8.iter().map(|t| t["secs"].as_f64().unwrap()).collect();
    eprintln!("the hanging step's tests ran {costs:.1?} s");
    // The correct submission beside it is untouched.
    assert_eq!(report["submissions"][1]["score"], 100.0, "{stdout}");
    // The wall time (build included) depends on the machine's load: said,
    // not asserted (measured in bench/budget.sh).
    eprintln!("a spinning and a correct submission, built and graded: {secs:.1} s");
}
