//! Every program the engine built is asked who it is before it is trusted:
//! the judge prints the build id of its sources and lists exactly the suite's
//! tests; a server names the build and every implementation it hosts. A stale
//! binary cannot pass for a fresh one, and a program that cannot even be
//! started is fencelab's failure, never the implementation's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::crates::{BUILD_ID_PREFIX, BUILD_ID_TEST, PROBE_TEST};
use super::process::{self, Limits};
use crate::bridge::server::IDENTIFY;
use crate::error::Error;
use crate::lab::suite::{self, SuiteFiles, SuiteTest};

/// Runs `exe` with `args` (at most 30 s, in a process group of its own, in
/// the implementation's cage when `caged`: a server runs submissions'
/// constructors even to say who it is) and returns its stdout.
fn ask(exe: &Path, args: &[&str], caged: bool) -> Result<String, Asked> {
    let finished = run(exe, args, caged.then_some(&[])).map_err(Asked::CannotRun)?;
    if finished.timed_out() {
        return Err(Asked::TimedOut);
    }
    Ok(finished.stdout)
}

/// Runs `exe` as `ask` does, in the cage when `reads` is given (reading
/// beneath them too: a Python server's interpreter and module).
pub(super) fn run(
    exe: &Path,
    args: &[&str],
    reads: Option<&[PathBuf]>,
) -> Result<process::Finished, Error> {
    let caged = reads.is_some();
    let dir = tempfile::tempdir()
        .map_err(|e| Error::io("create a directory in", &std::env::temp_dir(), e))?;
    // Its processes' memory is bounded together too (a constructor runs).
    let memory = match caged {
        true => crate::bridge::sandbox::Memory::for_cage()
            .map_err(|e| crate::engine::process::cage_error("a memory cgroup", e))?,
        false => None,
    };
    let cage = reads.map(|reads| {
        crate::bridge::sandbox::Cage::reading(dir.path(), exe, reads).bounded(memory.as_ref())
    });
    let mut command = Command::new(exe);
    command
        .args(args)
        .current_dir(dir.path())
        .env_clear()
        .env("RUST_BACKTRACE", "0");
    let limits = Limits {
        time: Some(Duration::from_secs(30)),
        output_cap: 1024 * 1024,
        file_size: Some(1024 * 1024),
        cage: cage.as_ref().map(|c| c.plan()),
        space: None,
        stop: None,
    };
    process::run(command, dir.path(), &limits).map_err(|e| {
        Error::environment(format!("cannot run {}: {e}", exe.display())).with_next(
            "run again (fencelab builds again what is missing); if it happens again, \
             report it with the command you ran",
        )
    })
}

/// Why a program fencelab built did not say who it is.
enum Asked {
    /// It could not be started at all (a missing or broken file).
    CannotRun(Error),
    /// It did not answer within the limit.
    TimedOut,
}

/// Why a server cannot be used.
pub(super) enum ServerProblem {
    /// fencelab cannot start it: fencelab's failure.
    CannotRun(Error),
    /// It started and did not identify itself as this build: with untrusted
    /// implementations, the fault of the code that runs before `main`.
    Misbehaved(String),
}

/// The judge must report the build id of the sources just written; returns
/// the tests it lists (its helpers, `#[ignore]`d, left out), which for
/// fencelab's own suite must be exactly the suite's. An untrusted judge (a
/// learner's tests) is asked from inside the cage: its code may run before
/// `main`.
pub(super) fn check_judge(
    exe: &Path,
    expected: &str,
    suite: &SuiteFiles,
    caged: bool,
) -> Result<Vec<SuiteTest>, Error> {
    let ask = |args: &[&str]| {
        ask(exe, args, caged).map_err(|asked| match asked {
            Asked::CannotRun(err) => err,
            Asked::TimedOut => Error::internal(format!(
                "the judge {} did not say who it is within 30 s",
                exe.display()
            )),
        })
    };
    let printed = ask(&[
        "--exact",
        BUILD_ID_TEST,
        "--ignored",
        "--nocapture",
        "--test-threads",
        "1",
    ])?;
    let id = printed
        .lines()
        .find_map(|l| l.split_once(BUILD_ID_PREFIX).map(|(_, id)| id.trim()));
    if id != Some(expected) {
        return Err(Error::internal(format!(
            "the judge at {} was built from other sources (build id {id:?}, expected {expected:?})",
            exe.display()
        )));
    }
    let list = |args: &[&str]| -> Result<Vec<String>, Error> {
        Ok(ask(args)?
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .filter(|name| *name != BUILD_ID_TEST && *name != PROBE_TEST)
            .map(String::from)
            .collect())
    };
    let listed = list(&["--list"])?;
    let ignored: BTreeSet<String> = list(&["--list", "--ignored"])?.into_iter().collect();
    if suite.builtin {
        let listed: BTreeSet<String> = listed.iter().cloned().collect();
        let mut expected_tests = suite::test_names();
        expected_tests.extend(suite::helper_names());
        if listed != expected_tests {
            return Err(Error::internal(format!(
                "the judge lists other tests than the suite: {:?}",
                listed
                    .symmetric_difference(&expected_tests)
                    .collect::<Vec<_>>()
            )));
        }
        return Ok(suite::tests());
    }
    Ok(listed
        .iter()
        .filter(|name| !ignored.contains(*name))
        .map(|name| suite::test_named(name))
        .collect())
}

#[derive(serde::Deserialize)]
struct Identity {
    build: String,
    impls: Vec<HostedIdentity>,
}

#[derive(serde::Deserialize)]
struct HostedIdentity {
    key: String,
}

/// The server must report the build id of this run and host exactly `keys`;
/// otherwise, what went wrong.
pub(super) fn check_server(
    exe: &Path,
    expected: &str,
    keys: &[String],
) -> Result<(), ServerProblem> {
    let printed = match ask(exe, &[IDENTIFY], true) {
        Ok(printed) => printed,
        Err(Asked::TimedOut) => {
            return Err(ServerProblem::Misbehaved(
                "code that runs before main (a constructor, say) did not finish within 30 s"
                    .to_string(),
            ));
        }
        Err(Asked::CannotRun(err)) => return Err(ServerProblem::CannotRun(err)),
    };
    let identity: Identity = serde_json::from_str(printed.trim()).map_err(|e| {
        ServerProblem::Misbehaved(format!(
            "it ended before it could say what it hosts ({e}); it printed {:?}",
            printed.trim()
        ))
    })?;
    let hosted: Vec<String> = identity.impls.into_iter().map(|i| i.key).collect();
    if identity.build != expected || hosted != keys {
        return Err(ServerProblem::Misbehaved(format!(
            "it says it was built for other implementations (build {}, expected {expected})",
            identity.build
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_cannot_be_run_is_fencelabs_failure_not_the_implementations() {
        let missing = Path::new("/nonexistent/fencelab/server-0000000000000000");
        match check_server(missing, "build", &[]) {
            Err(ServerProblem::CannotRun(err)) => {
                assert_eq!(err.exit_code(), crate::exit::ExitCode::ToolFailed);
                assert!(err.message.contains("cannot run"), "{}", err.message);
            }
            Err(ServerProblem::Misbehaved(p)) => panic!("blamed on the implementation: {p}"),
            Ok(()) => panic!("a missing server cannot identify itself"),
        }
    }
}
