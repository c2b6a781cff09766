//! fencelab's own suite dropped in as a learner's tests: it reads as one, and
//! it is valid and catches every mutant. The whole suite judged is the
//! slowest test there is (step 2 of `.ci/run`); `cargo test` judges two of its
//! steps, the first and the last, which must be valid on every correct
//! implementation and catch every mutant of their steps.

use fencelab::judging as mine;

use super::{judge, judge_with_jobs, lab, some_judges};

/// fencelab's own suite as a learner's tests: `tests/behaviour/` under
/// `tests/mine/`, its root's `#[path]`s dropped (the modules sit beside it).
fn own_suite() -> tempfile::TempDir {
    own_steps(&[1, 2, 3, 4, 5, 6, 7, 8])
}

/// The own suite with the modules of `steps` only (and their support).
fn own_steps(steps: &[u32]) -> tempfile::TempDir {
    let kept = |path: &str| {
        let module = path
            .trim_start_matches("behaviour/")
            .trim_end_matches(".rs");
        module
            .strip_prefix("step")
            .and_then(|n| n.parse::<u32>().ok())
            .is_none_or(|n| steps.contains(&n))
    };
    let suite = fencelab::lab::suite::SuiteFiles::builtin();
    let text = |path: &str| &suite.files.iter().find(|(p, _)| p == path).unwrap().1;
    let root_file: String = text(&suite.root)
        .lines()
        .filter(|l| !l.trim_start().starts_with("#[path"))
        .filter(|l| {
            l.strip_prefix("mod ")
                .and_then(|m| m.strip_suffix(';'))
                .is_none_or(kept)
        })
        .map(|l| {
            if l.trim() == suite.binding {
                "use lab as lease;".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let modules: Vec<(String, String)> = suite
        .files
        .iter()
        .filter(|(path, _)| *path != suite.root && kept(path))
        .map(|(path, text)| {
            (
                path.trim_start_matches("behaviour/").to_string(),
                text.to_string(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = modules
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    lab(&root_file, &refs)
}

/// Issue 11's first "done when", proven on every `.ci/run`: ~9,300 trials (94
/// tests by 24 correct implementations and 75 mutants), 140 s here quiet and
/// 156 s with both cores busy, the longest test of the suite and worth it.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn fencelabs_own_suite_as_learner_tests_is_valid_and_catches_every_mutant() {
    let dir = own_suite();
    let report = judge(dir.path(), None);
    assert!(
        report.compile_errors.is_none(),
        "{:?}",
        report.compile_errors
    );
    let invalid: Vec<_> = report.tests.iter().filter(|t| !t.valid).collect();
    assert!(invalid.is_empty(), "{invalid:#?}");
    let missed: Vec<_> = report.steps.iter().flat_map(|s| &s.missed).collect();
    assert!(missed.is_empty(), "{missed:#?}");
    assert_eq!(report.score, 100.0);
}

/// The quick form of the above for `cargo test`: the first and the last
/// step's tests (the last races `claim_many`, a freedom some wheats take)
/// are valid on every correct implementation and catch every mutant of their
/// steps. Each of those mutants has a declared killer in its own step.
/// Judged against those steps' mutants alone: whether a mutant is caught
/// depends on the tests run against it, not on the other mutants.
#[test]
fn two_steps_of_fencelabs_own_suite_are_valid_and_catch_their_steps_mutants() {
    let steps = [1, 8];
    let dir = own_steps(&steps);
    // Every correct implementation; the mutants of those steps only (the
    // others' steps are not judged here).
    let judges = some_judges(|_| true, |_, step| steps.contains(&step));
    // Two trials at a time: a caged judge cannot see its claimers, so step
    // 8's race tests rely on their 400 ms window, which a crowded machine
    // can outlast (claim_many-reads-before-locking then passes a run).
    let report = judge_with_jobs(dir.path(), &judges, 2);
    assert!(
        report.compile_errors.is_none(),
        "{:?}",
        report.compile_errors
    );
    let judged: Vec<&str> = report.tests.iter().map(|t| t.test.as_str()).collect();
    assert!(
        !judged.is_empty()
            && judged
                .iter()
                .all(|t| t.starts_with("step1::") || t.starts_with("step8::")),
        "{judged:?}"
    );
    let invalid: Vec<_> = report.tests.iter().filter(|t| !t.valid).collect();
    assert!(invalid.is_empty(), "{invalid:#?}");
    for step in steps {
        let s = report.steps.iter().find(|s| s.step == step).unwrap();
        assert!(s.missed.is_empty(), "step {step}: {:#?}", s.missed);
        assert!(s.total > 0 && s.caught == s.total, "step {step}: {s:?}");
    }
}

/// The crate's own suite compiles as a learner's tests (fast, not ignored:
/// it shows the drop-in above builds).
#[test]
fn fencelabs_own_suite_reads_as_a_learners_tests() {
    let dir = own_suite();
    let tests = mine::read(dir.path()).unwrap();
    assert_eq!(tests.suite.binding, "use lab as lease;");
    assert_eq!(
        tests.suite.files.len(),
        fencelab::lab::suite::SuiteFiles::builtin().files.len()
    );
}
