//! Each invariant can fail: tiny synthetic runs of one job, each valid but for
//! one violation, and exactly the messages `check` reports for them.

use std::collections::{BTreeMap, HashSet};

use fencelab::lease::Job;

use super::{Answer, Call, Run, Sample, check, end_line, parse_log, start_line};

const JOB: &str = "j";
const TTL: f64 = 10.0;

/// A synthetic run under construction: worker logs numbered by one global
/// sequence, written and parsed as the crash test writes and parses them.
struct Script {
    logs: BTreeMap<&'static str, String>,
    seq: u64,
    killed: HashSet<String>,
    samples: Vec<Sample>,
}

impl Script {
    fn new() -> Script {
        Script {
            logs: BTreeMap::new(),
            seq: 1,
            killed: HashSet::new(),
            samples: Vec::new(),
        }
    }

    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
    }

    /// `worker` starts `call` (its start line).
    fn start(mut self, worker: &'static str, call: Call) -> Script {
        let line = start_line(self.next(), &call);
        self.logs.entry(worker).or_default().push_str(&line);
        self
    }

    /// `worker`'s call returns `answer` (its end line).
    fn end(mut self, worker: &'static str, answer: Answer) -> Script {
        let line = end_line(self.next(), &answer);
        self.logs.entry(worker).or_default().push_str(&line);
        self
    }

    /// `worker` makes `call`, answered `answer`, with no other line between.
    fn call(self, worker: &'static str, call: Call, answer: Answer) -> Script {
        self.start(worker, call).end(worker, answer)
    }

    /// `worker` is killed in `call`, after its start line.
    fn killed_in(mut self, worker: &'static str, call: Call) -> Script {
        self.killed.insert(worker.to_string());
        self.start(worker, call)
    }

    /// The coordinator reads the table: `row`.
    fn sample(mut self, row: Job) -> Script {
        let start = self.next();
        let end = self.next();
        self.samples.push(Sample {
            start,
            end,
            rows: vec![row],
        });
        self
    }

    /// The run, with `final_row` the final row of the one enqueued job.
    fn run(self, final_row: Job) -> Run {
        let logs = self
            .logs
            .iter()
            .map(|(worker, text)| {
                let entries = parse_log(worker, text).expect("a well-formed log");
                (worker.to_string(), entries)
            })
            .collect();
        Run {
            logs,
            killed: self.killed,
            samples: self.samples,
            final_rows: BTreeMap::from([(JOB.to_string(), final_row)]),
            jobs: vec![JOB.to_string()],
        }
    }
}

fn row(owner: Option<&str>, until: f64, fence: i64, done: bool, result: Option<&str>) -> Job {
    Job {
        id: JOB.to_string(),
        owner: owner.map(str::to_string),
        until,
        fence,
        result: result.map(str::to_string),
        done,
    }
}

/// A live lease of `owner`, not done.
fn held(owner: &str, until: f64, fence: i64) -> Job {
    row(Some(owner), until, fence, false, None)
}

fn never_claimed() -> Job {
    row(None, 0.0, 0, false, None)
}

const YES: Answer = Answer::Bool(true);
const NO: Answer = Answer::Bool(false);

fn claim(owner: &str, now: f64) -> Call {
    Call::claim(JOB, &[owner], now, TTL)
}

fn won(fence: i64) -> Answer {
    Answer::Claims(vec![Some(fence)])
}

fn lost() -> Answer {
    Answer::Claims(vec![None])
}

/// w0 claims the job at 0 (fence 1, until 10) and completes it at 1.
fn completed() -> Script {
    Script::new().call("w0", claim("w0", 0.0), won(1)).call(
        "w0",
        Call::complete(JOB, "w0", 1, 1.0, "r-w0-1-1"),
        YES,
    )
}

fn completed_row() -> Job {
    row(Some("w0"), 10.0, 1, true, Some("r-w0-1-1"))
}

fn violations(run: &Run) -> Vec<String> {
    check(run).0
}

#[test]
fn a_valid_run_has_no_violations() {
    let run = completed()
        .call("w0", Call::state(JOB), Answer::State(Some(completed_row())))
        .sample(completed_row())
        .run(completed_row());
    let (v, stats) = check(&run);
    assert_eq!(v, Vec::<String>::new());
    assert_eq!(
        (stats.calls, stats.claims_won, stats.completes_accepted),
        (3, 1, 1)
    );
}

