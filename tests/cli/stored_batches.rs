//! `common::stored`: a batch several tests read is built once, and again
//! when an input it names changes.

use std::cell::Cell;

use crate::common::stored::stored;

#[test]
fn a_batch_is_built_once_and_again_when_its_input_changes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "first").unwrap();
    let name = format!("self-test-{}", std::process::id());
    let builds = Cell::new(0);
    let build = |text: &str| {
        builds.set(builds.get() + 1);
        text.to_string()
    };
    let first: String = stored(&name, &[&input], || build("one"));
    let again: String = stored(&name, &[&input], || build("two"));
    assert_eq!(
        (first.as_str(), again.as_str(), builds.get()),
        ("one", "one", 1)
    );
    std::fs::write(&input, "second").unwrap();
    let changed: String = stored(&name, &[&input], || build("three"));
    assert_eq!((changed.as_str(), builds.get()), ("three", 2));
    let batches = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("batches");
    let kept: Vec<_> = std::fs::read_dir(&batches)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&name))
        .collect();
    assert_eq!(kept.len(), 2, "the lock and the one build of today's input");
    for entry in kept {
        std::fs::remove_file(entry.path()).unwrap();
    }
}
