//! Step 8, claim_many: every owner claims at once (a thread and a connection
//! each); the answers come back in the owners' order, and on a free job exactly
//! one of them wins. A claim that decides outside the write lock lets several
//! win: the tests start the claimers while the lock is held, then let go.

use std::time::Duration;

use crate::lease;
use crate::support::{Db, Row, kind, observe, observe_that, ok};

/// The index of the single `Some(1)`, failing the test unless there is exactly one
/// winner and everybody else got `None`.
#[track_caller]
fn single_winner(what: &str, answers: &[Option<i64>]) -> usize {
    let winners: Vec<usize> = (0..answers.len())
        .filter(|&i| answers[i].is_some())
        .collect();
    observe_that(
        what,
        winners.len() == 1 && answers[winners[0]] == Some(1),
        answers,
        "exactly one Some(1), None for every other owner",
    );
    winners[0]
}

#[test]
fn one_winner_on_a_fresh_job() {
    let db = Db::with_job("job-1");
    let owners = ["w0", "w1", "w2", "w3"];
    let answers = lease::claim_many(&db.path, "job-1", &owners, 10.0, 5.0).unwrap();
    observe("number of answers for four owners", answers.len(), 4);
    single_winner("claim_many of four owners on a fresh job", &answers);
}

#[test]
fn winner_index_matches_the_stored_owner() {
    let db = Db::new();
    let owners = ["w0", "w1", "w2", "w3", "w4", "w5"];
    for round in 0..8 {
        let job = format!("job-{round}");
        lease::enqueue(&db.path, &job).unwrap();
        let answers = lease::claim_many(&db.path, &job, &owners, 10.0, 5.0).unwrap();
        observe("number of answers for six owners", answers.len(), 6);
        let winner = single_winner("claim_many of six owners on a fresh job", &answers);
        observe(
            &format!("stored row of {job} (the winner is at index {winner})"),
            db.row(&job),
            Some(Row::held(owners[winner], 1, 15.0)),
        );
    }
}

#[test]
fn many_owners_repeatedly() {
    let db = Db::new();
    let names: Vec<String> = (0..16).map(|i| format!("worker-{i:02}")).collect();
    let owners: Vec<&str> = names.iter().map(String::as_str).collect();
    for round in 0..5 {
        let job = format!("job-{round}");
        lease::enqueue(&db.path, &job).unwrap();
        let answers = lease::claim_many(&db.path, &job, &owners, 1.0, 1.0).unwrap();
        observe("number of answers for sixteen owners", answers.len(), 16);
        let winner = single_winner("claim_many of sixteen owners on a fresh job", &answers);
        observe(
            "stored owner",
            db.row(&job).and_then(|r| r.owner),
            Some(owners[winner].to_string()),
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
    let answers = lease::claim_many(&db.path, "job-1", &["w0", "w1", "w2"], 20.0, 5.0);
    observe(
        "claim_many on a held job",
        kind(&answers),
        ok([None::<i64>; 3]),
    );
    observe(
        "rows after claim_many on a held job (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn missing_job_gives_none_to_everybody() {
    let db = Db::new();
    let answers = lease::claim_many(&db.path, "ghost", &["w0", "w1"], 20.0, 5.0);
    observe(
        "claim_many on a missing job",
        kind(&answers),
        ok([None::<i64>; 2]),
    );
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
    let owners = ["w0", "w1", "w2"];
    let answers = lease::claim_many(&db.path, "job-1", &owners, 10.0, 2.5).unwrap();
    let winners: Vec<(usize, i64)> = answers
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.map(|f| (i, f)))
        .collect();
    observe_that(
        "claim_many of three owners on an expired job whose fence is 6",
        winners.len() == 1 && winners[0].1 == 7 && answers.len() == 3,
        &answers,
        "exactly one Some(7), None for the others",
    );
    if let [(winner, _)] = winners[..] {
        observe(
            "stored row",
            db.row("job-1"),
            Some(Row::held(owners[winner], 7, 12.5)),
        );
    }
}

#[test]
fn one_winner_when_the_lock_is_let_go() {
    let db = Db::with_job("job-1");
    let owners = ["w0", "w1", "w2", "w3", "w4"];
    let lock = db.hold_write_lock();
    let answers = std::thread::scope(|s| {
        let claims = s.spawn(|| lease::claim_many(&db.path, "job-1", &owners, 10.0, 5.0));
        lock.wait_for_connections(owners.len());
        std::thread::sleep(Duration::from_millis(400));
        drop(lock);
        claims.join().unwrap().map_err(|e| e.to_string())
    });
    let answers = match answers {
        Ok(answers) => answers,
        Err(error) => panic!(
            "observation: claim_many started while another connection held the write lock\n\
             expected: Ok(..) after waiting for the lock\nactual: Err({error:?})"
        ),
    };
    let winner = single_winner(
        "claim_many of five owners started while the write lock was held, then let go",
        &answers,
    );
    observe(
        "stored owner",
        db.row("job-1").and_then(|r| r.owner),
        Some(owners[winner].to_string()),
    );
}
