//! Every cargo command line fencelab runs, and what it reads back from cargo's
//! JSON messages: the executables built and the compiler's errors, by package.
//!
//! Builds are `--offline` (the lock file is fencelab's own, so nothing needs
//! fetching) and `--keep-going`, so that one implementation that does not
//! compile leaves the others built.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;

use crate::engine::process::{self, Limits};
use crate::engine::scratch::{CrateDir, Scratch};
use crate::error::Error;

/// What a build produced.
#[derive(Debug, Default)]
pub(crate) struct Built {
    pub success: bool,
    /// It ran out of time and was stopped (what it built so far is kept).
    pub timed_out: bool,
    /// Executables by (package, target name).
    pub executables: BTreeMap<(String, String), PathBuf>,
    /// Rendered compiler errors by package.
    pub errors: BTreeMap<String, Vec<String>>,
    /// cargo's own messages (stderr), for failures that are not the compiler's.
    pub stderr: String,
    /// The packages cargo finished building (an artifact of theirs).
    pub finished: BTreeSet<String>,
    /// The packages whose compiler the memory limit stopped: the build's
    /// memory cgroup ran out, and cargo says it could not compile them.
    pub out_of_memory: BTreeSet<String>,
}

impl Built {
    /// The packages cargo started compiling and did not finish.
    pub(crate) fn unfinished(&self) -> BTreeSet<String> {
        self.started()
            .into_iter()
            .filter(|name| !self.finished.contains(name))
            .collect()
    }

    /// The packages cargo started compiling.
    pub(crate) fn started(&self) -> BTreeSet<String> {
        self.stderr
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("Compiling "))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(str::to_string)
            .collect()
    }
}

/// How much memory a build may use, every compiler it runs together: a
/// macro that doubles at each level took rustc to 6 GiB. Normal builds of
/// the scratch workspace stay under 1.5 GiB (two compilers at once).
pub(crate) const BUILD_MEMORY: u64 = 4 << 30;

#[derive(Deserialize)]
struct Message {
    reason: String,
    package_id: Option<String>,
    target: Option<Target>,
    executable: Option<PathBuf>,
    message: Option<Diagnostic>,
    success: Option<bool>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
}

#[derive(Deserialize)]
struct Diagnostic {
    level: String,
    rendered: Option<String>,
}

/// The cargo to run: the one that runs us, if any.
fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    // Variables an outer cargo sets for the process it runs describe that
    // package, not the scratch crates.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_PRIMARY_",
        ]
        .iter()
        .any(|prefix| key.starts_with(prefix))
            || key == "CARGO_TARGET_TMPDIR"
        {
            command.env_remove(key.as_ref());
        }
    }
    command
}

/// What a build is doing now (12 crates compiled, now libsqlite3-sys), kept
/// up to date while cargo runs, for a progress line to say in its language.
pub(crate) type Detail = std::sync::Arc<std::sync::Mutex<Compiling>>;

/// How far a build is, as cargo's status lines say it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compiling {
    /// How many crates it has compiled so far.
    pub compiled: usize,
    /// The crate it compiles now; `None` before the first.
    pub(crate) now: Option<Compiled>,
}

/// A crate cargo compiles: a dependency by its name, or one of the scratch
/// crates by what it is (their names are hashes no user should see).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Compiled {
    Dependency(String),
    Implementation,
    Server,
    Suite,
    Bridge,
}

