//! The log format: what a worker writes before and after each call
//! (`start_line`, `end_line`), and how a log is read back (`parse_log`) into
//! entries that the invariants query.

use std::fmt;

use fencelab::lease::Job;

/// The result string a worker stores: it names the lease that wrote it.
pub fn result_for(owner: &str, fence: i64, now: f64) -> String {
    format!("r-{owner}-{fence}-{now}")
}

pub(super) fn parse_result(result: &str) -> Option<(&str, i64, f64)> {
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

    pub(super) fn is_claim(self) -> bool {
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

    pub(super) fn owner(&self) -> &str {
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
    pub(super) fn end_seq(&self) -> u64 {
        self.end.as_ref().map_or(u64::MAX, |(seq, _)| *seq)
    }

    pub(super) fn answer(&self) -> Option<&Answer> {
        self.end.as_ref().map(|(_, answer)| answer)
    }

    /// For renew/complete/release/enqueue: `Some(accepted)`, `None` if unknown.
    pub(super) fn accepted(&self) -> Option<bool> {
        match self.answer()? {
            Answer::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// For claims: the owners that won, with their fences.
    pub(super) fn winners(&self) -> Vec<(&str, i64)> {
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
    pub(super) fn may_have_mutated(&self) -> bool {
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

    pub(super) fn overlaps(&self, other: &Entry) -> bool {
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
