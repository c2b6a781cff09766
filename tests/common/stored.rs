//! Batches that several tests read, built once on disk by whichever test
//! needs one first, in this process or another (cargo-nextest runs each test
//! in a process of its own). A batch is kept under the test target's
//! temporary directory, keyed by both binaries, the inputs it reads, the
//! user and the `FENCELAB_` variables, so a changed one is built again.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

/// The batch `name`, built by `build` unless a build with the same key is
/// on disk. A failed build is not kept: the next test to need it tries again.
pub fn stored<T: Serialize + DeserializeOwned>(
    name: &str,
    inputs: &[&Path],
    build: impl FnOnce() -> T,
) -> T {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("batches");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}-{}.json", key(inputs)));
    // One builder at a time, across threads and processes (flock).
    let lock = std::fs::File::create(dir.join(format!("{name}.lock"))).unwrap();
    lock.lock().unwrap();
    if let Ok(text) = std::fs::read_to_string(&file)
        && let Ok(value) = serde_json::from_str(&text)
    {
        return value;
    }
    let value = build();
    // Older builds of this batch are of binaries or inputs now gone.
    for old in std::fs::read_dir(&dir).unwrap().flatten() {
        let old_name = old.file_name().to_string_lossy().into_owned();
        if old_name.starts_with(&format!("{name}-")) {
            let _ = std::fs::remove_file(old.path());
        }
    }
    let partial = file.with_extension("partial");
    let mut out = std::fs::File::create(&partial).unwrap();
    out.write_all(serde_json::to_string(&value).unwrap().as_bytes())
        .unwrap();
    std::fs::rename(&partial, &file).unwrap();
    value
}

/// What a batch's result depends on besides its own code.
fn key(inputs: &[&Path]) -> String {
    let mut hash = Sha256::new();
    // This process's own binary through /proc: its path is gone once a
    // build replaces it under a running test.
    for binary in [
        Path::new(env!("CARGO_BIN_EXE_fencelab")),
        Path::new("/proc/self/exe"),
    ] {
        hash.update(identity(binary).as_bytes());
    }
    for input in inputs {
        for file in files(input) {
            hash.update(file.to_string_lossy().as_bytes());
            hash.update(std::fs::read(&file).unwrap_or_default());
        }
    }
    hash.update(user().as_bytes());
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("FENCELAB_"))
        .collect();
    vars.sort();
    hash.update(format!("{vars:?}").as_bytes());
    let digest = hash.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// A binary's size and time of change: a rebuilt one is another. One
/// that is not there (yet) keys as such, and its tests fail on their own.
fn identity(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(meta) => format!(
            "{}:{}:{:?}",
            path.display(),
            meta.len(),
            meta.modified().ok()
        ),
        Err(e) => format!("{}: {e}", path.display()),
    }
}

/// The user running the tests (verdicts differ as root: the cage's layers).
fn user() -> String {
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0);
    me.to_string()
}

/// Every file under `path`, in order.
fn files(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut found = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for entry in entries {
        found.extend(files(&entry));
    }
    found
}
