//! Model-based property test: random sequences of operations run against
//! `fencelab::lease` (a real SQLite file in a temporary directory) and against
//! an in-memory model written from the contract's clauses; every answer
//! (errors compared by variant) and the whole table after every step agree.
//!
//! Why: the contract is a handful of conditions (owner, fence, done, `until`
//! against `now`) whose interplay is where implementations slip: the boundary
//! `now == until`, stale and wrong fences, a re-claim by the same owner,
//! release keeping the fence, argument checks that must come before any
//! effect. Generated sequences reach combinations a hand-written suite misses,
//! and proptest shrinks a failure to a short sequence.
//!
//! Arguments are chosen to hit those cases often: times and ttls come from
//! small sets, and an operation can name the job's current holder, its
//! current fence (or the one before or after it), or its `until` exactly (or
//! just before or after it), resolved against the model when the step runs.
//! Invalid ttls (0, -0, negative, NaN, ±inf) and invalid times (NaN, ±inf) are
//! mixed in. `claim_many` races its claims: the model only knows that exactly
//! one wins a free job, so the test checks the count and the fence, then
//! records the owner at the winner's index as the holder. It is given one to
//! three owners: with none, the contract does not say whether the ttl and
//! time are still checked.

use std::collections::HashMap;

use fencelab::lease::{self, Job, LeaseError};
use proptest::prelude::*;
use rusqlite::Connection;

