//! The crash test's operation logs, and the invariants checked by comparing
//! them with the final database.
//!
//! Why logs: SQLite's own answer (`PRAGMA integrity_check`) only says that the
//! file is well formed. Whether the lease contract held under concurrency and
//! SIGKILL can only be judged from what every worker was *told*, because a
//! worker acts on its answers: a complete it was told succeeded must be in the
//! final row, a claim it was told succeeded must not have overlapped a live
//! lease, and so on.
//!
//! Format. A worker appends two lines per operation to a log of its own: a
//! start line (`S seq kind job owners fence now ttl result`) written before the
//! call, and an end line (`E seq answer`) written after the call returned and
//! before the worker acts on the answer. Each line is a single `write` on an
//! unbuffered append-mode file, so a SIGKILL loses at most the line being
//! written; a trailing partial line is ignored.
//!
//! Order. `seq` comes from a global counter shared by all processes. The call
//! takes effect (commits) after its start number was drawn and before its end
//! number was, so when `a.end < b.start`, `a` took effect before `b`.
//! Overlapping operations are left unordered, and every check below only
//! relies on this partial order.
//!
//! Time skew. A call's `now` is read before the call waits for the write
//! lock, so it can be older than the `now` of calls that committed before it.
//! No check assumes that commit order follows `now`: e.g. both owners of one
//! `claim_many` can win, with fences that are not consecutive, when another
//! worker took the job over and released it while the call waited.
//!
//! Unknown answers. A worker killed after its start line but before its end
//! line has an operation whose effect is unknown: it may have committed. It is
//! never treated as refused; checks either allow both outcomes or skip.
//!
//! What is checked (see [`check`]):
//! - structure: only the last operation of a killed worker lacks an answer; no
//!   call returned an error; the table holds exactly the enqueued jobs.
//! - fences: no fence of a job was handed out twice (two holders at once);
//!   every handed-out fence is between 1 and the final fence; fences missing
//!   from the logs are no more than the unknown claims that could have taken
//!   them.
//! - order: across every pair of ordered observations of a job (answers,
//!   states read by workers, the coordinator's samples, the final row) the
//!   fence never decreases, a claim's fence is above every earlier observed
//!   fence, and once a job was seen done it stays done with the same fence and
//!   result, and no later claim succeeds.
//! - completes: at most one complete per job was accepted, and it is exactly
//!   the final row's owner, fence and result; a done row without an accepted
//!   complete must match a complete whose answer is unknown; the stored result
//!   names the lease that wrote it, and its time was before the lease's end.
//! - each worker's own leases (it sees their whole history): an accepted
//!   renew/complete/release used the fence the worker holds, on a lease that
//!   was not done or released, and (renew/complete) at a time before its end.
//!   A refusal of a live, open lease is only allowed when a later claim took
//!   the job over (the final fence is higher).
//! - claims: a successful claim follows a previous lease that was released or
//!   had expired at the claim's time (never a done one); a refused claim,
//!   when nothing overlapped it, met a done or live lease.
//! - final rows: each row is what the lease with the final fence leads to,
//!   allowing the holder's one unknown operation to have gone either way.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use fencelab::lease::Job;

/// The result string a worker stores: it names the lease that wrote it.
pub fn result_for(owner: &str, fence: i64, now: f64) -> String {
    format!("r-{owner}-{fence}-{now}")
}

fn parse_result(result: &str) -> Option<(&str, i64, f64)> {
    let mut parts = result.splitn(4, '-');
    if parts.next()? != "r" {
        return None;
    }
    let owner = parts.next()?;
    let fence = parts.next()?.parse().ok()?;
    let now = parts.next()?.parse().ok()?;
    Some((owner, fence, now))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Init,
    Enqueue,
    State,
    Claim,
    ClaimMany,
    Renew,
    Complete,
    Release,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Init,
        Kind::Enqueue,
        Kind::State,
        Kind::Claim,
        Kind::ClaimMany,
        Kind::Renew,
        Kind::Complete,
        Kind::Release,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Init => "init",
            Kind::Enqueue => "enqueue",
            Kind::State => "state",
            Kind::Claim => "claim",
            Kind::ClaimMany => "claim_many",
            Kind::Renew => "renew",
            Kind::Complete => "complete",
            Kind::Release => "release",
        }
    }

    fn is_claim(self) -> bool {
        matches!(self, Kind::Claim | Kind::ClaimMany)
    }

    /// Whether an accepted (or unknown) call of this kind can change a row.
    fn mutates(self) -> bool {
        !matches!(self, Kind::Init | Kind::State)
    }
}

