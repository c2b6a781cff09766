//! Wheat `ledger`: a correct implementation of the lease-and-fence contract,
//! written as load, decide, save. Every call that may write loads the whole row
//! into a `Ledger` value inside one `BEGIN IMMEDIATE` transaction, decides in
//! plain Rust what the row becomes, and saves the whole row back. A refused call
//! saves the row it loaded, unchanged: the stored values stay exactly as they
//! were, but the row is rewritten (an `AFTER UPDATE` trigger fires), and since
//! every such call commits a write, it waits for other connections' readers.
//!
//! How it differs from `src/lease.rs`:
//! - the columns are declared in another order (`id, fence, done, owner, until,
//!   result`) and `state` reads them by name;
//! - `enqueue` is a plain `INSERT` whose primary-key violation means "already there";
//! - `complete` clears the owner and sets `until = 0`: a finished job has no holder;
//! - waiting for a lock is a busy handler of its own (short sleeps, up to 45 s);
//! - `claim_many` starts every thread at once, but lets the last owner go first:
//!   the others start their claims while it holds the write lock, wait for it,
//!   and lose. The last owner always wins a free job;
//! - its own error messages.
//!
//! Freedoms exercised (see `wheats/freedoms.toml`): refused-write, reader-wait,
//! complete-row, column-order, claim-many-winner, busy-timeout, error-text. Its
//! `CREATE TABLE` spells every column as the reference does, in another order:
//! the stored text differs only through column-order, so it does not take
//! ddl-text.

use std::fmt;
use std::path::Path;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OptionalExtension, Transaction, TransactionBehavior};

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
                write!(f, "ttl {ttl} refused: it must be finite and above zero")
            }
            LeaseError::InvalidNow(now) => write!(f, "now {now} refused: it must be finite"),
            LeaseError::Db(error) => write!(f, "the jobs database failed: {error}"),
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<rusqlite::Error> for LeaseError {
    fn from(error: rusqlite::Error) -> Self {
        LeaseError::Db(error)
    }
}

/// How long one locking event may keep a call waiting.
const PATIENCE: Duration = Duration::from_secs(45);

/// A connection that sleeps and retries while another one holds the lock.
fn open(path: &Path) -> Result<Connection, LeaseError> {
    let mut conn = Connection::open(path)?;
    let mut waiting_since = Instant::now();
    conn.busy_handler(Some(move |attempt: i32| {
        if attempt == 0 {
            waiting_since = Instant::now();
        }
        if waiting_since.elapsed() >= PATIENCE {
            return false;
        }
        let nap = u64::try_from(attempt).unwrap_or(0).clamp(1, 20);
        std::thread::sleep(Duration::from_millis(nap));
        true
    }))?;
    Ok(conn)
}

fn validate(now: f64, ttl: Option<f64>) -> Result<(), LeaseError> {
    if let Some(ttl) = ttl {
        if ttl.is_nan() || ttl.is_infinite() || ttl <= 0.0 {
            return Err(LeaseError::InvalidTtl(ttl));
        }
    }
    if now.is_nan() || now.is_infinite() {
        return Err(LeaseError::InvalidNow(now));
    }
    Ok(())
}

/// One job's row as loaded, changed in memory, and saved back whole. `done`
/// keeps the stored integer so that saving an unchanged row writes it back as it was.
struct Ledger {
    owner: Option<String>,
    until: f64,
    fence: i64,
    result: Option<String>,
    done: i64,
}

impl Ledger {
    fn finished(&self) -> bool {
        self.done != 0
    }

    fn holds(&self, owner: &str, fence: i64) -> bool {
        !self.finished() && self.owner.as_deref() == Some(owner) && self.fence == fence
    }

    fn live(&self, owner: &str, fence: i64, now: f64) -> bool {
        self.holds(owner, fence) && self.until > now
    }

    fn take(&mut self, owner: &str, now: f64, ttl: f64) -> Option<i64> {
        if self.finished() || self.until > now {
            return None;
        }
        self.owner = Some(owner.to_owned());
        self.until = now + ttl;
        self.fence += 1;
        Some(self.fence)
    }

    fn extend(&mut self, owner: &str, fence: i64, now: f64, ttl: f64) -> bool {
        let ok = self.live(owner, fence, now);
        if ok {
            self.until = now + ttl;
        }
        ok
    }

    fn finish(&mut self, owner: &str, fence: i64, now: f64, result: &str) -> bool {
        let ok = self.live(owner, fence, now);
        if ok {
            self.result = Some(result.to_owned());
            self.done = 1;
            self.owner = None;
            self.until = 0.0;
        }
        ok
    }

    fn give_back(&mut self, owner: &str, fence: i64) -> bool {
        let ok = self.holds(owner, fence);
        if ok {
            self.owner = None;
            self.until = 0.0;
        }
        ok
    }
}

fn load(tx: &Transaction<'_>, job_id: &str) -> Result<Option<Ledger>, LeaseError> {
    let ledger = tx
        .query_row(
            "SELECT owner, until, fence, result, done FROM jobs WHERE id = ?1",
            [job_id],
            |row| {
                Ok(Ledger {
                    owner: row.get(0)?,
                    until: row.get(1)?,
                    fence: row.get(2)?,
                    result: row.get(3)?,
                    done: row.get(4)?,
                })
            },
        )
        .optional()?;
    Ok(ledger)
}

