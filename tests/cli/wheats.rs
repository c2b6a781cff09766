//! Every wheat (`wheats/`) is a correct implementation: it passes the whole
//! behavioural suite, as the reference does. A wheat that failed a test would
//! make every learner's test that agrees with the suite look invalid.
//!
//! `verify` of the reference runs the same trials and fails when a wheat
//! fails; `cargo test` checks that through
//! `instructor_content::verify_runs_the_shipped_wheats_beside_the_mutants_and_reports_them`,
//! so this engine run of its own, which names each failing test, is in
//! `.ci/run`'s second step.

use fencelab::engine::builder::Implementation;
use fencelab::engine::policy::{Policy, Trust};
use fencelab::engine::{self, Request, Scenario, ScenarioKind, ScenarioResult, Tests};
use fencelab::lab::reference::REFERENCE;
use fencelab::lab::suite::SuiteFiles;
use fencelab::lab::wheat::Wheats;

#[test]
#[ignore = "slow: .ci/run step 2"]
fn every_wheat_passes_the_whole_suite() {
    let wheats = Wheats::builtin();
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
                tests: Tests::All,
            })
            .collect(),
        jobs: fencelab::engine::runner::default_jobs(),
    };
    let scratch = crate::common::scratch();
    let run = engine::run(&scratch, &request, &mut |_| {}).unwrap();
    assert_eq!(run.tests.len(), fencelab::lab::suite::tests().len());
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
                assert_eq!(tests.len(), run.tests.len());
            }
            other => panic!("{} did not run: {other:?}", wheat.id),
        }
    }
}
