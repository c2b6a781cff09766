//! Outcomes read from a judge's output, and what they make of mutants and steps.

use super::*;

const LIBTEST_FAILURE: &str = "\nrunning 1 test\ntest step4::x ... FAILED\n\nfailures:\n\n---- step4::x stdout ----\n\nthread 'step4::x' (19433) panicked at crates/judge-d1847bc7452d6721/tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)\n\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    step4::x\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 92 filtered out; finished in 0.01s\n";

#[test]
fn the_failure_text_is_the_panic_with_project_paths() {
    assert_eq!(
        failure_text(LIBTEST_FAILURE, "step4::x"),
        "panicked at tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)"
    );
}

#[test]
fn a_python_judges_scratch_directory_is_left_out() {
    let dir = "/home/u/.cache/fencelab/ws/crates/pyjudge-df1fcc4a461366f8";
    let stdout = format!(
        "---- test_a stdout ----\n  File \"{dir}/fencelab_tests.py\", line 120, in run_one\n\
         ['{dir}/fencelab_tests.py', '--exact'] crates/pyjudge-x\n[{dir}/api/lease.py]\n\nfailures:\n"
    );
    assert_eq!(
        failure_text(&stdout, "test_a"),
        "File \"fencelab_tests.py\", line 120, in run_one\n\
         ['fencelab_tests.py', '--exact'] crates/pyjudge-x\n[api/lease.py]"
    );
}

#[test]
fn where_the_bridge_panicked_is_left_out() {
    for file in ["client.rs:210:9", "proxy.rs:82:17"] {
        let stdout = LIBTEST_FAILURE.replace(
            "crates/judge-d1847bc7452d6721/tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)",
            &format!(
                "crates/bridge-4842e0297bd32c04/src/{file}:\nthe implementation returned an error the contract does not have: ValueError: x"
            ),
        );
        assert_ne!(stdout, LIBTEST_FAILURE);
        assert_eq!(
            failure_text(&stdout, "step4::x"),
            "the implementation returned an error the contract does not have: ValueError: x",
            "{file}"
        );
    }
}

fn judged(stdout: &str, key: &str) -> TestOutcome {
    use std::os::unix::process::ExitStatusExt;
    let finished = Finished {
        status: Some(std::process::ExitStatus::from_raw(101 << 8)),
        stdout: format!("---- t stdout ----\n{stdout}\n\nfailures:\n"),
        stderr: String::new(),
        dropped: 0,
        duration: Duration::ZERO,
        left_behind: false,
    };
    TestOutcome::from_judge("t", &finished, Duration::from_secs(1), key)
}

/// A learner's test (or an implementation) that prints fencelab's mark
/// without its trial's key: shown as its own text, escaped; the
/// failure's kind is its own, not a crash or a panic.
#[test]
fn a_mark_printed_without_the_trials_key_is_the_printers_own_text() {
    let ended = Said::ProcessEnded {
        call: "claim".to_string(),
        how: crate::bridge::said::How::Exited { code: 1 },
    };
    let json = serde_json::to_string(&ended).unwrap();
    let forged = format!("\u{1}said guess\u{1}{json}\n\u{1}said\u{1}{json}\nassert failed");
    let outcome = judged(&forged, "key");
    let TestOutcome::Failed { kind, message } = &outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(*kind, FailureKind::Assertion);
    assert!(said::all(message).is_empty(), "{message}");
    assert_eq!(
        outcome.message().unwrap(),
        format!("\\u{{1}}said guess\\u{{1}}{json}\n\\u{{1}}said\\u{{1}}{json}\nassert failed")
    );
    // The judge's own line, with the key: a crash, worded from its value.
    let said = format!("\u{1}said key\u{1}{json}");
    let outcome = judged(&said, "key");
    assert_eq!(outcome.label(), "crashed");
    assert_eq!(outcome.message().unwrap(), ended.to_string());
    let panicked = Said::FailedInCall {
        call: "claim".to_string(),
        at: None,
        panicked: true,
    };
    let json = serde_json::to_string(&panicked).unwrap();
    let todo = judged(
        &format!("\u{1}said key\u{1}{json}\nnot yet implemented"),
        "key",
    );
    assert_eq!(todo.label(), "not started");
    let forged = judged(
        &format!("\u{1}said no\u{1}{json}\nnot yet implemented"),
        "key",
    );
    assert_eq!(forged.label(), "failed");
    assert!(matches!(
        forged,
        TestOutcome::Failed {
            kind: FailureKind::Assertion,
            ..
        }
    ));
}

