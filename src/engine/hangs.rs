//! When a trial loses to time: a verdict depends on the code, never on the load.
//!
//! Three rules stop a trial (`TimeRule`), memory cgroup or not (`Whereabouts`).
//! It spins: its untrusted side used `Rules::spin` of processor time while
//! fencelab's judge waited for one answer (a learner's test: in all). It waits:
//! for `Rules::wait` in all since its judge started, none of its processes ran
//! or was ready to run, nor the forking server it asks. Or it reaches its limit.
//! Load slows what runs, never what sleeps, and adds little processor time: the
//! first two rules are the code's own.
//!
//! A stopped trial is not a verdict yet: it runs again alone after the others,
//! its limit counted only while load left it a processor (`Runner::run`). Only a
//! trial stopped again fails for time (confirmed). Confirmations spend their
//! implementation's budget (`grade --budget`); past it, the rest fail
//! unconfirmed.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::outcome::{TestOutcome, TimeRule};
use crate::engine::process::Stop;

/// How much processor time a trial's untrusted side may use, per 10 s of
/// its limit. A trial of the reference uses 2 to 20 ms (bench/RESULTS.md).
const SPIN_PER_10S: Duration = Duration::from_millis(300);
/// The least processor time that stops a trial (or half its limit, if
/// less): a learner's test is counted whole, and a short `--timeout` must
/// not stop one that computes a little.
const MIN_SPIN: Duration = Duration::from_millis(300);
/// How long a trial may wait with nothing running, per 10 s of its limit.
/// The suite's own waits (a lock held 400 ms) are shorter.
const WAIT_PER_10S: Duration = Duration::from_secs(2);
/// The least waiting that stops a trial (or half its limit, if less): a
/// short `--timeout` must not stop a test for a database's busy waits.
const MIN_WAIT: Duration = Duration::from_secs(1);
/// How young a trial is when first looked at: most have ended by then.
const LOOK_AFTER: Duration = Duration::from_millis(200);
/// At most so many processes of a trial are looked at.
const MAX_PROCESSES: usize = 64;
/// How much longer than its limit a trial run again alone may take by the
/// wall clock, while a loaded machine keeps it from a processor.
pub(super) const STARVED_LIMIT: u32 = 4;

/// What stops one trial before its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rules {
    pub spin: Duration,
    pub wait: Duration,
}

impl Rules {
    /// The rules of a first run of a trial whose implementation already
    /// hangs in another: quicker to stop a wait, since a trial they stop is
    /// run again under the full rules before it costs anything. The
    /// processor rule stays: a test that computes much (a step's random
    /// calls) is no hang, and its confirmation could find the budget spent.
    fn known_to_hang(self) -> Rules {
        Rules {
            spin: self.spin,
            wait: self.wait / 4,
        }
    }

    /// The rules of a trial whose limit is `limit`: a longer limit given
    /// (`--timeout`) is more patience with every rule.
    pub(super) fn for_limit(limit: Duration) -> Rules {
        let per_10s = limit.as_secs_f64() / 10.0;
        Rules {
            spin: SPIN_PER_10S.mul_f64(per_10s).max(MIN_SPIN.min(limit / 2)),
            wait: WAIT_PER_10S.mul_f64(per_10s).max(MIN_WAIT.min(limit / 2)),
        }
    }
}

/// The running trials of a run, looked at from one thread (`look`).
#[derive(Default)]
pub(super) struct Watch {
    state: Mutex<State>,
    /// The servers forking servers forked, placed by trial (`look`'s alone).
    forked: Mutex<forked::Forked>,
}

#[derive(Default)]
struct State {
    trials: HashMap<usize, Watched>,
    /// The implementations (`Runner::confirmation_group`) with a first run
    /// stopped by a rule.
    hanging: HashSet<String>,
}

struct Watched {
    started: Instant,
    /// Whose trial it is (`Runner::confirmation_group`).
    group: String,
    rules: Rules,
    /// A run again alone: always under the full rules.
    confirming: bool,
    stop: Arc<Stop>,
    /// Where its processes are, once its runner has said (`Watch::sees`).
    whereabouts: Option<Whereabouts>,
    /// The rule that stopped it, if one did.
    stopped_by: Option<(TimeRule, Duration)>,
    /// How long it has waited with nothing running, in all.
    waited: Duration,
    /// A run again alone: its limit, kept here on the time it was not
    /// kept from a processor (`STARVED_LIMIT` times it is the process's).
    limit: Option<Duration>,
    /// How long it was ready to run but kept from a processor, in all.
    starved: Duration,
    /// The untrusted side's processor time when fencelab's own judge last
    /// ran: what it used since is one call's.
    spin_from: Duration,
    last: Option<Look>,
}

