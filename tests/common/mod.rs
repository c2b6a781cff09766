//! Helpers shared by the tests that run fencelab as a program.

use std::path::Path;

/// The command lines of the processes whose TMPDIR lies under `dir`: what a
/// fencelab run given that TMPDIR started (its judges, the implementations'
/// processes and anything they left), and nothing of anyone else's.
pub fn processes_under(dir: &Path) -> Vec<String> {
    let prefix = format!("TMPDIR={}", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("environ")).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .any(|v| v.starts_with(prefix.as_bytes()))
            })
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .collect()
}
