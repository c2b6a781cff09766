//! Paths as people read them: relative to the project when inside it.

use std::path::{Path, PathBuf};

/// A path made absolute, through symbolic links when it exists.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// `path` relative to `root` when it is inside it, as written otherwise.
pub(crate) fn shown_path(path: &Path, root: &Path) -> String {
    let full = normalize(path);
    match full.strip_prefix(normalize(root)) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}
