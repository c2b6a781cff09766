//! Step 8, claim_many: every owner claims at once (a thread and a connection
//! each); the answers come back in the owners' order, and on a free job exactly
//! one of them wins. A claim that decides outside the write lock lets several
//! win: every test where owners compete for a free job starts its (first)
//! claim_many while the test holds the write lock, then lets go
//! (`claim_many_racing`), so a race shows on every run and is told the same
//! way; so do the tests of a held or a missing job (`claim_many_locked`), so
//! that a claim that does not wait for a busy database fails them on every
//! run; and what a failing test says never names the winner (`one_winner`).
//! A test that checks the stored owner against the answers' order has an
//! even number of owners: answers in reverse order then never put the winner
//! back at its own index, whichever owner won.

use crate::lease;
use crate::support::{
    Answer, Db, Row, WINNER, claim_many_locked, claim_many_racing, kind, nobody_claims, observe,
    observe_that, ok, one_winner, stored_owner_won, winner_row,
};

/// The answers of a `claim_many` as `one_winner` reads them.
fn answers_of(answers: &[Option<i64>]) -> Vec<Answer> {
    answers
        .iter()
        .map(|a| Answer::from(format!("{a:?}")))
        .collect()
}

/// The answers of a `claim_many` the test started while it held the write
/// lock, failing the test with the observation `what` on an error.
#[track_caller]
fn raced(what: &str, db: &Db, job_id: &str, owners: &[&str], now: f64, ttl: f64) -> Vec<Answer> {
    match claim_many_racing(db, job_id, owners, now, ttl) {
        Ok(answers) => answers,
        Err(error) => {
            observe_that(
                what,
                false,
                error,
                "answers (no error), after waiting for the lock",
            );
            unreachable!()
        }
    }
}

#[test]
fn one_winner_on_a_fresh_job() {
    let db = Db::with_job("job-1");
    let owners = ["w0", "w1", "w2", "w3"];
    let what = "claim_many of four owners on a fresh job";
    let answers = raced(what, &db, "job-1", &owners, 10.0, 5.0);
    observe("number of answers for four owners", answers.len(), 4);
    one_winner(what, &answers, "Some(1)", "None", ONE_WINNER);
}

/// What `one_winner` expects of a claim_many on a free job.
const ONE_WINNER: &str = "exactly one Some(1), None for every other owner";

#[test]
fn winner_index_matches_the_stored_owner() {
    let db = Db::new();
    let owners = ["w0", "w1", "w2", "w3", "w4", "w5"];
    let what = "claim_many of six owners on a fresh job";
    for round in 0..8 {
        let job = format!("job-{round}");
        lease::enqueue(&db.path, &job).unwrap();
        let answers = if round == 0 {
            raced(what, &db, &job, &owners, 10.0, 5.0)
        } else {
            answers_of(&lease::claim_many(&db.path, &job, &owners, 10.0, 5.0).unwrap())
        };
        observe("number of answers for six owners", answers.len(), 6);
        let winner = one_winner(what, &answers, "Some(1)", "None", ONE_WINNER);
        stored_owner_won(
            &format!("answer given to the owner stored in the row of {job}"),
            &db,
            &job,
            &owners,
            &answers,
            "Some(1)",
        );
        observe(
            &format!("stored row of {job} (its owner, the winner, written as <the winner>)"),
            winner_row(&db, &job, owners[winner]),
            Some(Row::held(WINNER, 1, 15.0)),
        );
    }
}

#[test]
fn many_owners_repeatedly() {
    let db = Db::new();
    let names: Vec<String> = (0..16).map(|i| format!("worker-{i:02}")).collect();
    let owners: Vec<&str> = names.iter().map(String::as_str).collect();
    let what = "claim_many of sixteen owners on a fresh job";
    for round in 0..5 {
        let job = format!("job-{round}");
        lease::enqueue(&db.path, &job).unwrap();
        let answers = if round == 0 {
            raced(what, &db, &job, &owners, 1.0, 1.0)
        } else {
            answers_of(&lease::claim_many(&db.path, &job, &owners, 1.0, 1.0).unwrap())
        };
        observe("number of answers for sixteen owners", answers.len(), 16);
        one_winner(what, &answers, "Some(1)", "None", ONE_WINNER);
        stored_owner_won(
            "answer given to the stored owner",
            &db,
            &job,
            &owners,
            &answers,
            "Some(1)",
        );
    }
}

#[test]
fn single_owner_wins() {
    let db = Db::with_job("job-1");
    let answers = lease::claim_many(&db.path, "job-1", &["only"], 3.0, 4.0);
    observe("claim_many of one owner", kind(&answers), ok(vec![Some(1)]));
    observe(
        "stored row",
        db.row("job-1"),
        Some(Row::held("only", 1, 7.0)),
    );
}

#[test]
fn no_owners_gives_an_empty_vec() {
    let db = Db::with_job("job-1");
    let before = db.rows();
    let answers = lease::claim_many(&db.path, "job-1", &[], 3.0, 4.0);
    observe(
        "claim_many of no owners",
        kind(&answers),
        ok(Vec::<Option<i64>>::new()),
    );
    observe(
        "rows after claim_many of no owners (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn held_job_gives_none_to_everybody() {
    let db = Db::new();
    db.put("job-1", Row::held("holder", 5, 50.0));
    let before = db.rows();
    let answers = claim_many_locked(&db, "job-1", &["w0", "w1", "w2"], 20.0, 5.0);
    nobody_claims("claim_many on a held job", &answers, 3);
    observe(
        "rows after claim_many on a held job (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn missing_job_gives_none_to_everybody() {
    let db = Db::new();
    let answers = claim_many_locked(&db, "ghost", &["w0", "w1"], 20.0, 5.0);
    nobody_claims("claim_many on a missing job", &answers, 2);
    observe(
        "rows after claim_many on a missing job (none created)",
        db.rows(),
        vec![],
    );
}

#[test]
fn winner_gets_the_next_fence() {
    let db = Db::new();
    db.put("job-1", Row::held("old", 6, 5.0));
    let owners = ["w0", "w1", "w2", "w3"];
    let what = "claim_many of four owners on an expired job whose fence is 6";
    let answers = raced(what, &db, "job-1", &owners, 10.0, 2.5);
    observe("number of answers for four owners", answers.len(), 4);
    let expected = "exactly one Some(7), None for the others";
    let winner = one_winner(what, &answers, "Some(7)", "None", expected);
    stored_owner_won(
        "answer given to the stored owner",
        &db,
        "job-1",
        &owners,
        &answers,
        "Some(7)",
    );
    observe(
        "stored row (its owner, the winner, written as <the winner>)",
        winner_row(&db, "job-1", owners[winner]),
        Some(Row::held(WINNER, 7, 12.5)),
    );
}

#[test]
fn one_winner_when_the_lock_is_let_go() {
    let db = Db::with_job("job-1");
    let owners = ["w0", "w1", "w2", "w3", "w4", "w5"];
    let what = "claim_many of six owners started while the write lock was held, then let go";
    let answers = raced(what, &db, "job-1", &owners, 10.0, 5.0);
    one_winner(what, &answers, "Some(1)", "None", ONE_WINNER);
    stored_owner_won(
        "answer given to the stored owner",
        &db,
        "job-1",
        &owners,
        &answers,
        "Some(1)",
    );
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(8);
}
