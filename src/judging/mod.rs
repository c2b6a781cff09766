//! A learner's own tests, judged as Examplar (Wrenn and Krishnamurthi, Brown
//! University) judges them. A test is **valid** when it passes on every run of
//! every correct implementation: the reference, run three times, and every
//! wheat. A suite is **thorough** in proportion to the mutants its valid tests
//! catch. `check --mine` shows it to the learner and `grade --tests` scores it.
//! Neither owns it, and it imports no command.
//!
//! The learner's tests are untrusted code: they run as the judge, caged, under
//! the engine's `LearnerTests` policy. Every (test, implementation) pair is one
//! trial, in a shuffled order.
//!
//! An invalid test gets the one reason the evidence shows (`judge.rs`). A mutant
//! no valid test catches is told by its title and the kind of observation that
//! would expose it, never by its code.

pub(crate) mod content;
mod judge;
pub(crate) mod python;
mod report;

pub use judge::{Judges, Options, judge};
pub use report::{Invalid, JudgedTest, MissedMutant, StepThoroughness, TestsReport, WrongOn};

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::lab::api::compile_time_read;
use crate::lab::layout::{MINE, MINE_DIR, MINE_HELPERS};
use crate::lab::suite::SuiteFiles;

/// The root of a learner's tests in the judge crate, relative to `tests/`.
const ROOT: &str = "mine/main.rs";

/// The template's helpers in the judge crate, relative to `tests/`.
const HELPERS: &str = "mine/helpers.rs";

/// A learner's tests, read and checked.
#[derive(Debug, Clone)]
pub struct LearnerTests {
    /// The path as given.
    pub name: String,
    /// The root file shown in messages (`tests/mine/main.rs`, or the file given).
    pub shown: String,
    pub suite: SuiteFiles,
}

/// Reads a learner's tests: a lab crate (its `tests/mine/main.rs` and what is under
/// `tests/mine/`) or a single `.rs` file; a Python lab (its `test_lease.py`) or
/// a single `.py` file. The root must bind the
/// implementation in one line, `use <crate> as lease;`, which fencelab replaces
/// to run the tests against other implementations.
pub fn read(path: &Path) -> Result<LearnerTests, Error> {
    if path.is_file()
        && crate::lab::edition::Edition::of_file(path) == crate::lab::edition::Edition::Python
    {
        return python::read(path);
    }
    if path.is_dir() && crate::lab::edition::of(path)? == crate::lab::edition::Edition::Python {
        return python::read_lab(path);
    }
    let name = path.display().to_string();
    let (root, dir) = if path.is_dir() {
        let root = path.join(MINE);
        if !root.is_file() {
            return Err(Error::input(format!(
                "{} has no {MINE}: that is where your own tests go",
                path.display()
            ))
            .with_next(
                "create it (`fencelab new DIR` makes one to start from), or give the test file itself",
            ));
        }
        (root, Some(path.join(MINE_DIR)))
    } else if path.is_file() {
        (path.to_path_buf(), None)
    } else {
        return Err(Error::input(format!("{} does not exist", path.display()))
            .with_next("give a lab crate (its tests/mine/main.rs is judged) or a test file"));
    };
    let read = |file: &Path| -> Result<String, Error> {
        let text = std::fs::read_to_string(file).map_err(|e| {
            Error::io("read", file, e).with_next("save the test file as UTF-8 text")
        })?;
        if let Some((line, what)) = compile_time_read(&text) {
            return Err(Error::input(format!(
                "{}:{line}: `{what}` reads files or the environment while compiling, which tests \
                 judged by fencelab may not do",
                file.display()
            ))
            .with_next("remove it: tests are judged from their own sources only"));
        }
        Ok(text)
    };
    let text = read(&root)?;
    let binding = text
        .lines()
        .find(|l| {
            let l = l.trim();
            l.starts_with("use ") && l.ends_with(" as lease;") && !l.contains("::")
        })
        .map(str::to_string)
        .ok_or_else(|| {
            Error::input(format!(
                "{}: no line `use <your crate> as lease;`: your tests must reach the \
                 implementation as `lease`",
                root.display()
            ))
            .with_next(
                "add `use <your crate> as lease;` near the top and call the API as `lease::claim(...)`",
            )
        })?;
    let mut files = vec![(ROOT.to_string(), text)];
    if dir.is_none() {
        // A single file written from the lab's template declares `mod
        // helpers;`: it gets the template's helpers, as its lab crate has them.
        files.push((HELPERS.to_string(), MINE_HELPERS.to_string()));
    }
    if let Some(dir) = dir
        && dir.is_dir()
    {
        for file in rust_files(&dir) {
            if file == root {
                continue;
            }
            let relative = file
                .strip_prefix(dir.parent().unwrap_or(&dir))
                .unwrap_or(&file)
                .display()
                .to_string();
            files.push((relative, read(&file)?));
        }
    }
    let shown = if path.is_dir() {
        MINE.to_string()
    } else {
        name.clone()
    };
    Ok(LearnerTests {
        name,
        shown,
        suite: SuiteFiles {
            target: "mine".to_string(),
            root: ROOT.to_string(),
            files,
            binding,
            builtin: false,
        },
    })
}

