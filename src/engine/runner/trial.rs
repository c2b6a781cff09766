//! One trial from its start to its outcome: its directory and space, the
//! judge's command line and environment, the implementation's server (the
//! judge's to start, or the runner's), an untrusted judge's cage; then what
//! the judge's exit says, with what ran out or was left running.

use std::path::PathBuf;
use std::sync::Arc;

use super::{Runner, Shared, Trial, TrialResult, out_of_memory};
use crate::bridge::held::{LEFT_BEHIND, NOT_STARTED_STATUS};
use crate::bridge::protocol::SOCKET_ENV;
use crate::bridge::said::{self, Said, Who};
use crate::bridge::sandbox::{Cage, MEMORY_ENV, Memory, Net, SPACE, Space};
use crate::engine::hangs::{Whereabouts, mount_point};
use crate::engine::outcome::TestOutcome;
use crate::engine::policy::Launch;
use crate::engine::process::{self, Limits, cage_error};
use crate::engine::served::Served;
use crate::error::Error;

/// Tells `hangs` where a trial's processes are, once its cage is made
/// (`Watch::sees`).
pub(super) type Sees<'a> = dyn Fn(Whereabouts) + 'a;

impl Runner {
    /// Runs one trial in `dir` (created here, removed afterwards).
    pub(super) fn run_one(
        &self,
        trial: &Trial,
        dir: &std::path::Path,
        net: Option<&Net>,
        sees: &Sees<'_>,
        stop: &Arc<process::Stop>,
        shared: &Shared,
    ) -> Result<TrialResult, Error> {
        let (zygotes, judge_zygote) = (shared.zygotes, shared.judge_zygote);
        // The judge's output stays beside the test's temporary directory, out of
        // the implementation's reach (it may write only under `tmp`).
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
        // A tmpfs of its own on `tmp`, which every process of the trial
        // joins: the trial's total space is bounded; and its
        // implementation's closed network, which every process joins too.
        let space = Space::for_trial(&tmp, net).map_err(|e| cage_error("the trial's space", e))?;
        let joined = space.as_ref().map(Space::join);
        // Whatever the trial starts, starts after this.
        let started = process::boot_ticks();
        let mut spawn = process::Spawn {
            program: std::path::absolute(&self.judge).unwrap_or_else(|_| self.judge.clone()),
            args: ["--exact", &trial.test, "--test-threads", "1"]
                .map(std::ffi::OsString::from)
                .to_vec(),
            dir: tmp.clone(),
            // Nothing of fencelab's environment (a CI job's tokens, say) reaches
            // the implementation: only what a test needs.
            env: process::passed_on().collect(),
        };
        // What the judge says is read as fencelab's only with this key.
        let key = said_key()?;
        spawn.env.extend([
            ("TMPDIR".into(), tmp.clone().into()),
            ("HOME".into(), tmp.clone().into()),
            ("RUST_BACKTRACE".into(), "0".into()),
            (said::KEY_ENV.into(), key.clone().into()),
        ]);
        // The memory cgroup of the implementation's cage, made here (the
        // judge that starts the implementation may be killed; this process
        // outlives it and removes the cgroup).
        let mut server_memory = None;
        let mut _zygote = None;
        let (server, socket) = match self.launch {
            Launch::ByJudge => {
                spawn.env.extend(
                    trial
                        .host
                        .for_judge()
                        .into_iter()
                        .map(|(k, v)| (k.into(), v.to_os_string())),
                );
                server_memory = Memory::for_cage().map_err(|e| cage_error("a memory cgroup", e))?;
                if let Some(memory) = &server_memory {
                    spawn.env.push((MEMORY_ENV.into(), memory.path().into()));
                }
                // A Python server forked for this trial (`bridge::zygote`).
                _zygote = zygotes.hand(&trial.host)?;
                (None, None)
            }
            Launch::ByRunner => {
                let socket = dir.join("impl.sock");
                // A Python server forked for this trial by the runner itself,
                // where it can (`python::Zygotes`), else started afresh.
                let server = match zygotes.hand(&trial.host)? {
                    Some(handed) => {
                        Served::forked(handed, &trial.host, &socket, dir, &tmp, space.as_ref())?
                    }
                    None => Served::start(&trial.host, &socket, dir, &tmp, space.as_ref())?,
                };
                // A path too long for a socket is given relative to the
                // judge's working directory, `tmp`.
                let named = if socket.as_os_str().len() > 100 {
                    "../impl.sock".into()
                } else {
                    socket.clone().into()
                };
                spawn.env.push((SOCKET_ENV.into(), named));
                (Some(server), Some(socket))
            }
        };
        // An untrusted judge sees its own program, its directory and the
        // socket of its implementation, nothing else.
        let also: Vec<&std::path::Path> = socket.iter().map(PathBuf::as_path).collect();
        let judge_memory = match self.judge_caged {
            true => Memory::for_cage().map_err(|e| cage_error("a memory cgroup", e))?,
            false => None,
        };
        // The untrusted side's processes, and the processor time they use,
        // are what `hangs` looks at; a server the runner started is looked
        // at too, and the forking server the judge asks for its own.
        let cage = server_memory.as_ref().or(judge_memory.as_ref());
        sees(Whereabouts {
            cage: cage.map(|memory| memory.path().to_path_buf()),
            also: server.iter().filter_map(Served::cgroup).collect(),
            servers: server.iter().map(Served::pid).collect(),
            helpers: _zygote.iter().map(|h| h.forking_pid()).collect(),
            // Where no cgroup holds it, a forked server is found by its space.
            space: (cage.is_none() && space.is_some() && _zygote.is_some())
                .then(|| mount_point(&tmp)),
            judge_untrusted: self.judge_caged,
        });
        // The cage executes the judge itself, from clones of the process
        // the runner forks (`Cage::executing`): two forks a trial fewer.
        let cage = self.judge_caged.then(|| {
            let env = spawn.environment();
            let args: Vec<&std::ffi::OsStr> = spawn.args.iter().map(|a| a.as_os_str()).collect();
            Cage::new_reading(&tmp, &self.judge, &also, &self.judge_reads)
                .within(space.as_ref())
                .bounded(judge_memory.as_ref())
                .executing(&spawn.program, &args, &env)
        });
        let limits = Limits {
            time: Some(trial.limit),
            output_cap: self.output_cap,
            file_size: Some(process::FILE_SIZE),
            // fencelab's own judge cages the implementation itself; an
            // untrusted one is caged here.
            cage: cage.as_ref().map(Cage::plan),
            space: joined,
            stop: Some(stop.clone()),
        };
        // fencelab's own judge (it cages the implementation itself) is
        // started by a clone that shares the runner's memory, not a fork of
        // it (`process::run_light`), a handed connection to a forking server
        // inherited by it alone; an untrusted judge's cage needs a fork.
        let finished = if limits.cage.is_none() {
            let inherit = _zygote.as_ref().map(|handed| handed.pass_to(&mut spawn));
            process::run_judge(&spawn, dir, &limits, inherit, judge_zygote)
        } else {
            process::run(spawn.command(), dir, &limits)
        };
        let finished = finished.map_err(|e| {
            Error::environment(format!("cannot run the judge {}: {e}", self.judge.display()))
                .with_next("check that the target directory is intact, or remove target/fencelab and run again")
        });
        // The server goes with the trial, before anything left behind is
        // looked for (it is not the judge's to leave).
        let server_ran_out = server.as_ref().is_some_and(Served::ran_out);
        drop(server);
        let finished = finished?;
        if finished.status.and_then(|s| s.code()) == Some(NOT_STARTED_STATUS) {
            let why = said::all(&said::vouch(&finished.stderr, &key))
                .into_iter()
                .find(|s| matches!(s, Said::CouldNotStart { .. }))
                .map_or("(it said nothing)".to_string(), |s| s.to_string());
            return Err(Error::environment(format!(
                "the judge could not start the program of the implementation under test: {why}"
            ))
            .with_next(
                "run again (fencelab builds again what is missing); if it happens again, \
                 report it with the command you ran",
            ));
        }
        let mut outcome = TestOutcome::from_judge(&trial.test, &finished, trial.limit, &key);
        // Processes that escaped the judge too are found by the trial's TMPDIR
        // in their environment.
        let escaped = if self.hunt_orphans {
            process::kill_tagged(dir, started)
        } else {
            0
        };
        if (finished.left_behind || escaped > 0) && !finished.timed_out() && outcome.passed() {
            outcome = TestOutcome::Failed {
                kind: crate::engine::outcome::FailureKind::Crashed,
                message: LEFT_BEHIND.marked(),
            };
        }
        // An untrusted judge is the learner's test: what it left running is
        // its own (fencelab's implementations are not the judge's children).
        if self.judge_caged {
            outcome = blame_the_test(outcome);
        }
        // A trial that used up its space or its memory fails, with that
        // reason (its cgroups' and tmpfs's own account, whatever the code
        // made of the refusal or of a process killed).
        let who = if self.judge_caged {
            Who::Test
        } else {
            Who::Implementation
        };
        let exhausted = if space.as_ref().is_some_and(Space::used_up) {
            Some(Said::SpaceUsedUp {
                who,
                mib: SPACE >> 20,
            })
        } else if judge_memory.as_ref().is_some_and(Memory::ran_out) {
            Some(out_of_memory(Who::Test))
        } else if server_ran_out || server_memory.as_ref().is_some_and(Memory::ran_out) {
            Some(out_of_memory(Who::Implementation))
        } else {
            None
        };
        if let Some(reason) = exhausted {
            let said = outcome.marked_message().unwrap_or_default();
            outcome = TestOutcome::Failed {
                kind: crate::engine::outcome::FailureKind::Crashed,
                message: if said.is_empty() {
                    reason.marked()
                } else {
                    format!("{}\n{said}", reason.marked())
                },
            };
        }
        if finished.dropped > 0
            && let TestOutcome::Failed { message, .. } = &mut outcome
        {
            let bytes = finished.dropped as u64;
            message.push_str(&format!("\n{}", Said::OutputDropped { bytes }.marked()));
        }
        let _ = std::fs::remove_dir_all(dir);
        Ok(TrialResult {
            outcome,
            duration: finished.duration,
        })
    }
}

/// A fresh key for a trial's judge: 128 bits from the OS, never the clock.
fn said_key() -> Result<String, Error> {
    let mut key = String::new();
    for _ in 0..2 {
        let draw = getrandom::u64().map_err(|e| {
            Error::environment(format!("the OS's random source failed: {e}"))
                .with_next("run again; if it fails again, the machine's getrandom(2) is broken")
        })?;
        key.push_str(&format!("{draw:016x}"));
    }
    Ok(key)
}

/// `outcome`, where the trial's judge is a learner's test: processes left
/// running are the test's, not the implementation's (a judge that exits with
/// `LEFT_BEHIND_STATUS` on its own is the test's doing too).
fn blame_the_test(outcome: TestOutcome) -> TestOutcome {
    match outcome {
        TestOutcome::Failed { kind, message } if message == LEFT_BEHIND.marked() => {
            TestOutcome::Failed {
                kind,
                message: Said::LeftRunning { who: Who::Test }.marked(),
            }
        }
        other => other,
    }
}
