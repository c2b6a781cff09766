//! Random calls of the whole contract, made of the implementation and of a
//! model of the contract written from its clauses, compared call by call.
//! Every test of the suite was written from a bug someone thought of; these
//! find the ones nobody did (a `complete` that trims the result, an
//! `enqueue` that folds the case of an id).
//!
//! Each step has one such test (`random_calls_agree_with_the_contract`). It
//! calls its step's function and those that make rows (enqueue, state,
//! claim): a learner who has not reached a later step is not judged on it,
//! and a function of another step that hangs costs this test nothing. The
//! calls come in sequences drawn from a seed
//! fixed for this suite: the same code meets the same calls on every run.
//! The first call whose answer or stored rows differ from the model's is
//! shrunk to the shortest sequence that still differs there, and told as a
//! story. A step's test reports only differences first met at a call of
//! its own step's function: another step's test tells the others. A panic
//! in another step's function stops it, unless it says that step is not
//! started: then it fails, as the step's other tests do.
//!
//! What the contract leaves free is never compared: which owner wins
//! `claim_many` (and how many win a race, which step 8's race tests judge
//! on a schedule they fix), an error's text, which error comes first when `ttl` and
//! `now` are both wrong, what `complete` leaves in `owner` and `until`, how
//! `done` or the schema are stored.

use std::fmt::Write as _;

use crate::lease;
use crate::support::*;

/// The seed of every sequence: a new suite version may change it.
const SEED: u64 = 0x6665_6e63_656c_6162;
/// How many sequences a step's test runs (`SEQUENCES_ENV` may say more:
/// `.ci/run` runs 1,250 a step on every wheat), and how many calls each.
const SEQUENCES: usize = 40;
const SEQUENCES_ENV: &str = "FENCELAB_RANDOM_SEQUENCES";
const CALLS: usize = 8;
/// How many replays a shrink may try.
const SHRINK_TRIES: usize = 300;

