//! One worker process of the crash test: a loop of claims and lease
//! lifecycles against the shared database, each call logged (with its place
//! in the global sequence) before the answer is acted on. The coordinator
//! (`crash.rs`) starts it as this test binary re-executed with `--exact
//! crash::worker --ignored`, and kills it at random points of that sequence.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use fencelab::lease::{self, Job, LeaseError};

use super::{
    BUDGET, ENV_DB, ENV_LOG, ENV_NAME, ENV_SEED, ENV_SHARED, JOBS, Rng, Shared, TICKS_PER_JOB, TTL,
    WINDOW, job_name,
};
use crate::history::{self, Answer, Call};

/// The body of a worker process, configured through the `FENCELAB_CRASH_*`
/// environment variables; without them (a plain `--ignored` run), nothing.
pub(super) fn main() {
    let Ok(db) = std::env::var(ENV_DB) else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} not set"));
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(var(ENV_LOG))
        .expect("open the worker log");
    let mut worker = Worker {
        name: var(ENV_NAME),
        db: PathBuf::from(db),
        shared: Shared::open(Path::new(&var(ENV_SHARED))).expect("map the shared clock"),
        rng: Rng::new(var(ENV_SEED).parse().expect("numeric seed")),
        log,
    };
    worker.run();
}

/// A lease the worker believes it holds.
#[derive(Clone)]
struct Held {
    owner: String,
    fence: i64,
    until: f64,
}

/// One worker process: a loop of claims and lease lifecycles, each call
/// logged before the answer is acted on.
struct Worker {
    name: String,
    db: PathBuf,
    shared: Shared,
    rng: Rng,
    log: File,
}

impl Worker {
    /// The coordinator's stop flag; the backstop on the sequence ends the
    /// worker should the coordinator die without setting it.
    fn stopping(&self) -> bool {
        self.shared.stop().load() != 0 || self.shared.seq().load() > 4 * BUDGET
    }

    /// Reads the simulated clock, advancing it by one tick.
    fn tick(&self) -> f64 {
        (self.shared.clock().fetch_add(1) + 1) as f64
    }

    /// The worker freezes (a long GC pause, a stopped VM); when it wakes, the
    /// clock has usually moved to its lease's end or past it.
    fn stall(&mut self, until: f64) -> f64 {
        thread::sleep(Duration::from_micros(300 + self.rng.below(3000)));
        if self.rng.chance(75) {
            let target = until as u64 + [0, 0, 0, 1, 4][self.rng.below(5) as usize];
            let before = self.shared.clock().fetch_max(target);
            before.max(target) as f64
        } else {
            self.tick()
        }
    }

    /// Logs the call, makes it, logs the answer (before anything acts on it).
    fn record(
        &mut self,
        call: Call,
        run: impl FnOnce(&Path) -> Result<Answer, LeaseError>,
    ) -> Answer {
        let start = self.shared.seq().fetch_add(1);
        self.write(&history::start_line(start, &call));
        let answer = run(&self.db).unwrap_or_else(|err| Answer::Error(err.to_string()));
        let end = self.shared.seq().fetch_add(1);
        self.write(&history::end_line(end, &answer));
        if let Answer::Error(msg) = &answer {
            panic!("{}: {call} failed: {msg}", self.name);
        }
        answer
    }

    fn write(&mut self, line: &str) {
        self.log
            .write_all(line.as_bytes())
            .expect("write the worker log");
    }

    fn init(&mut self) {
        self.record(Call::init(), |db| lease::init_db(db).map(|()| Answer::Ok));
    }

    fn enqueue(&mut self, job: &str) {
        self.record(Call::enqueue(job), |db| {
            lease::enqueue(db, job).map(Answer::Bool)
        });
    }

    fn state(&mut self, job: &str) -> Option<Job> {
        match self.record(Call::state(job), |db| {
            lease::state(db, job).map(Answer::State)
        }) {
            Answer::State(row) => row,
            other => unreachable!("{other:?}"),
        }
    }

    /// Claims for `owners` (one: `claim`, more: `claim_many`); the lease won.
    fn claim(&mut self, job: &str, owners: &[&str], now: f64) -> Option<Held> {
        let call = Call::claim(job, owners, now, TTL);
        let answer = self.record(call, |db| {
            if let [owner] = owners {
                lease::claim(db, job, owner, now, TTL).map(|c| Answer::Claims(vec![c]))
            } else {
                lease::claim_many(db, job, owners, now, TTL).map(Answer::Claims)
            }
        });
        let Answer::Claims(claims) = answer else {
            unreachable!("{answer:?}")
        };
        owners.iter().zip(claims).find_map(|(owner, claim)| {
            claim.map(|fence| Held {
                owner: owner.to_string(),
                fence,
                until: now + TTL,
            })
        })
    }

