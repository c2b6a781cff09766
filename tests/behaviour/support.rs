//! What every step of the suite shares: a fresh database per test, reading the
//! stored rows through a connection of the test's own, holding the write lock,
//! and reporting an observation so that a learner sees what was looked at.
//!
//! Nothing here calls the implementation except `Db::new` and `Db::with_job`
//! (steps 1 and 2), so a test of a later step is judged on what it observes,
//! not on how the implementation is written.

#![allow(dead_code)]

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};

use crate::lease;

/// A database file of the test's own, removed with every file beside it
/// when the test ends.
///
/// Its files are directly in the temporary directory (a trial's own): the
/// implementation may write there, so a directory of the test's own could be
/// swapped for a link out of the trial between two of the judge's opens. The
/// judge's connections refuse links (`connect`), and the files it writes
/// itself are created new, never through one (`create_beside`).
pub struct Db {
    /// `jobs-XXXXXX` in the temporary directory: every file of the test's
    /// begins with it.
    stem: PathBuf,
    pub path: PathBuf,
}

impl Db {
    /// A path where no database exists yet.
    pub fn empty() -> Db {
        let placeholder = tempfile::Builder::new()
            .prefix("jobs-")
            .tempfile()
            .expect("create a file of the test's own in the temporary directory");
        let stem = placeholder.path().to_path_buf();
        // The name stays reserved: the placeholder is kept, and the database
        // is beside it.
        let _ = placeholder.keep();
        let path = PathBuf::from(format!("{}.db", stem.display()));
        Db { stem, path }
    }

    /// A path for a file of the test's own beside the database (`name`
    /// distinguishes it), removed with it.
    pub fn beside(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("{}-{name}", self.stem.display()))
    }

    /// A database after `init_db`.
    pub fn new() -> Db {
        let db = Db::empty();
        lease::init_db(&db.path).expect("init_db on a fresh database");
        db
    }

    /// A database after `init_db` and `enqueue(job_id)`.
    pub fn with_job(job_id: &str) -> Db {
        let db = Db::new();
        let added = lease::enqueue(&db.path, job_id).expect("enqueue on a fresh database");
        assert!(added, "enqueue of a new job must return true");
        db
    }

    /// The stored row of `job_id`, read through a connection of the test's own.
    pub fn row(&self, job_id: &str) -> Option<Row> {
        let conn = connect(&self.path);
        conn.query_row(
            "SELECT owner, until, fence, result, done FROM jobs WHERE id = ?1",
            [job_id],
            |r| {
                Ok(Row {
                    owner: r.get(0)?,
                    until: r.get(1)?,
                    fence: r.get(2)?,
                    result: r.get(3)?,
                    done: r.get(4)?,
                })
            },
        )
        .optional()
        .expect("read the jobs row through a separate connection")
    }

    /// Every stored row, ordered by id: what "nothing changed" is checked against.
    pub fn rows(&self) -> Vec<(String, Row)> {
        let conn = connect(&self.path);
        let mut stmt = conn
            .prepare("SELECT id, owner, until, fence, result, done FROM jobs ORDER BY id")
            .expect("prepare a read of every row");
        stmt.query_map([], |r| {
            Ok((
                r.get(0)?,
                Row {
                    owner: r.get(1)?,
                    until: r.get(2)?,
                    fence: r.get(3)?,
                    result: r.get(4)?,
                    done: r.get(5)?,
                },
            ))
        })
        .expect("read every row through a separate connection")
        .collect::<Result<_, _>>()
        .expect("read every row through a separate connection")
    }

    /// Stores `row` for `job_id` directly, bypassing the implementation: the way
    /// a test sets up a state (a done job, a high fence) without relying on the
    /// steps that would lead there.
    pub fn put(&self, job_id: &str, row: Row) {
        let conn = connect(&self.path);
        conn.execute(
            "INSERT OR REPLACE INTO jobs (id, owner, until, fence, result, done)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                job_id, row.owner, row.until, row.fence, row.result, row.done
            ],
        )
        .expect("store a row directly through a separate connection");
    }

    /// Takes the database's write lock on a connection of the test's own and
    /// keeps it until the returned guard is dropped.
    pub fn hold_write_lock(&self) -> WriteLock {
        let conn = connect(&self.path);
        conn.execute_batch("BEGIN IMMEDIATE")
            .expect("take the write lock on a separate connection");
        WriteLock {
            conn,
            path: self.path.clone(),
        }
    }
}

