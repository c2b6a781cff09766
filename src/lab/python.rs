//! The lab's Python edition as data: the Python reference (`python/lease.py`,
//! the contract as the worksheet states it) and its mutants
//! (`mutants-python/*.toml`, the same format as `mutants/`, each `find`
//! applying to the Python reference), compiled into fencelab. How Python maps
//! onto the Rust contract is written down in `python/CONTRACT.md`; how a
//! Python implementation is hosted is `engine::python`.

use std::path::Path;

use crate::lab::mutant::{self, Mutant};

/// Where the Python reference is in fencelab's project, and the path its
/// mutants name.
pub const FILE: &str = "python/lease.py";

/// The Python reference, as compiled into fencelab.
pub const REFERENCE: &str = include_str!("../../python/lease.py");

/// The directory of the Python mutants in fencelab's project.
pub const MUTANTS_DIR: &str = "mutants-python";

/// The Python mutants (`mutants-python/*.toml`), compiled into fencelab.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/mutants_python.rs"));

/// The Python mutants, as compiled into fencelab, sorted by step and id.
pub fn mutants() -> Vec<Mutant> {
    let tests = crate::lab::suite::test_names();
    let mut mutants: Vec<Mutant> = BUILTIN
        .iter()
        .map(|(name, text)| {
            mutant::parse(&Path::new(MUTANTS_DIR).join(name), text, &tests)
                .expect("the built-in Python mutants are checked by the tests")
        })
        .collect();
    mutants.sort_by(|a, b| (a.step, &a.id).cmp(&(b.step, &b.id)));
    mutants
}

/// The functions a Python implementation must define at its top level.
pub(crate) const API: [&str; 8] = [
    "init_db",
    "enqueue",
    "state",
    "claim",
    "renew",
    "complete",
    "release",
    "claim_many",
];

/// The functions of the contract that `source` does not define at its top
/// level (`def name(` at the start of a line, `async def` not counting).
pub(crate) fn missing_api(source: &str) -> Vec<&'static str> {
    API.iter()
        .copied()
        .filter(|name| {
            !source.lines().any(|line| {
                line.strip_prefix("def ")
                    .and_then(|rest| rest.trim_start().strip_prefix(name))
                    .is_some_and(|rest| rest.trim_start().starts_with('('))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_has_the_whole_api_and_a_method_is_not_a_function() {
        assert!(missing_api(REFERENCE).is_empty());
        let source =
            "class Lease:\n    def claim(self):\n        pass\ndef init_db (path):\n    pass\n";
        let missing = missing_api(source);
        assert!(missing.contains(&"claim") && !missing.contains(&"init_db"));
    }
}
