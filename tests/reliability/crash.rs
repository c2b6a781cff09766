//! Crash test: worker processes claim, renew, complete and release many jobs in
//! one database while the coordinator kills some of them with SIGKILL at
//! random moments and starts replacements.
//!
//! Why: the lease contract is about what survives when a holder stalls or dies
//! in the middle of a call. A worker killed inside a write transaction leaves a
//! hot journal and a held lock behind; a worker that stalls past its lease
//! wakes up with a stale fence. Afterwards the database must pass
//! `PRAGMA integrity_check`, and every answer any worker was given must be
//! consistent with the final rows (see `history.rs` for the invariants and
//! what the logs can prove).
//!
//! How:
//! - Workers are separate OS processes: this test binary re-executed with
//!   `--exact crash::worker --ignored`, configured through `FENCELAB_CRASH_*`
//!   environment variables.
//! - Time is simulated, shared through a file (each change under its lock): every call a
//!   worker makes advances the clock by one tick, so leases expire as work goes
//!   on, whatever the speed of the machine. A stalling worker sleeps and then
//!   finds the clock moved to its lease's end or a little past it (exactly at
//!   the end often, to exercise `now == until`); it then tries to renew,
//!   complete or release with its stale fence, or takes the job back and lets a
//!   "zombie" use the old fence. The clock only moves forward.
//! - The same file holds a global sequence counter that orders the log lines
//!   of all workers, and the stop flag.
//! - Kills are scheduled at random points of that sequence (not of wall-clock
//!   time), so a loaded machine runs the same amount of work and kills.
//! - A fixed seed drives a small xorshift generator in the coordinator and in
//!   every worker; set `FENCELAB_CRASH_SEED` to try another one.

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use fencelab::lease::{self, Job};
use rusqlite::Connection;

use crate::history::{self, Run, Sample};

mod worker;

/// Jobs enqueued before the workers start.
const JOBS: u64 = 240;
/// Workers pick among this many jobs at a time: a window that slides along
/// the jobs as the simulated clock advances (new work keeps arriving), so
/// that workers contend for the same few jobs and take over expired leases.
const WINDOW: u64 = 10;
/// Ticks of the simulated clock per step of the window.
const TICKS_PER_JOB: u64 = 12;
/// Workers alive at any time.
const WORKERS: usize = 4;
/// Every lease is taken for this many ticks of the simulated clock.
const TTL: f64 = 10.0;
/// The run stops when the global sequence reaches this (two numbers per call).
const BUDGET: u64 = 5000;
/// Kills, at random points of the sequence.
const KILLS: usize = 12;
/// A run that has not used its budget by then stops anyway (a machine so
/// loaded that the run cannot finish). Far above what the budget takes on a
/// loaded machine (about 1 s quiet), so that the amount of work, and what the
/// run exercises, do not depend on the machine's speed.
const WALL_CLOCK_CAP: Duration = Duration::from_secs(60);
/// How long stopped workers get to exit.
const EXIT_GRACE: Duration = Duration::from_secs(20);
const DEFAULT_SEED: u64 = 0x00f3_9c3e_1ab5_2024;

const ENV_DB: &str = "FENCELAB_CRASH_DB";
const ENV_SHARED: &str = "FENCELAB_CRASH_SHARED";
const ENV_NAME: &str = "FENCELAB_CRASH_WORKER";
const ENV_SEED: &str = "FENCELAB_CRASH_SEED";
const ENV_LOG: &str = "FENCELAB_CRASH_LOG";

fn job_name(i: u64) -> String {
    format!("job{i:03}")
}

/// xorshift64*, seeded through splitmix64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Three counters in a file shared by the coordinator and all workers: the
/// simulated clock, the global sequence, the stop flag. Each change is made
/// under the file's lock, which a killed worker's end lets go; the mutex
/// orders the threads of one process, which share the lock.
struct Shared {
    file: File,
    threads: std::sync::Mutex<()>,
}

const SHARED_LEN: u64 = 3 * 8;

impl Shared {
    fn create(path: &Path) -> io::Result<Shared> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        file.set_len(SHARED_LEN)?;
        Ok(Shared::of(file))
    }

    fn open(path: &Path) -> io::Result<Shared> {
        Ok(Shared::of(
            OpenOptions::new().read(true).write(true).open(path)?,
        ))
    }

    fn of(file: File) -> Shared {
        Shared {
            file,
            threads: std::sync::Mutex::new(()),
        }
    }

    fn clock(&self) -> Counter<'_> {
        Counter(self, 0)
    }

    fn seq(&self) -> Counter<'_> {
        Counter(self, 1)
    }

    fn stop(&self) -> Counter<'_> {
        Counter(self, 2)
    }
}

/// One of `Shared`'s counters, by its slot.
struct Counter<'a>(&'a Shared, u64);

