//! Runs tests isolated: the engine's second half (the builder is the first).
//!
//! Every trial (one test of one implementation) is a judge process of its own,
//! in a temporary directory of its own, under a time limit, with the whole
//! process group killed when it ends; the implementation's process is the
//! judge's child and goes with it. Trials run in parallel on a pool of threads,
//! and each result is handed back as soon as it is known.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::bridge::sandbox::{MEMORY, Net};
use crate::engine::builder::Host;
use crate::engine::hangs::{self, Confirmations, Rules, Watch};
use crate::engine::outcome::TestOutcome;
use crate::engine::process::{self, cage_error};
use crate::error::Error;

/// One test of one implementation.
#[derive(Debug, Clone)]
pub(crate) struct Trial {
    /// How to start the implementation's server.
    pub host: Host,
    /// The test's full name.
    pub test: String,
    pub limit: Duration,
}

/// How a trial ended.
#[derive(Debug, Clone)]
pub(crate) struct TrialResult {
    pub outcome: TestOutcome,
    pub duration: Duration,
}

/// Runs trials against a build's judge and server.
#[derive(Debug, Clone)]
pub(crate) struct Runner {
    pub judge: PathBuf,
    /// How many trials run at once.
    pub jobs: usize,
    /// How many bytes of a trial's output are kept.
    pub output_cap: usize,
    /// Whether to look for processes that escaped a trial's group (`setsid`)
    /// and kill them. For untrusted code, and only where the cage has no PID
    /// namespace (which takes every process of the trial with it): it costs
    /// a scan of /proc per trial.
    pub hunt_orphans: bool,
    /// Whether the judge runs in the cage (an untrusted suite).
    pub judge_caged: bool,
    /// Who starts the implementation's server.
    pub(crate) launch: Launch,
    /// Whether trials run in a shuffled order, in randomly named directories,
    /// so that a trial's place in the run tells its judge nothing.
    pub shuffle: bool,
    /// How long one implementation's slow tests may take in total.
    pub budget: Option<Duration>,
    /// What the judge's cage reads besides the system and the judge: a
    /// Python judge's interpreter and directory (`engine::python`).
    pub(crate) judge_reads: Vec<PathBuf>,
    /// What this runner forks Python servers with (`python::Zygotes`): the
    /// servers its judges start, and, where the bridge's cdylib is built,
    /// those it starts itself; None: each is started afresh.
    pub(crate) forking: Option<crate::engine::python::Forking>,
}

use crate::bridge::said::{Said, Who};
use crate::engine::policy::Launch;

/// The environment variable that says where trials run (their databases,
/// their temporary files).
pub(crate) const TRIALS_ENV: &str = "FENCELAB_TRIALS";

/// Where trials run: `FENCELAB_TRIALS`, else `TMPDIR` when it is set, else
/// `/dev/shm` when it is there: a test's database lives a few milliseconds,
/// and on a disk every commit waits for an fsync (half the time of a run on
/// this machine); else the system's temporary directory.
pub(crate) fn trials_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(TRIALS_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if std::env::var_os("TMPDIR").is_some_and(|d| !d.is_empty()) {
        return std::env::temp_dir();
    }
    let shm = PathBuf::from("/dev/shm");
    let writable = tempfile::Builder::new()
        .prefix("fencelab-probe-")
        .tempdir_in(&shm)
        .is_ok();
    if writable { shm } else { std::env::temp_dir() }
}

/// Whose network a trial joins: its implementation's.
fn net_group(trial: &Trial) -> String {
    format!("{:?}", trial.host)
}

impl Runner {
    /// Whose budget a trial's confirmation spends: its implementation's,
    /// or, where the judge is a learner's test, that test's (its hang is
    /// its own, whichever implementation it faces).
    fn confirmation_group(&self, trial: &Trial) -> String {
        match self.judge_caged {
            true => trial.test.clone(),
            false => net_group(trial),
        }
    }
}

/// A permutation of `0..n` that nobody can predict: a learner's test must
/// not learn which implementation it faces from its place in the run. Each
/// swap draws from the OS's random source, never the clock.
fn shuffled(n: usize) -> Result<Vec<usize>, Error> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let draw = getrandom::u64().map_err(|e| {
            Error::environment(format!("the OS's random source failed: {e}"))
                .with_next("run again; if it fails again, the machine's getrandom(2) is broken")
        })?;
        order.swap(i, (draw % (i as u64 + 1)) as usize);
    }
    Ok(order)
}

/// The closed networks of a run's implementations (`Net`): one each, made
/// at its first trial and let go after its last, so that a network
/// namespace is made per submission rather than per trial. Trials of one
/// implementation share it; no two implementations do.
struct Nets {
    /// Per implementation (`net_group`): its trials not yet started, and
    /// its network once made.
    groups: Mutex<std::collections::HashMap<String, NetOf>>,
}

/// An implementation's trials not yet started, and its network once made.
type NetOf = (usize, Option<Arc<Net>>);

