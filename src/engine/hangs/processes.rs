//! What one look at a trial reads: its processes' states and processor
//! times in `/proc`, and its cgroups' own accounts where it has them.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use super::{MAX_PROCESSES, Whereabouts};
use crate::bridge::capture::OUTPUT_THREAD;
use crate::bridge::sandbox::proc;

/// The processor time the processes of the cgroup `dir` have used, their
/// reaped children's included (a process that is gone by now is not).
pub(super) fn processor_time(dir: &Path) -> Duration {
    from_ticks(pids_of(dir).map(own_ticks).sum())
}

/// The processor time of the process `pid` and of its reaped children, in
/// clock ticks (`proc::stat`'s times; 0 for a process gone).
pub(super) fn own_ticks(pid: libc::pid_t) -> u64 {
    proc::stat(pid).map_or(0, |stat| stat.times.iter().sum())
}

pub(super) fn from_ticks(ticks: u64) -> Duration {
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Duration::from_millis(ticks * 1000 / hz)
}

/// How deep in nested PID namespaces the process `pid` is (`NSpid`'s
/// count); None where unknown.
fn pid_depth(pid: libc::pid_t) -> Option<usize> {
    let status = proc::status(pid)?;
    Some(status.field("NSpid")?.split_whitespace().count())
}

/// The processor time, in microseconds, of every process that has been in
/// the cgroup `dir`, those gone included: cgroup v2's `cpu.stat` (0 in v1,
/// where a memory cgroup has none).
pub(super) fn cgroup_usage(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("cpu.stat"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("usage_usec "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_default()
}

/// The processes in the cgroup `dir`.
fn pids_of(dir: &Path) -> impl Iterator<Item = libc::pid_t> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|pid| pid.trim().parse().ok())
        .collect::<Vec<libc::pid_t>>()
        .into_iter()
}

/// What one walk through a trial's processes found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Seen {
    /// None of their threads was running or ready to run (nor in an
    /// uninterruptible wait, which ends by itself).
    pub(super) asleep: bool,
    /// The processor time of the threads seen and of the cgroups, and their
    /// time waiting for a processor, in nanoseconds.
    pub(super) ran: u64,
    pub(super) queued: u64,
    /// Without a cage's cgroup: the processor time of the untrusted side's
    /// processes seen, their reaped children's included.
    pub(super) spent: Duration,
    /// fencelab's own judge: the processor time of its threads, in
    /// nanoseconds, those reading the implementation's output aside. While
    /// it does not change, the test waits for an answer.
    pub(super) judge_ran: Option<u64>,
}

/// Looks at the judge `judge` and every process it started, and at
/// `whereabouts`: the processes of its cgroups, and its servers (`forked`:
/// those forked for it, without a cgroup), with every process they started.
///
/// Without a cage's cgroup, the untrusted side is what spins: the judge's
/// whole tree when it is untrusted, else what it started in a PID namespace
/// of its own, or had forked (its caged server); never fencelab's own judge.
pub(super) fn look_at(
    judge: Option<libc::pid_t>,
    whereabouts: &Whereabouts,
    forked: &[libc::pid_t],
) -> Seen {
    let uncaged = whereabouts.cage.is_none();
    // What a process is to the trial: its children are the same to it.
    #[derive(Clone, Copy)]
    enum Part {
        Other,
        TrustedJudge,
        Spins,
    }
    let mut pending: Vec<(libc::pid_t, Part)> = Vec::new();
    let forked_part = match (uncaged, whereabouts.judge_untrusted) {
        (true, false) => Part::Spins,
        _ => Part::Other,
    };
    pending.extend(forked.iter().map(|&pid| (pid, forked_part)));
    let judge_part = match (uncaged, whereabouts.judge_untrusted) {
        (true, true) => Part::Spins,
        (true, false) => Part::TrustedJudge,
        (false, _) => Part::Other,
    };
    pending.extend(judge.map(|pid| (pid, judge_part)));
    let (mut asleep, mut ran, mut queued, mut spent) = (true, 0u64, 0u64, 0u64);
    // A judge in the cage (a learner's test) is the untrusted side.
    let mut trusted_judge = judge.filter(|_| !whereabouts.judge_untrusted);
    for cgroup in whereabouts.cage.iter().chain(&whereabouts.also) {
        let pids: Vec<libc::pid_t> = pids_of(cgroup).collect();
        trusted_judge = trusted_judge.filter(|judge| !pids.contains(judge));
        pending.extend(pids.into_iter().map(|pid| (pid, Part::Other)));
        ran = ran.wrapping_add(cgroup_usage(cgroup).saturating_mul(1000));
    }
    let mut judge_ran = trusted_judge.map(|_| 0u64);
    pending.extend(whereabouts.servers.iter().map(|&pid| (pid, Part::Other)));
    // A trusted judge's caged server is deeper than the judge.
    let judge_depth = judge
        .filter(|_| matches!(judge_part, Part::TrustedJudge))
        .and_then(pid_depth);
    let mut seen = HashSet::new();
    while let Some((pid, part)) = pending.pop() {
        if !seen.insert(pid) || seen.len() > MAX_PROCESSES {
            continue;
        }
        let part = match part {
            Part::TrustedJudge if judge_depth.is_some() && pid_depth(pid) > judge_depth => {
                Part::Spins
            }
            part => part,
        };
        if let Part::Spins = part {
            spent = spent.wrapping_add(own_ticks(pid));
        }
        for tid in proc::threads(pid) {
            let (idle, time, waited, name) = task_seen(pid, tid);
            asleep &= idle;
            ran = ran.wrapping_add(time);
            queued = queued.wrapping_add(waited);
            if Some(pid) == trusted_judge && name != OUTPUT_THREAD.as_bytes() {
                judge_ran = judge_ran.map(|sum| sum.wrapping_add(time));
            }
            let children = proc::thread_children(pid, tid);
            pending.extend(children.into_iter().map(|child| (child, part)));
        }
    }
    Seen {
        asleep,
        ran,
        queued,
        spent: from_ticks(spent),
        judge_ran,
    }
}

/// The threads of the processes `pids` alone (their children are not
/// looked at): whether none was running or ready to run, and their
/// processor time, in nanoseconds.
pub(super) fn threads_of(pids: &[libc::pid_t]) -> (bool, u64) {
    let (mut asleep, mut ran) = (true, 0u64);
    for &pid in pids {
        for tid in proc::threads(pid) {
            let (idle, time, _, _) = task_seen(pid, tid);
            asleep &= idle;
            ran = ran.wrapping_add(time);
        }
    }
    (asleep, ran)
}

/// The thread `tid` of `pid`: whether it was neither running, ready to
/// run, nor in an uninterruptible wait (which ends by itself), its
/// processor time and its time waiting for a processor, in nanoseconds,
/// and its name. A thread gone, or a kernel without schedstat, reads as
/// awake: what it did is unknown.
fn task_seen(pid: libc::pid_t, tid: libc::pid_t) -> (bool, u64, u64, Vec<u8>) {
    let stat = proc::thread_stat(pid, tid);
    let state = stat.as_ref().map(|stat| !matches!(stat.state, 'R' | 'D'));
    match (state, proc::thread_run_time(pid, tid)) {
        (Some(asleep), Some((ran, queued))) => (
            asleep,
            ran,
            queued,
            stat.map(|s| s.name).unwrap_or_default(),
        ),
        _ => (false, 0, 0, Vec::new()),
    }
}