fn save(tx: &Transaction<'_>, job_id: &str, ledger: &Ledger) -> Result<(), LeaseError> {
    tx.execute(
        "UPDATE jobs SET owner = ?2, until = ?3, fence = ?4, result = ?5, done = ?6 WHERE id = ?1",
        rusqlite::params![
            job_id,
            ledger.owner,
            ledger.until,
            ledger.fence,
            ledger.result,
            ledger.done
        ],
    )?;
    Ok(())
}

/// Loads `job_id` under the write lock, lets `decide` change it, and saves it
/// back; `None` when there is no such job. `locked` runs once the lock is held.
fn edit<T>(
    path: &Path,
    job_id: &str,
    locked: impl FnOnce(),
    decide: impl FnOnce(&mut Ledger) -> T,
) -> Result<Option<T>, LeaseError> {
    let mut conn = open(path)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    locked();
    let Some(mut ledger) = load(&tx, job_id)? else {
        return Ok(None);
    };
    let outcome = decide(&mut ledger);
    save(&tx, job_id, &ledger)?;
    tx.commit()?;
    Ok(Some(outcome))
}

pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    open(path.as_ref())?.execute_batch(
        "CREATE TABLE IF NOT EXISTS jobs (
            id TEXT PRIMARY KEY,
            fence INTEGER NOT NULL DEFAULT 0,
            done INTEGER NOT NULL DEFAULT 0,
            owner TEXT,
            until REAL NOT NULL DEFAULT 0,
            result TEXT
        )",
    )?;
    Ok(())
}

pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let conn = open(path.as_ref())?;
    match conn.execute("INSERT INTO jobs (id) VALUES (?1)", [job_id]) {
        Ok(_) => Ok(true),
        Err(rusqlite::Error::SqliteFailure(error, _))
            if error.code == ErrorCode::ConstraintViolation
                && error.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
        {
            Ok(false)
        }
        Err(other) => Err(other.into()),
    }
}

pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let conn = open(path.as_ref())?;
    let mut select = conn.prepare("SELECT * FROM jobs WHERE id = ?1")?;
    let job = select
        .query_row([job_id], |row| {
            Ok(Job {
                id: row.get("id")?,
                owner: row.get("owner")?,
                until: row.get("until")?,
                fence: row.get("fence")?,
                result: row.get("result")?,
                done: row.get("done")?,
            })
        })
        .optional()?;
    Ok(job)
}

fn claim_then(
    path: &Path,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
    locked: impl FnOnce(),
) -> Result<Option<i64>, LeaseError> {
    validate(now, Some(ttl))?;
    let taken = edit(path, job_id, locked, |ledger| ledger.take(owner, now, ttl))?;
    Ok(taken.flatten())
}

pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    claim_then(path.as_ref(), job_id, owner, now, ttl, || {})
}

pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    ttl: f64,
) -> Result<bool, LeaseError> {
    validate(now, Some(ttl))?;
    let renewed = edit(
        path.as_ref(),
        job_id,
        || {},
        |ledger| ledger.extend(owner, fence, now, ttl),
    )?;
    Ok(renewed == Some(true))
}

pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    validate(now, None)?;
    let completed = edit(
        path.as_ref(),
        job_id,
        || {},
        |ledger| ledger.finish(owner, fence, now, result),
    )?;
    Ok(completed == Some(true))
}

pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let released = edit(
        path.as_ref(),
        job_id,
        || {},
        |ledger| ledger.give_back(owner, fence),
    )?;
    Ok(released == Some(true))
}

/// A gate the followers wait at until the leader opens it.
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }

    fn wait(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Opens the gate when dropped, so that followers never wait for a leader
/// that failed before it took the lock.
struct OpensOnDrop<'a>(&'a Gate);

impl Drop for OpensOnDrop<'_> {
    fn drop(&mut self) {
        self.0.open();
    }
}

pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    let path = path.as_ref();
    let Some(leader) = owners.len().checked_sub(1) else {
        return Ok(Vec::new());
    };
    let gate = Gate {
        open: Mutex::new(false),
        opened: Condvar::new(),
    };
    std::thread::scope(|scope| {
        // Should starting a thread fail, unwinding from here lets the followers go.
        let _unblock = OpensOnDrop(&gate);
        let threads: Vec<_> = owners
            .iter()
            .enumerate()
            .map(|(index, &owner)| {
                let gate = &gate;
                scope.spawn(move || {
                    if index == leader {
                        let _opens = OpensOnDrop(gate);
                        claim_then(path, job_id, owner, now, ttl, || gate.open())
                    } else {
                        gate.wait();
                        claim_then(path, job_id, owner, now, ttl, || {})
                    }
                })
            })
            .collect();
        let mut answers = Vec::with_capacity(threads.len());
        for thread in threads {
            match thread.join() {
                Ok(answer) => answers.push(answer?),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(answers)
    })
}