/// The arguments of one call, as logged. Fields a kind does not use are empty.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub kind: Kind,
    pub job: String,
    pub owners: Vec<String>,
    pub fence: i64,
    pub now: f64,
    pub ttl: f64,
    pub result: String,
}

impl Call {
    fn new(kind: Kind, job: &str) -> Call {
        Call {
            kind,
            job: job.to_string(),
            owners: Vec::new(),
            fence: 0,
            now: 0.0,
            ttl: 0.0,
            result: String::new(),
        }
    }

    pub fn init() -> Call {
        Call::new(Kind::Init, "-")
    }

    pub fn enqueue(job: &str) -> Call {
        Call::new(Kind::Enqueue, job)
    }

    pub fn state(job: &str) -> Call {
        Call::new(Kind::State, job)
    }

    pub fn claim(job: &str, owners: &[&str], now: f64, ttl: f64) -> Call {
        let kind = if owners.len() == 1 {
            Kind::Claim
        } else {
            Kind::ClaimMany
        };
        Call {
            owners: owners.iter().map(|o| o.to_string()).collect(),
            now,
            ttl,
            ..Call::new(kind, job)
        }
    }

    pub fn renew(job: &str, owner: &str, fence: i64, now: f64, ttl: f64) -> Call {
        Call {
            owners: vec![owner.to_string()],
            fence,
            now,
            ttl,
            ..Call::new(Kind::Renew, job)
        }
    }

    pub fn complete(job: &str, owner: &str, fence: i64, now: f64, result: &str) -> Call {
        Call {
            owners: vec![owner.to_string()],
            fence,
            now,
            result: result.to_string(),
            ..Call::new(Kind::Complete, job)
        }
    }

    pub fn release(job: &str, owner: &str, fence: i64) -> Call {
        Call {
            owners: vec![owner.to_string()],
            fence,
            ..Call::new(Kind::Release, job)
        }
    }

    fn owner(&self) -> &str {
        self.owners.first().map_or("-", String::as_str)
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let owners = if self.owners.is_empty() {
            "-".to_string()
        } else {
            self.owners.join(",")
        };
        let result = if self.result.is_empty() {
            "-"
        } else {
            &self.result
        };
        write!(
            f,
            "{} {} {} {} {} {} {}",
            self.kind.name(),
            self.job,
            owners,
            self.fence,
            self.now,
            self.ttl,
            result
        )
    }
}

/// What a call answered, as logged.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Ok,
    Bool(bool),
    Claims(Vec<Option<i64>>),
    State(Option<Job>),
    Error(String),
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Ok => write!(f, "ok"),
            Answer::Bool(b) => write!(f, "{b}"),
            Answer::Claims(claims) => {
                let parts: Vec<String> = claims
                    .iter()
                    .map(|c| c.map_or("-".to_string(), |fence| fence.to_string()))
                    .collect();
                write!(f, "claims:{}", parts.join(","))
            }
            Answer::State(None) => write!(f, "none"),
            Answer::State(Some(job)) => write!(
                f,
                "row:{}:{}:{}:{}:{}",
                job.owner.as_deref().unwrap_or("-"),
                job.until,
                job.fence,
                u8::from(job.done),
                job.result.as_deref().unwrap_or("-")
            ),
            Answer::Error(msg) => write!(f, "error:{}", msg.replace(['\n', ' '], "_")),
        }
    }
}

pub fn start_line(seq: u64, call: &Call) -> String {
    format!("S {seq} {call}\n")
}

