//! The spin rule counts one call: the untrusted side's processor time while
//! fencelab's own judge waits for an answer. A test of many short calls
//! (a step's random calls) computes much in all and never spins.

use super::*;

/// A judge of fencelab's own: `python3` running `script`, its output closed.
fn judge(script: &str) -> std::process::Child {
    quiet("python3", script)
}

/// A thread named as the judge's output readers are, spinning: what a
/// server that floods its output makes them do.
const READER_SPINS: &str = "
import ctypes, threading, time
def read():
    ctypes.CDLL(None).prctl(15, b'fencelab-output', 0, 0, 0)
    while True: pass
threading.Thread(target=read, daemon=True).start()
time.sleep(600)
";

#[test]
fn processor_time_counts_only_while_fencelabs_judge_waits_for_an_answer() {
    assert_eq!(crate::bridge::capture::OUTPUT_THREAD, "fencelab-output");
    let rules = Rules {
        spin: Duration::from_millis(300),
        wait: Duration::from_secs(60),
    };
    let spin = "while :; do :; done";
    // Each judge beside a server in its cage that spins. 0 waits for its
    // answer; 1 runs every 10 ms (its calls answered, the next sent); 2
    // waits while its output readers work.
    let mut judges = [
        sh("exec sleep 60"),
        sh("while :; do sleep 0.01; done"),
        judge(READER_SPINS),
    ];
    let mut servers: Vec<_> = (0..3).map(|_| sh(spin)).collect();
    let cages = tempfile::tempdir().unwrap();
    let watch = Watch::default();
    let mut caged = Vec::new();
    for (id, (judge, server)) in judges.iter().zip(&servers).enumerate() {
        let cage = cage_of(cages.path(), &format!("c{id}"), server);
        watch
            .begin(id, &format!("g{id}"), rules, false)
            .started_as(judge.id() as libc::pid_t);
        watch.sees(id, in_cage(cage.clone()));
        caged.push(cage);
    }
    let stopped = |id| watch.lock().trials[&id].stopped_by.is_some();
    // However loaded the machine: until 0 and 2 are stopped, and 1's
    // server has computed the rule thrice over (it would have stopped it).
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(120)
        && !(stopped(0) && stopped(2) && processor_time(&caged[1]) >= rules.spin * 3)
    {
        watch.look();
        std::thread::sleep(Duration::from_millis(50));
    }
    let ended: Vec<_> = (0..3).map(|id| watch.end(id)).collect();
    for child in judges.iter_mut().chain(&mut servers) {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let spins = Some((TimeRule::Spins, rules.spin));
    assert_eq!(ended, [spins, None, spins]);
}