impl Nets {
    fn new(trials: &[Trial]) -> Nets {
        let mut groups = std::collections::HashMap::new();
        for trial in trials {
            groups.entry(net_group(trial)).or_insert((0, None)).0 += 1;
        }
        Nets {
            groups: Mutex::new(groups),
        }
    }

    /// `group` has one more trial to run (a trial run again alone): its
    /// network is made again if it was let go.
    fn expect_again(&self, group: &str) {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        groups.entry(group.to_string()).or_insert((0, None)).0 += 1;
    }

    /// The network of `group`'s next trial (made now if it is its first),
    /// `None` where the machine has no user namespaces.
    fn take(&self, group: &str) -> Result<Option<Arc<Net>>, Error> {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        let Some((left, net)) = groups.get_mut(group) else {
            return Ok(None);
        };
        if net.is_none() && *left > 0 {
            *net = Net::for_trials()
                .map_err(|e| cage_error("a closed network", e))?
                .map(Arc::new);
        }
        *left = left.saturating_sub(1);
        // The last trial holds the only one left.
        Ok(if *left == 0 { net.take() } else { net.clone() })
    }
}

/// How many trials are running, for the gate that keeps `jobs` of them at
/// once (`Runner::run`).
struct Working {
    jobs: usize,
    running: Mutex<usize>,
    changed: Condvar,
}

/// A running trial's place among the `jobs`, given up when dropped.
struct Slot<'a>(&'a Working);

impl Working {
    fn new(jobs: usize) -> Working {
        Working {
            jobs,
            running: Mutex::new(0),
            changed: Condvar::new(),
        }
    }

    /// Waits until fewer than `jobs` trials run that are not asleep (by
    /// `watch`), then counts one more until the slot is dropped.
    fn enter(&self, watch: &Watch) -> Slot<'_> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let asleep = watch.asleep();
            if running.saturating_sub(asleep) < self.jobs {
                break;
            }
            // Trials fall asleep as time passes, not only when one ends.
            running = self
                .changed
                .wait_timeout(running, Duration::from_millis(20))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *running += 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.running.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        self.0.changed.notify_one();
    }
}

/// What every trial of a run shares.
struct Shared<'a> {
    base: &'a std::path::Path,
    watch: &'a Watch,
    nets: &'a Nets,
    zygotes: &'a crate::engine::python::Zygotes,
    judge_zygote: Option<&'a process::JudgeZygote>,
}

/// The default number of trials at once: tests spend most of their time
/// waiting (on locks held for a window, on child processes, on the bridge),
/// so four per core. (Measured on 2 cores, warm verify of 75 mutants: 57 s
/// with 4 at once, 37 s with 8, 38 s with 16.)
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 4
}

impl Runner {
    /// A runner of `judge`'s trials under `policy`, `jobs` at a time.
    pub(crate) fn new(
        judge: PathBuf,
        jobs: usize,
        policy: &crate::engine::policy::Policy,
    ) -> Runner {
        Runner {
            jobs,
            output_cap: policy.judge_output_cap,
            hunt_orphans: policy.hunt_orphans
                && !crate::bridge::sandbox::Layers::probe().namespaces,
            judge_caged: policy.judge_caged,
            launch: policy.launch,
            shuffle: policy.shuffle,
            budget: policy.budget,
            judge_reads: crate::engine::python::judge_reads(&judge),
            forking: None,
            judge,
        }
    }

