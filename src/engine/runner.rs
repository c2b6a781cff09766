//! Runs tests isolated: the engine's second half (the builder is the first).
//!
//! Every trial (one test of one implementation) is a judge process of its own,
//! in a temporary directory of its own, under a time limit, with the whole
//! process group killed when it ends; the implementation's process is the
//! judge's child and goes with it. Trials run in parallel on a pool of threads,
//! and each result is handed back as soon as it is known.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crate::bridge::protocol::{IMPL_ENV, SERVER_ENV};
use crate::engine::outcome::TestOutcome;
use crate::engine::process::{self, Limits};
use crate::error::Error;

/// One test of one implementation.
#[derive(Debug, Clone)]
pub struct Trial {
    /// The server hosting the implementation, and its key there.
    pub server: PathBuf,
    pub key: String,
    /// The test's full name.
    pub test: String,
    pub limit: Duration,
}

/// How a trial ended.
#[derive(Debug, Clone)]
pub struct TrialResult {
    pub outcome: TestOutcome,
    pub duration: Duration,
}

/// Runs trials against a build's judge and server.
#[derive(Debug, Clone)]
pub struct Runner {
    pub judge: PathBuf,
    /// How many trials run at once.
    pub jobs: usize,
    /// How many bytes of a trial's output are kept.
    pub output_cap: usize,
    /// Whether to look for processes that escaped a trial's group (`setsid`)
    /// and kill them. For untrusted code: it costs a scan of /proc per trial.
    pub hunt_orphans: bool,
}

pub use crate::bridge::client::LEFT_BEHIND;
use crate::bridge::client::NOT_STARTED_STATUS;

/// The variables of fencelab's environment a judge gets: where programs are,
/// and the locale.
fn passed_on() -> impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os().filter(|(key, _)| {
        let key = key.to_string_lossy();
        key == "PATH" || key == "LANG" || key.starts_with("LC_")
    })
}

/// The default number of trials at once: tests spend much of their time waiting
/// (on locks, on child processes), so more than one per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 2
}

impl Runner {
    /// Runs `trials`, calling `done(index, result)` on this thread as each ends.
    pub fn run(
        &self,
        trials: &[Trial],
        mut done: impl FnMut(usize, TrialResult),
    ) -> Result<(), Error> {
        let base = tempfile::Builder::new()
            .prefix("fencelab-run-")
            .tempdir()
            .map_err(|e| Error::io("create a directory in", &std::env::temp_dir(), e))?;
        let next = AtomicUsize::new(0);
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|scope| {
            for _ in 0..self.jobs.max(1).min(trials.len().max(1)) {
                let tx = tx.clone();
                let (next, failure, base) = (&next, &failure, base.path());
                scope.spawn(move || {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(trial) = trials.get(index) else {
                            break;
                        };
                        match self.run_one(trial, &base.join(index.to_string())) {
                            Ok(result) => {
                                if tx.send((index, result)).is_err() {
                                    break;
                                }
                            }
                            Err(err) => {
                                failure.lock().unwrap().get_or_insert(err);
                                next.store(trials.len(), Ordering::Relaxed);
                                break;
                            }
                        }
                    }
                });
            }
            drop(tx);
            for (index, result) in rx {
                done(index, result);
            }
        });
        match failure.into_inner().unwrap() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Runs one trial in `dir` (created here, removed afterwards).
    fn run_one(&self, trial: &Trial, dir: &std::path::Path) -> Result<TrialResult, Error> {
        // The judge's output stays beside the test's temporary directory, out of
        // the implementation's reach (it may write only under `tmp`).
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
        let mut command = Command::new(&self.judge);
        command
            .args(["--exact", &trial.test, "--test-threads", "1"])
            .current_dir(&tmp)
            // Nothing of fencelab's environment (a CI job's tokens, say) reaches
            // the implementation: only what a test needs.
            .env_clear()
            .envs(passed_on())
            .env("TMPDIR", &tmp)
            .env("HOME", &tmp)
            .env(SERVER_ENV, &trial.server)
            .env(IMPL_ENV, &trial.key)
            .env("RUST_BACKTRACE", "0");
        let limits = Limits {
            time: Some(trial.limit),
            output_cap: self.output_cap,
            file_size: Some(256 * 1024 * 1024),
            // The judge is fencelab's own code; it cages the implementation.
            cage: None,
        };
        let finished = process::run(command, dir, &limits).map_err(|e| {
            Error::environment(format!("cannot run the judge {}: {e}", self.judge.display()))
                .with_next("check that the target directory is intact, or remove target/fencelab and run again")
        })?;
        if finished.status.and_then(|s| s.code()) == Some(NOT_STARTED_STATUS) {
            let why = finished
                .stderr
                .lines()
                .find(|l| l.contains("could not start"))
                .unwrap_or("(it said nothing)")
                .to_string();
            return Err(Error::environment(format!(
                "the judge could not start the program of the implementation under test: {why}"
            ))
            .with_next(
                "run again (fencelab builds again what is missing); if it happens again, \
                 report it with the command you ran",
            ));
        }
        let mut outcome = TestOutcome::from_judge(&trial.test, &finished, trial.limit);
        // Processes that escaped the judge too are found by the trial's TMPDIR
        // in their environment.
        let escaped = if self.hunt_orphans {
            process::kill_tagged(dir)
        } else {
            0
        };
        if (finished.left_behind || escaped > 0) && !finished.timed_out() && outcome.passed() {
            outcome = TestOutcome::Failed {
                kind: crate::engine::outcome::FailureKind::Crashed,
                message: LEFT_BEHIND.to_string(),
            };
        }
        if finished.dropped > 0
            && let TestOutcome::Failed { message, .. } = &mut outcome
        {
            message.push_str(&format!(
                "\n[... {} more bytes of output dropped]",
                finished.dropped
            ));
        }
        let _ = std::fs::remove_dir_all(dir);
        Ok(TrialResult {
            outcome,
            duration: finished.duration,
        })
    }
}
