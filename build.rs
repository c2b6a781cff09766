//! Embeds the lab's data directories into the fencelab binary, so that the
//! learner's commands (`worksheet`, `predict`, `new`, `check --mine`) work from
//! any directory: writes `$OUT_DIR/mutants.rs` (the `*.toml` files of
//! `mutants/`), `$OUT_DIR/mutants_python.rs` (of `mutants-python/`) and `$OUT_DIR/wheats.rs` (the `*.toml` and `*.rs` files of
//! `wheats/`), `$OUT_DIR/wheats_python.rs` (the `*.toml` and `*.py` of `wheats-python/`), each a list of (file name, contents).
//! `$OUT_DIR/cage.rs` lists the cage crate's sources (`crates/cage/src/*.rs`,
//! not its tests' folders), which the engine copies into the scratch crates;
//! `$OUT_DIR/bridge.rs` lists the bridge's (`src/bridge/*.rs`) for the same.

use std::path::Path;

fn embed(dir: &str, extensions: &[&str], out: &str) {
    // Read when the script runs, not when it was compiled: a build script
    // compiled for a checkout elsewhere (a moved tree, a shared target
    // directory) must read this checkout's files.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join(dir);
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|x| extensions.iter().any(|e| x == *e))
        })
        .collect();
    files.sort();
    let mut list = String::from("&[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        list.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    list.push_str("]\n");
    let target = Path::new(&std::env::var("OUT_DIR").unwrap()).join(out);
    std::fs::write(target, list).unwrap_or_else(|e| panic!("write {out}: {e}"));
}

fn main() {
    embed("mutants", &["toml"], "mutants.rs");
    embed("mutants-python", &["toml"], "mutants_python.rs");
    embed("wheats", &["toml", "rs"], "wheats.rs");
    embed("wheats-python", &["toml", "py"], "wheats_python.rs");
    embed("crates/cage/src", &["rs"], "cage.rs");
    embed("src/bridge", &["rs"], "bridge.rs");
}