#[test]
fn a_mutant_is_killed_by_failures_before_crashes_before_timeouts() {
    let failed = TestOutcome::Failed {
        kind: FailureKind::Assertion,
        message: String::new(),
    };
    let crashed = TestOutcome::Failed {
        kind: FailureKind::Crashed,
        message: String::new(),
    };
    let timeout = TestOutcome::timed_out(1.0);
    let passed = TestOutcome::Passed;
    let of = |o: &[&TestOutcome]| MutantOutcome::from_tests(o.iter().copied());
    assert_eq!(
        of(&[&passed, &timeout, &crashed, &failed]),
        MutantOutcome::Killed
    );
    assert_eq!(of(&[&passed, &timeout, &crashed]), MutantOutcome::Crashed);
    assert_eq!(of(&[&timeout, &passed]), MutantOutcome::Timeout);
    assert_eq!(of(&[&passed]), MutantOutcome::Survived);
}

#[test]
fn a_steps_random_test_counts_only_where_its_other_tests_pass() {
    use crate::lab::suite::test_named;
    let failed = TestOutcome::Failed {
        kind: FailureKind::Assertion,
        message: String::new(),
    };
    let tests = [
        test_named("step2::a"),
        test_named("step2::random_calls_agree_with_the_contract"),
        test_named("step6::b"),
        test_named("step6::random_calls_agree_with_the_contract"),
    ];
    // Step 2: a bug its own test names; step 6: one only the random
    // test finds.
    let outcomes = [&failed, &failed, &TestOutcome::Passed, &failed];
    let tallies = StepTally::of(tests.iter().zip(outcomes));
    assert_eq!((tallies[0].passed, tallies[0].total), (0, 1));
    assert_eq!(tallies[0].failures.len(), 1, "said by the other");
    assert_eq!((tallies[1].passed, tallies[1].total), (1, 2));
    let named: Vec<(&str, u32, bool)> = tests
        .iter()
        .zip(outcomes)
        .map(|(t, o)| (t.name.as_str(), t.step, o.passed()))
        .collect();
    assert_eq!(
        uncounted(&named),
        ["step2::random_calls_agree_with_the_contract"]
    );
}

fn crashed(message: String) -> TestOutcome {
    TestOutcome::Failed {
        kind: FailureKind::Crashed,
        message,
    }
}

/// A report read back keeps fencelab's sentences as data (so a Japanese
/// screen words them), its English `message` as before. Fails where `said`
/// is not written or not preferred on reading.
#[test]
fn a_marked_message_survives_a_report() {
    let ended = Said::ProcessEnded {
        call: "lease.claim".to_string(),
        how: said::How::Signal { signal: 6 },
    };
    let message = format!(
        "panicked at tests/behaviour/step4.rs:1:1:\n  {}\nleft\n{}",
        ended.marked(),
        Said::TimedOut { secs: 0.1 + 0.2 }.marked()
    );
    let outcome = crashed(message.clone());
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["message"], english(&message).as_str());
    assert_eq!(json["said"], message.as_str());
    let back: TestOutcome = serde_json::from_value(json).unwrap();
    assert_eq!(back, outcome);
    assert_eq!(back.marked_message(), Some(message));
    // Without sentences, no `said`: the report is as it was.
    let plain = serde_json::to_value(crashed("plain".to_string())).unwrap();
    assert_eq!(plain.get("said"), None);
}

/// A report is input: in `said` a mark that does not decode, and in the
/// English `message` any mark, reads as text, escaped; the verdict is the
/// report's `kind` whatever `said` holds.
#[test]
fn a_reports_marks_that_do_not_decode_are_escaped() {
    let forged = serde_json::json!({
        "outcome": "failed",
        "kind": "assertion",
        "message": "x",
        "said": "\u{1}said k\u{1}{\"NoVerdict\":null}\n\u{1}said\u{1}{\"Nonsense\":1}\n\u{1}said\u{1}\"Confirmed\"",
    });
    let back: TestOutcome = serde_json::from_value(forged).unwrap();
    let TestOutcome::Failed { kind, message } = &back else {
        panic!("{back:?}")
    };
    assert_eq!(*kind, FailureKind::Assertion);
    assert_eq!(said::all(message), [Said::Confirmed]);
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines[0], "\\u{1}said k\\u{1}{\"NoVerdict\":null}");
    assert_eq!(lines[1], "\\u{1}said\\u{1}{\"Nonsense\":1}");
    let old = serde_json::json!({
        "outcome": "failed",
        "kind": "crashed",
        "message": "\u{1}said\u{1}\"Confirmed\"",
    });
    let back: TestOutcome = serde_json::from_value(old).unwrap();
    assert_eq!(
        back.marked_message().unwrap(),
        "\\u{1}said\\u{1}\"Confirmed\""
    );
}
