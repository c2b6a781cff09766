//! `fencelab grade --tests`: learners' own tests graded for CI, with the same
//! reports as implementations (JSON, JUnit, Gradescope). Validity is
//! required: a suite with a test that fails on a correct implementation scores
//! 0, and its reports say which test and where. Otherwise the score is its
//! thoroughness: each step weighs as the course says, and a step's share is the share of
//! its mutants the tests catch. In the reports, each mutant is one "test",
//! passed when caught.

use std::path::{Path, PathBuf};

use crate::commands::grade::cli::GradeArgs;
use crate::commands::grade::{GradeReport, GradedTest, StepScore, SubmissionReport};
use crate::commands::{jobs, project_root, scratch, seconds};
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::engine::policy::{Policy, Trust};
use crate::error::Error;
use crate::judging::{Judges, LearnerTests, Options, TestsReport, judge, read};
use crate::judging::{MissedMutant, StepThoroughness};
use crate::lab::course::{Reveal, Weights};
use crate::output::printer::{Printer, Verb};
use crate::output::progress::Trials;

/// Grades the test suites at `paths` as `args` says; the caller prints and
/// writes the reports.
pub(crate) fn grade(
    args: &GradeArgs,
    paths: &[PathBuf],
    shard: Option<(usize, usize)>,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<GradeReport, Error> {
    // A file that cannot be read is its learner's 0, with the reason; the
    // others are graded all the same.
    let mut suites: Vec<LearnerTests> = Vec::new();
    let mut unusable: Vec<(usize, SubmissionReport)> = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        match read(path) {
            Ok(tests) => suites.push(tests),
            Err(err) => unusable.push((i, unusable_report(path, &err.to_string()))),
        }
    }
    // One run judges one edition's tests: against the Python reference, wheats
    // and mutants, or the Rust ones.
    if let (Some(py), Some(rs)) = (
        suites.iter().find(|t| t.python()),
        suites.iter().find(|t| !t.python()),
    ) {
        return Err(Error::input(format!(
            "{} holds Python tests and {} does not: one run judges one edition of the lab",
            py.name, rs.name
        ))
        .with_next("grade the .py test files and the Rust ones in two runs"));
    }
    let judges = match suites.first() {
        Some(tests) => Judges::load_for(tests, args.mutants.as_deref(), args.wheats.as_deref())?,
        None => Judges::load(args.mutants.as_deref(), args.wheats.as_deref())?,
    };
    let scratch = scratch(cache, &project_root())?;
    let options = Options {
        jobs: jobs(args.jobs),
        timeout: seconds(args.timeout, "--timeout")?,
        build_timeout: seconds(args.build_timeout, "--build-timeout")?,
        weights: args.course_read.weights,
    };
    // The limits the tests ran under: the user's, else the policy's.
    let policy =
        Policy::of(Trust::LearnerTests).with_limits(options.timeout, options.build_timeout);
    let test_limit = policy.limit_after(None);
    let label = "  checking the wheats against the suite (once)";
    crate::judging::content::check(
        &judges,
        &scratch,
        options.jobs,
        &mut Trials::new(printer, label),
    )?;
    let mut submissions = Vec::new();
    for tests in &suites {
        printer.status(Verb::Grading, &format!("the tests of {}", tests.name));
        let running = &mut Trials::new(printer, "  running tests");
        let report = judge(tests, &judges, &options, &scratch, running)?;
        let report = tests.name_root_in(report).revealing(
            args.course_read.reveal,
            &judges.mutants,
            &judges.reference,
        );
        submissions.push(submission(
            &report,
            args.min_score(),
            &args.course_read.weights,
        ));
    }
    // In the order given.
    for (i, report) in unusable {
        submissions.insert(i.min(submissions.len()), report);
    }
    let exit_code = crate::commands::grade::exit_code_of(&submissions);

    // What graded: the mutants to catch and the wheats to pass on, so that
    // `--merge` refuses shards graded against other ones.
    let judged_by = crate::engine::scratch::hash_of(
        judges
            .mutants
            .iter()
            .flat_map(|m| [m.id.as_str(), m.find.as_str(), m.replace.as_str()])
            .chain(judges.wheats.wheats.iter().map(|w| w.id.as_str())),
    );
    Ok(GradeReport {
        schema: 1,
        fencelab_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: format!("learner-tests-{judged_by}"),
        min_score: args.min_score(),
        test_limit_secs: test_limit.as_secs_f64(),
        build_limit_secs: policy.build_limit.unwrap_or_default().as_secs_f64(),
        // The learner's tests run against trusted implementations: no budget.
        budget_secs: None,
        shard,
        weights: args.course_read.weights.by_slug(),
        submissions,
        exit_code,
    })
}

