//! The contract's API as the judge sees it: the same types and functions as
//! `src/lease.rs`, each forwarding the call over the bridge to the
//! implementation under test. The behavioural suite is compiled against this
//! module in place of `fencelab::lease`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::Mutex;

use super::client::call;
use super::protocol::{Answer, ErrorValue, Failure, JobRow, Request};

/// One row of the `jobs` table, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: String,
    pub owner: Option<String>,
    pub until: f64,
    pub fence: i64,
    pub result: Option<String>,
    pub done: bool,
}

/// The contract's error type.
#[derive(Debug)]
pub enum LeaseError {
    InvalidTtl(f64),
    InvalidNow(f64),
    Db(rusqlite::Error),
}

/// The implementation's `Display` text of each error it returned, by what
/// identifies the error (its variant and payload): the proxy's errors show the
/// implementation's own words.
static DISPLAYED: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

impl LeaseError {
    /// What identifies this error among those the implementation returned.
    fn key(&self) -> String {
        match self {
            LeaseError::InvalidTtl(ttl) => format!("ttl {:x}", ttl.to_bits()),
            LeaseError::InvalidNow(now) => format!("now {:x}", now.to_bits()),
            LeaseError::Db(err) => format!("db {err}"),
        }
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let displayed = DISPLAYED.lock().unwrap_or_else(|e| e.into_inner());
        match displayed.get(&self.key()) {
            Some(text) => f.write_str(text),
            // Made by the test itself, not returned by the implementation.
            None => match self {
                LeaseError::InvalidTtl(ttl) => write!(f, "invalid ttl {ttl}"),
                LeaseError::InvalidNow(now) => write!(f, "invalid now {now}"),
                LeaseError::Db(err) => write!(f, "database error: {err}"),
            },
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<rusqlite::Error> for LeaseError {
    fn from(err: rusqlite::Error) -> Self {
        LeaseError::Db(err)
    }
}

impl From<Failure> for LeaseError {
    fn from(failure: Failure) -> Self {
        let error = match failure.error {
            ErrorValue::InvalidTtl(ttl) => LeaseError::InvalidTtl(ttl.into()),
            ErrorValue::InvalidNow(now) => LeaseError::InvalidNow(now.into()),
            ErrorValue::Db { code, message } => LeaseError::Db(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code.unwrap_or(rusqlite::ffi::SQLITE_ERROR)),
                Some(message),
            )),
            ErrorValue::Other(error) => {
                let said = super::said::Said::NotInContract {
                    error,
                    valid: false,
                };
                panic!("{}", said.line())
            }
            ErrorValue::ValueError(error) => {
                let said = super::said::Said::NotInContract { error, valid: true };
                panic!("{}", said.line())
            }
        };
        DISPLAYED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(error.key(), failure.display);
        error
    }
}

fn path_of(path: impl AsRef<Path>) -> String {
    path.as_ref().to_string_lossy().into_owned()
}

/// At the test's line: a value the contract has no room for is observed
/// there (`Response::Misfit`), as the test's own assertion would be.
#[track_caller]
fn forward(request: Request) -> Result<Answer, LeaseError> {
    call(request).map_err(LeaseError::from)
}

#[track_caller]
fn mismatch(function: &str, answer: Answer) -> ! {
    panic!("the implementation's {function}() answered with the wrong type: {answer:?}")
}

#[track_caller]
pub fn init_db(path: impl AsRef<Path>) -> Result<(), LeaseError> {
    match forward(Request::InitDb {
        path: path_of(path),
    })? {
        Answer::Unit => Ok(()),
        other => mismatch("init_db", other),
    }
}

#[track_caller]
pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool, LeaseError> {
    let request = Request::Enqueue {
        path: path_of(path),
        job_id: job_id.to_string(),
    };
    match forward(request)? {
        Answer::Bool(added) => Ok(added),
        other => mismatch("enqueue", other),
    }
}

#[track_caller]
pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>, LeaseError> {
    let request = Request::State {
        path: path_of(path),
        job_id: job_id.to_string(),
    };
    match forward(request)? {
        Answer::Job(row) => Ok(row.map(|row: JobRow| Job {
            id: row.id,
            owner: row.owner,
            until: row.until.into(),
            fence: row.fence,
            result: row.result,
            done: row.done,
        })),
        other => mismatch("state", other),
    }
}

#[track_caller]
pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<i64>, LeaseError> {
    let request = Request::Claim {
        path: path_of(path),
        job_id: job_id.to_string(),
        owner: owner.to_string(),
        now: now.into(),
        ttl: ttl.into(),
    };
    match forward(request)? {
        Answer::Fence(fence) => Ok(fence),
        other => mismatch("claim", other),
    }
}

#[track_caller]
pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    ttl: f64,
) -> Result<bool, LeaseError> {
    let request = Request::Renew {
        path: path_of(path),
        job_id: job_id.to_string(),
        owner: owner.to_string(),
        fence,
        now: now.into(),
        ttl: ttl.into(),
    };
    match forward(request)? {
        Answer::Bool(renewed) => Ok(renewed),
        other => mismatch("renew", other),
    }
}

#[track_caller]
pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
    now: f64,
    result: &str,
) -> Result<bool, LeaseError> {
    let request = Request::Complete {
        path: path_of(path),
        job_id: job_id.to_string(),
        owner: owner.to_string(),
        fence,
        now: now.into(),
        result: result.to_string(),
    };
    match forward(request)? {
        Answer::Bool(completed) => Ok(completed),
        other => mismatch("complete", other),
    }
}

#[track_caller]
pub fn release(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: i64,
) -> Result<bool, LeaseError> {
    let request = Request::Release {
        path: path_of(path),
        job_id: job_id.to_string(),
        owner: owner.to_string(),
        fence,
    };
    match forward(request)? {
        Answer::Bool(released) => Ok(released),
        other => mismatch("release", other),
    }
}

#[track_caller]
pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, LeaseError> {
    let request = Request::ClaimMany {
        path: path_of(path),
        job_id: job_id.to_string(),
        owners: owners.iter().map(|o| o.to_string()).collect(),
        now: now.into(),
        ttl: ttl.into(),
    };
    match forward(request)? {
        Answer::Fences(fences) => Ok(fences),
        other => mismatch("claim_many", other),
    }
}
