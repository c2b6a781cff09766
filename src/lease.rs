//! The lab's subject: the reference implementation of the lease-and-fence contract.
//!
//! A `jobs` table in SQLite holds, per job, who owns it (`owner`), until when the
//! lease lasts (`until`) and which generation of claim is current (`fence`, which
//! grows on every claim). A worker that stalls past its lease and then wakes up
//! still holds an old fence, so its renew, complete and release are refused: the
//! stored result can only be written by the current generation.
//!
//! This file is the one a learner's implementation replaces. It uses only `std`
//! and `rusqlite` and refers to nothing else in the crate, so that any file with
//! the same public API can stand in for it. Time is a number the caller passes;
//! no clock is read here.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// How long a call waits for another connection's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// One row of the `jobs` table, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The job's id (the primary key).
    pub id: String,
    /// The worker holding (or last holding) the lease; `None` when free.
    pub owner: Option<String>,
    /// The lease is live while `until > now`; `0.0` when never claimed or released.
    pub until: f64,
    /// The fencing token: how many times the job has been claimed.
    pub fence: i64,
    /// The result stored by the completing worker.
    pub result: Option<String>,
    /// Whether the job was completed.
    pub done: bool,
}

/// Why a call could not be carried out at all (as opposed to being refused,
/// which is an `Ok(false)` or `Ok(None)`).
#[derive(Debug)]
pub enum LeaseError {
    /// The ttl was not finite or not greater than zero.
    InvalidTtl(f64),
    /// The time `now` was not finite.
    InvalidNow(f64),
    /// SQLite reported an error.
    Db(rusqlite::Error),
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseError::InvalidTtl(ttl) => {
                write!(
                    f,
                    "invalid ttl {ttl}: a lease needs a finite ttl greater than 0"
                )
            }
            LeaseError::InvalidNow(now) => write!(f, "invalid time {now}: now must be finite"),
            LeaseError::Db(err) => write!(f, "database error: {err}"),
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<rusqlite::Error> for LeaseError {
    fn from(err: rusqlite::Error) -> Self {
        LeaseError::Db(err)
    }
}

/// Opens a fresh connection that waits on a busy database instead of failing.
fn open(path: &Path) -> Result<Connection, LeaseError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

fn check_now(now: f64) -> Result<(), LeaseError> {
    if now.is_finite() {
        Ok(())
    } else {
        Err(LeaseError::InvalidNow(now))
    }
}

fn check_ttl(ttl: f64) -> Result<(), LeaseError> {
    if ttl.is_finite() && ttl > 0.0 {
        Ok(())
    } else {
        Err(LeaseError::InvalidTtl(ttl))
    }
}

/// Step 1. Creates the `jobs` table if it is missing. Running it again on a live
/// database changes no row: resetting fences would make old tokens valid again.
pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    let conn = open(path.as_ref())?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS jobs (
            id TEXT PRIMARY KEY,
            owner TEXT,
            until REAL NOT NULL DEFAULT 0,
            fence INTEGER NOT NULL DEFAULT 0,
            result TEXT,
            done INTEGER NOT NULL DEFAULT 0
        )",
    )?;
    Ok(())
}

/// Step 2. Inserts a job that is not there yet and returns `true`; an existing
/// job is left exactly as it is (a lease in progress is not reset) and `false`
/// is returned.
pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let conn = open(path.as_ref())?;
    let inserted = conn.execute("INSERT OR IGNORE INTO jobs (id) VALUES (?1)", [job_id])?;
    Ok(inserted == 1)
}

/// Step 3. Reads the stored row through a connection of its own; `None` when
/// there is no such job.
pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let conn = open(path.as_ref())?;
    let job = conn
        .query_row(
            "SELECT id, owner, until, fence, result, done FROM jobs WHERE id = ?1",
            [job_id],
            |row| {
                Ok(Job {
                    id: row.get(0)?,
                    owner: row.get(1)?,
                    until: row.get(2)?,
                    fence: row.get(3)?,
                    result: row.get(4)?,
                    done: row.get::<_, i64>(5)? != 0,
                })
            },
        )
        .optional()?;
    Ok(job)
}

/// Step 4. Takes the lease on a job that is free (never claimed, released, or
/// expired: `until <= now`) and not done, for `ttl` from `now`, and returns the
/// new fence. A missing, done or held job gives `None`. The read and the write
/// share one `BEGIN IMMEDIATE` transaction, so two claimers cannot both decide
/// that the job is free.
pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    check_ttl(ttl)?;
    check_now(now)?;
    let mut conn = open(path.as_ref())?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let row: Option<(f64, i64, bool)> = tx
        .query_row(
            "SELECT until, fence, done FROM jobs WHERE id = ?1",
            [job_id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get::<_, i64>(2)? != 0)),
        )
        .optional()?;
    let Some((until, fence, done)) = row else {
        return Ok(None);
    };
    if done || until > now {
        return Ok(None);
    }
    let next = fence + 1;
    tx.execute(
        "UPDATE jobs SET owner = ?2, until = ?3, fence = ?4 WHERE id = ?1",
        params![job_id, owner, now + ttl, next],
    )?;
    tx.commit()?;
    Ok(Some(next))
}

/// Step 5. Extends the lease to `now + ttl`, but only for the current owner and
/// fence of a job that is not done and whose lease is still live. An expired
/// lease is never revived: someone else may already be entitled to claim it.
pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    ttl: f64,
) -> Result<bool, LeaseError> {
    check_ttl(ttl)?;
    check_now(now)?;
    let conn = open(path.as_ref())?;
    let changed = conn.execute(
        "UPDATE jobs SET until = ?5
         WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4",
        params![job_id, owner, fence, now, now + ttl],
    )?;
    Ok(changed == 1)
}

/// Step 6. Stores the result and marks the job done, but only under the current
/// lease (owner and fence match, not done, `until > now`). Anything else is
/// refused and the stored result stays as it was.
pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    check_now(now)?;
    let conn = open(path.as_ref())?;
    let changed = conn.execute(
        "UPDATE jobs SET result = ?5, done = 1
         WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4",
        params![job_id, owner, fence, now, result],
    )?;
    Ok(changed == 1)
}

/// Step 7. Gives the lease back (owner cleared, `until = 0`) when owner and fence
/// match and the job is not done. The fence is kept, so the next claim gets a
/// token that was never handed out before.
pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let conn = open(path.as_ref())?;
    let changed = conn.execute(
        "UPDATE jobs SET owner = NULL, until = 0
         WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0",
        params![job_id, owner, fence],
    )?;
    Ok(changed == 1)
}

/// Step 8. Claims the job for every owner at once, each on its own thread and
/// connection, and returns the results in the order of `owners`. On a free job
/// exactly one of them wins.
pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    let path = path.as_ref();
    std::thread::scope(|scope| {
        let claims: Vec<_> = owners
            .iter()
            .map(|owner| scope.spawn(move || claim(path, job_id, owner, now, ttl)))
            .collect();
        claims
            .into_iter()
            .map(|claim| match claim.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}