const JOBS: [&str; 3] = ["a", "b", "c"];
const OWNERS: [&str; 3] = ["x", "y", "z"];
const RESULTS: [&str; 3] = ["ok", "", "naïve 'quoted' result"];
const TIMES: [f64; 9] = [-1.0, 0.0, 1.0, 2.0, 3.0, 4.5, 5.0, 8.0, 13.0];
const BAD_TIMES: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
const TTLS: [f64; 5] = [0.5, 1.0, 2.0, 3.0, 5.0];
const BAD_TTLS: [f64; 6] = [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

/// Who makes a call: the job's current holder (whoever it is when the step
/// runs; the first owner when there is none) or a fixed owner.
#[derive(Clone, Copy, Debug)]
enum Who {
    Holder,
    Named(usize),
}

/// When a call is made: a fixed time, or relative to the job's current
/// `until` (0 for a missing job).
#[derive(Clone, Copy, Debug)]
enum When {
    At(f64),
    AtUntil,
    JustBeforeUntil,
    JustAfterUntil,
}

/// Which fence a call presents, relative to the job's current fence.
#[derive(Clone, Copy, Debug)]
enum Token {
    Current,
    Stale,
    Ahead,
    Literal(i64),
}

#[derive(Clone, Debug)]
enum Op {
    Init,
    Enqueue(usize),
    State(usize),
    Claim {
        job: usize,
        owner: Who,
        now: When,
        ttl: f64,
    },
    ClaimMany {
        job: usize,
        owners: Vec<usize>,
        now: When,
        ttl: f64,
    },
    Renew {
        job: usize,
        owner: Who,
        fence: Token,
        now: When,
        ttl: f64,
    },
    Complete {
        job: usize,
        owner: Who,
        fence: Token,
        now: When,
        result: usize,
    },
    Release {
        job: usize,
        owner: Who,
        fence: Token,
    },
}

/// An answer, comparable across the library and the model (errors by variant).
#[derive(Debug, PartialEq)]
enum Out {
    Unit,
    Bool(bool),
    Fence(Option<i64>),
    Row(Option<Job>),
    InvalidTtl,
    InvalidNow,
    Db(String),
}

fn out<T>(result: Result<T, LeaseError>, ok: impl FnOnce(T) -> Out) -> Out {
    match result {
        Ok(value) => ok(value),
        Err(LeaseError::InvalidTtl(_)) => Out::InvalidTtl,
        Err(LeaseError::InvalidNow(_)) => Out::InvalidNow,
        Err(LeaseError::Db(err)) => Out::Db(err.to_string()),
    }
}

/// The contract, clause by clause, over a map of rows.
#[derive(Default)]
struct Model {
    jobs: HashMap<String, Job>,
}

impl Model {
    /// Clauses 4-5: ttl is checked first, then now.
    fn check_args(now: f64, ttl: f64) -> Result<(), Out> {
        if !(ttl.is_finite() && ttl > 0.0) {
            Err(Out::InvalidTtl)
        } else if !now.is_finite() {
            Err(Out::InvalidNow)
        } else {
            Ok(())
        }
    }

    /// The lease (owner, fence) is the job's current one and the job is not done.
    fn holds(job: &Job, owner: &str, fence: i64) -> bool {
        job.owner.as_deref() == Some(owner) && job.fence == fence && !job.done
    }

    fn enqueue(&mut self, id: &str) -> Out {
        if self.jobs.contains_key(id) {
            return Out::Bool(false);
        }
        let job = Job {
            id: id.to_string(),
            owner: None,
            until: 0.0,
            fence: 0,
            result: None,
            done: false,
        };
        self.jobs.insert(id.to_string(), job);
        Out::Bool(true)
    }

    fn state(&self, id: &str) -> Out {
        Out::Row(self.jobs.get(id).cloned())
    }

    /// The fence a claim at `now` would get, or `None` (missing, done, held).
    fn claimable(&self, id: &str, now: f64, ttl: f64) -> Result<Option<i64>, Out> {
        Self::check_args(now, ttl)?;
        Ok(self
            .jobs
            .get(id)
            .filter(|job| !job.done && job.until <= now)
            .map(|job| job.fence + 1))
    }

    fn take(&mut self, id: &str, owner: &str, until: f64, fence: i64) {
        let job = self.jobs.get_mut(id).expect("a claimable job exists");
        job.owner = Some(owner.to_string());
        job.until = until;
        job.fence = fence;
    }

    fn claim(&mut self, id: &str, owner: &str, now: f64, ttl: f64) -> Out {
        match self.claimable(id, now, ttl) {
            Err(err) => err,
            Ok(None) => Out::Fence(None),
            Ok(Some(fence)) => {
                self.take(id, owner, now + ttl, fence);
                Out::Fence(Some(fence))
            }
        }
    }

    fn renew(&mut self, id: &str, owner: &str, fence: i64, now: f64, ttl: f64) -> Out {
        if let Err(err) = Self::check_args(now, ttl) {
            return err;
        }
        match self.jobs.get_mut(id) {
            Some(job) if Self::holds(job, owner, fence) && job.until > now => {
                job.until = now + ttl;
                Out::Bool(true)
            }
            _ => Out::Bool(false),
        }
    }

    fn complete(&mut self, id: &str, owner: &str, fence: i64, now: f64, result: &str) -> Out {
        if !now.is_finite() {
            return Out::InvalidNow;
        }
        match self.jobs.get_mut(id) {
            Some(job) if Self::holds(job, owner, fence) && job.until > now => {
                job.result = Some(result.to_string());
                job.done = true;
                Out::Bool(true)
            }
            _ => Out::Bool(false),
        }
    }

    fn release(&mut self, id: &str, owner: &str, fence: i64) -> Out {
        match self.jobs.get_mut(id) {
            Some(job) if Self::holds(job, owner, fence) => {
                job.owner = None;
                job.until = 0.0;
                Out::Bool(true)
            }
            _ => Out::Bool(false),
        }
    }

    fn rows(&self) -> Vec<Job> {
        let mut rows: Vec<Job> = self.jobs.values().cloned().collect();
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        rows
    }

    fn who(&self, id: &str, who: Who) -> String {
        match who {
            Who::Holder => self
                .jobs
                .get(id)
                .and_then(|job| job.owner.clone())
                .unwrap_or_else(|| OWNERS[0].to_string()),
            Who::Named(i) => OWNERS[i].to_string(),
        }
    }

    fn when(&self, id: &str, when: When) -> f64 {
        let until = self.jobs.get(id).map_or(0.0, |job| job.until);
        match when {
            When::At(t) => t,
            When::AtUntil => until,
            When::JustBeforeUntil => until - 0.5,
            When::JustAfterUntil => until + 0.5,
        }
    }

    fn token(&self, id: &str, token: Token) -> i64 {
        let fence = self.jobs.get(id).map_or(0, |job| job.fence);
        match token {
            Token::Current => fence,
            Token::Stale => fence - 1,
            Token::Ahead => fence + 1,
            Token::Literal(n) => n,
        }
    }
}

/// Runs `ops` against SQLite and the model, comparing every answer and the
/// whole table after every step.
fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let dir = crate::scratch_dir();
    let db = dir.path().join("jobs.db");
    lease::init_db(&db)?;
    let conn = Connection::open(&db)?;
    let mut model = Model::default();
    // Two jobs exist from the start, so that sequences reach held and done
    // states; the third stays missing until an enqueue.
    let setup = [Op::Enqueue(0), Op::Enqueue(1)];
    for (step, op) in setup.iter().chain(ops).enumerate() {
        let (call, actual, expected) = match *op {
            Op::Init => (
                "init_db()".to_string(),
                out(lease::init_db(&db), |()| Out::Unit),
                Out::Unit,
            ),
            Op::Enqueue(j) => (
                format!("enqueue({:?})", JOBS[j]),
                out(lease::enqueue(&db, JOBS[j]), Out::Bool),
                model.enqueue(JOBS[j]),
            ),
            Op::State(j) => (
                format!("state({:?})", JOBS[j]),
                out(lease::state(&db, JOBS[j]), Out::Row),
                model.state(JOBS[j]),
            ),
            Op::Claim {
                job,
                owner,
                now,
                ttl,
            } => {
                let id = JOBS[job];
                let (owner, now) = (model.who(id, owner), model.when(id, now));
                (
                    format!("claim({id:?}, {owner:?}, now {now}, ttl {ttl})"),
                    out(lease::claim(&db, id, &owner, now, ttl), Out::Fence),
                    model.claim(id, &owner, now, ttl),
                )
            }
            Op::ClaimMany {
                job,
                ref owners,
                now,
                ttl,
            } => {
                let id = JOBS[job];
                let now = model.when(id, now);
                let names: Vec<&str> = owners.iter().map(|&i| OWNERS[i]).collect();
                let call = format!("claim_many({id:?}, {names:?}, now {now}, ttl {ttl})");
                let actual = lease::claim_many(&db, id, &names, now, ttl);
                match (model.claimable(id, now, ttl), actual) {
                    (Err(expected), actual) => (
                        call,
                        out(actual, |v| Out::Db(format!("Ok({v:?})"))),
                        expected,
                    ),
                    (Ok(expected), Err(err)) => {
                        let got = out(Err::<(), _>(err), |()| Out::Unit);
                        return Err(TestCaseError::fail(format!(
                            "step {step}: {call}: got {got:?}, expected Ok (winner fence {expected:?})"
                        )));
                    }
                    (Ok(None), Ok(claims)) => {
                        prop_assert_eq!(
                            &claims,
                            &vec![None; names.len()],
                            "step {}: {}: the job is not free",
                            step,
                            call
                        );
                        (call, Out::Unit, Out::Unit)
                    }
                    (Ok(Some(fence)), Ok(claims)) => {
                        let winners: Vec<usize> = claims
                            .iter()
                            .enumerate()
                            .filter_map(|(i, claim)| claim.map(|_| i))
                            .collect();
                        prop_assert!(
                            claims.len() == names.len() && winners.len() == 1,
                            "step {}: {}: {:?}: exactly one claim must win a free job",
                            step,
                            call,
                            claims
                        );
                        let winner = winners[0];
                        prop_assert_eq!(
                            claims[winner],
                            Some(fence),
                            "step {}: {}: the winner's fence",
                            step,
                            call
                        );
                        model.take(id, names[winner], now + ttl, fence);
                        (call, Out::Unit, Out::Unit)
                    }
                }
            }
            Op::Renew {
                job,
                owner,
                fence,
                now,
                ttl,
            } => {
                let id = JOBS[job];
                let owner = model.who(id, owner);
                let (fence, now) = (model.token(id, fence), model.when(id, now));
                (
                    format!("renew({id:?}, {owner:?}, fence {fence}, now {now}, ttl {ttl})"),
                    out(lease::renew(&db, id, &owner, fence, now, ttl), Out::Bool),
                    model.renew(id, &owner, fence, now, ttl),
                )
            }
            Op::Complete {
                job,
                owner,
                fence,
                now,
                result,
            } => {
                let id = JOBS[job];
                let owner = model.who(id, owner);
                let (fence, now) = (model.token(id, fence), model.when(id, now));
                let result = RESULTS[result];
                (
                    format!("complete({id:?}, {owner:?}, fence {fence}, now {now}, {result:?})"),
                    out(
                        lease::complete(&db, id, &owner, fence, now, result),
                        Out::Bool,
                    ),
                    model.complete(id, &owner, fence, now, result),
                )
            }
            Op::Release { job, owner, fence } => {
                let id = JOBS[job];
                let (owner, fence) = (model.who(id, owner), model.token(id, fence));
                (
                    format!("release({id:?}, {owner:?}, fence {fence})"),
                    out(lease::release(&db, id, &owner, fence), Out::Bool),
                    model.release(id, &owner, fence),
                )
            }
        };
        prop_assert_eq!(actual, expected, "step {}: {}", step, call);
        prop_assert_eq!(
            crate::read_rows(&conn)?,
            model.rows(),
            "table after step {}: {}",
            step,
            call
        );
    }
    Ok(())
}