/// Where a trial's processes are, besides its judge's tree. Without a memory
/// cgroup, the same things are measured through the processes' own
/// accounts: the verdict must not depend on the machine.
#[derive(Debug, Clone, Default)]
pub(super) struct Whereabouts {
    /// The memory cgroup of the untrusted side's cage, where the machine
    /// gives one: its processor time is what spins.
    pub cage: Option<PathBuf>,
    /// Other cgroups whose processes belong to the trial (a server the
    /// runner started for an untrusted judge).
    pub also: Vec<PathBuf>,
    /// Servers of fencelab's implementations started for the trial (by the
    /// runner, or forked for it): it does not wait while they work.
    pub servers: Vec<libc::pid_t>,
    /// fencelab's processes the trial may wait on (a forking server): while
    /// they run, it does not wait.
    pub helpers: Vec<libc::pid_t>,
    /// Where the trial's space is mounted (`forked::mount_point`): without a
    /// cgroup, the servers its helpers fork for it are found by it.
    pub space: Option<String>,
    /// The judge is the untrusted side (a learner's test): without a
    /// cgroup, its whole tree spins; else only what it cages.
    pub judge_untrusted: bool,
}

/// What one look at a trial's processes saw.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Look {
    at: Instant,
    /// No thread was running or ready to run.
    asleep: bool,
    /// The processor time of the threads seen, and of the cgroups' processes
    /// (those gone since the last look too, where `cpu.stat` says), in
    /// nanoseconds: compared between looks.
    ran: u64,
    /// How long the threads seen waited for a processor, in nanoseconds.
    queued: u64,
    /// fencelab's own judge's processor time (`Seen::judge_ran`).
    judge_ran: Option<u64>,
}

impl Watch {
    /// Trial `id` of `group` starts now, under `rules` (`confirming`: run
    /// again alone): the handle to stop it by.
    pub(super) fn begin(
        &self,
        id: usize,
        group: &str,
        rules: Rules,
        confirming: bool,
    ) -> Arc<Stop> {
        let stop = Arc::new(Stop::default());
        self.lock().trials.insert(
            id,
            Watched {
                started: Instant::now(),
                group: group.to_string(),
                rules,
                confirming,
                stop: stop.clone(),
                whereabouts: None,
                stopped_by: None,
                waited: Duration::ZERO,
                limit: None,
                starved: Duration::ZERO,
                spin_from: Duration::ZERO,
                last: None,
            },
        );
        stop
    }

    /// Trial `id`'s processes are `whereabouts` and its judge's tree: the
    /// spin and wait rules look at it from now on.
    pub(super) fn sees(&self, id: usize, whereabouts: Whereabouts) {
        if let Some(w) = self.lock().trials.get_mut(&id) {
            w.whereabouts = Some(whereabouts);
        }
    }

    /// Trial `id` (run again alone) is stopped at `limit` of the time it was
    /// not kept from a processor: load cannot make its limit stop it first.
    pub(super) fn keep_limit(&self, id: usize, limit: Duration) {
        if let Some(w) = self.lock().trials.get_mut(&id) {
            w.limit = Some(limit);
        }
    }

    /// Trial `id` ended: the rule that stopped it, with its threshold, if
    /// one did.
    pub(super) fn end(&self, id: usize) -> Option<(TimeRule, Duration)> {
        self.lock().trials.remove(&id).and_then(|w| w.stopped_by)
    }

    /// How many running trials were asleep at their last look: waiting on
    /// their own, they leave the processor to others (`Working`).
    pub(super) fn asleep(&self) -> usize {
        self.lock()
            .trials
            .values()
            .filter(|w| w.last.is_some_and(|l| l.asleep))
            .count()
    }

    /// How long to wait between two looks: 50 ms, 10 ms when one trial runs
    /// (a run again alone), which its rule then stops sooner.
    pub(super) fn pace(&self) -> Duration {
        match self.lock().trials.len() {
            0 | 1 => Duration::from_millis(10),
            _ => Duration::from_millis(50),
        }
    }

