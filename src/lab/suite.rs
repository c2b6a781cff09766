//! The behavioural suite as the tool sees it: its source files (compiled into
//! fencelab, so a learner's crate and every scratch crate get exactly the
//! project's suite), the list of its tests by step, and the root file that binds
//! the suite to an implementation.

use std::collections::BTreeSet;

/// The line of `tests/behaviour.rs` that picks the implementation; every other
/// crate that runs the suite replaces just this line.
pub(crate) const BINDING_LINE: &str = "use fencelab::lease;";

/// The suite's root file, as written for the project itself.
pub(crate) const ROOT: &str = include_str!("../../tests/behaviour.rs");

/// The suite's modules: path under `tests/`, and contents.
pub(crate) const MODULES: [(&str, &str); 10] = [
    (
        "behaviour/support.rs",
        include_str!("../../tests/behaviour/support.rs"),
    ),
    (
        "behaviour/random.rs",
        include_str!("../../tests/behaviour/random.rs"),
    ),
    (
        "behaviour/step1.rs",
        include_str!("../../tests/behaviour/step1.rs"),
    ),
    (
        "behaviour/step2.rs",
        include_str!("../../tests/behaviour/step2.rs"),
    ),
    (
        "behaviour/step3.rs",
        include_str!("../../tests/behaviour/step3.rs"),
    ),
    (
        "behaviour/step4.rs",
        include_str!("../../tests/behaviour/step4.rs"),
    ),
    (
        "behaviour/step5.rs",
        include_str!("../../tests/behaviour/step5.rs"),
    ),
    (
        "behaviour/step6.rs",
        include_str!("../../tests/behaviour/step6.rs"),
    ),
    (
        "behaviour/step7.rs",
        include_str!("../../tests/behaviour/step7.rs"),
    ),
    (
        "behaviour/step8.rs",
        include_str!("../../tests/behaviour/step8.rs"),
    ),
];

/// One test of the suite.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SuiteTest {
    /// The step it belongs to (1..=8).
    pub step: u32,
    /// Its full name as libtest knows it, e.g. `step4::reclaims_at_exact_expiry`.
    pub name: String,
}

/// A test suite as the engine builds it into a judge: its files under
/// `tests/` (the root is `<target>.rs`), and the one line of the root that
/// binds the implementation to `lease`, which the engine replaces with the
/// bridge's proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteFiles {
    /// The test target's name (`behaviour`; `mine` for a learner's tests).
    pub target: String,
    /// The target's root, relative to `tests/` (`behaviour.rs`, `mine/main.rs`).
    pub root: String,
    /// Paths relative to `tests/`, and contents.
    pub files: Vec<(String, String)>,
    /// The line of the root that binds the implementation.
    pub binding: String,
    /// Whether this is fencelab's own behavioural suite, whose tests are
    /// known in advance (`tests()`); for any other suite the judge's own list
    /// is the inventory.
    pub builtin: bool,
}

impl SuiteFiles {
    /// fencelab's behavioural suite.
    pub fn builtin() -> SuiteFiles {
        let mut files = vec![("behaviour.rs".to_string(), ROOT.to_string())];
        files.extend(MODULES.iter().map(|(p, c)| (p.to_string(), c.to_string())));
        SuiteFiles {
            target: "behaviour".to_string(),
            root: "behaviour.rs".to_string(),
            files,
            binding: BINDING_LINE.to_string(),
            builtin: true,
        }
    }
}

/// A test of any suite: its step from its name (`step4::...`), else 0.
pub fn test_named(name: &str) -> SuiteTest {
    SuiteTest {
        step: step_of(name).unwrap_or(0),
        name: name.to_string(),
    }
}

/// The root file for a crate whose implementation is reached as `binding`
/// (e.g. `use my_crate as lease;`).
pub(crate) fn root_with(binding: &str) -> String {
    assert_eq!(
        ROOT.matches(BINDING_LINE).count(),
        1,
        "tests/behaviour.rs binds `lease` once"
    );
    ROOT.replace(BINDING_LINE, binding)
}

