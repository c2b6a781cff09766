//! Wheat `exclusive`: a correct implementation of the lease-and-fence contract,
//! written as read, decide in Rust, write only when allowed, every write under
//! `BEGIN EXCLUSIVE`.
//!
//! How it differs from `src/lease.rs`:
//! - every call that may write (`enqueue` included) reads the row inside a
//!   `BEGIN EXCLUSIVE` transaction, decides with Rust comparisons, and writes
//!   only what changes (`UPDATE` of the changed columns); `BEGIN EXCLUSIVE`
//!   takes the write lock from the start, as `BEGIN IMMEDIATE` does, and also
//!   waits until no other connection is reading;
//! - the table declares its key as a table constraint (`id TEXT NOT NULL`,
//!   `PRIMARY KEY (id)`), adds `CHECK (fence >= 0)`, spells the defaults
//!   `0.0` and `FALSE`, and comes with an index on `owner`;
//! - `complete` sets `until = 0` (the lease ends with the job) and keeps the owner;
//! - `enqueue` inserts the set difference `SELECT ?1 EXCEPT SELECT id FROM jobs`;
//! - `claim_many` opens every owner's connection first, on the calling thread,
//!   and hands each one to that owner's thread;
//! - a 60 s busy timeout, and its own error messages.
//!
//! Freedoms exercised (see `wheats/freedoms.toml`): ddl-text, extra-constraints,
//! extra-schema, complete-row, reader-wait, busy-timeout, error-text.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: String,
    pub owner: Option<String>,
    pub until: f64,
    pub fence: i64,
    pub result: Option<String>,
    pub done: bool,
}

#[derive(Debug)]
pub enum LeaseError {
    InvalidTtl(f64),
    InvalidNow(f64),
    Db(rusqlite::Error),
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseError::InvalidTtl(ttl) => write!(f, "cannot lease for {ttl} seconds"),
            LeaseError::InvalidNow(now) => write!(f, "cannot use {now} as the current time"),
            LeaseError::Db(error) => write!(f, "SQLite failed: {error}"),
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<rusqlite::Error> for LeaseError {
    fn from(error: rusqlite::Error) -> Self {
        LeaseError::Db(error)
    }
}

const LOCK_WAIT: Duration = Duration::from_secs(60);

const DDL: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id     TEXT NOT NULL,
    owner  TEXT,
    until  REAL NOT NULL DEFAULT 0.0,
    fence  INTEGER NOT NULL DEFAULT 0 CHECK (fence >= 0),
    result TEXT,
    done   INTEGER NOT NULL DEFAULT FALSE,
    PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS jobs_owner ON jobs (owner);
";

fn open(path: &Path) -> Result<Connection, LeaseError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(LOCK_WAIT)?;
    Ok(conn)
}

fn ttl_is_valid(ttl: f64) -> bool {
    ttl.is_finite() && ttl > 0.0
}

fn guard_ttl_and_now(now: f64, ttl: f64) -> Result<(), LeaseError> {
    if !ttl_is_valid(ttl) {
        Err(LeaseError::InvalidTtl(ttl))
    } else if !now.is_finite() {
        Err(LeaseError::InvalidNow(now))
    } else {
        Ok(())
    }
}

fn guard_now(now: f64) -> Result<(), LeaseError> {
    if now.is_finite() {
        Ok(())
    } else {
        Err(LeaseError::InvalidNow(now))
    }
}

fn to_job(row: &Row<'_>) -> rusqlite::Result<Job> {
    Ok(Job {
        id: row.get("id")?,
        owner: row.get("owner")?,
        until: row.get("until")?,
        fence: row.get("fence")?,
        result: row.get("result")?,
        done: row.get::<_, i64>("done")? != 0,
    })
}

fn read(tx: &Transaction<'_>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let job = tx
        .query_row(
            "SELECT id, owner, until, fence, result, done FROM jobs WHERE id = ?",
            [job_id],
            to_job,
        )
        .optional()?;
    Ok(job)
}

