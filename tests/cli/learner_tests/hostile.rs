//! Learners' tests that try to earn what they have not: hostile tests earn
//! nothing and break nothing, and nothing but the contract's answers tells a
//! test which implementation it talks to (`tests/fixtures/learner_tests/`
//! `hostile.rs` and `probe.rs`).

use std::collections::BTreeSet;
use std::time::Duration;

use fencelab::judging as mine;

use super::{fixture, judge_against, judges, lab, some_judges, test};

/// Against two correct implementations and two mutants, one of which the
/// plain test catches (`claim-returns-the-old-fence`) and one it does not:
/// the hanging test costs its limit on each implementation, so against all
/// of fencelab's (25 and 75) this is `.ci/run`'s second step, below.
#[test]
fn hostile_tests_earn_nothing_and_break_nothing() {
    let judges = some_judges(
        |wheat| ["returning", "variant-error-text"].contains(&wheat),
        |mutant, _| ["claim-returns-the-old-fence", "release-resets-fence"].contains(&mutant),
    );
    hostile_against(&judges);
}

/// The same against every correct implementation and every mutant.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn hostile_tests_earn_nothing_and_break_nothing_against_every_implementation() {
    hostile_against(judges());
}

fn hostile_against(judges: &mine::Judges) {
    let dir = lab(&fixture("hostile.rs"), &[]);
    // A short limit: the hanging test costs it on every implementation.
    let report = judge_against(dir.path(), Some(Duration::from_secs(2)), judges);
    for name in [
        "ends_the_process_with_success",
        "hangs",
        "escapes_and_leaves_a_process",
    ] {
        let t = test(&report, name);
        assert!(!t.valid, "{name} fails on the reference: {:?}", t.wrong_on);
    }
    // Ending its own process is no verdict: not a contradiction of the
    // contract, nor a misconception.
    let ends = test(&report, "ends_the_process_with_success");
    assert_eq!(ends.invalid, Some(mine::Invalid::NoVerdict), "{ends:#?}");
    assert!(ends.misconceptions.is_empty() && ends.assumed.is_empty());
    // What it left running is the test's, and the message says so.
    let escaped = &test(&report, "escapes_and_leaves_a_process").wrong_on[0].message;
    assert!(
        escaped.contains("the test left processes running") && !escaped.contains("implementation"),
        "{escaped}"
    );
    // fencelab's mark without the trial's key is the test's own text, shown
    // escaped; a failure, not a crash.
    let forged = &test(&report, "prints_fencelabs_mark").wrong_on[0];
    assert_eq!(forged.outcome, "failed", "{}", forged.message);
    assert!(
        forged
            .message
            .contains("\\u{1}said guess\\u{1}{\"ProcessEnded\"")
            && forged.message.contains("\\u{1}said\\u{1}{")
            && !forged
                .message
                .contains("exited with status 1 during claim()"),
        "{}",
        forged.message
    );
    // With its own key it words only its own test: its verdict is its
    // exit's, and it passes.
    let own = test(&report, "says_with_its_own_key_and_passes");
    assert!(own.valid, "{:?}", own.wrong_on);
    let fake = test(&report, "prints_a_fake_verdict");
    // Printing a verdict can only make a test pass, and a test that passes
    // everywhere catches nothing.
    assert!(fake.valid, "{:?}", fake.wrong_on);
    assert!(fake.catches.is_empty(), "{:?}", fake.catches);
    let plain = test(&report, "a_plain_valid_test");
    assert!(
        plain.valid,
        "the others did not break it: {:?}",
        plain.wrong_on
    );
    assert!(!plain.catches.is_empty());
    // Only valid tests count: the hostile ones added nothing.
    let counted: BTreeSet<&str> = report
        .tests
        .iter()
        .filter(|t| t.valid)
        .flat_map(|t| t.catches.iter().map(String::as_str))
        .collect();
    let caught: usize = report.steps.iter().map(|s| s.caught).sum();
    assert_eq!(caught, counted.len());
    assert!(
        crate::common::eventually_none(|| crate::common::processes_named("sleep 303")).is_empty(),
        "what escaped was killed"
    );
}

#[test]
fn a_test_cannot_tell_which_implementation_it_talks_to() {
    use fencelab::engine::builder::Implementation;
    use fencelab::engine::policy::{Policy, Trust};
    use fencelab::engine::{self, Request, Scenario, ScenarioKind, Tests};
    let dir = lab(&fixture("probe.rs"), &[]);
    let tests = mine::read(dir.path()).unwrap();
    let reference = fencelab::lab::reference::REFERENCE;
    let mutants = fencelab::lab::mutant::builtin();
    let wheat = &judges().wheats.wheats[0];
    let sources = [
        reference.to_string(),
        mutants[0].apply(reference).unwrap(),
        mutants[40].apply(reference).unwrap(),
        wheat.code(reference).unwrap(),
    ];
    let request = Request {
        policy: Policy::of(Trust::LearnerTests),
        suite: tests.suite.clone(),
        implementations: sources
            .iter()
            .map(|s| Implementation {
                shown_path: "src/lease.rs".into(),
                source: s.clone(),
            })
            .collect(),
        scenarios: (0..sources.len())
            .map(|implementation| Scenario {
                kind: ScenarioKind::Tests,
                implementation,
                tests: Tests::All,
            })
            .collect(),
        jobs: 2,
    };
    let scratch = crate::common::scratch();
    let run = engine::run(&scratch, &request, &mut |_| {}).unwrap();
    let seen: Vec<String> = run
        .results
        .iter()
        .map(|r| {
            let message = r.tests().unwrap()[0]
                .outcome()
                .message()
                .unwrap_or_default();
            let start = message
                .find("SEEN")
                .unwrap_or_else(|| panic!("the probe ran: {message}"));
            let end = message.find("END").unwrap();
            normalized(&message[start..end])
        })
        .collect();
    assert!(
        seen.iter().all(|s| *s == seen[0]),
        "a test sees the same whatever it talks to:\n{}",
        seen.join("\n-----\n")
    );
    assert!(
        !seen[0].contains("FENCELAB_IMPL") && !seen[0].contains("impl-"),
        "no implementation key in sight:\n{}",
        seen[0]
    );
}

/// What a probe saw, without what differs from trial to trial by chance: the
/// trial's random directory and key (`bridge::said`), process ids, the size
/// of a memory map.
fn normalized(seen: &str) -> String {
    let mut lines: Vec<String> = seen
        .lines()
        .map(|line| {
            if line.starts_with("env FENCELAB_SAID_KEY=") {
                return "env FENCELAB_SAID_KEY=_".to_string();
            }
            let mut words: Vec<String> = Vec::new();
            let mut previous = "";
            for word in line.split(['/', ' ', '=', '"', ',']) {
                // A trial's directory is `t` and six random characters, inside
                // the run's `fencelab-run-XXXXXX` (all six may be lower case).
                let trial = previous.starts_with("fencelab-run-")
                    && word.len() == 7
                    && word.starts_with('t')
                    && word.chars().all(|c| c.is_ascii_alphanumeric());
                let random = trial
                    || (word.len() > 4
                        && word.starts_with('t')
                        && word[1..].chars().all(|c| c.is_ascii_alphanumeric())
                        && word
                            .chars()
                            .any(|c| c.is_ascii_uppercase() || c.is_ascii_digit()));
                previous = word;
                let number = !word.is_empty() && word.chars().all(|c| c.is_ascii_digit());
                words.push(if random || number {
                    "_".into()
                } else {
                    word.into()
                });
            }
            words.join(" ")
        })
        .collect();
    lines.sort();
    lines.join("\n")
}