/// Every test of the suite, in step order and then file order. Helpers marked
/// `#[ignore]` (run by other tests in child processes) are not tests of their
/// own and are left out.
pub fn tests() -> Vec<SuiteTest> {
    scan().0
}

/// The full names of the helpers: `#[ignore]`d tests that other tests run.
pub(crate) fn helper_names() -> Vec<String> {
    scan().1.into_iter().map(|t| t.name).collect()
}

/// (tests, helpers)
fn scan() -> (Vec<SuiteTest>, Vec<SuiteTest>) {
    let mut tests = Vec::new();
    let mut helpers = Vec::new();
    for (path, source) in MODULES {
        let Some(step) = step_of_module(path) else {
            continue;
        };
        let mut attributes: Vec<&str> = Vec::new();
        for line in source.lines().map(str::trim) {
            if line.starts_with("#[") {
                attributes.push(line);
            } else if let Some(rest) = line.strip_prefix("fn ") {
                let is_test = attributes.contains(&"#[test]");
                let ignored = attributes.iter().any(|a| a.starts_with("#[ignore"));
                if is_test {
                    let name = rest.split(['(', '<']).next().unwrap_or(rest).trim();
                    let test = SuiteTest {
                        step,
                        name: format!("step{step}::{name}"),
                    };
                    if ignored {
                        helpers.push(test);
                    } else {
                        tests.push(test);
                    }
                }
                attributes.clear();
            } else if !line.starts_with("//") && !line.is_empty() {
                attributes.clear();
            }
        }
    }
    (tests, helpers)
}

/// Where a test is written: its module's path from the project's root and
/// the line of its `fn` (1-based), as people and reports point at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TestLocation {
    pub test: SuiteTest,
    /// E.g. `tests/behaviour/step4.rs`.
    pub file: String,
    pub line: usize,
    /// The column (1-based, in characters) where `fn` starts.
    pub column: usize,
}

/// Every test of the suite with where it is written, in the order of `tests()`.
pub(crate) fn locations() -> Vec<TestLocation> {
    let tests = tests();
    let mut found = Vec::with_capacity(tests.len());
    for (path, source) in MODULES {
        let Some(step) = step_of_module(path) else {
            continue;
        };
        for (i, line) in source.lines().enumerate() {
            let trimmed = line.trim_start();
            let Some(rest) = trimmed.strip_prefix("fn ") else {
                continue;
            };
            let name = rest.split(['(', '<']).next().unwrap_or(rest).trim();
            let full = format!("step{step}::{name}");
            if let Some(test) = tests.iter().find(|t| t.name == full) {
                found.push(TestLocation {
                    test: test.clone(),
                    file: format!("tests/{path}"),
                    line: i + 1,
                    column: line.len() - trimmed.len() + 1,
                });
            }
        }
    }
    found
}

