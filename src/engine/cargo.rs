//! Every cargo command line fencelab runs, and what it reads back from cargo's
//! JSON messages: the executables built and the compiler's errors, by package.
//!
//! Builds are `--offline` (the lock file is fencelab's own, so nothing needs
//! fetching) and `--keep-going`, so that one implementation that does not
//! compile leaves the others built.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;

use crate::engine::process::{self, Limits};
use crate::engine::scratch::{CrateDir, Scratch};
use crate::error::Error;

/// What a build produced.
#[derive(Debug, Default)]
pub struct Built {
    pub success: bool,
    /// It ran out of time and was stopped (what it built so far is kept).
    pub timed_out: bool,
    /// Executables by (package, target name).
    pub executables: BTreeMap<(String, String), PathBuf>,
    /// Rendered compiler errors by package.
    pub errors: BTreeMap<String, Vec<String>>,
    /// cargo's own messages (stderr), for failures that are not the compiler's.
    pub stderr: String,
}

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

/// Builds the test target `test` and the binaries of `packages` in the
/// scratch workspace, within `time_limit`.
pub fn build(
    scratch: &Scratch,
    packages: &[&CrateDir],
    test: &str,
    time_limit: Option<Duration>,
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
    let limits = Limits {
        time: time_limit,
        output_cap: 64 * 1024 * 1024,
        file_size: None,
        cage: None,
    };
    let finished = process::run(command, logs.path(), &limits).map_err(|e| {
        Error::environment(format!("cannot run cargo: {e}"))
            .with_next("install Rust with rustup (https://rustup.rs) so that `cargo` is on PATH")
    })?;
    let mut built = Built {
        success: false,
        timed_out: finished.timed_out(),
        stderr: finished.stderr.clone(),
        ..Built::default()
    };
    for line in finished.stdout.lines() {
        let Ok(message) = serde_json::from_str::<Message>(line) else {
            continue;
        };
        let package = message
            .package_id
            .as_deref()
            .map(package_name)
            .unwrap_or_default();
        match message.reason.as_str() {
            "compiler-artifact" => {
                if let (Some(exe), Some(target)) = (message.executable, message.target) {
                    built.executables.insert((package, target.name), exe);
                }
            }
            "compiler-message" => {
                if let Some(diagnostic) = message.message
                    && diagnostic.level == "error"
                    && let Some(rendered) = diagnostic.rendered
                {
                    built.errors.entry(package).or_default().push(rendered);
                }
            }
            "build-finished" => built.success = message.success.unwrap_or(false),
            _ => {}
        }
    }
    Ok(built)
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

#[cfg(test)]
mod tests {
    use super::package_name;

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