/// Builds the test target `test` and the binaries of `packages` in the
/// scratch workspace, within `time_limit`, saying in `detail` what cargo
/// compiles as it goes.
pub(crate) fn build(
    scratch: &Scratch,
    packages: &[&CrateDir],
    test: &str,
    time_limit: Option<Duration>,
    detail: Option<&Detail>,
) -> Result<Built, Error> {
    let mut command = cargo();
    command
        .current_dir(&scratch.root)
        .env("CARGO_TARGET_DIR", &scratch.target_dir)
        // Scratch crates are small and often new: incremental caches of them
        // would only fill the disk. (Dependencies are never incremental.)
        .env("CARGO_INCREMENTAL", "0")
        .args([
            "build",
            "--offline",
            "--keep-going",
            "--message-format=json",
        ])
        .args(["--test", test, "--bins"]);
    if scratch.release {
        command.arg("--release");
    }
    for package in packages {
        command.args(["-p", &package.name]);
    }
    let logs = tempfile::tempdir()
        .map_err(|e| Error::io("create a temporary directory in", &std::env::temp_dir(), e))?;
    // cargo's JSON is read from its file line by line (`read_messages`);
    // only its status lines on stderr are kept.
    let limits = Limits {
        time: time_limit,
        output_cap: 1024 * 1024,
        file_size: None,
        cage: None,
        space: None,
        stop: None,
    };
    // Every compiler of the build in one memory cgroup: the largest (a
    // bomb) is the one the kernel kills when it is full.
    let memory = crate::bridge::sandbox::Memory::for_build(BUILD_MEMORY)
        .map_err(|e| process::cage_error("a memory cgroup for the build", e))?;
    if let Some(memory) = &memory {
        // A descriptor the parent keeps open until the build has ended.
        let steps = crate::bridge::child::Steps {
            memory: Some(memory.procs_fd()),
            ..Default::default()
        };
        crate::bridge::child::before_exec(&mut command, steps);
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    let finished = std::thread::scope(|scope| {
        if let Some(detail) = detail {
            let stderr = logs.path().join("stderr");
            let done = &done;
            scope.spawn(move || watch(&stderr, detail, done));
        }
        let finished = process::run(command, logs.path(), &limits);
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        finished
    })
    .map_err(|e| {
        Error::environment(format!("cannot run cargo: {e}"))
            .with_next("install Rust with rustup (https://rustup.rs) so that `cargo` is on PATH")
    })?;
    let mut built = Built {
        success: false,
        timed_out: finished.timed_out(),
        stderr: finished.stderr.clone(),
        ..Built::default()
    };
    read_messages(&logs.path().join("stdout"), &mut built);
    if memory
        .as_ref()
        .is_some_and(crate::bridge::sandbox::Memory::ran_out)
    {
        // Killed, not refused: cargo says "could not compile `NAME` (lib)"
        // with no count of errors, then the signal.
        built.out_of_memory = built
            .stderr
            .lines()
            .filter(|l| !l.contains("due to"))
            .filter_map(|l| l.split_once("could not compile `"))
            .filter_map(|(_, rest)| rest.split_once('`'))
            .map(|(name, _)| name.to_string())
            .collect();
    }
    Ok(built)
}

/// How much of one package's error messages is kept: the first errors
/// say what to fix, and a flood of them must not cost the batch.
const ERRORS_KEPT: usize = 64 * 1024;

/// Reads cargo's JSON messages from `path` as a stream, a line at a time:
/// however much a submission makes the compiler say, no artifact line is
/// lost, and each package keeps its first `ERRORS_KEPT` bytes of errors.
fn read_messages(path: &Path, built: &mut Built) {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return;
    };
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    for line in std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
    {
        let Ok(message) = serde_json::from_slice::<Message>(&line) else {
            continue;
        };
        let package = message
            .package_id
            .as_deref()
            .map(package_name)
            .unwrap_or_default();
        match message.reason.as_str() {
            "compiler-artifact" => {
                built.finished.insert(package.clone());
                if let (Some(exe), Some(target)) = (message.executable, message.target) {
                    built.executables.insert((package, target.name), exe);
                }
            }
            "compiler-message" => {
                if let Some(diagnostic) = message.message
                    && diagnostic.level == "error"
                    && let Some(rendered) = diagnostic.rendered
                {
                    let size = kept.entry(package.clone()).or_default();
                    if *size < ERRORS_KEPT {
                        *size += rendered.len();
                        built.errors.entry(package).or_default().push(rendered);
                    }
                }
            }
            "build-finished" => built.success = message.success.unwrap_or(false),
            _ => {}
        }
    }
}