impl Counter<'_> {
    /// Sets the counter to `change` of its value, under the lock: its value
    /// before.
    fn update(&self, change: impl FnOnce(u64) -> u64) -> u64 {
        use std::os::unix::fs::FileExt;
        let Counter(shared, slot) = self;
        let _threads = shared.threads.lock().unwrap_or_else(|e| e.into_inner());
        shared.file.lock().expect("lock the shared counters");
        let mut bytes = [0u8; 8];
        (shared.file.read_exact_at(&mut bytes, slot * 8)).expect("read a shared counter");
        let old = u64::from_le_bytes(bytes);
        let new = change(old);
        if new != old {
            (shared.file.write_all_at(&new.to_le_bytes(), slot * 8))
                .expect("write a shared counter");
        }
        shared.file.unlock().expect("unlock the shared counters");
        old
    }

    fn load(&self) -> u64 {
        self.update(|v| v)
    }

    fn fetch_add(&self, n: u64) -> u64 {
        self.update(|v| v + n)
    }

    fn fetch_max(&self, n: u64) -> u64 {
        self.update(|v| v.max(n))
    }

    fn store(&self, n: u64) {
        self.update(|_| n);
    }
}

/// Helper run by the crash test: the body of one worker process. It is
/// ignored in normal runs and returns at once (passing) unless the crash test
/// started it with the `FENCELAB_CRASH_*` environment variables.
#[test]
#[ignore = "helper process of crash::sigkilled_workers_keep_the_contract"]
fn worker() {
    worker::main();
}

struct Process {
    name: String,
    child: Child,
}

/// Starts workers, kills them, samples the table; owns the run's files.
struct Coordinator {
    dir: PathBuf,
    db: PathBuf,
    shared_path: PathBuf,
    seed: u64,
    spawned: u64,
    alive: Vec<Process>,
    exited: Vec<(String, ExitStatus)>,
}

impl Coordinator {
    fn spawn(&mut self) {
        let name = format!("w{}", self.spawned);
        self.spawned += 1;
        let out = File::create(self.dir.join(format!("{name}.out"))).expect("worker output file");
        let child = Command::new(std::env::current_exe().expect("current test binary"))
            .args([
                "--exact",
                "crash::worker",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ENV_DB, &self.db)
            .env(ENV_SHARED, &self.shared_path)
            .env(ENV_NAME, &name)
            .env(
                ENV_SEED,
                (self.seed ^ self.spawned.wrapping_mul(0x9e37)).to_string(),
            )
            .env(ENV_LOG, self.dir.join(format!("{name}.log")))
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone output file"))
            .stderr(out)
            .spawn()
            .expect("start a worker process");
        self.alive.push(Process { name, child });
    }

    fn kill(&mut self, index: usize) {
        let mut victim = self.alive.swap_remove(index);
        let pid = rustix::process::Pid::from_child(&victim.child);
        let killed = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        assert_eq!(killed, Ok(()), "kill");
        let status = victim.child.wait().expect("reap a killed worker");
        self.exited.push((victim.name, status));
    }

    /// Reaps workers that ended on their own (before the stop, a failure).
    fn reap(&mut self) -> usize {
        let mut ended = 0;
        let mut i = 0;
        while i < self.alive.len() {
            if let Some(status) = self.alive[i].child.try_wait().expect("try_wait") {
                let process = self.alive.swap_remove(i);
                self.exited.push((process.name, status));
                ended += 1;
            } else {
                i += 1;
            }
        }
        ended
    }

    fn output(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(format!("{name}.out"))).unwrap_or_default()
    }
}