    fn boolean(answer: Answer) -> bool {
        match answer {
            Answer::Bool(b) => b,
            other => unreachable!("{other:?}"),
        }
    }

    fn renew(&mut self, job: &str, owner: &str, fence: i64, now: f64) -> bool {
        let call = Call::renew(job, owner, fence, now, TTL);
        Self::boolean(self.record(call, |db| {
            lease::renew(db, job, owner, fence, now, TTL).map(Answer::Bool)
        }))
    }

    fn complete(&mut self, job: &str, owner: &str, fence: i64, now: f64) -> bool {
        let result = history::result_for(owner, fence, now);
        let call = Call::complete(job, owner, fence, now, &result);
        Self::boolean(self.record(call, |db| {
            lease::complete(db, job, owner, fence, now, &result).map(Answer::Bool)
        }))
    }

    fn release(&mut self, job: &str, owner: &str, fence: i64) -> bool {
        let call = Call::release(job, owner, fence);
        Self::boolean(self.record(call, |db| {
            lease::release(db, job, owner, fence).map(Answer::Bool)
        }))
    }

    fn run(&mut self) {
        self.init();
        let me = self.name.clone();
        let alias = format!("{me}x");
        while !self.stopping() {
            let first = (self.shared.clock().load() / TICKS_PER_JOB).min(JOBS - WINDOW);
            let job = job_name(first + self.rng.below(WINDOW));
            let roll = self.rng.below(100);
            if roll < 20 && self.state(&job).is_some_and(|row| row.done) {
                continue;
            }
            if (20..23).contains(&roll) {
                self.enqueue(&job);
            }
            let now = self.tick();
            let held = if self.rng.chance(12) {
                self.claim(&job, &[&me, &alias], now)
            } else {
                self.claim(&job, &[&me], now)
            };
            if let Some(held) = held {
                self.hold(&job, held);
            }
        }
    }

    /// Works under a lease: renews a few times, sometimes stalls, sometimes
    /// uses a wrong fence, then completes, releases or walks away.
    fn hold(&mut self, job: &str, mut held: Held) {
        let mut steps = self.rng.below(4);
        loop {
            if self.stopping() {
                return;
            }
            let now = if self.rng.chance(15) {
                self.stall(held.until)
            } else {
                self.tick()
            };
            if self.rng.chance(5) {
                let wrong = held.fence + if self.rng.chance(50) { 1 } else { -1 };
                match self.rng.below(3) {
                    0 => self.renew(job, &held.owner, wrong, now),
                    1 => self.complete(job, &held.owner, wrong, now),
                    _ => self.release(job, &held.owner, wrong),
                };
            }
            if steps == 0 {
                self.finish(job, &held, now);
                return;
            }
            steps -= 1;
            if self.renew(job, &held.owner, held.fence, now) {
                held.until = now + TTL;
                continue;
            }
            // Refused: the lease ended, or somebody else holds the job now.
            match self.lost(job, &held, now) {
                Some(next) => {
                    held = next;
                    steps = self.rng.below(3);
                }
                None => return,
            }
        }
    }

    /// After a refused renew: carry on with the stale fence anyway, or take
    /// the job back at the same moment (at `now == until` it is free) while a
    /// "zombie" still uses the old fence.
    fn lost(&mut self, job: &str, held: &Held, now: f64) -> Option<Held> {
        match self.rng.below(3) {
            0 => {
                self.complete(job, &held.owner, held.fence, now);
                None
            }
            1 => {
                let next = self.claim(job, &[&held.owner], now)?;
                match self.rng.below(4) {
                    0 => _ = self.complete(job, &held.owner, held.fence, now),
                    1 => _ = self.release(job, &held.owner, held.fence),
                    _ => {}
                }
                Some(next)
            }
            _ => {
                self.release(job, &held.owner, held.fence);
                None
            }
        }
    }

    fn finish(&mut self, job: &str, held: &Held, now: f64) {
        match self.rng.below(10) {
            0..7 => {
                let completed = self.complete(job, &held.owner, held.fence, now);
                if completed && self.rng.chance(25) {
                    // A duplicate: the job is done, so both must be refused.
                    let later = self.tick();
                    if self.rng.chance(50) {
                        self.complete(job, &held.owner, held.fence, later);
                    } else {
                        self.release(job, &held.owner, held.fence);
                    }
                }
            }
            7..9 => {
                self.release(job, &held.owner, held.fence);
            }
            _ => {} // walk away: the lease expires on its own
        }
    }
}
