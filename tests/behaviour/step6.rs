//! Step 6, complete: the result is stored and the job marked done only under the
//! current lease (owner and fence match, not done, `until > now`). Anything else
//! is `false` and the stored result stays as it was: a worker that comes back
//! late cannot overwrite the good result.

use crate::lease;
use crate::support::{Answer, Db, INVALID_NOW, Row, kind, observe, ok};

/// A database where `worker-a` holds `job-1` with fence 3 until 50.
fn held() -> Db {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 3, 50.0));
    db
}

#[track_caller]
fn refused(db: &Db, what: &str, owner: &str, fence: i64, now: f64) {
    let before = db.rows();
    let answer = lease::complete(&db.path, "job-1", owner, fence, now, "late result");
    observe(what, kind(&answer), ok(false));
    observe(
        "rows after the refused complete (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn holder_completes_under_a_live_lease() {
    let db = held();
    let answer = lease::complete(&db.path, "job-1", "worker-a", 3, 45.0, "42 rows");
    observe(
        "complete by the holder with its fence while the lease is live",
        kind(&answer),
        ok(true),
    );
    // The contract fixes the result, done and (through the fence) the
    // generation; what else complete does to the row is the implementation's.
    let row = db.row("job-1");
    observe(
        "stored result, done and fence after complete",
        row.map(|r| (r.result, r.done, r.fence)),
        Some((Some("42 rows".to_string()), 1, 3)),
    );
}

#[test]
fn negative_now_is_a_valid_time() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 3, -5.0));
    let answer = lease::complete(&db.path, "job-1", "worker-a", 3, -10.0, "early");
    observe(
        "complete at now = -10 under a lease held until -5",
        kind(&answer),
        ok(true),
    );
}

#[test]
fn stores_the_result_text_exactly() {
    let db = held();
    let text = "行1\n'quoted' \"text\"; DROP TABLE jobs; --";
    let answer = lease::complete(&db.path, "job-1", "worker-a", 3, 45.0, text);
    observe(
        "complete with quotes, a newline and SQL in the result",
        kind(&answer),
        ok(true),
    );
    observe(
        "stored result",
        db.row("job-1").and_then(|r| r.result),
        Some(text.to_string()),
    );
}

#[test]
fn refuses_at_exact_expiry() {
    refused(&held(), "complete at now == until", "worker-a", 3, 50.0);
}

#[test]
fn refuses_a_late_complete_after_expiry() {
    refused(
        &held(),
        "complete after the lease ended",
        "worker-a",
        3,
        80.0,
    );
}

#[test]
fn refuses_a_wrong_owner_with_the_right_fence() {
    refused(
        &held(),
        "complete by another worker with the holder's fence",
        "worker-b",
        3,
        45.0,
    );
}

#[test]
fn refuses_a_stale_fence_of_the_same_owner() {
    refused(
        &held(),
        "complete by the holder with its previous fence",
        "worker-a",
        2,
        45.0,
    );
}

#[test]
fn refuses_a_missing_job() {
    let db = Db::new();
    let answer = lease::complete(&db.path, "ghost", "worker-a", 1, 10.0, "r");
    observe(
        "complete of a job that was never enqueued",
        kind(&answer),
        ok(false),
    );
    observe(
        "rows after completing a missing job (none created)",
        db.rows(),
        vec![],
    );
}

#[test]
fn second_complete_under_the_same_lease_is_refused() {
    let db = held();
    let first = lease::complete(&db.path, "job-1", "worker-a", 3, 45.0, "first");
    observe("first complete under the lease", kind(&first), ok(true));
    let before = db.rows();
    let second = lease::complete(&db.path, "job-1", "worker-a", 3, 46.0, "second");
    observe(
        "second complete under the same lease",
        kind(&second),
        ok(false),
    );
    observe(
        "rows after the second complete (the first result stays)",
        db.rows(),
        before,
    );
}

#[test]
fn stale_worker_cannot_overwrite_the_result() {
    let db = Db::with_job("job-1");
    let a = lease::claim(&db.path, "job-1", "worker-a", 0.0, 10.0).unwrap();
    let b = lease::claim(&db.path, "job-1", "worker-b", 10.0, 10.0).unwrap();
    observe(
        "fences of worker-a's and worker-b's claims",
        (a, b),
        (Some(1), Some(2)),
    );
    let good = lease::complete(&db.path, "job-1", "worker-b", 2, 11.0, "good");
    observe(
        "complete by worker-b, the current holder",
        kind(&good),
        ok(true),
    );
    let before = db.rows();
    let stale = lease::complete(&db.path, "job-1", "worker-a", 1, 12.0, "stale");
    observe(
        "complete by worker-a, who stalled past its lease",
        kind(&stale),
        ok(false),
    );
    observe(
        "rows after the stale complete (worker-b's result stays)",
        db.rows(),
        before,
    );
}

#[test]
fn stale_fence_is_refused_before_its_own_expiry() {
    // worker-a's clock still reads a time inside its old lease, but worker-b has
    // claimed since: the fence, not the clock, tells them apart.
    let db = Db::new();
    db.put("job-1", Row::held("worker-b", 2, 30.0));
    let before = db.rows();
    let stale = lease::complete(&db.path, "job-1", "worker-a", 1, 9.0, "stale");
    observe(
        "complete with a superseded owner and fence",
        kind(&stale),
        ok(false),
    );
    observe(
        "rows after the stale complete (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn rejects_nan_or_infinite_now() {
    for now in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let db = held();
        let before = db.rows();
        let answer = lease::complete(&db.path, "job-1", "worker-a", 3, now, "r");
        observe(
            &format!("complete under a live lease with now = {now}"),
            kind(&answer),
            Answer::from(INVALID_NOW),
        );
        observe(
            "rows after the rejected complete (must be unchanged)",
            db.rows(),
            before,
        );
    }
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(6);
}