/// Reads cargo's status lines from `stderr` while it builds and says in
/// `detail` how many crates it has compiled and which it compiles now.
fn watch(stderr: &Path, detail: &Detail, done: &std::sync::atomic::AtomicBool) {
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        if let Ok(text) = std::fs::read_to_string(stderr)
            && let Some(now) = compiling(&text)
        {
            *detail.lock().unwrap_or_else(|e| e.into_inner()) = now;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What cargo's stderr so far says it compiles: the count of `Compiling`
/// lines before the last, and the crate of the last one.
fn compiling(stderr: &str) -> Option<Compiling> {
    let crates: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("Compiling "))
        .collect();
    let last = crates.last()?.split_whitespace().next()?;
    // Scratch crates are named by their contents' hash: say what they are.
    let now = match last.split_once('-') {
        Some(("impl", hash)) if hash.len() == 16 => Compiled::Implementation,
        Some(("server", hash)) if hash.len() == 16 => Compiled::Server,
        Some(("judge", hash)) if hash.len() == 16 => Compiled::Suite,
        Some(("bridge", hash)) if hash.len() == 16 => Compiled::Bridge,
        _ => Compiled::Dependency(last.to_string()),
    };
    Some(Compiling {
        compiled: crates.len() - 1,
        now: Some(now),
    })
}

/// The package name in a cargo package id such as
/// `path+file:///…/crates/impl-0123#0.0.0` or `…/crates/x#impl-0123@0.0.0`.
fn package_name(id: &str) -> String {
    let (path, fragment) = id.split_once('#').unwrap_or((id, ""));
    match fragment.split_once('@') {
        Some((name, _)) if !name.is_empty() => name.to_string(),
        _ => Path::new(path)
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
    }
}

/// What a rendered diagnostic says about the crate in `dir` (`crates/NAME`):
/// the diagnostic up to the first of rustc's notes that points into other
/// code (the standard library, or the grader's own dependencies, which a
/// learner's crate never sees), with a line saying that the rest is left out.
pub(crate) fn about_crate(rendered: &str, dir: &str) -> String {
    let lines: Vec<&str> = rendered.lines().collect();
    let foreign = |line: &str| {
        let trimmed = line.trim_start();
        let path = trimmed
            .strip_prefix("--> ")
            .or_else(|| trimmed.strip_prefix("::: "));
        path.is_some_and(|p| !p.starts_with(dir))
    };
    let Some(first) = lines.iter().position(|l| foreign(l)) else {
        return rendered.to_string();
    };
    // Cut at the note or help that introduces the foreign code, if it has
    // a heading of its own; never above the first location (the error's own).
    let own_location = lines.iter().position(|l| {
        let t = l.trim_start();
        t.starts_with("--> ") || t.starts_with("::: ")
    });
    let floor = own_location.map_or(1, |o| o + 1);
    let cut = lines[floor.min(first)..first]
        .iter()
        .rposition(|l| l.starts_with("help:") || l.starts_with("note:"))
        .map_or(first, |i| floor.min(first) + i);
    let mut kept: Vec<&str> = lines[..cut].to_vec();
    while kept
        .last()
        .is_some_and(|l| l.trim() == "|" || l.trim().is_empty())
    {
        kept.pop();
    }
    format!(
        "{}\n    = note: what rustc says about code outside this file is left out",
        kept.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::{about_crate, package_name};

    #[test]
    fn notes_about_other_code_are_left_out_of_a_diagnostic() {
        let rendered = "error[E0277]: can't compare `i64` with `&str`\n   --> crates/impl-1/src/lib.rs:173:37\n    |\n173 |     if fence == \"1\" {\n    |              ^^ no implementation for `i64 == &str`\n    |\n    = help: the trait `PartialEq<&str>` is not implemented for `i64`\nhelp: the following other types implement trait `PartialEq<Rhs>`\n   --> /rustc/abc/library/core/src/cmp.rs:1876:12\n    |\n    = note: `i64` implements `PartialEq`\n   ::: /home/u/.cargo/registry/src/serde_json-1.0.154/src/value/partial_eq.rs:76:13\n    |\n 76 | impl PartialEq<Value> for $ty {\n    = note: `i64` implements `PartialEq<serde_json::value::Value>`\n";
        let text = about_crate(rendered, "crates/impl-1/");
        assert!(
            text.contains("no implementation for `i64 == &str`"),
            "{text}"
        );
        assert!(text.contains("is not implemented for `i64`"), "{text}");
        assert!(!text.contains("serde_json"), "{text}");
        assert!(!text.contains("/rustc/"), "{text}");
        assert!(!text.contains("the following other types"), "{text}");
        assert!(text.ends_with("is left out"), "{text}");
        let own = "error: x\n --> crates/impl-1/src/lib.rs:1:1\n  |\n";
        assert_eq!(about_crate(own, "crates/impl-1/"), own);
    }

    #[test]
    fn cargo_s_status_lines_say_how_far_the_build_is() {
        let stderr = "   Compiling libc v0.2.191\n   Compiling cc v1.2.0\n   Compiling libsqlite3-sys v0.35.0\n";
        assert_eq!(
            super::compiling(stderr),
            Some(super::Compiling {
                compiled: 2,
                now: Some(super::Compiled::Dependency("libsqlite3-sys".into()))
            })
        );
        assert_eq!(
            super::compiling("   Compiling impl-0123456789abcdef v0.0.0 (/x)\n"),
            Some(super::Compiling {
                compiled: 0,
                now: Some(super::Compiled::Implementation)
            }),
            "no scratch crate's hash reaches a user"
        );
        assert_eq!(super::compiling("    Finished `release`\n"), None);
    }

    #[test]
    fn package_names_come_from_either_form_of_id() {
        assert_eq!(
            package_name("path+file:///t/fencelab/ws/crates/impl-0a1b#0.0.0"),
            "impl-0a1b"
        );
        assert_eq!(
            package_name("path+file:///t/ws/crates/dir#impl-0a1b@0.0.0"),
            "impl-0a1b"
        );
        assert_eq!(
            package_name("registry+https://github.com/rust-lang/crates.io-index#rusqlite@0.43.0"),
            "rusqlite"
        );
    }
}
