//! Helpers shared by the tests that run fencelab as a program.

#![allow(dead_code)]

pub mod lab;
pub mod stored;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The scratch workspace in this checkout's target directory: every engine
/// run of the tests shares it, so what one built the next finds.
pub fn scratch() -> fencelab::engine::scratch::Scratch {
    fencelab::engine::scratch::Scratch::locate(&root().join("target"))
        .expect("the scratch workspace")
}

/// A `PATH` for fencelab that is the grader's own: this one, after a
/// directory that names the grader (`grader-7c1e`), which no trial may see.
pub fn graders_path() -> String {
    format!(
        "/home/grader-7c1e/.cargo/bin:{}",
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The `PATH` every process of a trial gets (`bridge::protocol::SYSTEM_PATH`).
pub const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A file of `tests/fixtures/submissions/`.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/submissions").join(name)
}

/// The reference with the one change a change file (a fixture submission's or
/// a mutant's `.toml`) describes: its id and the changed source.
pub fn changed_reference(change: &Path) -> (String, String) {
    changed(change, fencelab::lab::reference::REFERENCE)
}

/// `reference` (the Rust one, or the Python edition's `python/lease.py`)
/// with the one change a change file describes: its id and the changed source.
#[allow(dead_code)] // not every test binary has Python submissions
pub fn changed(change: &Path, reference: &str) -> (String, String) {
    let change = fencelab::lab::mutant::load_file(change, &fencelab::lab::suite::test_names())
        .unwrap_or_else(|e| panic!("{e}"));
    let source = change
        .apply(reference)
        .unwrap_or_else(|s| panic!("{}: {}", change.id, s.describe(&change.file)));
    (change.id, source)
}

/// The command lines of live processes that start with `prefix`.
pub fn processes_named(prefix: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.starts_with(prefix))
        .collect()
}

/// What `find` finds once it finds nothing, or after a minute of finding
/// something. For processes that were killed and may take a moment to be gone
/// on a loaded machine: the test asserts that they go, not how fast.
pub fn eventually_none(find: impl Fn() -> Vec<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = find();
        if found.is_empty() || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

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
