//! The grade report of a learner's tests: each mutant a test, each of the
//! learner's tests with its verdicts and what it observed.

use super::*;

/// Step 5: two mutants caught, one missed; step 8: none missed.
fn report(reveal: Reveal) -> TestsReport {
    let missed = MissedMutant {
        id: "renew-revives-at-expiry".into(),
        title: Text {
            en: "renew revives a lease at its expiry".into(),
            ja: "期限ちょうどで renew が復活させる".into(),
        },
        observation: None,
        diff: Some("--- reference\n+++ renew-revives-at-expiry\n-a\n+b\n".into()),
    };
    let step = |step, slug, caught: &[&str], missed: Vec<MissedMutant>| StepThoroughness {
        step,
        slug,
        caught: caught.len(),
        total: caught.len() + missed.len(),
        caught_mutants: caught.iter().map(|c| c.to_string()).collect(),
        missed,
    };
    TestsReport {
        schema: 1,
        name: "alice".into(),
        file: "tests/mine/main.rs".into(),
        compile_errors: None,
        tests: vec![JudgedTest {
            test: "renews".into(),
            valid: true,
            invalid: None,
            wrong_on: Vec::new(),
            assumed: Vec::new(),
            misconceptions: Vec::new(),
            catches: vec!["renew-ge".into()],
        }],
        valid: true,
        steps: vec![
            step(5, "renew", &["renew-ge", "renew-any-owner"], vec![missed]),
            step(
                8,
                "claim_many",
                &["claim_many-first-owner-only"],
                Vec::new(),
            ),
        ],
        score: 83.33,
        correct_implementations: 25,
        reference_runs: 6,
        mutants: 4,
        reveal,
        exit_code: crate::exit::ExitCode::Failed,
    }
}

#[test]
fn each_mutant_is_a_test_named_as_the_course_reveals_it() {
    let names =
        |r: &SubmissionReport| -> Vec<String> { r.tests.iter().map(|t| t.test.clone()).collect() };
    let titles = submission(&report(Reveal::Titles), 0.0, &Weights::default());
    assert_eq!(
        names(&titles),
        [
            "step5::renew-ge",
            "step5::renew-any-owner",
            "step5::renew-revives-at-expiry",
            "step8::claim_many-first-owner-only"
        ]
    );
    let count = submission(&report(Reveal::Count), 0.0, &Weights::default());
    assert_eq!(
        names(&count),
        [
            "step5::mutant-1",
            "step5::mutant-2",
            "step5::mutant-3",
            "step8::mutant-1"
        ]
    );
    let said: Vec<String> = (count.tests.iter())
        .filter_map(|t| match &t.outcome {
            TestOutcome::Failed { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(said, ["not caught"], "no title");
    let diffs = submission(&report(Reveal::Diffs), 0.0, &Weights::default());
    let missed = diffs.tests.iter().find(|t| !t.outcome.passed()).unwrap();
    let TestOutcome::Failed { message, .. } = &missed.outcome else {
        unreachable!()
    };
    assert!(message.starts_with("not caught: renew revives a lease at its expiry\n--- reference"));
}

#[test]
fn the_course_weights_every_step_of_the_thoroughness() {
    let mut weights = Weights::default();
    weights.0[7] = 3.0;
    let r = submission(&report(Reveal::Titles), 0.0, &weights);
    assert_eq!(r.steps[1].weight, 3.0);
    assert_eq!(r.steps[0].weight, 1.0);
}

#[test]
fn what_a_failing_test_observed_is_read_from_its_message() {
    let o = |what: &str, expected: &str, actual: &str| Observed {
        what: what.into(),
        expected: expected.into(),
        actual: actual.into(),
    };
    // The learner's line is left out: two learners' tests group alike.
    let assert_eq = "panicked at tests/mine/main.rs:31:5:\nassertion `left == right` failed\n  left: Some(2)\n right: None\nnote: run with `RUST_BACKTRACE=1`";
    assert_eq!(
        observed(assert_eq),
        o("assertion `left == right` failed", "None", "Some(2)")
    );
    let custom = "panicked at x.rs:1:1:\nassertion `left == right` failed: holds at expiry\n  left: Some(2)\n right: None";
    assert_eq!(observed(custom), o("holds at expiry", "None", "Some(2)"));
    let suite = "observation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)";
    assert_eq!(
        observed(suite),
        o("claim at now == until", "Ok(Some(2))", "Ok(None)")
    );
    let python = "Traceback (most recent call last):\n  File \"test_lease.py\", line 9, in test_holds\n    assert lease.claim(db, \"j\", \"b\", 6.0, 5.0) is None\nAssertionError";
    assert_eq!(
        observed(python),
        o(
            "assert lease.claim(db, \"j\", \"b\", 6.0, 5.0) is None",
            "",
            "AssertionError"
        )
    );
    assert_eq!(
        observed("panicked at x.rs:1:1:\nno lease"),
        o("no lease", "", "")
    );
    // A learner's test may print anything: each field is capped.
    let long = observed(&format!(
        "observation: {}\nexpected: a\nactual: b",
        "x".repeat(5000)
    ));
    assert_eq!(long.what.chars().count(), OBSERVED_CAP + 1);
}

#[test]
fn each_learner_test_carries_its_verdicts_and_what_it_contradicts() {
    let mut r = report(Reveal::Titles);
    r.tests.push(JudgedTest {
        test: "holds_at_expiry".into(),
        valid: false,
        invalid: Some(crate::judging::Invalid::FailsOnReference),
        wrong_on: vec![crate::judging::WrongOn {
            implementation: "reference".into(),
            title: Text {
                en: "the reference".into(),
                ja: "参照実装".into(),
            },
            outcome: "failed",
            message: "assertion `left == right` failed\n  left: Some(2)\n right: None".into(),
            runs: 3,
            failed: 3,
        }],
        assumed: Vec::new(),
        misconceptions: vec!["claim-at-expiry".into()],
        catches: Vec::new(),
    });
    let s = submission(&r, 0.0, &Weights::default());
    let json = serde_json::to_value(&s.learner_tests).unwrap();
    assert_eq!(
        json,
        serde_json::json!([
            {"test": "renews", "verdict": "valid"},
            {"test": "holds_at_expiry", "verdict": "fails-on-reference",
             "fails_on": [{"implementation": "reference", "runs": 3, "failed": 3}],
             "observation": {"what": "assertion `left == right` failed", "expected": "None", "actual": "Some(2)"},
             "misconceptions": ["claim-at-expiry"]}
        ])
    );
}
