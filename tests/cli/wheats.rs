//! Every wheat (`wheats/`) is a correct implementation: it passes the whole
//! behavioural suite, as the reference does. A wheat that failed a test would
//! make every learner's test that agrees with the suite look invalid.
//!
//! `cargo test` runs every wheat through the tests of steps 1 and 8 (~370
//! trials): the schema, which most freedoms change (`ddl-text`,
//! `column-order`, `rowid`, `extra-constraints`, `extra-schema`,
//! `journal-mode`), and `claim_many`'s race (`claim-many-winner`, where a
//! wheat's concurrency could make a test flaky). Every wheat through every
//! test (~2,100 trials) runs in `.ci/run`'s second step, inside `verify` of
//! the reference:
//! `instructor_content::verify_runs_the_shipped_wheats_beside_the_mutants_and_reports_them`,
//! which names each failing wheat and its failing tests.

use fencelab::engine::builder::Implementation;
use fencelab::engine::policy::{Policy, Trust};
use fencelab::engine::{self, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use fencelab::lab::reference::REFERENCE;
use fencelab::lab::suite::{self, SuiteFiles};
use fencelab::lab::wheat::Wheats;

#[test]
fn every_wheat_passes_the_tests_of_steps_1_and_8() {
    let wheats = Wheats::builtin();
    let chosen: Vec<_> = suite::tests()
        .into_iter()
        .filter(|t| t.step == 1 || t.step == 8)
        .collect();
    assert!(chosen.iter().any(|t| t.step == 1) && chosen.iter().any(|t| t.step == 8));
    let request = Request {
        policy: Policy::of(Trust::Instructor),
        suite: SuiteFiles::builtin(),
        implementations: wheats
            .wheats
            .iter()
            .map(|w| Implementation {
                shown_path: format!("wheats/{}", w.id),
                source: w.code(REFERENCE).unwrap(),
            })
            .collect(),
        scenarios: (0..wheats.wheats.len())
            .map(|implementation| Scenario {
                kind: ScenarioKind::Tests,
                implementation,
                tests: Tests::Only(chosen.clone()),
            })
            .collect(),
        jobs: fencelab::engine::runner::default_jobs(),
    };
    let scratch = crate::common::scratch();
    let run = engine::run(&scratch, &request, &mut |_| {}).unwrap();
    for (wheat, result) in wheats.wheats.iter().zip(&run.results) {
        match result {
            ScenarioResult::Ran { tests } => {
                let failing: Vec<String> = tests
                    .iter()
                    .filter(|t| !t.passed())
                    .map(|t| {
                        format!(
                            "{}: {}",
                            t.test.name,
                            t.outcome().message().unwrap_or_default()
                        )
                    })
                    .collect();
                assert!(
                    failing.is_empty(),
                    "{} fails:\n{}",
                    wheat.id,
                    failing.join("\n")
                );
                assert_eq!(
                    tests.len(),
                    chosen.len(),
                    "{}: each chosen test ran",
                    wheat.id
                );
            }
            other => panic!("{} did not run: {other:?}", wheat.id),
        }
    }
}
