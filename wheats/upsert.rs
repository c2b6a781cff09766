//! Wheat `upsert`: a correct implementation of the lease-and-fence contract,
//! written around SQLite's upsert: `claim` is an `INSERT ... SELECT ... ON
//! CONFLICT DO UPDATE ... WHERE ... RETURNING fence` that can only ever update
//! the existing row (the `SELECT` yields a row only when the job exists), so the
//! test and the write are one statement. Being a write statement, a claim waits
//! for other connections' readers even when it changes nothing.
//!
//! How it differs from `src/lease.rs`:
//! - every call but `init_db` opens the database without `SQLITE_OPEN_CREATE`:
//!   on a path where no database exists it creates nothing and fails with
//!   `SQLITE_CANTOPEN`;
//! - the table is spelled in mixed case with bracket quoting (`[id] Text Primary
//!   Key`), its columns in another order (`id, owner, fence, until, done, result`);
//! - `complete` clears the owner (the job no longer has a holder) and keeps `until`;
//! - `renew` is an `UPDATE ... RETURNING until`; `enqueue` is `ON CONFLICT DO
//!   NOTHING` read through `changes()`;
//! - `claim_many` runs named threads that put their answers into slots;
//! - a 40 s busy timeout, and its own error messages.
//!
//! Freedoms exercised (see `wheats/freedoms.toml`): db-error-detail,
//! reader-wait, column-order, ddl-text, complete-row, busy-timeout, error-text.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

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
        let (what, value) = match self {
            LeaseError::InvalidTtl(ttl) => ("ttl", ttl),
            LeaseError::InvalidNow(now) => ("now", now),
            LeaseError::Db(error) => return write!(f, "db: {error}"),
        };
        write!(f, "{what}={value} is out of range")
    }
}

impl std::error::Error for LeaseError {}

impl From<rusqlite::Error> for LeaseError {
    fn from(error: rusqlite::Error) -> Self {
        LeaseError::Db(error)
    }
}

const WAIT: Duration = Duration::from_millis(40_000);

/// An existing database only: no file is created behind the caller's back.
fn existing(path: &Path) -> Result<Connection, LeaseError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(WAIT)?;
    Ok(conn)
}

fn arguments(now: f64, ttl: Option<f64>) -> Result<(), LeaseError> {
    match (ttl, now.is_finite()) {
        (Some(ttl), _) if !(ttl.is_finite() && ttl > 0.0) => Err(LeaseError::InvalidTtl(ttl)),
        (_, false) => Err(LeaseError::InvalidNow(now)),
        _ => Ok(()),
    }
}

pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    let conn = Connection::open(path.as_ref())?;
    conn.busy_timeout(WAIT)?;
    conn.execute_batch(
        "Create Table If Not Exists [jobs] (
            [id] Text Primary Key,
            [owner] Text,
            [fence] Integer Not Null Default 0,
            [until] Real Not Null Default 0,
            [done] Integer Not Null Default 0,
            [result] Text
        )",
    )?;
    Ok(())
}

pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let conn = existing(path.as_ref())?;
    conn.execute(
        "INSERT INTO jobs (id) VALUES (?1) ON CONFLICT (id) DO NOTHING",
        [job_id],
    )?;
    Ok(conn.changes() == 1)
}

pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let conn = existing(path.as_ref())?;
    let mut query =
        conn.prepare("SELECT id, owner, until, fence, result, done FROM jobs WHERE id = ?1")?;
    let rows = query.query_map([job_id], |row| {
        Ok(Job {
            id: row.get("id")?,
            owner: row.get("owner")?,
            until: row.get("until")?,
            fence: row.get("fence")?,
            result: row.get("result")?,
            done: row.get::<_, i64>("done")? != 0,
        })
    })?;
    let mut found = None;
    for job in rows {
        found = Some(job?);
    }
    Ok(found)
}

pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    arguments(now, Some(ttl))?;
    let conn = existing(path.as_ref())?;
    // The SELECT finds the job's own id, so the INSERT always conflicts and only
    // the DO UPDATE can happen, and only where the job is free.
    let fence = conn
        .query_row(
            "INSERT INTO jobs (id) SELECT id FROM jobs WHERE id = ?1
             ON CONFLICT (id) DO UPDATE
                 SET owner = ?2, until = ?3 + ?4, fence = fence + 1
                 WHERE done = 0 AND until <= ?3
             RETURNING fence",
            params![job_id, owner, now, ttl],
            |row| row.get::<_, i64>(0),
        )
        .optional()?;
    Ok(fence)
}

pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    ttl: f64,
) -> Result<bool, LeaseError> {
    arguments(now, Some(ttl))?;
    let conn = existing(path.as_ref())?;
    let until = conn
        .query_row(
            "UPDATE jobs SET until = ?4 + ?5
             WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND NOT done AND until > ?4
             RETURNING until",
            params![job_id, owner, fence, now, ttl],
            |row| row.get::<_, f64>(0),
        )
        .optional()?;
    Ok(until.is_some())
}

pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    arguments(now, None)?;
    let conn = existing(path.as_ref())?;
    // The finished job keeps its fence and until, but nobody holds it any more.
    let changed = conn.execute(
        "UPDATE jobs SET result = ?5, done = 1, owner = NULL
         WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND NOT done AND until > ?4",
        params![job_id, owner, fence, now, result],
    )?;
    Ok(changed > 0)
}

pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let conn = existing(path.as_ref())?;
    let changed = conn.execute(
        "UPDATE jobs SET until = 0.0, owner = NULL
         WHERE fence = ?3 AND owner = ?2 AND id = ?1 AND NOT done",
        params![job_id, owner, fence],
    )?;
    Ok(changed > 0)
}

type Slot = Option<Result<Option<i64>, LeaseError>>;

pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    let path = Arc::new(path.as_ref().to_path_buf());
    let job_id: Arc<str> = Arc::from(job_id);
    let slots: Arc<Mutex<Vec<Slot>>> = Arc::new(Mutex::new(owners.iter().map(|_| None).collect()));
    let mut threads = Vec::with_capacity(owners.len());
    for (index, owner) in owners.iter().enumerate() {
        let (path, job_id, slots) = (Arc::clone(&path), Arc::clone(&job_id), Arc::clone(&slots));
        let owner = owner.to_string();
        let thread = std::thread::Builder::new()
            .name(format!("claim-{index}"))
            .spawn(move || {
                let answer = claim(path.as_path(), &job_id, &owner, now, ttl);
                let mut slots = slots.lock().unwrap_or_else(|e| e.into_inner());
                slots[index] = Some(answer);
            })
            .expect("start a claiming thread");
        threads.push(thread);
    }
    for thread in threads {
        if let Err(panic) = thread.join() {
            std::panic::resume_unwind(panic);
        }
    }
    let mut slots = slots.lock().unwrap_or_else(|e| e.into_inner());
    slots
        .drain(..)
        .map(|slot| slot.expect("every claiming thread filled its slot"))
        .collect()
}
