//! Step 5, renew: only the current owner with the current fence may extend a
//! live lease (`until > now`) of a job that is not done, to `now + ttl`.
//! Everything else is `false` and changes nothing: an expired lease is never
//! revived, because someone else may already be entitled to it.

use crate::lease;
use crate::support::{Answer, Db, INVALID_NOW, INVALID_TTL, Row, kind, observe, ok};

/// A database where `worker-a` holds `job-1` with fence 3 until 50.
fn held() -> Db {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 3, 50.0));
    db
}

#[track_caller]
fn refused(db: &Db, what: &str, owner: &str, fence: i64, now: f64, ttl: f64) {
    let before = db.rows();
    let answer = lease::renew(&db.path, "job-1", owner, fence, now, ttl);
    observe(what, kind(&answer), ok(false));
    observe(
        "rows after the refused renew (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn holder_extends_a_live_lease() {
    let db = held();
    let answer = lease::renew(&db.path, "job-1", "worker-a", 3, 45.5, 20.25);
    observe(
        "renew by the holder with its fence while the lease is live",
        kind(&answer),
        ok(true),
    );
    observe(
        "stored row after renew(now = 45.5, ttl = 20.25)",
        db.row("job-1"),
        Some(Row::held("worker-a", 3, 65.75)),
    );
}

#[test]
fn until_is_set_from_now() {
    let db = held();
    let answer = lease::renew(&db.path, "job-1", "worker-a", 3, 20.0, 2.5);
    observe(
        "renew to a time before the current until",
        kind(&answer),
        ok(true),
    );
    observe(
        "stored row after renew(now = 20, ttl = 2.5): until = now + ttl",
        db.row("job-1"),
        Some(Row::held("worker-a", 3, 22.5)),
    );
}

#[test]
fn negative_now_is_a_valid_time() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 3, -5.0));
    let answer = lease::renew(&db.path, "job-1", "worker-a", 3, -10.0, 2.5);
    observe(
        "renew at now = -10 of a lease held until -5",
        kind(&answer),
        ok(true),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-a", 3, -7.5)),
    );
}

#[test]
fn refuses_at_exact_expiry() {
    refused(&held(), "renew at now == until", "worker-a", 3, 50.0, 10.0);
}

#[test]
fn refuses_an_expired_lease() {
    refused(
        &held(),
        "renew after the lease ended",
        "worker-a",
        3,
        61.5,
        10.0,
    );
}

#[test]
fn refuses_a_wrong_owner_with_the_right_fence() {
    refused(
        &held(),
        "renew by another worker with the holder's fence",
        "worker-b",
        3,
        45.0,
        10.0,
    );
}

#[test]
fn refuses_a_stale_fence_of_the_same_owner() {
    refused(
        &held(),
        "renew by the holder with its previous fence",
        "worker-a",
        2,
        45.0,
        10.0,
    );
}

#[test]
fn refuses_a_fence_from_the_future() {
    refused(
        &held(),
        "renew by the holder with a fence never handed out",
        "worker-a",
        4,
        45.0,
        10.0,
    );
}

#[test]
fn refuses_a_done_job() {
    let db = Db::new();
    db.put("job-1", Row::done("worker-a", 3, 50.0, "report"));
    refused(
        &db,
        "renew of a done job within its lease",
        "worker-a",
        3,
        45.0,
        10.0,
    );
}

#[test]
fn refuses_a_released_job() {
    let db = Db::new();
    db.put(
        "job-1",
        Row {
            owner: None,
            until: 0.0,
            fence: 3,
            result: None,
            done: 0,
        },
    );
    refused(
        &db,
        "renew of a job that was released",
        "worker-a",
        3,
        0.0,
        10.0,
    );
}

#[test]
fn refuses_a_missing_job() {
    let db = Db::new();
    let answer = lease::renew(&db.path, "ghost", "worker-a", 1, 10.0, 5.0);
    observe(
        "renew of a job that was never enqueued",
        kind(&answer),
        ok(false),
    );
    observe(
        "rows after renewing a missing job (none created)",
        db.rows(),
        vec![],
    );
}

#[test]
fn stale_worker_cannot_renew_after_a_reclaim() {
    let db = Db::with_job("job-1");
    let first = lease::claim(&db.path, "job-1", "worker-a", 0.0, 10.0).unwrap();
    let second = lease::claim(&db.path, "job-1", "worker-b", 10.0, 10.0).unwrap();
    observe(
        "fences of the two claims",
        (first, second),
        (Some(1), Some(2)),
    );
    let before = db.rows();
    let answer = lease::renew(&db.path, "job-1", "worker-a", 1, 12.0, 10.0);
    observe(
        "renew by the first worker after the second one claimed",
        kind(&answer),
        ok(false),
    );
    observe(
        "rows after the refused renew (must be unchanged)",
        db.rows(),
        before,
    );
}

#[track_caller]
fn rejected(ttl: f64, now: f64, expected: &str) {
    let db = held();
    let before = db.rows();
    let answer = lease::renew(&db.path, "job-1", "worker-a", 3, now, ttl);
    observe(
        &format!("renew of a live lease by its holder with now = {now}, ttl = {ttl}"),
        kind(&answer),
        Answer::from(expected),
    );
    observe(
        "rows after the rejected renew (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn rejects_zero_or_negative_ttl() {
    rejected(0.0, 45.0, INVALID_TTL);
    rejected(-1.0, 45.0, INVALID_TTL);
}

#[test]
fn rejects_nan_or_infinite_ttl() {
    rejected(f64::NAN, 45.0, INVALID_TTL);
    rejected(f64::INFINITY, 45.0, INVALID_TTL);
}

#[test]
fn rejects_nan_or_infinite_now() {
    rejected(5.0, f64::NAN, INVALID_NOW);
    rejected(5.0, f64::INFINITY, INVALID_NOW);
    rejected(5.0, f64::NEG_INFINITY, INVALID_NOW);
}

#[test]
fn argument_checks_come_before_the_lookup() {
    let db = Db::new();
    db.put("done", Row::done("worker-a", 3, 50.0, "r"));
    let before = db.rows();
    let cases = [
        ("ghost", 10.0, 0.0, INVALID_TTL),
        ("ghost", f64::NAN, 5.0, INVALID_NOW),
        ("done", 10.0, -1.0, INVALID_TTL),
        ("done", f64::INFINITY, 5.0, INVALID_NOW),
    ];
    for (job, now, ttl, expected) in cases {
        let answer = lease::renew(&db.path, job, "worker-a", 3, now, ttl);
        observe(
            &format!("renew of the {job} job with now = {now}, ttl = {ttl}"),
            kind(&answer),
            Answer::from(expected),
        );
    }
    observe(
        "rows after the rejected renews (must be unchanged)",
        db.rows(),
        before,
    );
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(5);
}
