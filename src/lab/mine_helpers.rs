//! Helpers for your own tests: a database path of a test's own, and the
//! stored row read through a connection of the test's own (not the
//! implementation's), to observe the state a call left behind.

#![allow(dead_code)]

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A path for a fresh database in a temporary directory of its own, removed
/// when the value is dropped. Pass `&db` wherever the API takes a path.
pub(crate) struct FreshDb {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Deref for FreshDb {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for FreshDb {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// A fresh database path (no file yet: `init_db` creates it).
pub(crate) fn fresh_db() -> FreshDb {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let path = dir.path().join("jobs.db");
    FreshDb { _dir: dir, path }
}

/// A row of the `jobs` table as stored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stored {
    pub owner: Option<String>,
    pub until: f64,
    pub fence: i64,
    pub result: Option<String>,
    pub done: bool,
}

/// The stored row of `job_id`, read through a connection of the test's own;
/// `None` when there is no such row.
pub fn stored(db: &Path, job_id: &str) -> Option<Stored> {
    let conn = rusqlite::Connection::open(db).expect("open the test's own connection");
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .expect("set a busy timeout");
    let row = conn.query_row(
        "SELECT owner, until, fence, result, done FROM jobs WHERE id = ?1",
        [job_id],
        |r| {
            Ok(Stored {
                owner: r.get(0)?,
                until: r.get(1)?,
                fence: r.get(2)?,
                result: r.get(3)?,
                done: r.get::<_, i64>(4)? != 0,
            })
        },
    );
    match row {
        Ok(row) => Some(row),
        Err(rusqlite::Error::QueryReturnedNoRows) => None,
        Err(err) => panic!("read the row of {job_id}: {err}"),
    }
}
