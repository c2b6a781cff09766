//! Step 4, claim: a free job (never claimed, released, or `until <= now`) that is
//! not done is leased to the caller until `now + ttl` and its fence goes up by
//! one; anything else is `None`. Bad arguments are errors before anything else.
//! The read and the write share one `BEGIN IMMEDIATE` transaction, and a claim
//! that meets a busy database waits for it.

use std::time::Duration;

use crate::lease;
use crate::support::{
    Answer, Db, INVALID_NOW, INVALID_TTL, Row, claim_in_processes, joined, kind, observe, ok,
    one_winner, stored_owner_won,
};

#[test]
fn fresh_job_gets_fence_1() {
    let db = Db::with_job("job-1");
    let answer = lease::claim(&db.path, "job-1", "worker-a", 100.25, 30.5);
    observe("claim of a fresh job", kind(&answer), ok(Some(1)));
}

#[test]
fn stores_owner_and_until() {
    let db = Db::with_job("job-1");
    lease::claim(&db.path, "job-1", "worker-a", 100.25, 30.5).unwrap();
    observe(
        "stored row after claim(now = 100.25, ttl = 30.5)",
        db.row("job-1"),
        Some(Row::held("worker-a", 1, 130.75)),
    );
}

#[test]
fn fresh_job_is_free_at_time_zero() {
    let db = Db::with_job("job-1");
    let answer = lease::claim(&db.path, "job-1", "worker-a", 0.0, 5.0);
    observe(
        "claim of a fresh job (until = 0) at now = 0",
        kind(&answer),
        ok(Some(1)),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-a", 1, 5.0)),
    );
}

#[test]
fn held_job_is_refused() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 1, 50.0));
    let before = db.rows();
    let answer = lease::claim(&db.path, "job-1", "worker-b", 49.5, 10.0);
    observe(
        "claim of a job held until 50 at now = 49.5",
        kind(&answer),
        ok(None::<i64>),
    );
    observe(
        "rows after the refused claim (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn held_until_the_last_moment() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 1, 50.0));
    let before = db.rows();
    let just_before = 50.0_f64.next_down();
    let answer = lease::claim(&db.path, "job-1", "worker-b", just_before, 10.0);
    observe(
        "claim of a job held until 50 at the float just below 50",
        kind(&answer),
        ok(None::<i64>),
    );
    observe(
        "rows after the refused claim (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn owner_cannot_claim_its_own_held_job_again() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 1, 50.0));
    let before = db.rows();
    let answer = lease::claim(&db.path, "job-1", "worker-a", 20.0, 10.0);
    observe(
        "claim of a held job by its own holder",
        kind(&answer),
        ok(None::<i64>),
    );
    observe(
        "rows after the refused claim (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn reclaims_at_exact_expiry() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 1, 50.0));
    let answer = lease::claim(&db.path, "job-1", "worker-b", 50.0, 10.0);
    observe(
        "claim at now == until (the lease has just ended)",
        kind(&answer),
        ok(Some(2)),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-b", 2, 60.0)),
    );
}

#[test]
fn reclaims_after_expiry() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 1, 50.0));
    let answer = lease::claim(&db.path, "job-1", "worker-b", 75.5, 12.25);
    observe("claim after the lease ended", kind(&answer), ok(Some(2)));
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-b", 2, 87.75)),
    );
}

#[test]
fn negative_now_is_a_valid_time() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 1, -20.0));
    let answer = lease::claim(&db.path, "job-1", "worker-b", -10.5, 2.0);
    observe(
        "claim at now = -10.5 of a job held until -20",
        kind(&answer),
        ok(Some(2)),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-b", 2, -8.5)),
    );
}

#[test]
fn missing_job_is_none() {
    let db = Db::new();
    let answer = lease::claim(&db.path, "ghost", "worker-a", 10.0, 5.0);
    observe(
        "claim of a job that was never enqueued",
        kind(&answer),
        ok(None::<i64>),
    );
    observe(
        "rows after claiming a missing job (none created)",
        db.rows(),
        vec![],
    );
}

