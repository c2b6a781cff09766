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
use crate::error::Error;
use crate::outcome::TestOutcome;
use crate::process::{self, Limits};

/// One test of one implementation.
#[derive(Debug, Clone)]
pub struct Trial {
    /// The server's key for the implementation.
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
    pub server: PathBuf,
    /// How many trials run at once.
    pub jobs: usize,
    /// How many bytes of a trial's output are kept.
    pub output_cap: usize,
    /// Whether to look for processes that escaped a trial's group (`setsid`)
    /// and kill them. For untrusted code: it costs a scan of /proc per trial.
    pub hunt_orphans: bool,
}

/// The message of a test whose implementation left processes running.
pub const LEFT_BEHIND: &str = "fencelab: the implementation left processes running after the test";

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
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        let mut command = Command::new(&self.judge);
        command
            .args(["--exact", &trial.test, "--test-threads", "1"])
            .current_dir(dir)
            .env("TMPDIR", dir)
            .env(SERVER_ENV, &self.server)
            .env(IMPL_ENV, &trial.key)
            .env("RUST_BACKTRACE", "0")
            .env_remove("RUST_TEST_THREADS");
        let limits = Limits {
            time: Some(trial.limit),
            output_cap: self.output_cap,
            file_size: Some(256 * 1024 * 1024),
        };
        let finished = process::run(command, dir, &limits).map_err(|e| {
            Error::environment(format!(
                "cannot run the judge {}: {e}",
                self.judge.display()
            ))
        })?;
        if finished.success() && !finished.stdout.contains("1 passed") {
            return Err(Error::internal(format!(
                "the judge ran no test named {}",
                trial.test
            )));
        }
        let mut outcome = TestOutcome::from_judge(&trial.test, &finished, trial.limit);
        // Processes that escaped the group (setsid) are found by the trial's
        // TMPDIR in their environment.
        let escaped = if self.hunt_orphans {
            process::kill_tagged(dir)
        } else {
            0
        };
        if (finished.left_behind || escaped > 0) && !finished.timed_out() {
            let detail = outcome
                .message()
                .map(|m| format!("\n{m}"))
                .unwrap_or_default();
            outcome = TestOutcome::Failed {
                kind: crate::outcome::FailureKind::Crashed,
                message: format!("{LEFT_BEHIND}; they were killed{detail}"),
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
