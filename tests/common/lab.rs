//! A learner's lab crate as the tests write one: a `Cargo.toml` named `lab`
//! and the learner's own tests under `tests/mine/`, among them fencelab's own
//! suite (or some of its steps) dropped in as a learner's.

use std::path::Path;

/// Writes a lab crate named `lab` at `dir`: `files` are `tests/mine/`'s,
/// its root `main.rs` among them.
pub fn write_lab<P: AsRef<str>, T: AsRef<str>>(dir: &Path, files: &[(P, T)]) {
    let mine = dir.join("tests/mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"lab\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    for (name, text) in files {
        std::fs::write(mine.join(name.as_ref()), text.as_ref()).unwrap();
    }
}

/// fencelab's own suite as a learner's `tests/mine/` files, the modules of
/// `steps` only (and their support): `main.rs` first, its `#[path]`s dropped
/// (the modules sit beside it) and its binding the learner's.
pub fn own_suite_files(steps: &[u32]) -> Vec<(String, String)> {
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
    let root = &suite
        .files
        .iter()
        .find(|(p, _)| *p == suite.root)
        .unwrap()
        .1;
    let main: Vec<String> = root
        .lines()
        .filter(|l| !l.trim_start().starts_with("#[path"))
        .filter(|l| {
            l.strip_prefix("mod ")
                .and_then(|m| m.strip_suffix(';'))
                .is_none_or(kept)
        })
        .map(|l| match l.trim() == suite.binding {
            true => "use lab as lease;".to_string(),
            false => l.to_string(),
        })
        .collect();
    let mut files = vec![("main.rs".to_string(), main.join("\n"))];
    for (path, text) in suite
        .files
        .iter()
        .filter(|(p, _)| *p != suite.root && kept(p))
    {
        files.push((
            path.trim_start_matches("behaviour/").to_string(),
            text.to_string(),
        ));
    }
    files
}