    /// Runs `trials`, calling `done(index, result)` on this thread as each
    /// ends. A trial stopped for time is run again alone after the others
    /// (`hangs`), and reported then.
    pub(crate) fn run(
        &self,
        trials: &[Trial],
        mut done: impl FnMut(usize, TrialResult),
    ) -> Result<(), Error> {
        let parent = trials_dir();
        let base = tempfile::Builder::new()
            .prefix("fencelab-run-")
            .tempdir_in(&parent)
            .map_err(|e| {
                Error::io("create a directory in", &parent, e).with_next(format!(
                    "point {TRIALS_ENV} (or TMPDIR) at a writable directory"
                ))
            })?;
        let order: Vec<usize> = if self.shuffle {
            shuffled(trials.len())?
        } else {
            (0..trials.len()).collect()
        };
        let next = AtomicUsize::new(0);
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let (tx, rx) = mpsc::channel();
        let watch = Watch::default();
        let ended = std::sync::atomic::AtomicBool::new(false);
        let working = Working::new(self.jobs.max(1));
        let zygotes = crate::engine::python::Zygotes::for_hosts(
            trials.iter().map(|t| &t.host),
            self.launch,
            self.forking.as_ref(),
        );
        let nets = Nets::new(trials);
        // fencelab's own judge, forked per trial from one started here (on
        // this thread, which outlives the trials), where it can be.
        let judge_zygote = (!self.judge_caged && trials.len() > 1)
            .then(|| process::JudgeZygote::start(&self.judge))
            .flatten();
        let mut confirmations = Confirmations::new(self.budget);
        let shared = Shared {
            base: base.path(),
            watch: &watch,
            nets: &nets,
            zygotes: &zygotes,
            judge_zygote: judge_zygote.as_ref(),
        };
        std::thread::scope(|scope| -> Result<(), Error> {
            let (watch, ended) = (&watch, &ended);
            // The running trials' processes, every 10 to 50 ms (`hangs`).
            scope.spawn(move || {
                while !ended.load(Ordering::Relaxed) {
                    watch.look();
                    std::thread::sleep(watch.pace());
                }
            });
            // A trial asleep (waiting on its own, most likely for ever)
            // stops counting among the `jobs` at once: another starts
            // beside it, up to as many again.
            let jobs = self.jobs.max(1);
            for _ in 0..(2 * jobs).min(trials.len().max(1)) {
                let tx = tx.clone();
                let (next, failure, order, working, shared) =
                    (&next, &failure, &order, &working, &shared);
                scope.spawn(move || {
                    loop {
                        let _slot = working.enter(watch);
                        let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            break;
                        };
                        match self.trial(&trials[index], index, shared) {
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
            let mut first: HashMap<usize, TrialResult> = HashMap::new();
            for (index, result) in rx {
                let group = self.confirmation_group(&trials[index]);
                if confirmations.wanted(&group, index, &result.outcome, result.duration) {
                    first.insert(index, result);
                } else {
                    done(index, result);
                }
            }
            if failure.lock().unwrap().is_some() {
                ended.store(true, Ordering::Relaxed);
                return Ok(());
            }
            // The trials stopped for time, each again alone, with nothing
            // else of the run beside it.
            let again = confirmations.order();
            for (_, index) in &again {
                nets.expect_again(&net_group(&trials[*index]));
                zygotes.expect_again(&trials[*index].host);
            }
            for (group, index) in again {
                let stopped_first = first.remove(&index).expect("a stopped trial");
                let result = if confirmations.may_run(&group) {
                    let result = self.trial_again(&trials[index], index, &shared)?;
                    confirmations.ran(&group, &result.outcome);
                    result
                } else {
                    TrialResult {
                        outcome: confirmations.over_budget(stopped_first.duration),
                        duration: stopped_first.duration,
                    }
                };
                done(index, result);
            }
            ended.store(true, Ordering::Relaxed);
            Ok(())
        })
        .inspect_err(|_| ended.store(true, Ordering::Relaxed))?;
        match failure.into_inner().unwrap() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Runs trial `index` once, under its limit and the rules of `hangs`.
    fn trial(&self, trial: &Trial, index: usize, shared: &Shared) -> Result<TrialResult, Error> {
        self.trial_as(trial, index, shared, false)
    }

    /// Runs trial `index` again alone: its outcome is confirmed if it is
    /// stopped again.
    fn trial_again(
        &self,
        trial: &Trial,
        index: usize,
        shared: &Shared,
    ) -> Result<TrialResult, Error> {
        self.trial_as(trial, index, shared, true)
    }

    fn trial_as(
        &self,
        trial: &Trial,
        index: usize,
        shared: &Shared,
        confirming: bool,
    ) -> Result<TrialResult, Error> {
        let dir = self.trial_dir(shared.base, index, confirming)?;
        let net = shared.nets.take(&net_group(trial))?;
        let rules = Rules::for_limit(trial.limit);
        let group = self.confirmation_group(trial);
        let stop = shared.watch.begin(index, &group, rules, confirming);
        // Run again alone, its verdict: its limit is kept by the watch, on
        // the time load did not keep it from a processor.
        let limit = trial.limit;
        let mut kept = trial.clone();
        if confirming {
            shared.watch.keep_limit(index, trial.limit);
            kept.limit = trial.limit * hangs::STARVED_LIMIT;
        }
        let trial = &kept;
        let sees = |whereabouts| shared.watch.sees(index, whereabouts);
        let ran = self.run_one(trial, &dir, net.as_deref(), &sees, &stop, shared);
        let rule = shared.watch.end(index);
        let mut result = ran?;
        result.outcome = hangs::stopped(result.outcome, limit, rule, confirming);
        Ok(result)
    }

    /// A directory for trial `index` in `base`: named by its index, or, when
    /// shuffled, at random.
    fn trial_dir(
        &self,
        base: &std::path::Path,
        index: usize,
        again: bool,
    ) -> Result<PathBuf, Error> {
        if !self.shuffle {
            let again = if again { "-again" } else { "" };
            return Ok(base.join(format!("{index}{again}")));
        }
        tempfile::Builder::new()
            .prefix("t")
            .tempdir_in(base)
            .map(tempfile::TempDir::keep)
            .map_err(|e| Error::io("create a directory in", base, e))
    }
}

/// What fencelab says of a trial whose `who` ran out of memory.
pub(crate) fn out_of_memory(who: Who) -> Said {
    Said::OutOfMemory {
        who,
        mib: MEMORY >> 20,
    }
}

mod trial;

#[cfg(test)]
mod tests;
