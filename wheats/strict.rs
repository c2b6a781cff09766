//! Wheat `strict`: a correct implementation of the lease-and-fence contract,
//! written around a stricter table and an exclusive claim.
//!
//! How it differs from `src/lease.rs`:
//! - the table is a lower-case `STRICT, WITHOUT ROWID` table with CHECK
//!   constraints (`fence >= 0`, `done IN (0, 1)`): it has no `rowid`, and it
//!   refuses values the API never writes;
//! - `claim` runs in a `BEGIN EXCLUSIVE` transaction (the write lock from the
//!   start, as `BEGIN IMMEDIATE`, but it also waits for other connections'
//!   readers to finish): an `UPDATE` whose `WHERE` holds the whole condition,
//!   then a read of the new fence when a row changed;
//! - `enqueue` is `INSERT ... SELECT ... WHERE NOT EXISTS`;
//! - `state` opens its connection read-only, so on a path where no database
//!   exists it creates no file and fails with `SQLITE_CANTOPEN`;
//! - `claim_many` lets one owner go first and the others follow once it holds
//!   the write lock; which owner goes first rotates from call to call;
//! - a 20 s busy timeout, and its own error messages.
//!
//! Freedoms exercised (see `wheats/freedoms.toml`): extra-constraints, rowid,
//! ddl-text, db-error-detail, reader-wait, claim-many-winner, busy-timeout,
//! error-text.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};

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
            LeaseError::InvalidTtl(value) => {
                write!(f, "{value} is not a usable lease length")
            }
            LeaseError::InvalidNow(value) => write!(f, "{value} is not a usable time"),
            LeaseError::Db(error) => match error.sqlite_error_code() {
                Some(code) => write!(f, "sqlite error ({code:?}): {error}"),
                None => write!(f, "sqlite error: {error}"),
            },
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<rusqlite::Error> for LeaseError {
    fn from(error: rusqlite::Error) -> Self {
        LeaseError::Db(error)
    }
}

const BUSY: Duration = Duration::from_secs(20);

const TABLE: &str = "
create table if not exists jobs (
    id text primary key,
    owner text,
    until real not null default 0,
    fence integer not null default 0 check (fence >= 0),
    result text,
    done integer not null default 0 check (done in (0, 1))
) strict, without rowid";

fn writer(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY)?;
    Ok(conn)
}

fn reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY)?;
    Ok(conn)
}

fn lease_length(ttl: f64) -> Result<(), LeaseError> {
    if ttl > 0.0 && ttl < f64::INFINITY {
        Ok(())
    } else {
        Err(LeaseError::InvalidTtl(ttl))
    }
}

fn instant(now: f64) -> Result<(), LeaseError> {
    if now.is_finite() {
        Ok(())
    } else {
        Err(LeaseError::InvalidNow(now))
    }
}

pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    writer(path.as_ref())?.execute_batch(TABLE)?;
    Ok(())
}

pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let conn = writer(path.as_ref())?;
    let inserted = conn.execute(
        "insert into jobs (id) select ?1 where not exists (select 1 from jobs where id = ?1)",
        [job_id],
    )?;
    Ok(inserted > 0)
}

pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let conn = reader(path.as_ref())?;
    let mut select =
        conn.prepare("select id, owner, until, fence, result, done from jobs where id = ?1")?;
    let mut jobs = select.query_map([job_id], |row| {
        Ok(Job {
            id: row.get(0)?,
            owner: row.get(1)?,
            until: row.get(2)?,
            fence: row.get(3)?,
            result: row.get(4)?,
            done: row.get(5)?,
        })
    })?;
    Ok(jobs.next().transpose()?)
}

/// The claim itself; `holding` is called once the write lock is held.
fn claim_holding(
    path: &Path,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
    holding: &mut dyn FnMut(),
) -> Result<Option<i64>, LeaseError> {
    lease_length(ttl)?;
    instant(now)?;
    let mut conn = writer(path)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
    holding();
    let changed = tx.execute(
        "update jobs set owner = ?2, until = ?3, fence = fence + 1
         where id = ?1 and done = 0 and until <= ?4",
        params![job_id, owner, now + ttl, now],
    )?;
    let fence = if changed == 1 {
        Some(
            tx.query_row("select fence from jobs where id = ?1", [job_id], |row| {
                row.get(0)
            })?,
        )
    } else {
        None
    };
    tx.commit()?;
    Ok(fence)
}

pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    claim_holding(path.as_ref(), job_id, owner, now, ttl, &mut || {})
}

pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    ttl: f64,
) -> Result<bool, LeaseError> {
    lease_length(ttl)?;
    instant(now)?;
    let conn = writer(path.as_ref())?;
    conn.execute(
        "update jobs set until = ?5
         where id = ?1 and owner = ?2 and fence = ?3 and done = 0 and until > ?4",
        params![job_id, owner, fence, now, now + ttl],
    )?;
    Ok(conn.changes() == 1)
}

pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    instant(now)?;
    let conn = writer(path.as_ref())?;
    conn.execute(
        "update jobs set done = 1, result = ?5
         where id = ?1 and owner = ?2 and fence = ?3 and done = 0 and until > ?4",
        params![job_id, owner, fence, now, result],
    )?;
    Ok(conn.changes() == 1)
}

pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let conn = writer(path.as_ref())?;
    conn.execute(
        "update jobs set owner = null, until = 0
         where id = ?1 and owner = ?2 and fence = ?3 and done = 0",
        params![job_id, owner, fence],
    )?;
    Ok(conn.changes() == 1)
}

/// Which owner of a `claim_many` goes first: a different one each call.
static TURN: AtomicUsize = AtomicUsize::new(0);

pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    let path = path.as_ref();
    if owners.is_empty() {
        return Ok(Vec::new());
    }
    let first = TURN.fetch_add(1, Ordering::Relaxed) % owners.len();
    // The first owner's thread holds a sender per follower; it sends once it
    // holds the write lock, and a sender dropped unsent lets the follower go too.
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (1..owners.len()).map(|_| mpsc::channel::<()>()).unzip();
    let mut receivers = receivers.into_iter();
    std::thread::scope(|scope| {
        let mut leader_senders = Some(senders);
        let handles: Vec<_> = owners
            .iter()
            .enumerate()
            .map(|(index, &owner)| {
                if index == first {
                    let mut senders = leader_senders.take().unwrap_or_default();
                    scope.spawn(move || {
                        let mut go = || {
                            for sender in senders.drain(..) {
                                let _ = sender.send(());
                            }
                        };
                        claim_holding(path, job_id, owner, now, ttl, &mut go)
                    })
                } else {
                    let ready = receivers.next().expect("a receiver per follower");
                    scope.spawn(move || {
                        let _ = ready.recv();
                        claim_holding(path, job_id, owner, now, ttl, &mut || {})
                    })
                }
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| match handle.join() {
                Ok(answer) => answer,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}