/// One learner's judgement as a row of the grade report: each mutant a test,
/// passed when caught (by valid tests, and only when every test is valid).
/// A learner's tests that cannot be graded at all (a missing path, a file
/// that cannot be read): score 0, with `why`.
fn unusable_report(path: &Path, why: &str) -> SubmissionReport {
    SubmissionReport {
        name: path.display().to_string(),
        file: path.display().to_string(),
        score: 0.0,
        passed_gate: false,
        compile_errors: None,
        unusable: Some(why.to_string()),
        invalid_tests: None,
        steps: Vec::new(),
        tests: Vec::new(),
    }
}

fn submission(report: &TestsReport, min_score: f64, weights: &Weights) -> SubmissionReport {
    let invalid: Vec<String> = report
        .tests
        .iter()
        .filter(|t| !t.valid)
        .map(|t| format!("{} ({})", t.test, t.why()))
        .collect();
    let not_counted = (!invalid.is_empty()).then(|| {
        format!(
            "not counted: these tests fail on a correct implementation: {}",
            invalid.join(", ")
        )
    });
    let mut tests = Vec::new();
    let mut steps = Vec::new();
    for st in &report.steps {
        for (i, (id, missed)) in mutants_of(st, report.reveal).into_iter().enumerate() {
            let outcome = match (&not_counted, missed) {
                (Some(why), _) => TestOutcome::Failed {
                    kind: FailureKind::Assertion,
                    message: why.clone(),
                },
                (None, Some(missed)) => TestOutcome::Failed {
                    kind: FailureKind::Assertion,
                    message: match (report.reveal, missed) {
                        (Reveal::Count, _) => "not caught".to_string(),
                        (_, Some(m)) => match &m.diff {
                            Some(diff) => format!("not caught: {}\n{diff}", m.title.en),
                            None => format!("not caught: {}", m.title.en),
                        },
                        (_, None) => "not caught".to_string(),
                    },
                },
                (None, None) => TestOutcome::Passed,
            };
            // Counted only: the k-th mutant of the step, caught ones first.
            let id = id.unwrap_or_else(|| format!("mutant-{}", i + 1));
            tests.push(GradedTest {
                test: format!("step{}::{id}", st.step),
                step: st.step,
                outcome,
                secs: 0.0,
            });
        }
        let passed = if not_counted.is_some() { 0 } else { st.caught };
        steps.push(StepScore {
            step: st.step,
            slug: st.slug,
            passed,
            total: st.total,
            score: passed as f64 / st.total.max(1) as f64,
            weight: weights.of(st.step),
        });
    }
    let score = if not_counted.is_some() {
        0.0
    } else {
        report.score
    };
    SubmissionReport {
        name: report.name.clone(),
        file: report.file.clone(),
        score,
        passed_gate: report.compile_errors.is_none() && not_counted.is_none() && score >= min_score,
        compile_errors: report.compile_errors.clone(),
        unusable: None,
        invalid_tests: (!invalid.is_empty()).then(|| invalid.join(", ")),
        steps,
        tests,
    }
}

/// A step's mutants as the report's tests: (id, Some(missed) when missed).
/// When the course reveals a count only, no id: as many caught as were,
/// then the missed ones, each by its place.
fn mutants_of(
    st: &StepThoroughness,
    reveal: Reveal,
) -> Vec<(Option<String>, Option<Option<&MissedMutant>>)> {
    if reveal == Reveal::Count {
        let caught = (0..st.caught).map(|_| (None, None));
        let missed = (st.caught..st.total).map(|_| (None, Some(None)));
        return caught.chain(missed).collect();
    }
    let caught = (st.caught_mutants.iter()).map(|id| (Some(id.clone()), None));
    let missed = (st.missed.iter()).map(|m| (Some(m.id.clone()), Some(Some(m))));
    caught.chain(missed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::JudgedTest;
    use crate::lab::lang::Text;

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
        let names = |r: &SubmissionReport| -> Vec<String> {
            r.tests.iter().map(|t| t.test.clone()).collect()
        };
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
        assert!(
            message.starts_with("not caught: renew revives a lease at its expiry\n--- reference")
        );
    }

    #[test]
    fn the_course_weights_every_step_of_the_thoroughness() {
        let mut weights = Weights::default();
        weights.0[7] = 3.0;
        let r = submission(&report(Reveal::Titles), 0.0, &weights);
        assert_eq!(r.steps[1].weight, 3.0);
        assert_eq!(r.steps[0].weight, 1.0);
    }
}