/// Ids and owners from a rich alphabet: case, spaces at either end, empty,
/// Unicode, SQL's own characters, a long one.
const JOBS: [&str; 8] = [
    "job-1",
    "Job-1",
    " job-1",
    "job-1 ",
    "",
    "ジョブ",
    "j'); DROP TABLE jobs; --",
    "a-rather-long-job-id-that-goes-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on",
];
const OWNERS: [&str; 6] = [
    "worker-a",
    "Worker-A",
    " worker-a ",
    "",
    "作業者",
    "o\"; --",
];
const RESULTS: [&str; 7] = [
    "done",
    " padded ",
    "Done",
    "",
    "結果 ✓",
    "two\nlines",
    "it's done",
];
const TIMES: [f64; 6] = [0.0, 1.0, 10.0, 100.25, -5.5, 1e300];
const TTLS: [f64; 5] = [1.0, 30.5, 1e-9, 1e300, 0.5];
const BAD_TTLS: [f64; 5] = [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
const BAD_TIMES: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

/// One call of the contract's API, with every argument as made.
#[derive(Clone, Debug, PartialEq)]
enum Call {
    InitDb,
    Enqueue(String),
    State(String),
    Claim(String, String, f64, f64),
    Renew(String, String, i64, f64, f64),
    Complete(String, String, i64, f64, String),
    Release(String, String, i64),
    ClaimMany(String, Vec<String>, f64, f64),
}

impl Call {
    /// The worksheet's step of the function called.
    fn step(&self) -> u32 {
        match self {
            Call::InitDb => 1,
            Call::Enqueue(..) => 2,
            Call::State(..) => 3,
            Call::Claim(..) => 4,
            Call::Renew(..) => 5,
            Call::Complete(..) => 6,
            Call::Release(..) => 7,
            Call::ClaimMany(..) => 8,
        }
    }

    /// As a learner writes it (`db` for the database's path).
    fn shown(&self) -> String {
        let t = |x: &f64| format!("{x:?}");
        match self {
            Call::InitDb => "init_db(db)".to_string(),
            Call::Enqueue(j) => format!("enqueue(db, {j:?})"),
            Call::State(j) => format!("state(db, {j:?})"),
            Call::Claim(j, o, n, ttl) => format!("claim(db, {j:?}, {o:?}, {}, {})", t(n), t(ttl)),
            Call::Renew(j, o, f, n, ttl) => {
                format!("renew(db, {j:?}, {o:?}, {f}, {}, {})", t(n), t(ttl))
            }
            Call::Complete(j, o, f, n, r) => {
                format!("complete(db, {j:?}, {o:?}, {f}, {}, {r:?})", t(n))
            }
            Call::Release(j, o, f) => format!("release(db, {j:?}, {o:?}, {f})"),
            Call::ClaimMany(j, os, n, ttl) => {
                format!("claim_many(db, {j:?}, &{os:?}, {}, {})", t(n), t(ttl))
            }
        }
    }
}

/// A row as the contract fixes it: of a done job, `owner` and `until` are
/// free (`complete-row`), shown as `_` and never compared.
#[derive(Clone, Debug, PartialEq)]
struct Job {
    id: String,
    owner: Kept<Option<String>>,
    until: Kept<f64>,
    fence: i64,
    result: Option<String>,
    done: bool,
}

impl Job {
    fn of(
        id: &str,
        owner: Option<String>,
        until: f64,
        fence: i64,
        result: Option<String>,
        done: bool,
    ) -> Job {
        let kept = |done: bool| if done { Kept::Free } else { Kept::Fixed(()) };
        Job {
            id: id.to_string(),
            owner: kept(done).with(owner),
            until: kept(done).with(until),
            fence,
            result,
            done,
        }
    }
}

/// A field the contract fixes, or leaves free (shown as `_`).
#[derive(Clone, PartialEq)]
enum Kept<T> {
    Fixed(T),
    Free,
}

impl Kept<()> {
    fn with<T>(self, value: T) -> Kept<T> {
        match self {
            Kept::Fixed(()) => Kept::Fixed(value),
            Kept::Free => Kept::Free,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kept::Fixed(value) => value.fmt(f),
            Kept::Free => f.write_str("_"),
        }
    }
}

/// A stored row of the model: owner, until, fence, result, done.
type Stored = (Option<String>, f64, i64, Option<String>, bool);

/// The contract, clause by clause, over rows kept in id order.
#[derive(Default, Clone)]
struct Model {
    rows: std::collections::BTreeMap<String, Stored>,
    /// Jobs whose owner won a `claim_many` of several owners: which one is
    /// the race's choice, so rows show it as `WINNER` when both agree.
    raced: std::collections::BTreeSet<String>,
}

/// An answer as compared: a value's text, or an error by its kind.
type Text = String;

const BOTH_WRONG: &str = "Err(InvalidTtl(_)) or Err(InvalidNow(_))";

impl Model {
    /// Steps 4, 5, 8: ttl and now checked before anything else, in either order.
    fn checked(now: f64, ttl: f64) -> Option<Text> {
        let (ttl_bad, now_bad) = (!(ttl.is_finite() && ttl > 0.0), !now.is_finite());
        match (ttl_bad, now_bad) {
            (true, true) => Some(BOTH_WRONG.to_string()),
            (true, false) => Some(INVALID_TTL.to_string()),
            (false, true) => Some(INVALID_NOW.to_string()),
            (false, false) => None,
        }
    }

    fn holds(&self, j: &str, o: &str, f: i64) -> bool {
        self.rows.get(j).is_some_and(|(owner, _, fence, _, done)| {
            owner.as_deref() == Some(o) && *fence == f && !done
        })
    }

    fn until(&self, j: &str) -> f64 {
        self.rows.get(j).map_or(0.0, |r| r.1)
    }

    fn claimable(&self, j: &str, now: f64) -> Option<i64> {
        self.rows
            .get(j)
            .filter(|(_, until, _, _, done)| !done && *until <= now)
            .map(|r| r.2 + 1)
    }

    /// What the call answers and does. `claim_many`'s winners are those the
    /// implementation chose (`won`): which owner wins, and how many win a
    /// race, are the race tests' to judge (step 8's, on a schedule they fix);
    /// left to the scheduler here, they would change from run to run.
    fn call(&mut self, call: &Call, won: &Won) -> Text {
        match call {
            Call::InitDb => "Ok(())".to_string(),
            Call::Enqueue(j) => {
                let new = !self.rows.contains_key(j);
                if new {
                    self.rows.insert(j.clone(), (None, 0.0, 0, None, false));
                }
                format!("Ok({new})")
            }
            Call::State(j) => format!("Ok({:?})", self.seen(j)),
            Call::Claim(j, o, now, ttl) => {
                if let Some(err) = Self::checked(*now, *ttl) {
                    return err;
                }
                let fence = self.claimable(j, *now);
                if let Some(f) = fence {
                    self.raced.remove(j);
                    let row = self.rows.get_mut(j).expect("claimable");
                    *row = (Some(o.clone()), now + ttl, f, row.3.clone(), false);
                }
                format!("Ok({fence:?})")
            }
            Call::Renew(j, o, f, now, ttl) => {
                if let Some(err) = Self::checked(*now, *ttl) {
                    return err;
                }
                let ok = self.holds(j, o, *f) && self.until(j) > *now;
                if ok {
                    self.rows.get_mut(j).expect("held").1 = now + ttl;
                }
                format!("Ok({ok})")
            }
            Call::Complete(j, o, f, now, r) => {
                if !now.is_finite() {
                    return INVALID_NOW.to_string();
                }
                let ok = self.holds(j, o, *f) && self.until(j) > *now;
                if ok {
                    let row = self.rows.get_mut(j).expect("held");
                    row.3 = Some(r.clone());
                    row.4 = true;
                }
                format!("Ok({ok})")
            }
            Call::Release(j, o, f) => {
                let ok = self.holds(j, o, *f);
                if ok {
                    self.raced.remove(j);
                    let row = self.rows.get_mut(j).expect("held");
                    row.0 = None;
                    row.1 = 0.0;
                }
                format!("Ok({ok})")
            }
            Call::ClaimMany(j, os, now, ttl) => {
                if let Some(err) = Self::checked(*now, *ttl) {
                    return err;
                }
                let Some(f) = self.claimable(j, *now) else {
                    return in_any_order(vec![None; os.len()]);
                };
                let answered: Vec<usize> = won
                    .answered
                    .iter()
                    .copied()
                    .filter(|&i| i < os.len())
                    .collect();
                let Some(&first) = answered.first() else {
                    // Nobody won: what the contract asks, in words.
                    return format!("Ok(exactly one Some({f}), None for every other owner)");
                };
                // The owner stored is one of the owners; else the first answered.
                let w = won.stored.unwrap_or(first);
                let row = self.rows.get_mut(j).expect("claimable");
                *row = (Some(os[w].clone()), now + ttl, f, row.3.clone(), false);
                if os.iter().any(|o| *o != os[0]) {
                    self.raced.insert(j.clone());
                } else {
                    self.raced.remove(j);
                }
                let answers: Vec<Option<i64>> = (0..os.len())
                    .map(|i| answered.contains(&i).then_some(f))
                    .collect();
                in_any_order(answers)
            }
        }
    }

    fn seen(&self, j: &str) -> Option<Job> {
        self.rows
            .get(j)
            .map(|(o, u, f, r, d)| Job::of(j, o.clone(), *u, *f, r.clone(), *d))
    }

    fn table(&self) -> Vec<Job> {
        self.rows.keys().filter_map(|j| self.seen(j)).collect()
    }
}

/// Makes `call` of the implementation: its answer as compared (with the
/// model's expectation where the contract leaves a choice), and for
/// `claim_many` the winners it chose.
fn call_implementation(db: &Db, call: &Call) -> (Text, Won) {
    let p = &db.path;
    let said = |r: Result<String, lease::LeaseError>| match r {
        Ok(text) => text,
        Err(lease::LeaseError::InvalidTtl(_)) => INVALID_TTL.to_string(),
        Err(lease::LeaseError::InvalidNow(_)) => INVALID_NOW.to_string(),
        Err(lease::LeaseError::Db(_)) => DB_ERROR.to_string(),
    };
    let text = match call {
        Call::InitDb => said(lease::init_db(p).map(|()| "Ok(())".into())),
        Call::Enqueue(j) => said(lease::enqueue(p, j).map(|b| format!("Ok({b})"))),
        Call::State(j) => said(lease::state(p, j).map(|s| {
            let seen = s.map(|s| Job::of(&s.id, s.owner, s.until, s.fence, s.result, s.done));
            format!("Ok({seen:?})")
        })),
        Call::Claim(j, o, n, t) => {
            said(lease::claim(p, j, o, *n, *t).map(|f| format!("Ok({f:?})")))
        }
        Call::Renew(j, o, f, n, t) => {
            said(lease::renew(p, j, o, *f, *n, *t).map(|b| format!("Ok({b})")))
        }
        Call::Complete(j, o, f, n, r) => {
            said(lease::complete(p, j, o, *f, *n, r).map(|b| format!("Ok({b})")))
        }
        Call::Release(j, o, f) => said(lease::release(p, j, o, *f).map(|b| format!("Ok({b})"))),
        Call::ClaimMany(j, os, n, t) => {
            let owners: Vec<&str> = os.iter().map(String::as_str).collect();
            let answers = lease::claim_many(p, j, &owners, *n, *t);
            let answered = answers.as_ref().map_or(Vec::new(), |a| {
                (0..a.len()).filter(|&i| a[i].is_some()).collect()
            });
            let owner: Option<String> = connect(p)
                .query_row("SELECT owner FROM jobs WHERE id = ?1", [j], |r| r.get(0))
                .ok()
                .flatten();
            // Any owner may be stored: which one the answers name is the
            // race tests' to judge, whose words do not depend on the race.
            let stored = os.iter().position(|o| owner.as_deref() == Some(o.as_str()));
            let won = Won { answered, stored };
            return (said(answers.map(in_any_order)), won);
        }
    };
    (text, Won::default())
}

/// `claim_many`'s answers as compared and shown: which owner got which is
/// the race's choice, so they are sorted, and said to be in any order.
fn in_any_order(mut answers: Vec<Option<i64>>) -> Text {
    let mixed = answers.iter().any(|a| *a != answers[0]);
    answers.sort_by(|a, b| b.cmp(a));
    let order = if mixed { " in any order" } else { "" };
    format!("Ok({answers:?}){order}")
}

/// The rows the model expects and those `db` holds, as compared and shown:
/// an owner that won a race of several owners shows as `WINNER` where both
/// agree on it, so that no text depends on which one won.
fn rows(model: &Model, db: &Fresh) -> (Vec<Job>, Vec<Job>) {
    let (mut expected, mut actual) = (model.table(), stored(db));
    for j in &model.raced {
        let (Some(e), Some(a)) = (
            expected.iter_mut().find(|r| r.id == *j),
            actual.iter_mut().find(|r| r.id == *j),
        ) else {
            continue;
        };
        if e.owner == a.owner && !matches!(e.owner, Kept::Free) {
            e.owner = Kept::Fixed(Some(WINNER.to_string()));
            a.owner = Kept::Fixed(Some(WINNER.to_string()));
        }
    }
    (expected, actual)
}

/// Who won a `claim_many` as the implementation decided: the owners it
/// answered `Some`, and which owner it stored.
#[derive(Default)]
struct Won {
    answered: Vec<usize>,
    stored: Option<usize>,
}

/// A fresh database and the test's own connection to it, opened once: a
/// connection a read costs as much as the call it follows.
struct Fresh {
    // Declared first, so closed before the database's files go.
    reader: std::cell::OnceCell<rusqlite::Connection>,
    db: Db,
}

impl Fresh {
    fn new() -> Fresh {
        Fresh {
            reader: std::cell::OnceCell::new(),
            db: Db::empty(),
        }
    }
}

/// The rows the implementation stored, read through a connection of the
/// test's own, by column name.
fn stored(db: &Fresh) -> Vec<Job> {
    let conn = db.reader.get_or_init(|| connect(&db.db.path));
    let Ok(mut stmt) =
        conn.prepare_cached("SELECT id, owner, until, fence, result, done FROM jobs ORDER BY id")
    else {
        return Vec::new();
    };
    stmt.query_map([], |r| {
        let done: i64 = r.get(5)?;
        Ok(Job::of(
            &r.get::<_, String>(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            done != 0,
        ))
    })
    .map(|rows| rows.filter_map(Result::ok).collect())
    .unwrap_or_default()
}

/// Where a sequence first differs: the call (its index), and what differed.
struct Difference {
    at: usize,
    what: Differed,
}

impl Difference {
    /// A call of another step's function panicked, or its process ended.
    fn elsewhere(at: usize) -> Difference {
        Difference {
            at,
            what: Differed::Elsewhere,
        }
    }
}

enum Differed {
    Answer {
        expected: Text,
        actual: Text,
    },
    Rows {
        expected: Vec<Job>,
        actual: Vec<Job>,
    },
    /// Another step's function panicked, or its process ended.
    Elsewhere,
}

/// Makes `calls` of a fresh database and of the model; the first difference.
fn replay(calls: &[Call]) -> Option<Difference> {
    let db = Fresh::new();
    let mut model = Model::default();
    for (at, call) in calls.iter().enumerate() {
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            call_implementation(&db.db, call)
        }));
        let Ok((actual, won)) = made else {
            return Some(Difference::elsewhere(at));
        };
        let expected = model.call(call, &won);
        if !agrees(&expected, &actual) {
            return Some(Difference {
                at,
                what: Differed::Answer { expected, actual },
            });
        }
        // Before init_db there is no table: nothing to compare.
        if calls[..=at].contains(&Call::InitDb) {
            let (expected, actual) = rows(&model, &db);
            if expected != actual {
                return Some(Difference {
                    at,
                    what: Differed::Rows { expected, actual },
                });
            }
        }
    }
    None
}

