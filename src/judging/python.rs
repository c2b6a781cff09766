//! A learner's own tests written in Python, and what judging them needs of
//! the Python edition: the test file read (one `.py` file of plain `def
//! test_...()` functions or `unittest.TestCase` classes, reaching the lab's
//! API as `import lease`), and the runs of the Python reference that decide
//! `claim_many`'s race each its own way (as `lab::schedule` does for Rust).
//!
//! The file is run by `python/fencelab_tests.py` (`engine::python::judge`),
//! caged as a learner's Rust tests are; its `lease` is
//! `python/lease_proxy.py`, which sends every call to the implementation
//! under test in another process, so nothing but the contract's answers tells
//! a test which implementation it talks to.

use std::path::Path;
use std::sync::OnceLock;

use super::LearnerTests;
use crate::error::Error;
use crate::lab::mutant::{Stale, apply};
use crate::lab::suite::SuiteFiles;
use crate::lab::wheat::Wheats;

/// The line of that wheat that chooses the last owner as the leader.
const LAST_LEADS: &str = "    leader = len(owners) - 1\n";

/// The gated `claim_many` of the Python `variant-claim-many-winner`, as
/// `(find, replace)`: read from the built-in Python wheats once per process.
fn gated() -> &'static (String, String) {
    static GATE: OnceLock<(String, String)> = OnceLock::new();
    GATE.get_or_init(|| crate::lab::schedule::gated_in(&Wheats::builtin_python()))
}

/// `source` (the Python reference, or a change of it that keeps its
/// `claim_many`) under schedule `run`: its `c`-th call of `claim_many` in a
/// process lets the owner at `(run + c) % len(owners)` take the write lock
/// first (see `lab::schedule`). `Err` when `source` has no `claim_many` of the
/// reference's.
pub(crate) fn scheduled(source: &str, run: usize) -> Result<String, Stale> {
    let (find, replace) = gated();
    let leads = format!(
        "    # fencelab's run {run} of the reference: each call lets the next owner lead.
    import itertools

    calls = claim_many.__dict__.setdefault(\"fencelab_calls\", itertools.count({run}))
    leader = next(calls) % len(owners)
"
    );
    let replace = apply(replace, LAST_LEADS, &leads)?;
    apply(source, find, &replace)
}

/// `source` with a `claim_many` in which the first owner always leads
/// (`lab::schedule::first_leads`, in Python).
pub(crate) fn first_leads(source: &str) -> Result<String, Stale> {
    let (find, replace) = gated();
    let leads = "    # fencelab's probe of the reference: the first owner always leads.
    leader = 0
";
    let replace = apply(replace, LAST_LEADS, leads)?;
    apply(source, find, &replace)
}

/// Where a Python lab's own tests are, beside its `lease.py` (where pytest
/// would find them too, importing the learner's own `lease`).
pub(crate) const LAB_TESTS: &str = "test_lease.py";

/// Reads the tests of the Python lab at `dir` (its `test_lease.py`), named
/// as the learner knows the file.
pub(crate) fn read_lab(dir: &Path) -> Result<LearnerTests, Error> {
    let file = dir.join(LAB_TESTS);
    if !file.is_file() {
        return Err(Error::input(format!(
            "{} has no {LAB_TESTS}: that is where your own tests go",
            dir.display()
        ))
        .with_next(format!(
            "create {LAB_TESTS} beside lease.py: `import lease`, then `def test_...():` \
             functions with assert (or unittest.TestCase classes)"
        )));
    }
    let mut tests = read(&file)?;
    let text = tests.suite.files.remove(0).1;
    tests.name = dir.display().to_string();
    tests.shown = LAB_TESTS.to_string();
    tests.suite.root = LAB_TESTS.to_string();
    tests.suite.files = vec![(LAB_TESTS.to_string(), text)];
    Ok(tests)
}

/// Reads a learner's Python test file. Its tests reach the implementation as
/// the module `lease` (`import lease`, `from lease import ...`).
pub(crate) fn read(path: &Path) -> Result<LearnerTests, Error> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("read", path, e).with_next("save the test file as UTF-8 text"))?;
    let imports_lease = text.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("import lease") || line.starts_with("from lease import")
    });
    if !imports_lease {
        return Err(Error::input(format!(
            "{name}: no line `import lease` (or `from lease import ...`): your tests must \
             reach the lab's API as the module `lease`"
        ))
        .with_next("add `import lease` near the top and call the API as `lease.claim(...)`"));
    }
    Ok(LearnerTests {
        shown: name.clone(),
        name: name.clone(),
        suite: SuiteFiles {
            target: "mine".to_string(),
            root: name.clone(),
            files: vec![(name, text)],
            binding: "import lease".to_string(),
            builtin: false,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::python::REFERENCE;
    /// The Python wheat whose gate the reference's runs reuse.
    const GATED: &str = "variant-claim-many-winner";

    #[test]
    fn every_run_is_the_python_reference_but_for_claim_manys_leader() {
        let runs: Vec<String> = (0..crate::lab::schedule::RUNS)
            .map(|r| scheduled(REFERENCE, r).unwrap())
            .collect();
        let head = REFERENCE.split("def claim_many").next().unwrap();
        for (r, run) in runs.iter().enumerate() {
            assert!(run.contains(&format!("itertools.count({r})")), "run {r}");
            assert!(!run.contains(LAST_LEADS), "run {r} rotates the leader");
            assert!(run.starts_with(head), "run {r}");
        }
        assert_ne!(runs[0], runs[1]);
        let wheats = Wheats::builtin_python();
        let winner = wheats.wheats.iter().find(|w| w.id == GATED).unwrap();
        assert!(scheduled(&winner.code(REFERENCE).unwrap(), 0).is_err());
    }

    #[test]
    fn a_python_file_must_import_lease() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("test_mine.py");
        std::fs::write(&file, "def test_x():\n    assert True\n").unwrap();
        let err = read(&file).unwrap_err();
        assert!(err.message.contains("import lease"), "{}", err.message);
        std::fs::write(
            &file,
            "from lease import claim\n\ndef test_x():\n    pass\n",
        )
        .unwrap();
        let tests = read(&file).unwrap();
        assert_eq!(tests.suite.root, file.display().to_string());
        assert!(tests.python());
    }

    #[test]
    fn a_python_labs_tests_are_its_test_lease_py_named_as_the_learner_knows_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lease.py"), "").unwrap();
        let err = super::super::read(dir.path()).unwrap_err();
        assert!(
            err.message.contains("has no test_lease.py"),
            "{}",
            err.message
        );
        std::fs::write(
            dir.path().join(LAB_TESTS),
            "import lease
",
        )
        .unwrap();
        let tests = super::super::read(dir.path()).unwrap();
        assert!(tests.python());
        assert_eq!(tests.shown, LAB_TESTS);
        assert_eq!(tests.suite.files[0].0, LAB_TESTS);
    }
}
