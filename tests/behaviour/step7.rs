//! Step 7, release: the holder (owner and fence match, not done) gives the lease
//! back: owner cleared, `until = 0`, fence kept, so the next claim gets a token
//! that was never handed out before. Anything else is `false` and changes nothing.

use crate::lease;
use crate::support::{Db, Row, kind, observe, ok};

/// A database where `worker-a` holds `job-1` with fence 3 until 50.
fn held() -> Db {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 3, 50.0));
    db
}

fn released(fence: i64) -> Row {
    Row {
        owner: None,
        until: 0.0,
        fence,
        result: None,
        done: 0,
    }
}

#[track_caller]
fn refused(db: &Db, what: &str, owner: &str, fence: i64) {
    let before = db.rows();
    let answer = lease::release(&db.path, "job-1", owner, fence);
    observe(what, kind(&answer), ok(false));
    observe(
        "rows after the refused release (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn holder_releases() {
    let db = held();
    let answer = lease::release(&db.path, "job-1", "worker-a", 3);
    observe(
        "release by the holder with its fence",
        kind(&answer),
        ok(true),
    );
}

#[test]
fn release_clears_owner_and_until_and_keeps_the_fence() {
    let db = held();
    lease::release(&db.path, "job-1", "worker-a", 3).unwrap();
    observe(
        "stored row after release",
        db.row("job-1"),
        Some(released(3)),
    );
}

#[test]
fn next_claim_after_release_gets_a_new_fence() {
    let db = Db::with_job("job-1");
    let first = lease::claim(&db.path, "job-1", "worker-a", 10.0, 100.0).unwrap();
    let gave_back = lease::release(&db.path, "job-1", "worker-a", 1).unwrap();
    let second = lease::claim(&db.path, "job-1", "worker-b", 11.0, 100.0);
    observe(
        "claim, release, claim: the answers",
        (first, gave_back),
        (Some(1), true),
    );
    observe(
        "claim right after the release, long before the old until",
        kind(&second),
        ok(Some(2)),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-b", 2, 111.0)),
    );
}

#[test]
fn fence_keeps_growing_across_releases() {
    let db = Db::with_job("job-1");
    let mut fences = Vec::new();
    for round in 0..3 {
        let now = f64::from(round);
        let fence = lease::claim(&db.path, "job-1", "worker-a", now, 50.0).unwrap();
        fences.push(fence);
        if let Some(fence) = fence {
            lease::release(&db.path, "job-1", "worker-a", fence).unwrap();
        }
    }
    observe(
        "fences of three claim-release rounds",
        fences,
        vec![Some(1), Some(2), Some(3)],
    );
    observe("stored row", db.row("job-1"), Some(released(3)));
}

#[test]
fn refuses_a_wrong_owner_with_the_right_fence() {
    refused(
        &held(),
        "release by another worker with the holder's fence",
        "worker-b",
        3,
    );
}

#[test]
fn refuses_a_stale_fence_of_the_same_owner() {
    refused(
        &held(),
        "release by the holder with its previous fence",
        "worker-a",
        2,
    );
}

#[test]
fn refuses_a_done_job() {
    let db = Db::new();
    db.put("job-1", Row::done("worker-a", 3, 50.0, "report"));
    refused(
        &db,
        "release of a done job by its last holder",
        "worker-a",
        3,
    );
}

#[test]
fn refuses_a_second_release() {
    let db = held();
    let first = lease::release(&db.path, "job-1", "worker-a", 3);
    observe("first release", kind(&first), ok(true));
    refused(
        &db,
        "second release with the same owner and fence",
        "worker-a",
        3,
    );
}

#[test]
fn refuses_a_job_never_claimed() {
    let db = Db::with_job("job-1");
    let before = db.rows();
    let answer = lease::release(&db.path, "job-1", "worker-a", 0);
    observe(
        "release with fence 0 of a job nobody has claimed",
        kind(&answer),
        ok(false),
    );
    observe(
        "rows after the refused release (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn refuses_a_missing_job() {
    let db = Db::new();
    let answer = lease::release(&db.path, "ghost", "worker-a", 1);
    observe(
        "release of a job that was never enqueued",
        kind(&answer),
        ok(false),
    );
    observe(
        "rows after releasing a missing job (none created)",
        db.rows(),
        vec![],
    );
}

#[test]
fn stale_worker_cannot_release_the_new_holder() {
    let db = Db::with_job("job-1");
    lease::claim(&db.path, "job-1", "worker-a", 0.0, 10.0).unwrap();
    lease::claim(&db.path, "job-1", "worker-b", 10.0, 10.0).unwrap();
    refused(
        &db,
        "release by worker-a with fence 1 after worker-b claimed",
        "worker-a",
        1,
    );
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(7);
}