#[test]
fn unknown_answers_may_have_gone_either_way() {
    // The holder was killed in a renew: the lease ends at 10 or at 15.
    let renewing = || {
        Script::new()
            .call("w0", claim("w0", 0.0), won(1))
            .killed_in("w0", Call::renew(JOB, "w0", 1, 5.0, TTL))
    };
    for until in [10.0, 15.0] {
        let run = renewing().run(held("w0", until, 1));
        assert_eq!(violations(&run), Vec::<String>::new(), "until {until}");
    }
    // A claim killed before its answer took fence 2.
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .killed_in("w1", claim("w1", 10.0))
        .run(held("w1", 20.0, 2));
    assert_eq!(violations(&run), Vec::<String>::new());
}

#[test]
fn structure_no_call_fails() {
    let run = completed()
        .call("w0", Call::state(JOB), Answer::Error("boom".to_string()))
        .run(completed_row());
    assert_eq!(
        violations(&run),
        ["[w0 #2 seq 5..6] state j - 0 0 0 - -> error:boom: the call failed: boom"]
    );
}

#[test]
fn structure_only_a_killed_worker_lacks_an_answer() {
    let run = completed()
        .start("w0", Call::state(JOB))
        .run(completed_row());
    assert_eq!(
        violations(&run),
        [
            "[w0 #2 seq 5..?] state j - 0 0 0 - -> (unknown: killed): no answer, but w0 was not killed then"
        ]
    );
}

#[test]
fn structure_the_table_holds_the_enqueued_jobs() {
    let mut run = completed().run(completed_row());
    run.jobs.push("k".to_string());
    assert_eq!(
        violations(&run),
        [r#"final table has ids ["j"], expected ["j", "k"]"#]
    );
}

#[test]
fn structure_enqueue_inserts_no_row() {
    let run = completed()
        .call("w0", Call::enqueue(JOB), YES)
        .run(completed_row());
    assert_eq!(
        violations(&run),
        ["[w0 #2 seq 5..6] enqueue j - 0 0 0 - -> true: enqueue of an existing job inserted a row"]
    );
}

#[test]
fn fences_none_handed_out_twice() {
    // Overlapping claims, so that the order invariant cannot tell.
    let run = Script::new()
        .start("w0", claim("w0", 0.0))
        .call("w1", claim("w1", 0.0), won(1))
        .end("w0", won(1))
        .run(held("w1", 10.0, 1));
    assert_eq!(
        violations(&run),
        [
            "fence 1 of j handed out twice: [w0 #0 seq 1..4] claim j w0 0 0 10 - -> claims:1 and [w1 #0 seq 2..3] claim j w1 0 0 10 - -> claims:1"
        ]
    );
}

#[test]
fn fences_within_the_final_one() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(0))
        .run(never_claimed());
    assert_eq!(
        violations(&run),
        [
            "[w0 #0 seq 1..2] claim j w0 0 0 10 - -> claims:0: fence 0 outside 1..=0 (the final fence)"
        ]
    );
}

#[test]
fn fences_none_missing_from_the_logs() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(2))
        .run(held("w0", 10.0, 2));
    assert_eq!(
        violations(&run),
        ["j: final fence 2 but only 1 logged claims won and 0 claims have unknown answers"]
    );
}

#[test]
fn order_the_fence_never_goes_down() {
    let run = Script::new()
        .sample(row(None, 0.0, 1, false, None))
        .run(never_claimed());
    assert_eq!(
        violations(&run),
        [concat!(
            "j: the fence went down:\n",
            r#"    before: [sample seq 1..2] Job { id: "j", owner: None, until: 0.0, fence: 1, result: None, done: false }"#,
            "\n",
            r#"    after:  [final] Job { id: "j", owner: None, until: 0.0, fence: 0, result: None, done: false }"#,
        )]
    );
}

#[test]
fn order_a_done_job_stays_done() {
    let run = completed()
        .call(
            "w0",
            Call::state(JOB),
            Answer::State(Some(held("w0", 10.0, 1))),
        )
        .run(completed_row());
    assert_eq!(
        violations(&run),
        [concat!(
            "j: a done job changed:\n",
            "    before: [w0 #1 seq 3..4] complete j w0 1 1 0 r-w0-1-1 -> true\n",
            "    after:  [w0 #2 seq 5..6] state j - 0 0 0 - -> row:w0:10:1:0:-",
        )]
    );
}

#[test]
fn completes_at_most_one_accepted() {
    // The second complete is also a violation of the worker's own lease.
    let run = completed()
        .call("w0", Call::complete(JOB, "w0", 1, 2.0, "r-w0-1-1"), YES)
        .run(completed_row());
    assert_eq!(
        violations(&run),
        [
            concat!(
                "j: more than one complete accepted:\n",
                "    [w0 #1 seq 3..4] complete j w0 1 1 0 r-w0-1-1 -> true\n",
                "    [w0 #2 seq 5..6] complete j w0 1 2 0 r-w0-1-1 -> true",
            ),
            "[w0 #2 seq 5..6] complete j w0 1 2 0 r-w0-1-1 -> true: accepted on a lease already done",
        ]
    );
}

