//! What a place in the cage is, and its absolute path: shared by the
//! layers that bind (mounts), allow (Landlock) and join (space) places.

use std::path::{Path, PathBuf};

/// What a place in the cage is.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Place {
    /// Read and executed (the system's, the program).
    System,
    /// Read, written, everything (the trial's directory).
    Trial,
    /// Read and written, a single file (a device, a socket).
    Device,
    /// Bound into the new root, with no Landlock right at all (/proc).
    Shown,
}

/// `path` made absolute where it can be, as given where it cannot.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
