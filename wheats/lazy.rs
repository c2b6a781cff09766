//! Wheat `lazy`: a correct implementation of the lease-and-fence contract,
//! written so that it never needs `init_db` to have run: every connection makes
//! sure the schema is there before it does anything else.
//!
//! How it differs from `src/lease.rs`:
//! - each call first looks for the `jobs` table and, when it is missing,
//!   creates it in a transaction of its own, together with an index on
//!   `(done, until)` and `PRAGMA user_version = 1`; so a call on a database where
//!   `init_db` never ran works as on an empty table (`enqueue` gives `true`,
//!   `state` gives `None`); a missing directory on the way to the database is
//!   created too;
//! - the DDL is all lower case, declared types included (`text`, `real`,
//!   `integer`; `PRAGMA table_info` still shows them upper case, only the stored
//!   `CREATE TABLE` text keeps the spelling);
//! - every connection uses `journal_mode = TRUNCATE`, which leaves an empty
//!   `jobs.db-journal` file beside the database;
//! - transactions are written by hand (`BEGIN IMMEDIATE` ... `COMMIT`, rolled
//!   back by a guard), and `claim` decides in SQL (`SELECT fence ... WHERE` the
//!   job is free) before it writes;
//! - `enqueue` looks the id up and inserts only when it is missing, both in one
//!   `BEGIN IMMEDIATE` transaction;
//! - `now` is checked before `ttl`; the busy timeout (25 s) is set with a pragma;
//! - `claim_many` spawns detached threads, the last owner's first, so an owner
//!   late in the list usually wins (and the first one seldom does);
//! - its own error messages (a database error shows as SQLite's text alone).
//!
//! Freedoms exercised (see `wheats/freedoms.toml`): before-init,
//! missing-directory, extra-schema, journal-mode, ddl-text, check-order, claim-many-winner, busy-timeout,
//! error-text.

use std::fmt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

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
            LeaseError::InvalidTtl(ttl) => {
                write!(f, "bad ttl: {ttl} (a lease lasts a finite, positive time)")
            }
            LeaseError::InvalidNow(now) => write!(f, "bad now: {now} (time must be finite)"),
            LeaseError::Db(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<rusqlite::Error> for LeaseError {
    fn from(error: rusqlite::Error) -> LeaseError {
        LeaseError::Db(error)
    }
}

const SCHEMA: &str = "
begin immediate;
create table if not exists jobs (
    id text primary key,
    owner text,
    until real not null default 0,
    fence integer not null default 0,
    result text,
    done integer not null default 0
);
create index if not exists jobs_by_expiry on jobs (done, until);
pragma user_version = 1;
commit;";

/// Opens a connection and makes sure the schema exists (and, before that, the
/// directory the database goes into).
fn connect(path: &Path) -> Result<Connection, LeaseError> {
    if let Some(directory) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Should this fail, opening the database reports why.
        let _ = std::fs::create_dir_all(directory);
    }
    let conn = Connection::open(path)?;
    conn.execute_batch("pragma busy_timeout = 25000")?;
    // The mode is per connection; a database another connection holds in WAL
    // mode keeps WAL, which is just as good, so the answer is not checked.
    let _ = conn.query_row("pragma journal_mode = truncate", [], |row| {
        row.get::<_, String>(0)
    });
    let tables: i64 = conn.query_row(
        "select count(*) from sqlite_master where type = 'table' and name = 'jobs'",
        [],
        |row| row.get(0),
    )?;
    if tables == 0 {
        // A failure here leaves the transaction open; dropping the connection
        // rolls it back.
        conn.execute_batch(SCHEMA)?;
    }
    Ok(conn)
}

/// An open `BEGIN IMMEDIATE` transaction, rolled back unless committed.
struct Immediate<'c> {
    conn: &'c Connection,
    committed: bool,
}

impl<'c> Immediate<'c> {
    fn begin(conn: &'c Connection) -> Result<Self, LeaseError> {
        conn.execute_batch("begin immediate")?;
        Ok(Immediate {
            conn,
            committed: false,
        })
    }