/// A digest of the suite's sources (the root file and every module, with
/// their paths): reports graded by the same suite carry the same one, so that
/// shards graded by different suites are not merged.
pub(crate) fn digest() -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for (path, source) in std::iter::once(("behaviour.rs", ROOT)).chain(MODULES) {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(source.len().to_le_bytes());
        hasher.update(source.as_bytes());
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The names of the suite's tests, for look-ups.
pub fn test_names() -> BTreeSet<String> {
    tests().into_iter().map(|t| t.name).collect()
}

/// The step of a test name such as `step4::x`.
pub(crate) fn step_of(test: &str) -> Option<u32> {
    test.strip_prefix("step")?.split("::").next()?.parse().ok()
}

fn step_of_module(path: &str) -> Option<u32> {
    path.strip_prefix("behaviour/step")?
        .strip_suffix(".rs")?
        .parse()
        .ok()
}

/// The suite's support file, compiled into the library's own tests (against
/// the reference, `crate::lease`), where its helpers are tested on answers
/// made up for them (it allows its own dead code).
#[cfg(test)]
#[path = "../../tests/behaviour/support.rs"]
mod support;

#[cfg(test)]
mod tests {
    use super::support::{Answer, nobody_claims, one_winner};
    use super::*;
    use crate::lab::worksheet::Worksheet;

    #[test]
    fn finds_every_test_and_no_helper() {
        let tests = tests();
        let names = test_names();
        assert_eq!(names.len(), tests.len(), "test names are unique");
        assert!(names.contains("step4::reclaims_at_exact_expiry"));
        assert!(names.contains("step4::claims_race_across_processes"));
        assert!(
            !names.contains("step4::claim_in_child_process"),
            "ignored helpers are not tests"
        );
        // Each module's `#[test]` attributes, counted plainly, minus the one helper.
        let attributes: usize = MODULES
            .iter()
            .map(|(_, s)| s.matches("#[test]").count())
            .sum();
        assert_eq!(tests.len(), attributes - 1);
    }

    #[test]
    fn every_test_belongs_to_a_worksheet_step_and_every_step_has_tests() {
        let worksheet = Worksheet::builtin();
        let tests = tests();
        for test in &tests {
            assert!(
                worksheet.step(test.step).is_some(),
                "{} has no step in worksheet/",
                test.name
            );
            assert_eq!(
                step_of(&test.name),
                Some(test.step),
                "{} is named after its step",
                test.name
            );
        }
        for step in &worksheet.steps {
            let count = tests.iter().filter(|t| t.step == step.number).count();
            assert!(
                count >= 3,
                "step {} ({}) has {count} tests",
                step.number,
                step.slug
            );
        }
    }

    #[test]
    fn every_test_has_the_line_of_its_fn() {
        let locations = locations();
        assert_eq!(
            locations.iter().map(|l| &l.test).collect::<Vec<_>>(),
            tests().iter().collect::<Vec<_>>(),
            "one location per test, in suite order"
        );
        for l in &locations {
            let module = MODULES
                .iter()
                .find(|(p, _)| format!("tests/{p}") == l.file)
                .expect("a module of the suite");
            let line = module.1.lines().nth(l.line - 1).unwrap();
            let short = l.test.name.split("::").nth(1).unwrap();
            assert!(
                line[l.column - 1..].starts_with(&format!("fn {short}")),
                "{}:{} is `{line}`",
                l.file,
                l.line
            );
        }
    }

    #[test]
    fn the_root_binds_lease_in_one_line() {
        let root = root_with("use learner as lease;");
        assert!(root.contains("use learner as lease;"));
        assert!(!root.contains(BINDING_LINE));
        for (path, _) in MODULES {
            assert!(
                root.contains(&format!("#[path = \"{path}\"]")),
                "the root declares {path}"
            );
        }
    }

    // The support's helpers on answers made up here: a failing test tells
    // the same implementation the same thing on every run, whatever order
    // its claimers finished in.

    /// What `f` failed with.
    fn failure(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let payload = std::panic::catch_unwind(f).expect_err("the observation fails");
        payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn claimers_of_a_held_job_are_told_of_in_one_order() {
        let told = |answers: Vec<Option<i64>>| {
            failure(move || nobody_claims("claim_many on a held job", &Ok(answers), 3))
        };
        let one = told(vec![Some(7), Some(8), Some(6)]);
        assert_eq!(one, told(vec![Some(8), Some(6), Some(7)]));
        assert!(
            one.ends_with("actual: an answer other than None: Some(6), Some(7), Some(8)\n"),
            "{one}"
        );
        // Only `None`s, too few: shown as they are (any order reads the same).
        let few = told(vec![None]);
        assert!(few.ends_with("actual: Ok([None])\n"), "{few}");
    }

    #[test]
    fn a_race_lists_the_other_answers_as_people_count() {
        let answers: Vec<Answer> = ["Some(10)", "Some(1)", "Some(9)", "Some(10)"]
            .into_iter()
            .map(Answer::from)
            .collect();
        let told = failure(move || {
            one_winner("a race", &answers, "Some(1)", "None", "one Some(1)");
        });
        assert!(
            told.ends_with("an answer other than Some(1) or None: Some(9), Some(10)\n"),
            "{told}"
        );
    }
}