/// Mostly the two jobs that exist from the start.
fn job() -> impl Strategy<Value = usize> {
    prop_oneof![4 => Just(0), 3 => Just(1), 1 => Just(2)]
}

fn who() -> impl Strategy<Value = Who> {
    prop_oneof![
        4 => Just(Who::Holder),
        1 => (0..OWNERS.len()).prop_map(Who::Named),
    ]
}

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        5 => prop::sample::select(TIMES.to_vec()).prop_map(When::At),
        3 => Just(When::AtUntil),
        4 => Just(When::JustBeforeUntil),
        1 => Just(When::JustAfterUntil),
        1 => prop::sample::select(BAD_TIMES.to_vec()).prop_map(When::At),
    ]
}

fn ttl() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => prop::sample::select(TTLS.to_vec()),
        1 => prop::sample::select(BAD_TTLS.to_vec()),
    ]
}

fn token() -> impl Strategy<Value = Token> {
    prop_oneof![
        5 => Just(Token::Current),
        2 => Just(Token::Stale),
        1 => Just(Token::Ahead),
        1 => (0i64..3).prop_map(Token::Literal),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Init),
        3 => job().prop_map(Op::Enqueue),
        1 => job().prop_map(Op::State),
        5 => (job(), who(), when(), ttl())
            .prop_map(|(job, owner, now, ttl)| Op::Claim { job, owner, now, ttl }),
        2 => (job(), prop::collection::vec(0..OWNERS.len(), 1..=3), when(), ttl())
            .prop_map(|(job, owners, now, ttl)| Op::ClaimMany { job, owners, now, ttl }),
        4 => (job(), who(), token(), when(), ttl())
            .prop_map(|(job, owner, fence, now, ttl)| Op::Renew { job, owner, fence, now, ttl }),
        4 => (job(), who(), token(), when(), 0..RESULTS.len())
            .prop_map(|(job, owner, fence, now, result)| Op::Complete { job, owner, fence, now, result }),
        3 => (job(), who(), token())
            .prop_map(|(job, owner, fence)| Op::Release { job, owner, fence }),
    ]
}

proptest! {
    // No regression files: a failure prints the shrunk sequence to copy into
    // a unit test.
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn sqlite_agrees_with_the_model(ops in prop::collection::vec(op(), 1..40)) {
        run(&ops)?;
    }
}