/// Whether the implementation's answer is the model's, up to the contract's
/// freedoms (either error when ttl and now are both wrong).
fn agrees(expected: &str, actual: &str) -> bool {
    expected == actual || expected == BOTH_WRONG && (actual == INVALID_TTL || actual == INVALID_NOW)
}

/// An answer shown as it was said (no quotes).
#[derive(PartialEq)]
struct Answered(String);

impl std::fmt::Debug for Answered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether a panic says that a step is not started (`todo!()`, Python's
/// `NotImplementedError`).
fn not_started(panic: &(dyn std::any::Any + Send)) -> bool {
    let text = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    text.contains("not yet implemented")
}

/// A deterministic generator (splitmix64).
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The next call of a sequence, drawn against the model's rows so that it
/// often meets them: their holder, their fence (or one off), their `until`
/// (or one ulp either side). `focus` is drawn more often.
fn draw_call(d: &mut Draw, model: &Model, focus: u32) -> Call {
    // Half the time, the focus step's call on a lease that holds: its
    // holder, its fence, a moment before it ends (where the contract says
    // yes, and a wrong stored value shows).
    let held: Vec<&String> = (model.rows.iter())
        .filter(|(_, r)| r.0.is_some() && !r.4)
        .map(|(j, _)| j)
        .collect();
    if (5..=7).contains(&focus) && !held.is_empty() && d.chance(60) {
        let j = d.pick(&held).to_string();
        let (owner, until, fence, _, _) = model.rows[&j].clone();
        let o = owner.expect("held");
        // Now and then the fence one off: the lease's own, but stale.
        let fence = fence + [0, 0, 0, -1, 1][d.below(5)];
        let now = if d.chance(50) {
            until.next_down()
        } else {
            until - 0.5
        };
        let ttl = *d.pick(&TTLS[..2]);
        return match focus {
            5 => Call::Renew(j, o, fence, now, ttl),
            6 => Call::Complete(j, o, fence, now, d.pick(&RESULTS).to_string()),
            _ => Call::Release(j, o, fence),
        };
    }
    // Mostly the first two ids: they meet each other's rows.
    let j = if d.chance(80) {
        JOBS[d.below(2)]
    } else {
        *d.pick(&JOBS)
    }
    .to_string();
    let row = model.rows.get(&j);
    let holder = row.and_then(|r| r.0.clone());
    let o = match (&holder, d.below(4)) {
        (Some(h), 0..=2) => h.clone(),
        _ => d.pick(&OWNERS).to_string(),
    };
    let fence = row.map_or(0, |r| r.2) + [0, 0, 0, 0, -1, 1][d.below(6)];
    let until = model.until(&j);
    let now = match d.below(10) {
        0 | 1 => until,
        2 | 3 => until.next_down(),
        4 => until.next_up(),
        5 if holder.is_some() => until - 0.5,
        6 if d.chance(20) => *d.pick(&BAD_TIMES),
        _ => *d.pick(&TIMES),
    };
    let mut ttl = if d.chance(12) {
        *d.pick(&BAD_TTLS)
    } else {
        *d.pick(&TTLS)
    };
    // A ttl that `now + ttl` absorbs makes a lease that is over as it
    // starts: the contract does not say how `claim_many` answers then (the
    // reference lets every owner win in turn), so none is drawn.
    if now.is_finite() && ttl.is_finite() && ttl > 0.0 && now + ttl == now {
        ttl = now.abs();
    }
    // The focus step's function, or one that makes the rows it meets:
    // enqueue, state and claim (a function of another step that hangs then
    // costs no step but its own and claim's).
    let makers: &[u32] = match focus {
        0..=2 => &[2],
        3 => &[2],
        _ => &[2, 3, 4],
    };
    let step = if d.chance(45) { focus } else { *d.pick(makers) };
    match step {
        1 => Call::InitDb,
        2 => Call::Enqueue(j),
        3 => Call::State(j),
        4 => Call::Claim(j, o, now, ttl),
        5 => Call::Renew(j, o, fence, now, ttl),
        6 => Call::Complete(j, o, fence, now, d.pick(&RESULTS).to_string()),
        7 => Call::Release(j, o, fence),
        8 => {
            let n = 1 + d.below(3);
            let owners = (0..n).map(|_| d.pick(&OWNERS).to_string()).collect();
            Call::ClaimMany(j, owners, now, ttl)
        }
        _ => Call::InitDb,
    }
}

/// A sequence drawn for `focus`: init_db first, then calls drawn against
/// the model as the implementation answers (their winners followed).
fn sequence(d: &mut Draw, focus: u32) -> (Vec<Call>, Option<Difference>) {
    let db = Fresh::new();
    let mut model = Model::default();
    let mut calls = Vec::new();
    // Most sequences start from a job that is there, and one that is held
    // where the step needs a lease: the calls then meet rows.
    let mut prelude = vec![Call::InitDb];
    if d.chance(80) {
        prelude.push(Call::Enqueue(JOBS[d.below(2)].to_string()));
    }
    if focus >= 4 && d.chance(70) {
        let j = prelude.last().and_then(|c| match c {
            Call::Enqueue(j) => Some(j.clone()),
            _ => None,
        });
        if let Some(j) = j {
            let now = *d.pick(&TIMES[..5]);
            prelude.push(Call::Claim(
                j,
                d.pick(&OWNERS).to_string(),
                now,
                *d.pick(&TTLS[..2]),
            ));
        }
    }
    for i in 0..=CALLS {
        let call = match prelude.get(i) {
            Some(call) => call.clone(),
            None => draw_call(d, &model, focus),
        };
        // A panic in another step's function (its answer unreadable, its
        // process gone) is that step's to tell: this test goes no further.
        // An earlier step not started fails it, as it fails the step's other
        // tests; a later one ends the sequence there (steps come in order).
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            call_implementation(&db.db, &call)
        }));
        let (actual, won) = match made {
            Ok(made) => made,
            Err(panic) if call.step() == focus => std::panic::resume_unwind(panic),
            Err(panic) if not_started(&*panic) && call.step() < focus => {
                std::panic::resume_unwind(panic)
            }
            Err(panic) if not_started(&*panic) => return (calls, None),
            Err(_) => return (calls, Some(Difference::elsewhere(0))),
        };
        let expected = model.call(&call, &won);
        calls.push(call);
        let differs = if !agrees(&expected, &actual) {
            Some(Differed::Answer { expected, actual })
        } else {
            let (expected, actual) = rows(&model, &db);
            (expected != actual).then_some(Differed::Rows { expected, actual })
        };
        if let Some(what) = differs {
            let at = calls.len() - 1;
            return (calls, Some(Difference { at, what }));
        }
    }
    (calls, None)
}