    /// Looks at every running trial past `LOOK_AFTER`, and stops those
    /// that spin or wait past their rules.
    pub(super) fn look(&self) {
        let now = Instant::now();
        let due: Vec<(usize, Option<libc::pid_t>, Option<Whereabouts>)> = self
            .lock()
            .trials
            .iter()
            .filter(|(_, w)| w.stopped_by.is_none() && now - w.started >= LOOK_AFTER)
            .filter(|(_, w)| w.whereabouts.is_some() || w.limit.is_some())
            .map(|(id, w)| (*id, w.stop.pid(), w.whereabouts.clone()))
            .collect();
        let forked = self.place_forked(due.iter().map(|(id, _, w)| (*id, w)));
        for (id, judge, whereabouts) in due {
            let known = whereabouts.is_some();
            let whereabouts = whereabouts.unwrap_or_default();
            let seen = look_at(judge, &whereabouts, &forked.of(id));
            let spent = match (&whereabouts.cage, known) {
                (Some(cage), _) => processor_time(cage),
                (None, true) => seen.spent,
                (None, false) => Duration::ZERO,
            };
            let (idle, helped) = threads_of(&whereabouts.helpers);
            let mut state = self.lock();
            let State { trials, hanging } = &mut *state;
            let Some(w) = trials.get_mut(&id) else {
                continue;
            };
            let rules = match !w.confirming && hanging.contains(&w.group) {
                true => w.rules.known_to_hang(),
                false => w.rules,
            };
            // Before its judge has started, and after it ended, a trial
            // waits on fencelab, not on itself.
            let look = Look {
                at: Instant::now(),
                asleep: seen.asleep && idle && judge.is_some() && known,
                ran: seen.ran.wrapping_add(helped),
                queued: seen.queued,
                judge_ran: seen.judge_ran,
            };
            // fencelab's judge ran since the last look (or it started): the
            // calls before were answered.
            let judge_ran = match w.last {
                Some(last) => last.judge_ran != look.judge_ran,
                None => look.judge_ran.is_some(),
            };
            if judge_ran {
                w.spin_from = spent;
            }
            if let Some(last) = w.last {
                w.waited += waited_between(last, look);
                w.starved += starved_between(last, look);
            }
            w.last = Some(look);
            let ran_for = (look.at - w.started).saturating_sub(w.starved);
            let broken = if spent.saturating_sub(w.spin_from) >= rules.spin {
                Some((TimeRule::Spins, rules.spin))
            } else if w.waited >= rules.wait {
                Some((TimeRule::Waits, rules.wait))
            } else {
                w.limit
                    .filter(|limit| ran_for >= *limit)
                    .map(|limit| (TimeRule::Limit, limit))
            };
            if let Some(rule) = broken {
                w.stopped_by = Some(rule);
                w.stop.stop();
                if !w.confirming {
                    hanging.insert(w.group.clone());
                }
            }
        }
    }