impl Drop for Coordinator {
    /// Leaves no worker behind when the test panics half-way.
    fn drop(&mut self) {
        for process in &mut self.alive {
            // Errors ignored: this may run while panicking.
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
    }
}

#[test]
fn sigkilled_workers_keep_the_contract() {
    let seed = std::env::var(ENV_SEED)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let tmp = crate::scratch_dir();
    let dir = tmp.path().to_path_buf();
    let db = dir.join("jobs.db");
    let shared_path = dir.join("shared");
    let shared = Shared::create(&shared_path).expect("create the shared clock");
    lease::init_db(&db).expect("init_db");
    let jobs: Vec<String> = (0..JOBS).map(job_name).collect();
    for job in &jobs {
        assert!(lease::enqueue(&db, job).expect("enqueue"));
    }

    let mut rng = Rng::new(seed);
    let mut kill_points: Vec<u64> = (0..KILLS)
        .map(|_| BUDGET / 20 + rng.below(BUDGET * 17 / 20))
        .collect();
    kill_points.sort_unstable();
    kill_points.reverse();

    let mut coord = Coordinator {
        dir: dir.clone(),
        db: db.clone(),
        shared_path,
        seed,
        spawned: 0,
        alive: Vec::new(),
        exited: Vec::new(),
    };
    for _ in 0..WORKERS {
        coord.spawn();
    }

    let sampler = Connection::open(&db).expect("open the sampling connection");
    sampler
        .busy_timeout(Duration::from_secs(10))
        .expect("busy_timeout");
    let mut samples = Vec::new();
    let mut kills = 0;
    let began = Instant::now();
    let mut next_sample = began;
    loop {
        let seq = shared.seq().load();
        if seq >= BUDGET || began.elapsed() > WALL_CLOCK_CAP {
            break;
        }
        if coord.reap() > 0 {
            break; // a worker failed: its status is reported below
        }
        if kill_points.last().is_some_and(|&point| seq >= point) {
            kill_points.pop();
            // A random moment: whatever the victim is doing a little later.
            thread::sleep(Duration::from_micros(rng.below(1500)));
            let victim = rng.below(coord.alive.len() as u64) as usize;
            coord.kill(victim);
            kills += 1;
            coord.spawn();
        }
        if Instant::now() >= next_sample {
            let start = shared.seq().fetch_add(1);
            let rows = crate::read_rows(&sampler).expect("sample the table");
            let end = shared.seq().fetch_add(1);
            samples.push(Sample { start, end, rows });
            next_sample = Instant::now() + Duration::from_millis(5);
        }
        thread::sleep(Duration::from_micros(300));
    }
    let elapsed = began.elapsed();
    shared.stop().store(1);
    let deadline = Instant::now() + EXIT_GRACE;
    while !coord.alive.is_empty() && Instant::now() < deadline {
        coord.reap();
        thread::sleep(Duration::from_millis(2));
    }
    let hung: Vec<String> = coord.alive.iter().map(|p| p.name.clone()).collect();
    while !coord.alive.is_empty() {
        coord.kill(0);
    }

    // Keep the files of a failed run for inspection.
    let keep = |tmp: tempfile::TempDir, what: &str| -> ! {
        let dir = tmp.keep();
        panic!(
            "{what}\n(seed {seed}; logs and database kept in {})",
            dir.display()
        );
    };

    let mut killed = HashSet::new();
    let mut failures = Vec::new();
    for (name, status) in &coord.exited {
        if status.signal() == Some(libc::SIGKILL) && !hung.contains(name) {
            killed.insert(name.clone());
        } else if !status.success() || hung.contains(name) {
            failures.push(format!(
                "{name} ended with {status}:\n{}",
                coord.output(name)
            ));
        }
    }
    if !hung.is_empty() {
        failures.push(format!("workers did not stop: {hung:?}"));
    }
    if !failures.is_empty() {
        keep(tmp, &failures.join("\n"));
    }

    drop(sampler);
    let conn = Connection::open(&db).expect("open the database");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("integrity_check");
    if integrity != "ok" {
        keep(tmp, &format!("PRAGMA integrity_check: {integrity}"));
    }
    let final_rows: BTreeMap<String, Job> = crate::read_rows(&conn)
        .expect("read the final table")
        .into_iter()
        .map(|row| (row.id.clone(), row))
        .collect();
    drop(conn);

    let mut logs = Vec::new();
    for i in 0..coord.spawned {
        let name = format!("w{i}");
        let text = fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default();
        match history::parse_log(&name, &text) {
            Ok(entries) => logs.push((name, entries)),
            Err(err) => keep(tmp, &format!("unreadable log: {err}")),
        }
    }
    let run = Run {
        logs,
        killed,
        samples,
        final_rows,
        jobs,
    };
    let (violations, stats) = history::check(&run);
    eprintln!(
        "crash test: seed {seed}, {:.2?} of work, {} workers started, {kills} killed, {} samples, final clock {}\n{stats:#?}",
        elapsed,
        coord.spawned,
        run.samples.len(),
        shared.clock().load(),
    );
    if !violations.is_empty() {
        let shown: Vec<&String> = violations.iter().take(25).collect();
        let list: Vec<String> = shown.iter().map(|v| format!("- {v}")).collect();
        keep(
            tmp,
            &format!(
                "{} contract violations (first {}):\n{}",
                violations.len(),
                shown.len(),
                list.join("\n")
            ),
        );
    }

    // The run must have exercised what it checks (generous floors: these
    // counts are typically ten times higher).
    let exercised = [
        ("kills", kills),
        ("calls with an unknown answer", stats.unknown),
        ("claims won", stats.claims_won),
        ("completes accepted", stats.completes_accepted),
        ("takeovers after expiry", stats.takeovers_after_expiry),
        (
            "stale calls refused after expiry",
            stats.refused_after_expiry,
        ),
        ("wrong fences refused", stats.refused_wrong_fence),
        ("calls at now == until", stats.calls_at_boundary),
        ("refused claims justified", stats.refusals_justified),
    ];
    let thin: Vec<String> = exercised
        .iter()
        .filter(|(_, n)| *n == 0)
        .map(|(what, _)| what.to_string())
        .collect();
    if !thin.is_empty() {
        keep(tmp, &format!("the run exercised no {}", thin.join(", no ")));
    }
}