#[test]
fn completes_the_result_was_written_before_the_lease_ended() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .call("w0", Call::complete(JOB, "w0", 1, 1.0, "r-w0-1-20"), YES)
        .run(row(Some("w0"), 10.0, 1, true, Some("r-w0-1-20")));
    assert_eq!(
        violations(&run),
        [
            r#"j: result written at 20, but the lease ended at 10: Job { id: "j", owner: Some("w0"), until: 10.0, fence: 1, result: Some("r-w0-1-20"), done: true }"#
        ]
    );
}

#[test]
fn completes_the_result_names_the_final_lease() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .call("w0", Call::complete(JOB, "w0", 1, 1.0, "r-w1-1-1"), YES)
        .run(row(Some("w0"), 10.0, 1, true, Some("r-w1-1-1")));
    assert_eq!(
        violations(&run),
        [
            r#"j: the result was not written by the final lease: Job { id: "j", owner: Some("w0"), until: 10.0, fence: 1, result: Some("r-w1-1-1"), done: true }"#
        ]
    );
}

#[test]
fn own_leases_accepted_only_for_a_claimed_job() {
    let run = Script::new()
        .call("w0", Call::release(JOB, "w0", 0), YES)
        .run(never_claimed());
    assert_eq!(
        violations(&run),
        [
            "[w0 #0 seq 1..2] release j w0 0 0 0 - -> true: accepted for an owner that never claimed the job"
        ]
    );
}

#[test]
fn own_leases_accepted_only_while_open() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .call("w0", Call::release(JOB, "w0", 1), YES)
        .call("w0", Call::renew(JOB, "w0", 1, 2.0, TTL), YES)
        .run(row(None, 12.0, 1, false, None));
    assert_eq!(
        violations(&run),
        ["[w0 #2 seq 5..6] renew j w0 1 2 10 - -> true: accepted on a lease already released"]
    );
}

#[test]
fn own_leases_accepted_only_while_live() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .call("w0", Call::renew(JOB, "w0", 1, 12.0, TTL), YES)
        .run(held("w0", 22.0, 1));
    assert_eq!(
        violations(&run),
        [
            "[w0 #1 seq 3..4] renew j w0 1 12 10 - -> true: accepted at 12 but the lease ended at 10 (stale)"
        ]
    );
}

#[test]
fn own_leases_refused_only_when_ended_or_taken_over() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .call("w0", Call::renew(JOB, "w0", 1, 1.0, TTL), NO)
        .run(held("w0", 10.0, 1));
    assert_eq!(
        violations(&run),
        [
            "[w0 #1 seq 3..4] renew j w0 1 1 10 - -> false: refused, but the lease was open and live (until 10) and nobody claimed the job after it"
        ]
    );
}

#[test]
fn claims_won_only_after_the_previous_lease_ended() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .call("w1", claim("w1", 5.0), won(2))
        .run(held("w1", 15.0, 2));
    assert_eq!(
        violations(&run),
        [
            "[w1 #0 seq 3..4] claim j w1 0 5 10 - -> claims:2: won fence 2 at 5, but lease 1 was live until 10"
        ]
    );
}

#[test]
fn claims_refused_only_on_a_held_or_done_job() {
    let never = Script::new()
        .call("w0", claim("w0", 0.0), lost())
        .run(never_claimed());
    assert_eq!(
        violations(&never),
        [
            "[w0 #0 seq 1..2] claim j w0 0 0 10 - -> claims:-: refused, but the job was free (never claimed)"
        ]
    );
    let expired = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .call("w1", claim("w1", 10.0), lost())
        .run(held("w0", 10.0, 1));
    assert_eq!(
        violations(&expired),
        [
            "[w1 #0 seq 3..4] claim j w1 0 10 10 - -> claims:-: refused, but the job was free (lease 1 ended at 10)"
        ]
    );
}

#[test]
fn final_rows_are_what_the_last_lease_leads_to() {
    let run = Script::new()
        .call("w0", claim("w0", 0.0), won(1))
        .run(held("w0", 99.0, 1));
    assert_eq!(
        violations(&run),
        [
            r#"j: final row Job { id: "j", owner: Some("w0"), until: 99.0, fence: 1, result: None, done: false } is none of [(Some("w0"), 10.0, false, None)], what its last lease allows"#
        ]
    );
}