    /// Places the servers forked for `trials` (id, whereabouts) that no
    /// cgroup holds (`forked`): what the forking servers now serve.
    fn place_forked<'a>(
        &self,
        trials: impl Iterator<Item = (usize, &'a Option<Whereabouts>)>,
    ) -> std::sync::MutexGuard<'_, forked::Forked> {
        let (mut helpers, mut spaces) = (Vec::new(), Vec::new());
        for (id, whereabouts) in trials {
            let Some(w) = whereabouts.as_ref().filter(|w| w.cage.is_none()) else {
                continue;
            };
            if let Some(space) = w.space.as_ref().filter(|_| !w.helpers.is_empty()) {
                helpers.extend(w.helpers.iter().copied());
                spaces.push((id, space.clone()));
            }
        }
        helpers.sort_unstable();
        helpers.dedup();
        let mut forked = self.forked.lock().unwrap_or_else(|e| e.into_inner());
        forked.place(&helpers, &spaces);
        forked
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How long a trial was kept from a processor between two looks: what
/// its threads waited for one, at most the whole interval.
fn starved_between(last: Look, look: Look) -> Duration {
    let queued = Duration::from_nanos(look.queued.saturating_sub(last.queued));
    queued.min(look.at.saturating_duration_since(last.at))
}

/// How long a trial waited between two looks: all of it, if it was asleep
/// at both and nothing of it ran between. A look that came late (a loaded
/// watcher) then says as much as one on time.
fn waited_between(last: Look, look: Look) -> Duration {
    match last.asleep && look.asleep && last.ran == look.ran {
        true => look.at.saturating_duration_since(last.at),
        false => Duration::ZERO,
    }
}

/// `outcome` of a trial whose limit is `limit`, with the rule that stopped
/// it (None: its limit, if it timed out), `confirmed` when it was a run of
/// its own.
pub(super) fn stopped(
    outcome: TestOutcome,
    limit: Duration,
    rule: Option<(TimeRule, Duration)>,
    confirmed: bool,
) -> TestOutcome {
    let TestOutcome::TimedOut { .. } = outcome else {
        return outcome;
    };
    let limit_secs = limit.as_secs_f64();
    let (stopped_by, rule_secs) = match rule {
        None | Some((TimeRule::Limit, _)) => (TimeRule::Limit, None),
        Some((rule, secs)) => (rule, Some(secs.as_secs_f64())),
    };
    TestOutcome::TimedOut {
        limit_secs,
        stopped_by,
        rule_secs,
        confirmed,
    }
}

/// The trials to run again alone, and the budgets they spend.
pub(super) struct Confirmations {
    budget: Option<Duration>,
    /// Per implementation: the time its confirmations stopped again took.
    spent: HashMap<String, Duration>,
    /// (implementation, trial, what stopped it, how long it ran).
    pending: Vec<(String, usize, TimeRule, Duration)>,
}

impl Confirmations {
    pub(super) fn new(budget: Option<Duration>) -> Confirmations {
        Confirmations {
            budget,
            spent: HashMap::new(),
            pending: Vec::new(),
        }
    }

    /// Trial `id` of `group` ended as `outcome` after `took`: whether it
    /// is to be run again (it was stopped for time).
    pub(super) fn wanted(
        &mut self,
        group: &str,
        id: usize,
        outcome: &TestOutcome,
        took: Duration,
    ) -> bool {
        let TestOutcome::TimedOut { stopped_by, .. } = outcome else {
            return false;
        };
        self.pending
            .push((group.to_string(), id, *stopped_by, took));
        true
    }

    /// The trials to run again, in order: an implementation at a time, and
    /// of each, first those its limit stopped (the likeliest to pass alone:
    /// a loaded machine only ever slows a trial down), then those a rule
    /// stopped. So its budget goes to the trials that hang, whatever the
    /// load was.
    pub(super) fn order(&mut self) -> Vec<(String, usize)> {
        let mut first_of: HashMap<String, usize> = HashMap::new();
        for (group, id, _, _) in &self.pending {
            let first = first_of.entry(group.clone()).or_insert(*id);
            *first = (*first).min(*id);
        }
        let mut pending = std::mem::take(&mut self.pending);
        pending
            .sort_by_key(|(group, id, rule, _)| (first_of[group], *rule != TimeRule::Limit, *id));
        pending
            .into_iter()
            .map(|(group, id, _, _)| (group, id))
            .collect()
    }

    /// Whether `group` may run one more confirmation.
    pub(super) fn may_run(&self, group: &str) -> bool {
        self.budget
            .is_none_or(|budget| self.spent.get(group).copied().unwrap_or_default() < budget)
    }

    /// A confirmation of `group` ended as `outcome`: stopped again, it
    /// spent what its rule allows (the processor time, the waiting, or the
    /// limit), never the time it took. How many confirmations a budget
    /// holds is then the same on every run, whatever the load.
    pub(super) fn ran(&mut self, group: &str, outcome: &TestOutcome) {
        if let TestOutcome::TimedOut {
            limit_secs,
            rule_secs,
            ..
        } = outcome
        {
            let spent = Duration::from_secs_f64(rule_secs.unwrap_or(*limit_secs));
            *self.spent.entry(group.to_string()).or_default() += spent;
        }
    }

    /// The outcome of a trial of `group` not run again: its budget was spent.
    pub(super) fn over_budget(&self, took: Duration) -> TestOutcome {
        TestOutcome::OverBudget {
            budget_secs: self.budget.unwrap_or_default().as_secs_f64(),
            stopped_after_secs: Some(took.as_secs_f64()),
        }
    }
}

mod forked;
mod processes;
pub(super) use forked::mount_point;
use processes::{look_at, processor_time, threads_of};

#[cfg(test)]
mod tests;