/// Runs `body` in a `BEGIN EXCLUSIVE` transaction and commits what it did.
fn exclusively<T>(
    conn: &mut Connection,
    body: impl FnOnce(&Transaction<'_>) -> Result<T, LeaseError>,
) -> Result<T, LeaseError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
    let value = body(&tx)?;
    tx.commit()?;
    Ok(value)
}

pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    open(path.as_ref())?.execute_batch(DDL)?;
    Ok(())
}

pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let mut conn = open(path.as_ref())?;
    exclusively(&mut conn, |tx| {
        let added = tx.execute(
            "INSERT INTO jobs (id) SELECT ? EXCEPT SELECT id FROM jobs",
            [job_id],
        )?;
        Ok(added == 1)
    })
}

pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let conn = open(path.as_ref())?;
    let mut select =
        conn.prepare("SELECT result, done, fence, until, owner, id FROM jobs WHERE id = ?")?;
    Ok(select.query_row([job_id], to_job).optional()?)
}

fn claim_on(
    conn: &mut Connection,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    guard_ttl_and_now(now, ttl)?;
    exclusively(conn, |tx| {
        let Some(job) = read(tx, job_id)? else {
            return Ok(None);
        };
        if job.done || job.until > now {
            return Ok(None);
        }
        let fence = job.fence + 1;
        tx.execute(
            "UPDATE jobs SET fence = ?, owner = ?, until = ? WHERE id = ?",
            params![fence, owner, now + ttl, job_id],
        )?;
        Ok(Some(fence))
    })
}

pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    guard_ttl_and_now(now, ttl)?;
    claim_on(&mut open(path.as_ref())?, job_id, owner, now, ttl)
}

/// Whether `job` is held by `owner` under `fence` and not finished.
fn held_by(job: &Job, owner: &str, fence: i64) -> bool {
    !job.done && job.fence == fence && job.owner.as_deref() == Some(owner)
}

pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    ttl: f64,
) -> Result<bool, LeaseError> {
    guard_ttl_and_now(now, ttl)?;
    let mut conn = open(path.as_ref())?;
    exclusively(&mut conn, |tx| {
        let live =
            read(tx, job_id)?.is_some_and(|job| held_by(&job, owner, fence) && job.until > now);
        if live {
            tx.execute(
                "UPDATE jobs SET until = ? WHERE id = ?",
                params![now + ttl, job_id],
            )?;
        }
        Ok(live)
    })
}

pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    guard_now(now)?;
    let mut conn = open(path.as_ref())?;
    exclusively(&mut conn, |tx| {
        let live =
            read(tx, job_id)?.is_some_and(|job| held_by(&job, owner, fence) && job.until > now);
        if live {
            // The lease ends with the job: until goes back to 0, the owner stays on record.
            tx.execute(
                "UPDATE jobs SET result = ?, done = TRUE, until = 0.0 WHERE id = ?",
                params![result, job_id],
            )?;
        }
        Ok(live)
    })
}

pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let mut conn = open(path.as_ref())?;
    exclusively(&mut conn, |tx| {
        let held = read(tx, job_id)?.is_some_and(|job| held_by(&job, owner, fence));
        if held {
            tx.execute(
                "UPDATE jobs SET owner = NULL, until = 0.0 WHERE id = ?",
                [job_id],
            )?;
        }
        Ok(held)
    })
}

pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    if owners.is_empty() {
        return Ok(Vec::new());
    }
    guard_ttl_and_now(now, ttl)?;
    // A connection per owner, opened here and moved to the owner's thread.
    let connections = owners
        .iter()
        .map(|_| open(path.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    std::thread::scope(|scope| {
        let workers: Vec<_> = connections
            .into_iter()
            .zip(owners)
            .map(|(mut conn, &owner)| {
                scope.spawn(move || claim_on(&mut conn, job_id, owner, now, ttl))
            })
            .collect();
        let mut answers = Vec::new();
        for worker in workers {
            answers.push(
                worker
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))?,
            );
        }
        Ok(answers)
    })
}
