//! The judge of a learner's own Python tests: the runner script and the
//! proxy it imports as `lease`, written as a scratch crate of their own.

use super::*;

/// The judge of a learner's own Python tests, as shipped: it collects and
/// runs the tests of one file (`python/fencelab_tests.py`).
pub(crate) const RUNNER: &str = include_str!("../../../python/fencelab_tests.py");
/// The scratch crate a learner's Python tests' judge is written to
/// (`pyjudge-<hash>`; `outcome::failure_text` leaves its path out).
pub(crate) const JUDGE_CRATE: &str = "pyjudge";
/// The file name the runner and the cage recognise a Python judge by.
pub(crate) const RUNNER_FILE: &str = "fencelab_tests.py";
/// The lab's API as those tests import it: every call sent to the
/// implementation's server (`python/lease_proxy.py`, written as `api/lease.py`).
use wire::proxy;
/// What the runner prints before the message of a file it cannot collect.
const UNCOLLECTABLE: &str = "fencelab-tests: cannot collect: ";

/// A learner's Python tests made into a judge, or why they cannot be.
#[derive(Debug)]
pub(crate) enum Judge {
    /// The runner (a program taking libtest's `--exact NAME`), the tests it
    /// collected, and the pin that keeps its directory.
    Ready {
        program: PathBuf,
        tests: Vec<SuiteTest>,
        pin: Pin,
    },
    /// The file does not compile, or raised while it was imported: Python's
    /// message, with the file as the learner named it.
    Unviable { errors: String },
}

/// The module name a learner's test file is imported under: its own stem
/// when that is a plain identifier other than `lease`.
fn module_name(file: &str) -> String {
    let stem = file.strip_suffix(".py").unwrap_or(file);
    let plain = stem
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain && stem != "lease" && stem != RUNNER_FILE.trim_end_matches(".py") {
        stem.to_string()
    } else {
        "learner_tests".to_string()
    }
}

/// Writes the judge of `suite` (a learner's Python test file: its root is
/// the path shown to the learner) into the scratch workspace, pins it, asks
/// it who it is and, caged, which tests it collects.
pub(crate) fn judge(scratch: &Scratch, suite: &SuiteFiles) -> Result<Judge, Error> {
    let python = interpreter()?;
    let source = suite
        .files
        .iter()
        .find(|(path, _)| *path == suite.root)
        .map(|(_, text)| text.clone())
        .unwrap_or_default();
    let file = Path::new(&suite.root)
        .file_name()
        .map_or("tests.py".into(), |n| n.to_string_lossy().into_owned());
    let build = hash_of([RUNNER, proxy(), suite.root.as_str(), source.as_str()]);
    let info = serde_json::json!({
        "build": build,
        "module": module_name(&file),
        "file": file,
        "shown": suite.root,
    });
    let reads: String = python
        .reads
        .iter()
        .map(|p| format!("{}\n", p.to_string_lossy()))
        .collect();
    let files = vec![
        (
            RUNNER_FILE.to_string(),
            format!("#!{} -IuS\n{RUNNER}", python.executable.to_string_lossy()),
        ),
        ("api/lease.py".to_string(), proxy().to_string()),
        (format!("mine/{file}"), source),
        ("judge.json".to_string(), info.to_string()),
        ("reads".to_string(), reads),
    ];
    let lock = scratch.lock()?;
    let dir = scratch.write_crate(JUDGE_CRATE, &files)?;
    scratch.touch(&[&dir]);
    let pin = scratch.pin(&lock, &[&dir])?;
    drop(lock);
    let program = scratch.dir(&dir).join(RUNNER_FILE);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io("make executable", &program, e))?;
    let said = ask_judge(&program, &["--identify"], false)?;
    let identity: Option<serde_json::Value> = serde_json::from_str(said.stdout.trim()).ok();
    if identity.as_ref().and_then(|v| v["build"].as_str()) != Some(build.as_str()) {
        return Err(Error::internal(format!(
            "the judge of the Python tests did not say it was written for them: {} {}",
            said.stdout.trim(),
            said.stderr.trim()
        ))
        .with_next("run again; if it happens again, report it with the command you ran"));
    }
    // Collecting imports the learner's file: its code runs, so in the cage.
    let listed = ask_judge(&program, &["--list"], true)?;
    if let Some(message) = listed
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(UNCOLLECTABLE))
    {
        let errors: String = serde_json::from_str(message).unwrap_or_else(|_| message.to_string());
        return Ok(Judge::Unviable { errors });
    }
    if listed.timed_out() || listed.status.is_none_or(|s| !s.success()) {
        let said = [listed.stdout.trim(), listed.stderr.trim()].join("\n");
        return Ok(Judge::Unviable {
            errors: format!(
                "{}: collecting its tests did not end well: {}",
                suite.root,
                if listed.timed_out() {
                    "it took longer than 30 s".to_string()
                } else {
                    said.trim().to_string()
                }
            ),
        });
    }
    let tests = listed
        .stdout
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(crate::lab::suite::test_named)
        .collect();
    Ok(Judge::Ready {
        program,
        tests,
        pin,
    })
}

/// Runs the Python judge `program` with `args` (at most 30 s; in the cage of
/// an untrusted judge when `caged`).
fn ask_judge(program: &Path, args: &[&str], caged: bool) -> Result<process::Finished, Error> {
    let dir = tempfile::tempdir()
        .map_err(|e| Error::io("create a directory in", &std::env::temp_dir(), e))?;
    let cage = caged.then(|| Cage::new_reading(dir.path(), program, &[], &judge_reads(program)));
    let mut command = Command::new(program);
    command.args(args).current_dir(dir.path()).env_clear();
    let limits = Limits {
        time: Some(Duration::from_secs(30)),
        output_cap: 1024 * 1024,
        file_size: Some(1024 * 1024),
        cage: cage.as_ref().map(Cage::plan),
        ..Default::default()
    };
    process::run(command, dir.path(), &limits).map_err(|e| {
        Error::environment(format!("cannot run {}: {e}", program.display()))
            .with_next("run again; if it happens again, report it with the command you ran")
    })
}

/// What the cage of a Python judge (`fencelab_tests.py`) reads besides the
/// script: the interpreter's directories (listed in `reads` beside it) and
/// its own directory (the learner's file, the lab's API), nothing of any
/// implementation. Nothing for a Rust judge.
pub(crate) fn judge_reads(judge: &Path) -> Vec<PathBuf> {
    if judge.file_name().and_then(|n| n.to_str()) != Some(RUNNER_FILE) {
        return Vec::new();
    }
    let dir = judge.parent().unwrap_or(Path::new("."));
    let mut reads = crate::bridge::start::interpreter_reads(dir);
    reads.push(dir.to_path_buf());
    reads
}
