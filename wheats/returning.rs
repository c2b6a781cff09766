//! Wheat `returning`: a correct implementation of the lease-and-fence contract,
//! written so that every write is a single `UPDATE ... RETURNING` (or
//! `INSERT ... RETURNING`) statement whose returned row says whether it applied.
//!
//! How it differs from `src/lease.rs`:
//! - the database runs in WAL mode (set once by `init_db`, a property of the file),
//!   every connection with `synchronous = NORMAL` and a 30 s busy timeout;
//! - the table is declared with quoted identifiers (`"jobs"`, `"id"`, ...);
//! - `now` is checked before `ttl`, so a call with both wrong gets `InvalidNow`;
//! - `complete` ends the lease at the moment of completion (`until = now`);
//! - `claim_many` holds every thread at a starting line until all have started,
//!   then lets them all go at once, so any owner may win, a different one from
//!   call to call;
//! - its own error messages.
//!
//! Freedoms exercised (see `wheats/freedoms.toml`): journal-mode, ddl-text,
//! check-order, complete-row, claim-many-winner, busy-timeout, error-text.

use std::fmt;
use std::path::Path;
use std::sync::RwLock;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, named_params};

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
            Self::InvalidTtl(ttl) => write!(
                f,
                "lease ttl must be a positive, finite number of seconds (got {ttl})"
            ),
            Self::InvalidNow(now) => {
                write!(f, "the current time must be a finite number (got {now})")
            }
            Self::Db(error) => write!(f, "sqlite: {error}"),
        }
    }
}

impl std::error::Error for LeaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Db(error) => Some(error),
            _ => None,
        }
    }
}

impl From<rusqlite::Error> for LeaseError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Db(error)
    }
}

/// How long a statement waits for another connection's lock.
const PATIENCE: Duration = Duration::from_secs(30);

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS "jobs" (
    "id"     TEXT PRIMARY KEY,
    "owner"  TEXT,
    "until"  REAL NOT NULL DEFAULT 0,
    "fence"  INTEGER NOT NULL DEFAULT 0,
    "result" TEXT,
    "done"   INTEGER NOT NULL DEFAULT 0
)"#;

fn connect(path: &Path) -> Result<Connection, LeaseError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(PATIENCE)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// The time first, then the lease length when the call has one.
fn check(now: f64, ttl: Option<f64>) -> Result<(), LeaseError> {
    if !now.is_finite() {
        return Err(LeaseError::InvalidNow(now));
    }
    match ttl {
        Some(ttl) if !(ttl.is_finite() && ttl > 0.0) => Err(LeaseError::InvalidTtl(ttl)),
        _ => Ok(()),
    }
}

/// Runs a write that returns a row exactly when it applied.
fn applied(
    conn: &Connection,
    sql: &str,
    args: &[(&str, &dyn rusqlite::ToSql)],
) -> Result<bool, LeaseError> {
    let row = conn.query_row(sql, args, |_| Ok(())).optional()?;
    Ok(row.is_some())
}

pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    let conn = connect(path.as_ref())?;
    // The journal mode answers with the mode now in force; WAL sticks to the file.
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    conn.execute_batch(SCHEMA)?;
    Ok(())
}

pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let conn = connect(path.as_ref())?;
    applied(
        &conn,
        r#"INSERT INTO "jobs" ("id") VALUES (:id) ON CONFLICT ("id") DO NOTHING RETURNING "id""#,
        named_params! { ":id": job_id },
    )
}

pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let conn = connect(path.as_ref())?;
    let mut select = conn.prepare(
        r#"SELECT "owner", "until", "fence", "result", "done" FROM "jobs" WHERE "id" = :id"#,
    )?;
    let mut rows = select.query(named_params! { ":id": job_id })?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    Ok(Some(Job {
        id: job_id.to_owned(),
        owner: row.get(0)?,
        until: row.get(1)?,
        fence: row.get(2)?,
        result: row.get(3)?,
        done: row.get::<_, i64>(4)? != 0,
    }))
}

pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    check(now, Some(ttl))?;
    let conn = connect(path.as_ref())?;
    // One statement: the write lock is taken before the condition is evaluated.
    let fence = conn
        .query_row(
            r#"UPDATE "jobs" SET "owner" = :owner, "until" = :until, "fence" = "fence" + 1
               WHERE "id" = :id AND "done" = 0 AND "until" <= :now
               RETURNING "fence""#,
            named_params! { ":id": job_id, ":owner": owner, ":until": now + ttl, ":now": now },
            |row| row.get(0),
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
    check(now, Some(ttl))?;
    let conn = connect(path.as_ref())?;
    applied(
        &conn,
        r#"UPDATE "jobs" SET "until" = :until
           WHERE "id" = :id AND "owner" = :owner AND "fence" = :fence
             AND "done" = 0 AND "until" > :now
           RETURNING 1"#,
        named_params! {
            ":id": job_id, ":owner": owner, ":fence": fence, ":now": now, ":until": now + ttl,
        },
    )
}

pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    check(now, None)?;
    let conn = connect(path.as_ref())?;
    // Completing ends the lease there and then: until becomes the moment of completion.
    applied(
        &conn,
        r#"UPDATE "jobs" SET "result" = :result, "done" = 1, "until" = :now
           WHERE "id" = :id AND "owner" = :owner AND "fence" = :fence
             AND "done" = 0 AND "until" > :now
           RETURNING 1"#,
        named_params! {
            ":id": job_id, ":owner": owner, ":fence": fence, ":now": now, ":result": result,
        },
    )
}

pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let conn = connect(path.as_ref())?;
    applied(
        &conn,
        r#"UPDATE "jobs" SET "owner" = NULL, "until" = 0
           WHERE "id" = :id AND "owner" = :owner AND "fence" = :fence AND "done" = 0
           RETURNING 1"#,
        named_params! { ":id": job_id, ":owner": owner, ":fence": fence },
    )
}

pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    let path = path.as_ref();
    // The starting line: the calling thread holds it (a write lock) while it
    // starts the claimers, each of which waits for a read of it; letting go
    // (also when a start fails and this thread unwinds) sends them all at once.
    let start = RwLock::new(());
    let answers: Vec<Result<Option<i64>, LeaseError>> = std::thread::scope(|scope| {
        let held = start.write().unwrap_or_else(|e| e.into_inner());
        let claimers: Vec<_> = owners
            .iter()
            .map(|&owner| {
                let start = &start;
                scope.spawn(move || {
                    drop(start.read().unwrap_or_else(|e| e.into_inner()));
                    claim(path, job_id, owner, now, ttl)
                })
            })
            .collect();
        drop(held);
        claimers
            .into_iter()
            .map(|claimer| {
                claimer
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    answers.into_iter().collect()
}