pub fn end_line(seq: u64, answer: &Answer) -> String {
    format!("E {seq} {answer}\n")
}

/// One logged operation.
#[derive(Clone, Debug)]
pub struct Entry {
    pub worker: String,
    /// Position in the worker's log.
    pub index: usize,
    pub start: u64,
    pub call: Call,
    /// `None`: the worker was killed before it logged the answer.
    pub end: Option<(u64, Answer)>,
}

impl Entry {
    fn end_seq(&self) -> u64 {
        self.end.as_ref().map_or(u64::MAX, |(seq, _)| *seq)
    }

    fn answer(&self) -> Option<&Answer> {
        self.end.as_ref().map(|(_, answer)| answer)
    }

    /// For renew/complete/release/enqueue: `Some(accepted)`, `None` if unknown.
    fn accepted(&self) -> Option<bool> {
        match self.answer()? {
            Answer::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// For claims: the owners that won, with their fences.
    fn winners(&self) -> Vec<(&str, i64)> {
        match self.answer() {
            Some(Answer::Claims(claims)) => self
                .call
                .owners
                .iter()
                .zip(claims)
                .filter_map(|(owner, claim)| claim.map(|fence| (owner.as_str(), fence)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether this call may have changed its row: accepted, or unknown.
    fn may_have_mutated(&self) -> bool {
        if !self.call.kind.mutates() {
            return false;
        }
        match self.answer() {
            None => true,
            Some(Answer::Bool(b)) => *b,
            Some(Answer::Claims(claims)) => claims.iter().any(Option::is_some),
            Some(_) => false,
        }
    }

    fn overlaps(&self, other: &Entry) -> bool {
        self.start <= other.end_seq() && other.start <= self.end_seq()
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.end {
            Some((end, answer)) => write!(
                f,
                "[{} #{} seq {}..{}] {} -> {}",
                self.worker, self.index, self.start, end, self.call, answer
            ),
            None => write!(
                f,
                "[{} #{} seq {}..?] {} -> (unknown: killed)",
                self.worker, self.index, self.start, self.call
            ),
        }
    }
}

fn parse_field<T: std::str::FromStr>(field: Option<&str>, line: &str) -> Result<T, String> {
    let field = field.ok_or_else(|| format!("short line: {line:?}"))?;
    field
        .parse()
        .map_err(|_| format!("bad field {field:?} in line {line:?}"))
}

fn parse_call(fields: &mut std::str::SplitWhitespace<'_>, line: &str) -> Result<Call, String> {
    let kind: String = parse_field(fields.next(), line)?;
    let kind = Kind::ALL
        .into_iter()
        .find(|k| k.name() == kind)
        .ok_or_else(|| format!("unknown kind in line {line:?}"))?;
    let job: String = parse_field(fields.next(), line)?;
    let owners: String = parse_field(fields.next(), line)?;
    let owners = if owners == "-" {
        Vec::new()
    } else {
        owners.split(',').map(str::to_string).collect()
    };
    let fence = parse_field(fields.next(), line)?;
    let now = parse_field(fields.next(), line)?;
    let ttl = parse_field(fields.next(), line)?;
    let result: String = parse_field(fields.next(), line)?;
    let result = if result == "-" { String::new() } else { result };
    Ok(Call {
        kind,
        job,
        owners,
        fence,
        now,
        ttl,
        result,
    })
}

fn parse_answer(text: &str, line: &str) -> Result<Answer, String> {
    let bad = || format!("bad answer in line {line:?}");
    let opt = |s: &str| (s != "-").then(|| s.to_string());
    Ok(match text {
        "ok" => Answer::Ok,
        "true" => Answer::Bool(true),
        "false" => Answer::Bool(false),
        "none" => Answer::State(None),
        _ => {
            if let Some(claims) = text.strip_prefix("claims:") {
                let claims = claims
                    .split(',')
                    .map(|c| {
                        if c == "-" {
                            Ok(None)
                        } else {
                            c.parse().map(Some)
                        }
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad())?;
                Answer::Claims(claims)
            } else if let Some(row) = text.strip_prefix("row:") {
                let parts: Vec<&str> = row.splitn(5, ':').collect();
                let [owner, until, fence, done, result] = parts[..] else {
                    return Err(bad());
                };
                Answer::State(Some(Job {
                    id: String::new(),
                    owner: opt(owner),
                    until: until.parse().map_err(|_| bad())?,
                    fence: fence.parse().map_err(|_| bad())?,
                    done: done == "1",
                    result: opt(result),
                }))
            } else if let Some(msg) = text.strip_prefix("error:") {
                Answer::Error(msg.to_string())
            } else {
                return Err(bad());
            }
        }
    })
}

/// Parses one worker's log. A trailing line without its newline was cut by a
/// SIGKILL mid-write and is ignored (a cut start line means the call was never
/// made).
pub fn parse_log(worker: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    let complete = match text.rfind('\n') {
        Some(last) => &text[..last],
        None => "",
    };
    for line in complete.split('\n').filter(|l| !l.is_empty()) {
        let mut fields = line.split_whitespace();
        let tag = fields.next();
        let seq: u64 = parse_field(fields.next(), line)?;
        match tag {
            Some("S") => {
                if let Some(open) = entries.last().filter(|e| e.end.is_none()) {
                    return Err(format!("{worker}: {open} has no answer but is not last"));
                }
                let call = parse_call(&mut fields, line)?;
                let index = entries.len();
                entries.push(Entry {
                    worker: worker.to_string(),
                    index,
                    start: seq,
                    call,
                    end: None,
                });
            }
            Some("E") => {
                let answer = parse_answer(fields.next().unwrap_or(""), line)?;
                let Some(open) = entries.last_mut().filter(|e| e.end.is_none()) else {
                    return Err(format!("{worker}: answer without a call: {line:?}"));
                };
                open.end = Some((seq, answer));
            }
            _ => return Err(format!("{worker}: bad line {line:?}")),
        }
    }
    Ok(entries)
}

/// A snapshot of the whole table taken by the coordinator between two numbers
/// of the global sequence.
pub struct Sample {
    pub start: u64,
    pub end: u64,
    pub rows: Vec<Job>,
}

/// Everything the crash test hands to [`check`].
pub struct Run {
    /// Each worker's parsed log.
    pub logs: Vec<(String, Vec<Entry>)>,
    /// Workers that died by SIGKILL (their last call may be unknown).
    pub killed: HashSet<String>,
    pub samples: Vec<Sample>,
    /// The table after every worker was gone, by id.
    pub final_rows: BTreeMap<String, Job>,
    /// The ids that were enqueued before the workers started.
    pub jobs: Vec<String>,
}

/// Counts of what the run exercised, so that the test can tell a run that
/// checked something from one that checked nothing.
#[derive(Debug, Default)]
pub struct Stats {
    pub calls: usize,
    pub unknown: usize,
    pub claims_won: usize,
    pub claims_refused: usize,
    pub refusals_justified: usize,
    pub takeovers_after_expiry: usize,
    pub claims_at_boundary: usize,
    pub completes_accepted: usize,
    pub refused_after_expiry: usize,
    pub refused_after_takeover: usize,
    pub refused_wrong_fence: usize,
    pub refused_after_end: usize,
    pub calls_at_boundary: usize,
    pub jobs_done: usize,
}

/// A lease handed out by a claim whose answer was logged.
struct Lease<'a> {
    claim: &'a Entry,
    owner: &'a str,
    fence: i64,
    /// The holder's renew/complete/release calls for this lease, in order.
    ops: Vec<&'a Entry>,
}

/// What a lease's own accepted calls made of it.
#[derive(Clone, Debug, PartialEq)]
struct Fate {
    until: f64,
    done: bool,
    result: Option<String>,
    released: bool,
}

impl Fate {
    fn apply(&mut self, call: &Call) {
        match call.kind {
            Kind::Renew => self.until = call.now + call.ttl,
            Kind::Complete => {
                self.done = true;
                self.result = Some(call.result.clone());
            }
            Kind::Release => {
                self.released = true;
                self.until = 0.0;
            }
            _ => {}
        }
    }
}

impl<'a> Lease<'a> {
    /// Replays the holder's accepted calls among those `include` selects;
    /// also returns the holder's call with an unknown answer, if selected.
    fn fate(&self, include: impl Fn(&Entry) -> bool) -> (Fate, Option<&'a Entry>) {
        let mut fate = Fate {
            until: self.claim.call.now + self.claim.call.ttl,
            done: false,
            result: None,
            released: false,
        };
        let mut pending = None;
        for op in self.ops.iter().filter(|op| include(op)) {
            match op.accepted() {
                Some(true) => fate.apply(&op.call),
                Some(false) => {}
                None => pending = Some(*op),
            }
        }
        (fate, pending)
    }

    /// The row this lease leaves behind, given its fate.
    fn row(&self, fate: &Fate) -> (Option<String>, f64, bool, Option<String>) {
        let owner = (!fate.released).then(|| self.owner.to_string());
        (owner, fate.until, fate.done, fate.result.clone())
    }
}

/// One thing known about a job's row at some point of the global order.
struct Obs {
    start: u64,
    end: u64,
    fence: i64,
    done: bool,
    result: Option<String>,
    claim: bool,
    what: String,
}

/// Compares the logs with the final database; returns the violations found
/// (empty when every invariant holds) and what the run exercised.
pub fn check(run: &Run) -> (Vec<String>, Stats) {
    let mut v: Vec<String> = Vec::new();
    let mut stats = Stats::default();
    let all: Vec<&Entry> = run.logs.iter().flat_map(|(_, es)| es).collect();
    let mut by_job: HashMap<&str, Vec<&Entry>> = HashMap::new();
    for e in &all {
        by_job.entry(e.call.job.as_str()).or_default().push(e);
    }
    let empty: Vec<&Entry> = Vec::new();
    let job_ops = |job: &str| by_job.get(job).unwrap_or(&empty);

    // Structure.
    for (worker, entries) in &run.logs {
        for (i, e) in entries.iter().enumerate() {
            stats.calls += 1;
            match &e.end {
                None => {
                    stats.unknown += 1;
                    if i + 1 != entries.len() || !run.killed.contains(worker) {
                        v.push(format!("{e}: no answer, but {worker} was not killed then"));
                    }
                }
                Some((_, Answer::Error(msg))) => v.push(format!("{e}: the call failed: {msg}")),
                Some(_) => {}
            }
        }
    }
    let ids: Vec<&String> = run.final_rows.keys().collect();
    let mut expected: Vec<&String> = run.jobs.iter().collect();
    expected.sort();
    if ids != expected {
        v.push(format!(
            "final table has ids {ids:?}, expected {expected:?}"
        ));
    }
    for e in &all {
        if e.call.kind == Kind::Enqueue && e.accepted() == Some(true) {
            v.push(format!("{e}: enqueue of an existing job inserted a row"));
        }
    }

    // Leases handed out, from every claim whose answer was logged.
    let mut leases: HashMap<(&str, i64), Lease> = HashMap::new();
    for e in all.iter().filter(|e| e.call.kind.is_claim()) {
        let winners = e.winners();
        match e.answer() {
            None => {}
            Some(_) if winners.is_empty() => stats.claims_refused += 1,
            Some(_) => stats.claims_won += 1,
        }
        // Two winners in one claim_many are possible: while the call waited
        // for the lock with its (by then old) `now`, another worker took the
        // job over and released it. Two winners of *one* lease show up below
        // as a claim that won while the previous lease was live.
        for (owner, fence) in winners {
            let lease = Lease {
                claim: e,
                owner,
                fence,
                ops: Vec::new(),
            };
            if let Some(other) = leases.insert((e.call.job.as_str(), fence), lease) {
                v.push(format!(
                    "fence {fence} of {} handed out twice: {} and {e}",
                    e.call.job, other.claim
                ));
            }
        }
    }
    for e in &all {
        if !matches!(e.call.kind, Kind::Renew | Kind::Complete | Kind::Release) {
            continue;
        }
        if let Some(lease) = leases.get_mut(&(e.call.job.as_str(), e.call.fence))
            && lease.owner == e.call.owner()
            && lease.claim.worker == e.worker
            && lease.claim.index < e.index
        {
            lease.ops.push(e);
        }
    }
    for lease in leases.values_mut() {
        lease.ops.sort_by_key(|op| op.index);
    }
    let unknown_claims = |job: &str| -> Vec<&Entry> {
        job_ops(job)
            .iter()
            .copied()
            .filter(|e| e.call.kind.is_claim() && e.end.is_none())
            .collect()
    };

    for (job, row) in &run.final_rows {
        stats.jobs_done += usize::from(row.done);

        // Fences: within range, and none appeared from nowhere.
        let mut known = 0;
        for ((_, fence), lease) in leases.iter().filter(|((j, _), _)| j == job) {
            known += 1;
            if *fence < 1 || *fence > row.fence {
                v.push(format!(
                    "{}: fence {fence} outside 1..={} (the final fence)",
                    lease.claim, row.fence
                ));
            }
        }
        let unknown: usize = unknown_claims(job)
            .iter()
            .map(|u| u.call.owners.len())
            .sum();
        let missing = usize::try_from(row.fence)
            .unwrap_or(0)
            .saturating_sub(known);
        if missing > unknown {
            v.push(format!(
                "{job}: final fence {} but only {known} logged claims won and {unknown} claims have unknown answers",
                row.fence
            ));
        }

        // Completes.
        let accepted: Vec<&Entry> = job_ops(job)
            .iter()
            .copied()
            .filter(|e| e.call.kind == Kind::Complete && e.accepted() == Some(true))
            .collect();
        stats.completes_accepted += accepted.len();
        if accepted.len() > 1 {
            let list: Vec<String> = accepted.iter().map(|e| e.to_string()).collect();
            v.push(format!(
                "{job}: more than one complete accepted:\n    {}",
                list.join("\n    ")
            ));
        }
        if row.done {
            let matches = |e: &Entry| {
                row.owner.as_deref() == Some(e.call.owner())
                    && row.fence == e.call.fence
                    && row.result.as_deref() == Some(e.call.result.as_str())
            };
            if let Some(c) = accepted.first() {
                if !matches(c) {
                    v.push(format!("{c}: accepted, but the final row is {row:?}"));
                }
            } else if !job_ops(job)
                .iter()
                .any(|e| e.call.kind == Kind::Complete && e.end.is_none() && matches(e))
            {
                v.push(format!(
                    "{job}: done in the final row {row:?}, but no complete explains it"
                ));
            }
            match row.result.as_deref().and_then(parse_result) {
                Some((owner, fence, now))
                    if row.owner.as_deref() == Some(owner) && row.fence == fence =>
                {
                    if now >= row.until {
                        v.push(format!(
                            "{job}: result written at {now}, but the lease ended at {}: {row:?}",
                            row.until
                        ));
                    }
                }
                _ => v.push(format!(
                    "{job}: the result was not written by the final lease: {row:?}"
                )),
            }
        } else if let Some(c) = accepted.first() {
            v.push(format!(
                "{c}: accepted, but the final row is not done: {row:?}"
            ));
        }

        // The final row is what the lease with the final fence leads to.
        let got = (row.owner.clone(), row.until, row.done, row.result.clone());
        let candidates: Vec<_> = if row.fence == 0 {
            vec![(None, 0.0, false, None)]
        } else if let Some(lease) = leases.get(&(job.as_str(), row.fence)) {
            let (fate, pending) = lease.fate(|_| true);
            let mut rows = vec![lease.row(&fate)];
            if let Some(p) = pending {
                let mut maybe = fate.clone();
                maybe.apply(&p.call);
                rows.push(lease.row(&maybe));
            }
            rows
        } else {
            unknown_claims(job)
                .iter()
                .flat_map(|u| {
                    u.call
                        .owners
                        .iter()
                        .map(|o| (Some(o.clone()), u.call.now + u.call.ttl, false, None))
                })
                .collect()
        };
        if !candidates.contains(&got) {
            v.push(format!(
                "{job}: final row {row:?} is none of {candidates:?}, what its last lease allows"
            ));
        }
    }

    // Order: observations of one job, pairwise where the order is known.
    let mut obs: HashMap<&str, Vec<Obs>> = HashMap::new();
    for e in &all {
        let Some(answer) = e.answer() else { continue };
        let end = e.end_seq();
        let mut push = |fence, done, result: Option<String>, claim| {
            obs.entry(e.call.job.as_str()).or_default().push(Obs {
                start: e.start,
                end,
                fence,
                done,
                result,
                claim,
                what: e.to_string(),
            })
        };
        match (e.call.kind, answer) {
            (_, Answer::State(Some(row))) => push(row.fence, row.done, row.result.clone(), false),
            (Kind::Claim | Kind::ClaimMany, _) => {
                for (_, fence) in e.winners() {
                    push(fence, false, None, true);
                }
            }
            (Kind::Renew | Kind::Release, Answer::Bool(true)) => {
                push(e.call.fence, false, None, false)
            }
            (Kind::Complete, Answer::Bool(true)) => {
                push(e.call.fence, true, Some(e.call.result.clone()), false)
            }
            _ => {}
        }
    }
    for sample in &run.samples {
        for row in &sample.rows {
            if let Some(id) = run
                .final_rows
                .get_key_value(&row.id)
                .map(|(k, _)| k.as_str())
            {
                obs.entry(id).or_default().push(Obs {
                    start: sample.start,
                    end: sample.end,
                    fence: row.fence,
                    done: row.done,
                    result: row.result.clone(),
                    claim: false,
                    what: format!("[sample seq {}..{}] {row:?}", sample.start, sample.end),
                });
            }
        }
    }
    for (job, row) in &run.final_rows {
        obs.entry(job.as_str()).or_default().push(Obs {
            start: u64::MAX,
            end: u64::MAX,
            fence: row.fence,
            done: row.done,
            result: row.result.clone(),
            claim: false,
            what: format!("[final] {row:?}"),
        });
    }
    for (job, list) in &mut obs {
        list.sort_by_key(|o| (o.end, o.start));
        let mut reported = 0;
        for (i, a) in list.iter().enumerate() {
            for b in list[i + 1..].iter().filter(|b| a.end < b.start) {
                let problem = if b.fence < a.fence {
                    "the fence went down"
                } else if b.claim && b.fence == a.fence {
                    "a claim did not raise the fence"
                } else if a.done && b.claim {
                    "a claim succeeded after the job was done"
                } else if a.done && (!b.done || b.fence != a.fence || b.result != a.result) {
                    "a done job changed"
                } else {
                    continue;
                };
                if reported < 3 {
                    v.push(format!(
                        "{job}: {problem}:\n    before: {}\n    after:  {}",
                        a.what, b.what
                    ));
                }
                reported += 1;
            }
        }
    }

    // Each worker's own leases.
    struct Held {
        fence: i64,
        until: f64,
        done: bool,
        released: bool,
    }
    for (_, entries) in &run.logs {
        let mut held: HashMap<(&str, &str), Held> = HashMap::new();
        for e in entries {
            let key = (e.call.job.as_str(), e.call.owner());
            if e.call.kind.is_claim() {
                for (owner, fence) in e.winners() {
                    let until = e.call.now + e.call.ttl;
                    let lease = Held {
                        fence,
                        until,
                        done: false,
                        released: false,
                    };
                    held.insert((e.call.job.as_str(), owner), lease);
                }
                continue;
            }
            if !matches!(e.call.kind, Kind::Renew | Kind::Complete | Kind::Release) {
                continue;
            }
            let Some(accepted) = e.accepted() else {
                continue;
            };
            let Some(h) = held.get_mut(&key) else {
                if accepted {
                    v.push(format!(
                        "{e}: accepted for an owner that never claimed the job"
                    ));
                }
                continue;
            };
            if e.call.fence != h.fence {
                if accepted {
                    v.push(format!(
                        "{e}: accepted with fence {} while this owner's lease has fence {}",
                        e.call.fence, h.fence
                    ));
                } else {
                    stats.refused_wrong_fence += 1;
                }
                continue;
            }
            let timed = e.call.kind != Kind::Release;
            let open = !h.done && !h.released;
            let live = !timed || e.call.now < h.until;
            let taken_over = run
                .final_rows
                .get(&e.call.job)
                .is_some_and(|row| row.fence > h.fence);
            if timed && e.call.now == h.until {
                stats.calls_at_boundary += 1;
            }
            if accepted {
                if !open {
                    let why = if h.done { "done" } else { "released" };
                    v.push(format!("{e}: accepted on a lease already {why}"));
                } else if !live {
                    v.push(format!(
                        "{e}: accepted at {} but the lease ended at {} (stale)",
                        e.call.now, h.until
                    ));
                }
                match e.call.kind {
                    Kind::Renew => h.until = e.call.now + e.call.ttl,
                    Kind::Complete => h.done = true,
                    _ => h.released = true,
                }
            } else if !open {
                stats.refused_after_end += 1;
            } else if !live {
                stats.refused_after_expiry += 1;
            } else if taken_over {
                stats.refused_after_takeover += 1;
            } else {
                v.push(format!(
                    "{e}: refused, but the lease was open and live (until {}) and nobody claimed the job after it",
                    h.until
                ));
            }
        }
    }

    // Claims that won: the previous lease was released or had expired.
    for ((job, fence), lease) in &leases {
        if *fence <= 1 {
            continue;
        }
        let now = lease.claim.call.now;
        let bound = if let Some(prev) = leases.get(&(*job, fence - 1)) {
            let (fate, pending) = prev.fate(|_| true);
            if fate.done {
                v.push(format!(
                    "{}: won on a job that {} had completed",
                    lease.claim, prev.claim.worker
                ));
                continue;
            }
            if fate.released {
                continue;
            }
            match pending {
                None => fate.until,
                Some(p) if p.call.kind == Kind::Renew => fate.until.min(p.call.now + p.call.ttl),
                Some(_) => continue,
            }
        } else {
            let before: Vec<&Entry> = unknown_claims(job)
                .into_iter()
                .filter(|u| u.start < lease.claim.end_seq())
                .collect();
            match before
                .iter()
                .map(|u| u.call.now + u.call.ttl)
                .reduce(f64::min)
            {
                Some(bound) => bound,
                None => continue,
            }
        };
        if now < bound {
            v.push(format!(
                "{}: won fence {fence} at {now}, but lease {} was live until {bound}",
                lease.claim,
                fence - 1
            ));
        } else {
            stats.takeovers_after_expiry += 1;
            stats.claims_at_boundary += usize::from(now == bound);
        }
    }

    // Claims that were refused: when nothing overlapped them, the job was
    // done or held by a live lease.
    for c in all.iter().filter(|e| e.call.kind.is_claim()) {
        if c.end.is_none() || !c.winners().is_empty() {
            continue;
        }
        let job = c.call.job.as_str();
        let overlapped = job_ops(job)
            .iter()
            .any(|m| !std::ptr::eq(*m, *c) && m.may_have_mutated() && m.overlaps(c));
        if overlapped {
            continue;
        }
        let before = |e: &Entry| e.end_seq() < c.start;
        let current = leases
            .iter()
            .filter(|((j, _), lease)| *j == job && before(lease.claim))
            .max_by_key(|((_, fence), _)| *fence);
        let free = match current {
            None => Some("never claimed".to_string()),
            Some((_, lease)) => {
                let (fate, _) = lease.fate(before);
                if fate.done {
                    None
                } else if fate.released {
                    Some(format!("released by {}", lease.claim.worker))
                } else if fate.until <= c.call.now {
                    Some(format!("lease {} ended at {}", lease.fence, fate.until))
                } else {
                    None
                }
            }
        };
        match free {
            Some(why) => v.push(format!("{c}: refused, but the job was free ({why})")),
            None => stats.refusals_justified += 1,
        }
    }

    (v, stats)
}
