//! The examples' class, their steps run as an engine runs them, and the
//! report every merge must equal.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{changed_reference, fixture, root};

/// How many shards each example runs here (the examples say 20).
pub(super) const N: usize = 3;

/// What the engines and CI set that the examples must not inherit from the
/// machine running the tests.
pub(super) const ENGINE_VARIABLES: [&str; 16] = [
    "FENCELAB_SHARD",
    "FENCELAB_SHARDS",
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_SUBMIT_DIR",
    "CI_NODE_INDEX",
    "CI_NODE_TOTAL",
    "CI_PROJECT_DIR",
    "GITHUB_ACTIONS",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_STEP_SUMMARY",
];

pub(super) fn example(path: &str) -> String {
    std::fs::read_to_string(root().join("examples").join(path))
        .unwrap_or_else(|e| panic!("examples/{path}: {e}"))
}

/// The class: four submissions, one of them a learner crate: the reference,
/// a broken one, one that does not compile, one with a step not started.
/// Each example grades it a few times over (in shards, and unsharded), and
/// what it checks is the sharding and the merge, not the grading of many
/// kinds: a correct one written differently and a second broken one are
/// graded in `grade`'s batch (`tests/cli/grade/`).
pub(super) fn class() -> &'static Vec<(&'static str, String)> {
    static CLASS: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    CLASS.get_or_init(|| {
        let reference = std::fs::read_to_string(root().join("src/lease.rs")).unwrap();
        let change = |name: &str| changed_reference(&fixture(name)).1;
        vec![
            ("submissions/ada.rs", reference),
            ("submissions/cho.rs", change("release_resets_fence.toml")),
            ("submissions/dev.rs", change("does_not_compile.toml")),
            (
                "submissions/eve/src/lib.rs",
                change("renew_not_started.toml"),
            ),
        ]
    })
}

/// Writes the class into `dir` (a checkout of the class repository).
pub(super) fn write_class(dir: &Path) {
    for (path, source) in class() {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, source).unwrap();
    }
}

/// A directory holding `fencelab` (this build), to put on the PATH.
pub(super) fn bin_dir() -> &'static Path {
    static BIN: OnceLock<tempfile::TempDir> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencelab"), dir.path().join("fencelab"))
            .unwrap();
        dir
    })
    .path()
}

/// Runs `argv` in `cwd` with `extra_path` first on the PATH and the engine's
/// variables `env`; returns its exit code and what it printed.
pub(super) fn run(
    cwd: &Path,
    argv: &[&str],
    extra_path: &[&Path],
    env: &[(&str, String)],
) -> (i32, String) {
    let mut command = Command::new(argv[0]);
    command.args(&argv[1..]).current_dir(cwd);
    for name in ENGINE_VARIABLES {
        command.env_remove(name);
    }
    let mut path: Vec<PathBuf> = extra_path.iter().map(|p| p.to_path_buf()).collect();
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let out = command
        .env("PATH", std::env::join_paths(path).unwrap())
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .envs(env.iter().map(|(k, v)| (k, v)))
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

/// One process to start: where, its command line, directories to put first
/// on the PATH, the engine's variables.
pub(super) type Run = (
    PathBuf,
    Vec<String>,
    Vec<PathBuf>,
    Vec<(&'static str, String)>,
);

/// Runs `runs` (cwd, argv, extra PATH, env) at once, one process each, as
/// an engine starts its shards; each must succeed.
pub(super) fn all_at_once(what: &str, runs: Vec<Run>) -> Vec<String> {
    let handles: Vec<_> = runs
        .into_iter()
        .map(|(cwd, argv, path, env)| {
            std::thread::spawn(move || {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                let path: Vec<&Path> = path.iter().map(PathBuf::as_path).collect();
                run(&cwd, &argv, &path, &env)
            })
        })
        .collect();
    handles
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            let (exit, said) = h.join().unwrap();
            assert_eq!(exit, 0, "{what}, shard {}: exit {exit}\n{said}", i + 1);
            said
        })
        .collect()
}

/// A report without what differs between two gradings of the same class:
/// the tests' timings and the shard.
pub(super) fn comparable(mut report: Value) -> Value {
    report["shard"] = Value::Null;
    for s in report["submissions"].as_array_mut().unwrap() {
        for t in s["tests"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("secs");
        }
    }
    report
}