    fn commit(mut self) -> Result<(), LeaseError> {
        self.conn.execute_batch("commit")?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Immediate<'_> {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.conn.execute_batch("rollback");
        }
    }
}

fn now_ok(now: f64) -> Result<f64, LeaseError> {
    if now.is_finite() {
        Ok(now)
    } else {
        Err(LeaseError::InvalidNow(now))
    }
}

fn ttl_ok(ttl: f64) -> Result<f64, LeaseError> {
    if ttl.is_finite() && ttl > 0.0 {
        Ok(ttl)
    } else {
        Err(LeaseError::InvalidTtl(ttl))
    }
}

pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    connect(path.as_ref()).map(drop)
}

pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let conn = connect(path.as_ref())?;
    let tx = Immediate::begin(&conn)?;
    let present = conn
        .query_row("select 1 from jobs where id = ?1", [job_id], |_| Ok(()))
        .optional()?
        .is_some();
    if present {
        return Ok(false);
    }
    conn.execute("insert into jobs (id) values (?1)", [job_id])?;
    tx.commit()?;
    Ok(true)
}

pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let conn = connect(path.as_ref())?;
    let found = conn
        .query_row(
            "select owner, until, fence, result, done from jobs where id = ?1",
            [job_id],
            |row| {
                Ok((
                    row.get::<_, Option<String>>(0)?,
                    row.get::<_, f64>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, i64>(4)?,
                ))
            },
        )
        .optional()?;
    Ok(found.map(|(owner, until, fence, result, done)| Job {
        id: job_id.to_string(),
        owner,
        until,
        fence,
        result,
        done: done != 0,
    }))
}

pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    let now = now_ok(now)?;
    let ttl = ttl_ok(ttl)?;
    let conn = connect(path.as_ref())?;
    let tx = Immediate::begin(&conn)?;
    let free: Option<i64> = conn
        .query_row(
            "select fence from jobs where id = ?1 and done = 0 and until <= ?2",
            params![job_id, now],
            |row| row.get(0),
        )
        .optional()?;
    let Some(previous) = free else {
        return Ok(None);
    };
    let fence = previous + 1;
    conn.execute(
        "update jobs set owner = ?1, until = ?2, fence = ?3 where id = ?4",
        params![owner, now + ttl, fence, job_id],
    )?;
    tx.commit()?;
    Ok(Some(fence))
}

pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    ttl: f64,
) -> Result<bool, LeaseError> {
    let now = now_ok(now)?;
    let ttl = ttl_ok(ttl)?;
    let conn = connect(path.as_ref())?;
    let changed = conn.execute(
        "update jobs set until = ?1
         where id = ?2 and owner = ?3 and fence = ?4 and done = 0 and until > ?5",
        params![now + ttl, job_id, owner, fence, now],
    )?;
    Ok(changed != 0)
}

pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    let now = now_ok(now)?;
    let conn = connect(path.as_ref())?;
    let changed = conn.execute(
        "update jobs set result = ?1, done = 1
         where id = ?2 and owner = ?3 and fence = ?4 and done = 0 and until > ?5",
        params![result, job_id, owner, fence, now],
    )?;
    Ok(changed != 0)
}

pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let conn = connect(path.as_ref())?;
    let changed = conn.execute(
        "update jobs set owner = null, until = 0
         where id = ?1 and owner = ?2 and fence = ?3 and done = 0",
        params![job_id, owner, fence],
    )?;
    Ok(changed != 0)
}

pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    let path: PathBuf = path.as_ref().to_owned();
    // Detached threads, started from the last owner to the first.
    let mut handles: Vec<_> = owners
        .iter()
        .rev()
        .map(|owner| {
            let (path, job_id, owner) = (path.clone(), job_id.to_owned(), owner.to_string());
            std::thread::spawn(move || claim(&path, &job_id, &owner, now, ttl))
        })
        .collect();
    handles.reverse();
    let mut answers = Vec::with_capacity(handles.len());
    let mut failure = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(answer)) => answers.push(answer),
            Ok(Err(error)) => {
                failure.get_or_insert(error);
            }
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
    match failure {
        Some(error) => Err(error),
        None => Ok(answers),
    }
}