/// `calls` (whose last call differs at `step`) shrunk: each call whose
/// removal keeps the first difference at a last call of `step` goes. The
/// difference told is the one last seen, so a replay never contradicts it.
fn shrink(mut calls: Vec<Call>, step: u32, first: Difference) -> (Vec<Call>, Difference) {
    let mut last = first;
    let mut tries = 0;
    let mut progress = true;
    while progress && tries < SHRINK_TRIES {
        progress = false;
        let mut i = 1;
        while i + 1 < calls.len() && tries < SHRINK_TRIES {
            let mut fewer = calls.clone();
            fewer.remove(i);
            tries += 1;
            match replay(&fewer) {
                Some(Difference {
                    what: Differed::Elsewhere,
                    ..
                }) => i += 1,
                Some(d) if fewer[d.at].step() == step => {
                    fewer.truncate(d.at + 1);
                    calls = fewer;
                    last = d;
                    progress = true;
                }
                _ => i += 1,
            }
        }
    }
    (calls, last)
}

/// The story of `calls` up to the last: each call with the implementation's
/// answer, on a fresh database.
fn story(calls: &[Call]) -> String {
    let db = Fresh::new();
    let mut out = String::new();
    for call in &calls[..calls.len() - 1] {
        let (said, _) = call_implementation(&db.db, call);
        if !out.is_empty() {
            out.push_str("; ");
        }
        let _ = write!(out, "{} -> {said}", call.shown());
    }
    out
}

