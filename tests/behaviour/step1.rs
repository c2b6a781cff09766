//! Step 1, init_db: the `jobs` table with the contract's schema, created
//! idempotently. Running `init_db` again on a live database must change no row:
//! a reset would make old fences valid again.

use crate::lease;
use crate::support::{Db, Row, connect, kind, observe, ok};

/// `PRAGMA table_info(jobs)`: (name, declared type in upper case, not null, primary key).
fn columns(db: &Db) -> Vec<(String, String, bool, bool)> {
    let conn = connect(&db.path);
    let mut stmt = conn.prepare("PRAGMA table_info(jobs)").unwrap();
    let mut columns: Vec<(String, String, bool, bool)> = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?.to_uppercase(),
                r.get::<_, i64>(3)? != 0,
                r.get::<_, i64>(5)? != 0,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    columns.sort();
    columns
}

fn column(db: &Db, name: &str) -> Option<(String, String, bool, bool)> {
    columns(db).into_iter().find(|c| c.0 == name)
}

#[test]
fn creates_the_six_columns() {
    let db = Db::new();
    let names: Vec<String> = columns(&db).into_iter().map(|c| c.0).collect();
    observe(
        "column names of jobs after init_db (PRAGMA table_info, sorted)",
        names,
        ["done", "fence", "id", "owner", "result", "until"]
            .map(String::from)
            .to_vec(),
    );
}

#[test]
fn declares_the_contract_types() {
    let db = Db::new();
    let types: Vec<(String, String)> = columns(&db).into_iter().map(|c| (c.0, c.1)).collect();
    observe(
        "declared column types of jobs (PRAGMA table_info)",
        types,
        [
            ("done", "INTEGER"),
            ("fence", "INTEGER"),
            ("id", "TEXT"),
            ("owner", "TEXT"),
            ("result", "TEXT"),
            ("until", "REAL"),
        ]
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .to_vec(),
    );
}

#[test]
fn id_is_the_primary_key() {
    let db = Db::new();
    let keys: Vec<String> = columns(&db)
        .into_iter()
        .filter(|c| c.3)
        .map(|c| c.0)
        .collect();
    observe("primary key columns of jobs", keys, vec!["id".to_string()]);
    let conn = connect(&db.path);
    conn.execute("INSERT INTO jobs (id) VALUES ('a')", [])
        .unwrap();
    let duplicate = conn.execute("INSERT INTO jobs (id) VALUES ('a')", []);
    observe(
        "a second row with the same id is refused by SQLite",
        duplicate.is_err(),
        true,
    );
}

#[test]
fn until_fence_and_done_are_not_null() {
    let db = Db::new();
    for name in ["until", "fence", "done"] {
        let not_null = column(&db, name).map(|c| c.2);
        observe(&format!("column {name} is NOT NULL"), not_null, Some(true));
    }
    for name in ["owner", "result"] {
        let not_null = column(&db, name).map(|c| c.2);
        observe(
            &format!("column {name} accepts NULL"),
            not_null,
            Some(false),
        );
    }
}

#[test]
fn a_bare_insert_gets_the_defaults() {
    let db = Db::new();
    // A table without the defaults refuses this insert; the row is then
    // missing, which is what is observed (the stored state, not a panic).
    let _ = connect(&db.path).execute("INSERT INTO jobs (id) VALUES ('bare')", []);
    observe(
        "row inserted with only an id",
        db.row("bare"),
        Some(Row::fresh()),
    );
}

#[test]
fn init_again_on_a_fresh_database_succeeds() {
    let db = Db::new();
    let again = lease::init_db(&db.path);
    observe("second init_db on the same database", kind(&again), ok(()));
    observe("rows after the second init_db", db.rows(), vec![]);
}

#[test]
fn init_again_keeps_every_row() {
    let db = Db::new();
    db.put("held", Row::held("worker-a", 7, 1234.5));
    db.put("done", Row::done("worker-b", 3, 99.25, "report"));
    db.put("fresh", Row::fresh());
    let before = db.rows();
    let again = lease::init_db(&db.path);
    observe("second init_db on a live database", kind(&again), ok(()));
    observe(
        "rows after the second init_db (must be unchanged)",
        db.rows(),
        before,
    );
}

#[test]
fn init_creates_the_database_file() {
    let db = Db::empty();
    let created = lease::init_db(&db.path);
    observe(
        "init_db on a path where no database exists",
        kind(&created),
        ok(()),
    );
    observe("the jobs table exists and is empty", db.rows(), vec![]);
}

/// Random calls of the whole contract agree with it at every call of this
/// step's function (`random`: the bugs nobody wrote a test for).
#[test]
fn random_calls_agree_with_the_contract() {
    crate::random::random_calls_agree(1);
}
