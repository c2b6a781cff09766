//! A submission's module imported once, in its cage, before any trial. A
//! module that cannot be imported (a missing package, a raise at its top
//! level) is one reason and exit 3, as a Rust compile error, not a crash in
//! every test.

use std::path::Path;

use super::super::identity;
use crate::bridge::start::python_reads;
use crate::error::Error;

/// What the server prints once the module is imported (`--import KEY`).
const IMPORTED: &str = "fencelab-server: imported";

/// Why each of `hosts` (a server's script and a key) cannot be imported,
/// `None` for one that can: each in a cage of its own, as its trials'.
pub(super) fn import_errors(hosts: &[(&Path, &str)]) -> Result<Vec<Option<String>>, Error> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut answers: Vec<Option<Result<Option<String>, Error>>> =
        (0..hosts.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        for (chunk, out) in hosts
            .chunks(hosts.len().div_ceil(jobs).max(1))
            .zip(answers.chunks_mut(hosts.len().div_ceil(jobs).max(1)))
        {
            scope.spawn(move || {
                for ((script, key), answer) in chunk.iter().zip(out) {
                    *answer = Some(import_error(script, key));
                }
            });
        }
    });
    answers
        .into_iter()
        .map(|a| a.expect("every host was asked"))
        .collect()
}

/// Why the module `key` of the server `script` cannot be imported.
fn import_error(script: &Path, key: &str) -> Result<Option<String>, Error> {
    let reads = python_reads(script, key);
    let finished = identity::run(script, &["--import", key], Some(&reads))?;
    let said = finished.stderr.trim_end();
    Ok(if finished.timed_out() {
        Some("its module's top level did not finish within 30 s".to_string())
    } else if finished.status.is_some_and(|s| s.success())
        && finished.stdout.lines().last() == Some(IMPORTED)
    {
        None
    } else if said.is_empty() {
        Some("its module ended the process while it was imported".to_string())
    } else {
        // Python's own words, as a compiler's are shown: the screen says
        // what they are about.
        Some(said.to_string())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_server_prints_what_is_looked_for() {
        let line = format!("IMPORTED = \"{}\"", super::IMPORTED);
        assert!(super::super::server().contains(&line), "{line}");
    }
}