/// Step `step`'s random test: every sequence drawn for it agrees with the
/// contract at every call of `step`'s function, or the test fails with the
/// shortest story that does not.
#[track_caller]
pub fn random_calls_agree(step: u32) {
    let mut d = Draw(SEED ^ u64::from(step).wrapping_mul(0x1000_0000_01b3));
    let sequences = std::env::var(SEQUENCES_ENV)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(SEQUENCES);
    for _ in 0..sequences {
        let (calls, difference) = sequence(&mut d, step);
        let Some(difference) = difference else {
            continue;
        };
        if matches!(difference.what, Differed::Elsewhere) {
            return;
        }
        if calls[difference.at].step() != step {
            // Another step's test tells this one.
            continue;
        }
        let (calls, difference) = shrink(calls, step, difference);
        let call = calls[difference.at].shown();
        let story = story(&calls[..=difference.at]);
        let story = if story.is_empty() {
            "init_db(db)".to_string()
        } else {
            story
        };
        match difference.what {
            Differed::Answer { expected, actual } => observe(
                &format!("{call}, after {story}"),
                Answered(actual),
                Answered(expected),
            ),
            Differed::Rows { expected, actual } => observe(
                &format!("stored rows after {call}, after {story}"),
                actual,
                expected,
            ),
            // It panicked as the story was told again: so it fails.
            Differed::Elsewhere => {
                let db = Fresh::new();
                for call in &calls {
                    call_implementation(&db.db, call);
                }
            }
        }
    }
}