impl LearnerTests {
    /// Whether they are written in Python (judged against the Python edition).
    pub(crate) fn python(&self) -> bool {
        crate::lab::edition::Edition::of_file(&self.suite.root)
            == crate::lab::edition::Edition::Python
    }

    /// `text` (compiler messages, a test's failure) with the root's path in the
    /// judge crate (`tests/mine/main.rs`) as the learner gave it.
    pub(crate) fn name_root(&self, text: &str) -> String {
        if self.shown == MINE {
            text.to_string()
        } else {
            text.replace(MINE, &self.shown)
        }
    }

    /// `report` with every path of the root named as the learner gave it.
    pub(crate) fn name_root_in(&self, mut report: TestsReport) -> TestsReport {
        report.compile_errors = report.compile_errors.map(|e| self.name_root(&e));
        for wrong in report.tests.iter_mut().flat_map(|t| &mut t.wrong_on) {
            wrong.message = self.name_root(&wrong.message);
        }
        report
    }
}

/// The `.rs` files under `dir`, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crates_tests_are_read_with_their_modules_and_binding() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(MINE_DIR)).unwrap();
        std::fs::write(
            dir.path().join(MINE),
            "use my_lab as lease;\nmod helpers;\n#[test]\nfn t() {}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(MINE_DIR).join("helpers.rs"),
            "pub fn h() {}\n",
        )
        .unwrap();
        let tests = read(dir.path()).unwrap();
        assert_eq!(tests.suite.binding, "use my_lab as lease;");
        let paths: Vec<&str> = tests.suite.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["mine/main.rs", "mine/helpers.rs"]);
        assert_eq!(tests.shown, MINE);
    }

    #[test]
    fn a_single_file_gets_the_templates_helpers_and_is_named_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("alice_tests.rs");
        std::fs::write(&file, "use my_lab as lease;\nmod helpers;\n").unwrap();
        let tests = read(&file).unwrap();
        let paths: Vec<&str> = tests.suite.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["mine/main.rs", "mine/helpers.rs"]);
        assert_eq!(tests.suite.files[1].1, MINE_HELPERS);
        let shown = file.display().to_string();
        assert_eq!(
            tests.name_root("error[E0308]: --> tests/mine/main.rs:2:5"),
            format!("error[E0308]: --> {shown}:2:5")
        );
        // A lab crate's root keeps its own name.
        std::fs::create_dir_all(dir.path().join(MINE_DIR)).unwrap();
        std::fs::write(dir.path().join(MINE), "use my_lab as lease;\n").unwrap();
        let crate_tests = read(dir.path()).unwrap();
        assert_eq!(
            crate_tests.name_root("tests/mine/main.rs:2"),
            "tests/mine/main.rs:2"
        );
    }

    #[test]
    fn tests_without_the_binding_or_reading_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.rs");
        std::fs::write(
            &file,
            "#[test]\nfn t() { my_lab::init_db(\"x\").unwrap(); }\n",
        )
        .unwrap();
        let err = read(&file).unwrap_err();
        assert!(
            err.message.contains("use <your crate> as lease;"),
            "{}",
            err.message
        );
        std::fs::write(
            &file,
            "use my_lab as lease;\nconst S: &str = include_str!(\"/etc/passwd\");\n",
        )
        .unwrap();
        let err = read(&file).unwrap_err();
        assert!(
            err.message.contains("t.rs:2: `include_str`"),
            "{}",
            err.message
        );
        let err = read(&dir.path().join("missing")).unwrap_err();
        assert!(err.message.contains("does not exist"), "{}", err.message);
    }
}
