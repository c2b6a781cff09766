//! Step 2, enqueue: a new job gets the defaults and `true`; an existing one is
//! left exactly as it is and gets `false`, so a re-enqueue never resets a lease
//! in progress.

use crate::lease;
use crate::support::{Db, Row, kind, observe, ok};

#[test]
fn new_job_returns_true() {
    let db = Db::new();
    observe(
        "enqueue of a new id",
        kind(&lease::enqueue(&db.path, "job-1")),
        ok(true),
    );
}

#[test]
fn new_job_is_stored_with_the_defaults() {
    let db = Db::new();
    lease::enqueue(&db.path, "job-1").unwrap();
    observe(
        "stored row after enqueue",
        db.row("job-1"),
        Some(Row::fresh()),
    );
}

#[test]
fn existing_job_returns_false() {
    let db = Db::with_job("job-1");
    observe(
        "enqueue of an id that is already there",
        kind(&lease::enqueue(&db.path, "job-1")),
        ok(false),
    );
}

#[test]
fn reenqueue_keeps_a_lease_in_progress() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 4, 250.5));
    let before = db.rows();
    let answer = lease::enqueue(&db.path, "job-1");
    observe("enqueue of a held job", kind(&answer), ok(false));
    observe(
        "rows after enqueue of a held job (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn reenqueue_keeps_a_done_job() {
    let db = Db::new();
    db.put("job-1", Row::done("worker-a", 2, 40.0, "the result"));
    let before = db.rows();
    let answer = lease::enqueue(&db.path, "job-1");
    observe("enqueue of a done job", kind(&answer), ok(false));
    observe(
        "rows after enqueue of a done job (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn each_id_gets_its_own_row() {
    let db = Db::new();
    db.put("job-a", Row::held("worker-a", 1, 10.0));
    let answer = lease::enqueue(&db.path, "job-b");
    observe("enqueue of a second id", kind(&answer), ok(true));
    observe(
        "rows after enqueue of a second id",
        db.rows(),
        vec![
            ("job-a".to_string(), Row::held("worker-a", 1, 10.0)),
            ("job-b".to_string(), Row::fresh()),
        ],
    );
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(2);
}