#[test]
fn done_job_is_none() {
    let db = Db::new();
    db.put("job-1", Row::done("worker-a", 3, 10.0, "report"));
    let before = db.rows();
    let answer = lease::claim(&db.path, "job-1", "worker-b", 20.0, 5.0);
    observe(
        "claim of a done job whose lease has ended",
        kind(&answer),
        ok(None::<i64>),
    );
    observe(
        "rows after the refused claim (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn fence_grows_from_the_stored_fence() {
    let db = Db::new();
    db.put("job-1", Row::held("worker-a", 41, 5.0));
    let answer = lease::claim(&db.path, "job-1", "worker-b", 10.0, 5.0);
    observe(
        "claim of an expired job whose fence is 41",
        kind(&answer),
        ok(Some(42)),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-b", 42, 15.0)),
    );
}

#[test]
fn fence_grows_on_every_claim() {
    let db = Db::with_job("job-1");
    let answers = [
        lease::claim(&db.path, "job-1", "worker-a", 0.0, 1.0),
        lease::claim(&db.path, "job-1", "worker-b", 1.0, 1.0),
        lease::claim(&db.path, "job-1", "worker-a", 2.5, 1.0),
    ]
    .map(|a| kind(&a));
    observe(
        "three claims, each after the previous lease ended",
        answers.to_vec(),
        [Ok(Some(1)), Ok(Some(2)), Ok(Some(3))]
            .map(|a| kind(&a))
            .to_vec(),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-a", 3, 3.5)),
    );
}

#[test]
fn stores_fractional_times_exactly() {
    let db = Db::with_job("job-1");
    lease::claim(&db.path, "job-1", "worker-a", 0.1, 0.2).unwrap();
    let until = db.row("job-1").map(|r| r.until.to_bits());
    observe(
        "bits of the stored until after claim(now = 0.1, ttl = 0.2)",
        until,
        Some((0.1_f64 + 0.2).to_bits()),
    );
}

#[test]
fn tiny_positive_ttl_is_valid() {
    let db = Db::with_job("job-1");
    let answer = lease::claim(&db.path, "job-1", "worker-a", 5.0, 1e-9);
    observe("claim with ttl = 1e-9", kind(&answer), ok(Some(1)));
}

#[track_caller]
fn refused_with(ttl: f64, now: f64, expected: &str) {
    let db = Db::with_job("job-1");
    let before = db.rows();
    let answer = lease::claim(&db.path, "job-1", "worker-a", now, ttl);
    observe(
        &format!("claim of a fresh job with now = {now}, ttl = {ttl}"),
        kind(&answer),
        Answer::from(expected),
    );
    observe(
        "rows after the rejected claim (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn rejects_zero_ttl() {
    refused_with(0.0, 10.0, INVALID_TTL);
}

#[test]
fn rejects_negative_ttl() {
    refused_with(-5.0, 10.0, INVALID_TTL);
}

#[test]
fn rejects_nan_ttl() {
    refused_with(f64::NAN, 10.0, INVALID_TTL);
}

#[test]
fn rejects_infinite_ttl() {
    refused_with(f64::INFINITY, 10.0, INVALID_TTL);
}

#[test]
fn rejects_nan_now() {
    refused_with(5.0, f64::NAN, INVALID_NOW);
}

#[test]
fn rejects_infinite_now() {
    refused_with(5.0, f64::INFINITY, INVALID_NOW);
    refused_with(5.0, f64::NEG_INFINITY, INVALID_NOW);
}

#[test]
fn argument_checks_come_before_the_lookup() {
    let db = Db::new();
    db.put("held", Row::held("worker-a", 1, 50.0));
    db.put("done", Row::done("worker-a", 1, 5.0, "r"));
    let before = db.rows();
    let cases = [
        ("ghost", 10.0, 0.0, INVALID_TTL),
        ("ghost", f64::NAN, 5.0, INVALID_NOW),
        ("held", 10.0, -1.0, INVALID_TTL),
        ("done", f64::INFINITY, 5.0, INVALID_NOW),
    ];
    for (job, now, ttl, expected) in cases {
        let answer = lease::claim(&db.path, job, "worker-b", now, ttl);
        observe(
            &format!("claim of the {job} job with now = {now}, ttl = {ttl}"),
            kind(&answer),
            Answer::from(expected),
        );
    }
    observe(
        "rows after the rejected claims (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn waits_for_a_busy_database() {
    let db = Db::with_job("job-1");
    let lock = db.hold_write_lock();
    let answer = std::thread::scope(|s| {
        let claimer = s.spawn(|| lease::claim(&db.path, "job-1", "worker-a", 10.0, 5.0));
        lock.wait_for_connections(1);
        std::thread::sleep(Duration::from_millis(400));
        drop(lock);
        kind(&joined(claimer))
    });
    observe(
        "claim that starts while another connection holds the write lock for 400 ms",
        answer,
        ok(Some(1)),
    );
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("worker-a", 1, 15.0)),
    );
}

#[test]
fn concurrent_claims_have_one_winner() {
    let db = Db::with_job("job-1");
    let owners = ["worker-a", "worker-b", "worker-c", "worker-d"];
    let lock = db.hold_write_lock();
    let answers: Vec<Answer> = std::thread::scope(|s| {
        let claimers: Vec<_> = owners
            .iter()
            .map(|owner| s.spawn(|| lease::claim(&db.path, "job-1", owner, 10.0, 5.0)))
            .collect();
        // Let go once every claimer has done all it can while the lock is held.
        lock.wait_for_claimers(owners.len());
        drop(lock);
        claimers.into_iter().map(|c| kind(&joined(c))).collect()
    });
    one_winner(
        "four claims on one thread each, started while the write lock is held, then let go",
        &answers,
        "Ok(Some(1))",
        "Ok(None)",
        "exactly one Ok(Some(1)) and three Ok(None)",
    );
    stored_owner_won(
        "answer given to the stored owner",
        &db,
        "job-1",
        &owners,
        &answers,
        "Ok(Some(1))",
    );
}

#[test]
fn claims_race_across_processes() {
    let db = Db::with_job("job-1");
    let owners = ["p0", "p1", "p2", "p3"];
    let answers = claim_in_processes(&db, "job-1", &owners, 10.0, 5.0);
    one_winner(
        "claim from four processes started while the write lock was held, then let go",
        &answers,
        "Ok(Some(1))",
        "Ok(None)",
        "exactly one Ok(Some(1)) and three Ok(None)",
    );
    stored_owner_won(
        "answer given to the stored owner",
        &db,
        "job-1",
        &owners,
        &answers,
        "Ok(Some(1))",
    );
}

/// Not a test of its own: the child process of `claims_race_across_processes`,
/// which runs this with `--ignored` and tells it what to claim through the
/// environment. Run on its own it does nothing.
#[test]
#[ignore = "helper: run by claims_race_across_processes"]
fn claim_in_child_process() {
    crate::support::child_claim();
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(4);
}