/// Asserts that `merged` is the unsharded report, saying what differs (by
/// submission and test) rather than printing two whole reports.
pub(super) fn assert_unsharded(merged: Value, what: &str) {
    let whole = unsharded();
    if merged == *whole {
        return;
    }
    let mut differences = Vec::new();
    for key in ["exit_code", "budget_secs", "suite", "min_score"] {
        if merged[key] != whole[key] {
            differences.push(format!("{key}: {} and {}", merged[key], whole[key]));
        }
    }
    let subs = |r: &Value| r["submissions"].as_array().cloned().unwrap_or_default();
    let (a, b) = (subs(&merged), subs(whole));
    if a.len() != b.len() {
        differences.push(format!("{} submissions and {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(&b) {
        if x == y {
            continue;
        }
        let tests = |s: &Value| s["tests"].as_array().cloned().unwrap_or_default();
        let odd: Vec<String> = tests(x)
            .iter()
            .zip(tests(y))
            .filter(|(t, u)| *t != u)
            .map(|(t, u)| format!("    {t}\n    {u}"))
            .collect();
        differences.push(format!(
            "{} (score {} and {}):\n{}",
            x["name"],
            x["score"],
            y["score"],
            odd.join("\n")
        ));
    }
    panic!(
        "{what}: the merged report differs from the unsharded one:\n{}",
        differences.join("\n")
    );
}

pub(super) fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The class graded in one run, as every merge must give it.
pub(super) fn unsharded() -> &'static Value {
    static ONE: OnceLock<Value> = OnceLock::new();
    ONE.get_or_init(|| {
        crate::common::stored::stored("examples-unsharded", &[&fixture("")], grade_unsharded)
    })
}

/// What `unsharded` reads: the class graded in one run, as its users run it.
fn grade_unsharded() -> Value {
    {
        let dir = tempfile::tempdir().unwrap();
        write_class(dir.path());
        let (exit, said) = run(
            dir.path(),
            &["bash", "-c", "fencelab grade submissions/* --json all.json"],
            &[bin_dir()],
            &[],
        );
        assert_eq!(exit, 3, "dev.rs does not compile: {said}");
        let report = read(&dir.path().join("all.json"));
        assert_eq!(report["submissions"].as_array().unwrap().len(), 4);
        comparable(report)
    }
}

/// Copies every file under `from` into `to`, as a download of several
/// artifacts into one directory does (GitHub's `merge-multiple`, GitLab's
/// artifacts of a job's `needs`).
pub(super) fn copy_into(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_into(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// bash running `script` with `-e`, as GitHub's `run:` and GitLab's
/// `script:` run.
pub(super) fn bash(script: &str) -> Vec<String> {
    ["bash", "-e", "-c", script].map(String::from).to_vec()
}

/// A symbolic link to this fencelab at `path`: fencelab run through it keeps
/// this checkout's scratch workspace (it follows its program to its target
/// directory), so the examples build nothing the other tests did not.
pub(super) fn link_fencelab(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fencelab"), path).unwrap();
}

/// A GitHub runner's fencelab: the artifact downloaded to .fencelab/, then
/// the workflow's own step that puts it on the PATH (through
/// `$GITHUB_PATH`, read back as the runner reads it after a step). Returns
/// the directory added.
pub(super) fn github_fencelab(dir: &Path, put_on_path: &str) -> PathBuf {
    link_fencelab(&dir.join(".fencelab/fencelab"));
    let github_path = dir.join("github_path");
    let (exit, said) = run(
        dir,
        &["bash", "-e", "-c", put_on_path],
        &[],
        &[("GITHUB_PATH", github_path.display().to_string())],
    );
    assert_eq!(exit, 0, "{said}");
    let added = std::fs::read_to_string(&github_path).unwrap();
    assert_eq!(added.trim(), dir.join(".fencelab").display().to_string());
    PathBuf::from(added.trim())
}

/// A GitHub or GitLab runner of the examples: a checkout of the class of its
/// own, where the step's script runs in bash with `-e`, as both run it.
pub(super) fn runner(work: &Path, name: &str) -> PathBuf {
    let dir = work.join(name);
    write_class(&dir);
    dir
}