/// Creates the empty file `path`, which must not exist yet: never through a
/// link the implementation planted there (`O_CREAT | O_EXCL` follows none).
fn create_beside(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(drop)
}

impl Drop for Db {
    /// Removes every file of the test's (a link among them is removed, not
    /// followed).
    fn drop(&mut self) {
        let (Some(dir), Some(stem)) = (self.stem.parent(), self.stem.file_name()) else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let stem = stem.as_encoded_bytes();
        for entry in entries.flatten() {
            if entry.file_name().as_encoded_bytes().starts_with(stem) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// A connection of the test's own, separate from any the implementation opens.
/// It refuses a path through a symbolic link (`SQLITE_OPEN_NOFOLLOW`): the
/// implementation may plant one where the database is, and the judge runs
/// uncaged.
pub fn connect(path: &Path) -> Connection {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(path, flags).expect("open the test's own connection");
    conn.busy_timeout(Duration::from_secs(10))
        .expect("set a busy timeout on the test's own connection");
    conn
}

/// The write lock of a database, held by the test until dropped.
pub struct WriteLock {
    conn: Connection,
    path: PathBuf,
}

impl WriteLock {
    /// Waits until `n` connections besides the lock's own have the database
    /// open (at most 2 s): the claimers a test started are then under way,
    /// however slow the machine. Counts the open files of the processes near
    /// this one (Linux's /proc: `holders`); where those cannot be read, or an
    /// implementation shares connections, it waits the 2 s or not at all.
    pub fn wait_for_connections(&self, n: usize) {
        let Ok(target) = std::fs::canonicalize(&self.path) else {
            return;
        };
        let deadline = Instant::now() + Duration::from_secs(2);
        while let Some(holders) = holders(&target) {
            let open: usize = holders.iter().map(|h| h.open).sum();
            if open > n || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits until the `n` claimers a test started have done all they can
    /// while the lock is held, looking every 5 ms (Linux's /proc: `holders`):
    ///
    /// - once all `n` have their connections open (within 2 s), until every
    ///   thread of every other process that has the database open is asleep
    ///   (blocked: in SQLite's busy wait for this lock, or on another thread)
    ///   or gone, on two looks in a row (within 2 s more);
    /// - before that, where one other process has it open (a server whose
    ///   threads are the claimers), started by this one or where none of the
    ///   processes this one started runs this program (claimers of its own,
    ///   whose servers might be out of sight), as soon as every thread of that
    ///   process, of this one (but the one waiting) and of those it started
    ///   has been asleep on `ALL_ASLEEP_LOOKS` looks in a row: nothing can go
    ///   on until the lock is let go (the claimers wait on each other before
    ///   they connect, a leader claiming first). The request that starts the
    ///   claimers is sent by a thread of this process, and a server that has
    ///   it to read is runnable, so this never holds before they start;
    /// - when 2 s pass without all `n` connections open, as before this
    ///   early way out existed: the claimers that have the database open by
    ///   then, or the 400 ms window if none has.
    ///
    /// A runnable thread, running or waiting for a processor, is not asleep,
    /// so this holds however loaded the machine is: a claim that reads
    /// outside the write lock has read by then, on every run, and a correct
    /// one waits at the lock. Where /proc cannot be read, or the claimers are
    /// threads of this very process, the 400 ms window. Who the claimers are
    /// is read at every look until all have their connections open.
    pub fn wait_for_claimers(&self, n: usize) {
        /// Looks in a row, 5 ms apart, on which everything watched is asleep
        /// before all connections are open.
        const ALL_ASLEEP_LOOKS: u32 = 20;
        let seen = std::fs::canonicalize(&self.path).is_ok_and(|target| {
            let me = std::process::id();
            let this_thread = std::fs::read_link("/proc/thread-self").ok();
            let others = |holders: &[Holder]| -> Vec<u32> {
                holders.iter().map(|h| h.pid).filter(|p| *p != me).collect()
            };
            let connecting = Instant::now() + Duration::from_secs(2);
            let mut asleep_looks = 0;
            let (claimers, all_open) = loop {
                let Some(near) = holders(&target) else {
                    return false;
                };
                let open: usize = near.iter().map(|h| h.open).sum();
                if open > n || Instant::now() >= connecting {
                    break (others(&near), open > n);
                }
                let asleep = match others(&near)[..] {
                    [server] => {
                        let mut watched = descendants(me);
                        (watched.contains(&server)
                            || !watched.iter().any(|pid| runs_my_program(*pid)))
                            && {
                                watched.extend([me, server]);
                                watched.iter().all(|pid| {
                                    all_threads_asleep(
                                        *pid,
                                        this_thread.as_deref().filter(|_| *pid == me),
                                    )
                                })
                            }
                    }
                    _ => false,
                };
                asleep_looks = if asleep { asleep_looks + 1 } else { 0 };
                if asleep_looks >= ALL_ASLEEP_LOOKS {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            if claimers.is_empty() {
                // The claimers are threads of this process (the suite run
                // in-process, as a learner's `cargo test` runs it), beside
                // the other tests' threads, or none has the database open
                // after 2 s: the window.
                return false;
            }
            let mut claimers = claimers;
            let deadline = Instant::now() + Duration::from_secs(2);
            let mut quiet_looks = 0;
            loop {
                if !all_open {
                    claimers = holders(&target).map_or(claimers, |near| others(&near));
                }
                let quiet = claimers.iter().all(|pid| all_threads_asleep(*pid, None));
                quiet_looks = if quiet { quiet_looks + 1 } else { 0 };
                if quiet_looks >= 2 || Instant::now() >= deadline {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        if !seen {
            std::thread::sleep(Duration::from_millis(400));
        }
    }
}

/// A process that has the database open, and how many times.
struct Holder {
    pid: u32,
    open: usize,
}

/// The processes among this one, its parent's other children and their
/// descendants that have `target` open; `None` when this process's own
/// files cannot be read. The parent's: a server may be
/// started for this process by another (a Python server forked for the
/// trial by fencelab's forking server, a child of the process that started
/// this one). Left out, as none can have this test's database open: the
/// parent itself (the runner, or whatever started this process), and its
/// other children that run this very program, with all they started (under
/// a runner, the other trials' judges: reading their cages' files at every
/// look cost a batch's race tests more processor time than all the rest of
/// the batch). A judge of a Python trial forked by fencelab's zygote looks
/// under the zygote's parent (`started_by`): its servers are the runner's
/// forking server's, and the zygote's other children other trials' judges.
fn holders(target: &Path) -> Option<Vec<Holder>> {
    std::fs::read_dir("/proc/self/fd").ok()?;
    let me = std::process::id();
    let mut pending = match started_by() {
        0 | 1 => vec![me],
        parent => {
            let another_of_mine = |pid: u32| pid != me && runs_my_program(pid);
            let mut near: Vec<u32> = children(parent)
                .into_iter()
                .filter(|pid| !another_of_mine(*pid))
                .collect();
            // This process, where the zygote forked it.
            if !near.contains(&me) {
                near.push(me);
            }
            near
        }
    };
    let mut holders = Vec::new();
    while let Some(pid) = pending.pop() {
        if let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
            let open = fds
                .flatten()
                .filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == target))
                .count();
            if open > 0 {
                holders.push(Holder { pid, open });
            }
        }
        pending.extend(children(pid));
    }
    Some(holders)
}

/// The process that started this one: its parent, or where that is the
/// judge's zygote, which forked this judge for the process that started
/// the trial (fencelab's runner, `bridge::judge_zygote`), the zygote's
/// parent.
fn started_by() -> u32 {
    let parent = std::os::unix::process::parent_id();
    // Only a Python trial's servers are another's (the runner's forking
    // server's, handed to the judge as `FENCELAB_ZYGOTE`); a Rust trial's
    // are this judge's own, and the zygote (one thread) is quicker to look
    // under than the runner (dozens).
    if std::env::var_os("FENCELAB_ZYGOTE").is_none() {
        return parent;
    }
    let args = std::fs::read(format!("/proc/{parent}/cmdline")).unwrap_or_default();
    if args.split(|&b| b == 0).nth(1) != Some(JUDGE_ZYGOTE_ARG.as_bytes()) {
        return parent;
    }
    let stat = std::fs::read_to_string(format!("/proc/{parent}/stat")).unwrap_or_default();
    // The field after the state, after the name (which is in parentheses).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(parent)
}

/// The first argument of a judge started as fencelab's zygote
/// (`bridge::judge_zygote::ZYGOTE_ARG`).
const JUDGE_ZYGOTE_ARG: &str = "--fencelab-judge-zygote";

/// Whether `pid` runs the program this process runs.
fn runs_my_program(pid: u32) -> bool {
    static MINE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let mine = MINE.get_or_init(|| std::fs::read_link("/proc/self/exe").ok());
    mine.is_some() && std::fs::read_link(format!("/proc/{pid}/exe")).ok() == *mine
}

/// Every process `pid` started, and every one they started, to the last.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut pending = children(pid);
    while let Some(child) = pending.pop() {
        pending.extend(children(child));
        found.push(child);
    }
    found
}

/// The children of `pid`, those of every one of its threads.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether no thread of `pid` can run now: each is asleep (`S`: blocked until
/// something wakes it), stopped or dead; none runnable (`R`) or in an
/// uninterruptible wait (`D`, which ends by itself). A process that is gone
/// has no thread that can run. `but`: a thread of it not looked at
/// (`/proc/thread-self`).
fn all_threads_asleep(pid: u32, but: Option<&Path>) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.flatten().all(|task| {
        but.is_some_and(|but| but.file_name() == Some(&task.file_name()))
            || std::fs::read_to_string(task.path().join("stat")).map_or(true, |stat| {
                // The state follows the name, which is in parentheses and may
                // hold anything, parentheses included.
                let state = stat
                    .rfind(')')
                    .and_then(|end| stat[end + 1..].trim_start().chars().next());
                !matches!(state, Some('R' | 'D'))
            })
    })
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }
}

/// A row of `jobs` as SQLite stores it (`done` as the stored integer).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub owner: Option<String>,
    pub until: f64,
    pub fence: i64,
    pub result: Option<String>,
    pub done: i64,
}

impl Row {
    /// The row of a job that was enqueued and never touched since.
    pub fn fresh() -> Row {
        Row {
            owner: None,
            until: 0.0,
            fence: 0,
            result: None,
            done: 0,
        }
    }

    /// The row of a job leased to `owner` with `fence` until `until`.
    pub fn held(owner: &str, fence: i64, until: f64) -> Row {
        Row {
            owner: Some(owner.to_string()),
            until,
            fence,
            result: None,
            done: 0,
        }
    }

    /// The row of a job completed by `owner` under `fence`.
    pub fn done(owner: &str, fence: i64, until: f64, result: &str) -> Row {
        Row {
            owner: Some(owner.to_string()),
            until,
            fence,
            result: Some(result.to_string()),
            done: 1,
        }
    }
}

/// Fails the test unless `actual == expected`, saying what was observed.
///
/// The message has a fixed shape (`observation:`, `expected:`, `actual:`; a value
/// that spans several lines follows on lines indented by four spaces) so that
/// `fencelab check` can show the two side by side.
#[track_caller]
pub fn observe<T: PartialEq + Debug>(what: &str, actual: T, expected: T) {
    if actual != expected {
        panic!(
            "observation: {what}\n{}{}",
            field("expected", &expected),
            field("actual", &actual)
        );
    }
}

/// Fails the test with an observation that is not a plain equality.
#[track_caller]
pub fn observe_that(what: &str, holds: bool, actual: impl Debug, expected: &str) {
    if !holds {
        panic!(
            "observation: {what}\nexpected: {expected}\n{}",
            field("actual", &actual)
        );
    }
}

fn field(name: &str, value: &impl Debug) -> String {
    let short = format!("{value:?}");
    if short.len() <= 60 && !short.contains('\n') {
        format!("{name}: {short}\n")
    } else {
        let long = format!("{value:#?}");
        let indented: String = long.lines().map(|l| format!("    {l}\n")).collect();
        format!("{name}:\n{indented}")
    }
}

/// A sentence shown as an observation's actual value as it is (no quotes).
pub struct Said(pub String);

impl Debug for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The index of the single answer that is `win`, failing the test with the
/// observation `what` unless exactly one is and every other is `lose`.
///
/// Which claimer wins a race is the scheduler's choice, and so, where an
/// implementation races, is how many lose it and which: a failing test shows
/// what the answers amount to (`more than one answer is Some(1)`), never
/// their order, a winner's index or a count, so that the same implementation
/// is told the same thing on every run.
#[track_caller]
pub fn one_winner(what: &str, answers: &[Answer], win: &str, lose: &str, expected: &str) -> usize {
    let winners: Vec<usize> = (0..answers.len()).filter(|&i| answers[i] == *win).collect();
    let holds = winners.len() == 1 && answers.iter().all(|a| a == win || a == lose);
    if !holds {
        observe_that(what, false, race_outcome(answers, win, lose), expected);
    }
    winners[0]
}

/// What a race's answers amount to, in words that hold on every run: the
/// answers that are neither `win` nor `lose` (each once, sorted), else whether
/// none or several won.
fn race_outcome(answers: &[Answer], win: &str, lose: &str) -> Said {
    let mut others: Vec<String> = answers
        .iter()
        .filter(|a| *a != win && *a != lose)
        .map(|a| format!("{a:?}"))
        .collect();
    others.sort_by_key(|a| counted(a));
    others.dedup();
    let winners = answers.iter().filter(|a| *a == win).count();
    if !others.is_empty() {
        let others = others.join(", ");
        Said(format!("an answer other than {win} or {lose}: {others}"))
    } else if winners == 0 {
        Said(format!("no answer is {win}: every one is {lose}"))
    } else {
        Said(format!("more than one answer is {win}"))
    }
}

/// `text` in pieces that sort as people count: each run of digits by its
/// value (`Some(2)` before `Some(10)`), the rest as text.
fn counted(text: &str) -> Vec<(String, Option<u128>)> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let words = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let digits = rest[words..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(rest.len(), |end| words + end);
        let value = rest[words..digits].parse().ok();
        pieces.push((rest[..words].to_string(), value));
        rest = &rest[digits..];
    }
    pieces
}

/// Fails the test with the observation `what` unless `answers` is `Ok` with
/// one answer per owner (`owners` of them), each `None`: no owner may claim.
///
/// Where an implementation lets several owners claim, which owner got which
/// answer is the scheduler's choice (three owners of a held job given fences
/// 6, 7 and 8 in any order): a failing test shows the answers other than
/// `None`, each once and sorted, never their order or how many there are, so
/// that the same implementation is told the same thing on every run.
#[track_caller]
pub fn nobody_claims(
    what: &str,
    answers: &Result<Vec<Option<i64>>, lease::LeaseError>,
    owners: usize,
) {
    let expected = format!("{:?}", ok(vec![None::<i64>; owners]));
    let got = match answers {
        Ok(got) => got,
        Err(_) => return observe_that(what, false, kind(answers), &expected),
    };
    let fences: std::collections::BTreeSet<i64> = got.iter().flatten().copied().collect();
    if fences.is_empty() {
        // Only `None`s: the answers read the same in any order.
        return observe(what, kind(answers), Answer::from(expected));
    }
    let others: Vec<String> = fences.iter().map(|f| format!("Some({f})")).collect();
    let others = others.join(", ");
    observe_that(
        what,
        false,
        Said(format!("an answer other than None: {others}")),
        &expected,
    );
}

/// Fails the test with the observation `what` unless the row of `job_id`
/// names as its owner the one of `owners` whose answer was `win`: observed as
/// the answer the stored owner was given, never by a name (which owner wins
/// varies from run to run).
#[track_caller]
pub fn stored_owner_won(
    what: &str,
    db: &Db,
    job_id: &str,
    owners: &[&str],
    answers: &[Answer],
    win: &str,
) {
    let owner = db.row(job_id).and_then(|r| r.owner);
    match owner
        .as_deref()
        .map(|o| owners.iter().position(|x| *x == o))
    {
        Some(Some(at)) => observe(what, answers[at].clone(), Answer::from(win)),
        Some(None) => {
            let owner = owner.unwrap_or_default();
            observe_that(
                what,
                false,
                Said(format!("the row's owner {owner:?} is none of the claimers")),
                win,
            )
        }
        None => observe_that(what, false, Said("the row has no owner".to_string()), win),
    }
}

/// The row of `job_id` with its owner, when it is `winner`, written as
/// `WINNER`: the rest of a winner's row is observed the same on every run,
/// whichever owner won.
pub fn winner_row(db: &Db, job_id: &str, winner: &str) -> Option<Row> {
    db.row(job_id).map(|mut row| {
        if row.owner.as_deref() == Some(winner) {
            row.owner = Some(WINNER.to_string());
        }
        row
    })
}

/// How `winner_row` writes the owner who won.
pub const WINNER: &str = "<the winner>";

/// `claim_many` of `owners` started while the test holds the write lock,
/// which it lets go once every claimer has its connection open (and a while
/// after): a claim that reads outside the write lock then reads before any
/// claimer writes, so a race shows, and shows the same way, on every run. The
/// answers as `kind` writes them, or its error as `kind` writes it.
pub fn claim_many_racing(
    db: &Db,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Answer>, Answer> {
    claim_many_locked(db, job_id, owners, now, ttl)
        .map(|answers| {
            answers
                .iter()
                .map(|a| Answer::from(format!("{a:?}")))
                .collect()
        })
        .map_err(|e| kind(&Err::<(), _>(e)))
}

/// `claim_many` started while the test holds the write lock, let go as
/// `claim_many_racing` lets it go; its own answer. Every claimer meets the
/// lock on every run: one that does not wait for a busy database fails the
/// same way each time, where a `claim_many` started on a free database meets
/// a lock only when two of its own claims happen to overlap (a test of a held
/// job passed one run and failed the next with "database is locked").
pub fn claim_many_locked(
    db: &Db,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<i64>>, lease::LeaseError> {
    let lock = db.hold_write_lock();
    std::thread::scope(|s| {
        let claims = s.spawn(|| lease::claim_many(&db.path, job_id, owners, now, ttl));
        lock.wait_for_claimers(owners.len());
        drop(lock);
        joined(claims)
    })
}

/// What a thread of the test returned; where it panicked (its call found
/// the implementation's process gone, say), the test fails with that panic
/// alone, as its own, rather than add `called Result::unwrap() on an Err
/// value: Any { .. }`, which says nothing.
pub fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// How `kind` renders `Err(LeaseError::InvalidTtl(_))`.
pub const INVALID_TTL: &str = "Err(InvalidTtl(_))";
/// How `kind` renders `Err(LeaseError::InvalidNow(_))`.
pub const INVALID_NOW: &str = "Err(InvalidNow(_))";

/// A call's answer as text: the value of an `Ok`, and of an error its
/// variant, since the contract says nothing of error payloads or messages.
/// Answers compare by that text alone; a database error also carries
/// SQLite's message (`table jobs already exists`), which a failing test
/// shows but no comparison looks at.
#[derive(Clone)]
pub struct Answer {
    pub text: String,
    /// What the error said, shown only.
    pub detail: Option<String>,
}

/// How `kind` renders `Err(LeaseError::Db(_))`.
pub const DB_ERROR: &str = "Err(Db(_))";

impl Answer {
    /// An answer as `Debug` prints it (a child process's, say): a database
    /// error's message is taken apart again.
    pub fn parse(text: &str) -> Answer {
        match text
            .strip_prefix("Err(Db(")
            .and_then(|rest| rest.strip_suffix("))"))
            .filter(|inner| *inner != "_")
        {
            Some(inner) => Answer {
                text: DB_ERROR.to_string(),
                detail: Some(inner.trim_matches('"').to_string()),
            },
            None => Answer::from(text),
        }
    }
}

impl PartialEq for Answer {
    fn eq(&self, other: &Answer) -> bool {
        self.text == other.text
    }
}

impl Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.detail {
            Some(detail) => write!(f, "Err(Db({detail:?}))"),
            None => f.write_str(&self.text),
        }
    }
}

impl From<&str> for Answer {
    fn from(text: &str) -> Answer {
        Answer {
            text: text.to_string(),
            detail: None,
        }
    }
}

impl From<String> for Answer {
    fn from(text: String) -> Answer {
        Answer { text, detail: None }
    }
}

impl PartialEq<str> for Answer {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for Answer {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

/// How a call answered, as an `Answer`.
pub fn kind<T: Debug>(result: &Result<T, lease::LeaseError>) -> Answer {
    match result {
        Ok(value) => ok(value),
        Err(lease::LeaseError::InvalidTtl(_)) => Answer::from(INVALID_TTL),
        Err(lease::LeaseError::InvalidNow(_)) => Answer::from(INVALID_NOW),
        // On one line: SQLite quotes the statement, newlines and all.
        Err(lease::LeaseError::Db(err)) => Answer {
            text: DB_ERROR.to_string(),
            detail: Some(
                err.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        },
    }
}

/// The expected answer `Ok(value)`, rendered as `kind` renders answers.
pub fn ok<T: Debug>(value: T) -> Answer {
    Answer::from(format!("Ok({value:?})"))
}

/// The environment variable that turns the suite's child-process helper test into
/// a claimer (see `claim_in_processes`).
pub const CHILD_CLAIM_ENV: &str = "FENCELAB_CHILD_CLAIM";
/// The full name of the helper test that claims in a child process.
pub const CHILD_CLAIM_TEST: &str = "step4::claim_in_child_process";
const CHILD_RESULT_PREFIX: &str = "fencelab-child-claim-result: ";
const SEPARATOR: char = '\u{1f}';

/// Claims `job_id` once per owner, each from a separate OS process, all started
/// while the test holds the write lock and let go together once every child is
/// about to claim. Returns each child's answer as `kind` renders it.
///
/// The children are this test binary run again on its `CHILD_CLAIM_TEST` helper,
/// so the same implementation is judged in every process.
pub fn claim_in_processes(
    db: &Db,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Vec<Answer> {
    let exe = std::env::current_exe().expect("find the test binary to run children");
    let lock = db.hold_write_lock();
    let children: Vec<_> = owners
        .iter()
        .map(|owner| {
            let ready = db.beside(&format!("ready-{owner}"));
            let spec = [
                db.path.display().to_string(),
                job_id.to_string(),
                owner.to_string(),
                format!("{:x}", now.to_bits()),
                format!("{:x}", ttl.to_bits()),
                ready.display().to_string(),
            ]
            .join(&SEPARATOR.to_string());
            let child = Command::new(&exe)
                .args(["--exact", CHILD_CLAIM_TEST, "--ignored", "--nocapture"])
                .args(["--test-threads", "1"])
                .env(CHILD_CLAIM_ENV, spec)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start a child process to claim");
            (child, ready)
        })
        .collect();
    // Let go of the lock once every child is about to claim (or after a while, so
    // that a child that cannot start does not hang the test).
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline
        && !children
            .iter()
            .all(|(_, ready)| std::fs::symlink_metadata(ready).is_ok())
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    lock.wait_for_claimers(owners.len());
    drop(lock);
    children
        .into_iter()
        .map(|(child, _)| {
            let out = child.wait_with_output().expect("wait for a claiming child");
            let stdout = String::from_utf8_lossy(&out.stdout);
            // libtest prints the test's name on the same line, before the answer.
            let answer = stdout
                .lines()
                .find_map(|l| l.split_once(CHILD_RESULT_PREFIX).map(|(_, a)| a));
            match answer {
                // An answer counts only from a child that then ended well: a
                // child whose implementation left a process behind answers and
                // then fails (its judge says so), and must not win the race.
                Some(answer) if out.status.success() => Answer::parse(answer.trim()),
                Some(answer) => Answer::from(format!(
                    "{} and then the child failed ({}): {}",
                    answer.trim(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
                None => Answer::from(format!(
                    "no answer ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
            }
        })
        .collect()
}

/// The body of the `CHILD_CLAIM_TEST` helper: claims once as described by the
/// environment and prints the answer. Does nothing when run as a plain test.
pub fn child_claim() {
    let Ok(spec) = std::env::var(CHILD_CLAIM_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split(SEPARATOR).collect();
    let [path, job_id, owner, now, ttl, ready] = parts[..] else {
        panic!("malformed {CHILD_CLAIM_ENV}: {spec:?}");
    };
    let float = |hex: &str| f64::from_bits(u64::from_str_radix(hex, 16).expect("f64 bits in hex"));
    // Ready only once the implementation answers (under fencelab, the first
    // call starts its process), so that the parent's window is not spent
    // starting it: a call on a database of the child's own.
    let _ = lease::init_db(format!("{ready}.warm-up.db"));
    create_beside(Path::new(ready)).expect("signal that the child is about to claim");
    let answer = lease::claim(path, job_id, owner, float(now), float(ttl));
    println!("{CHILD_RESULT_PREFIX}{:?}", kind(&answer));
}
