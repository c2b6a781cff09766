//! Reliability tests of the lease library (`fencelab::lease`), kept apart from
//! the learner suite: they judge the reference implementation itself (and any
//! file that stands in for it) under conditions the lab's exercises do not
//! create.
//!
//! - `crash`: worker processes killed with SIGKILL mid-operation, with a
//!   shared simulated clock; the database stays intact and every answer a
//!   worker was given agrees with the final rows (`history` holds the log
//!   format and the invariants).
//! - `model`: random operation sequences run against SQLite and against an
//!   in-memory model written from the contract; every answer and the final
//!   state agree.

mod crash;
mod history;
mod model;

/// A temporary directory for a test's database and files: the one `TMPDIR`
/// names if it is set, else tmpfs (`/dev/shm`) when there is one, else the
/// system's. These tests are about processes dying, not machines losing
/// power: the page cache survives a SIGKILL, so fsync durability is not under
/// test, and a disk's fsync latency on a busy machine (several times the
/// whole run) would only make them slow and uneven.
fn scratch_dir() -> tempfile::TempDir {
    let mut builder = tempfile::Builder::new();
    builder.prefix("fencelab-reliability-");
    let shm = std::path::Path::new("/dev/shm");
    if std::env::var_os("TMPDIR").is_none()
        && shm.is_dir()
        && let Ok(dir) = builder.tempdir_in(shm)
    {
        return dir;
    }
    builder.tempdir().expect("create a temporary directory")
}

/// Every stored row, ordered by id, read through `conn` (a connection of the
/// test's own, not the implementation's).
fn read_rows(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<fencelab::lease::Job>> {
    let mut stmt =
        conn.prepare_cached("SELECT id, owner, until, fence, result, done FROM jobs ORDER BY id")?;
    let rows = stmt.query_map([], |row| {
        Ok(fencelab::lease::Job {
            id: row.get(0)?,
            owner: row.get(1)?,
            until: row.get(2)?,
            fence: row.get(3)?,
            result: row.get(4)?,
            done: row.get::<_, i64>(5)? != 0,
        })
    })?;
    rows.collect()
}
