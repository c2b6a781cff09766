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

/// `word` as a POSIX shell reads it back: as is when it holds only safe
/// characters, else in single quotes.
pub(crate) fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_word_with_spaces_or_quotes_is_quoted_for_the_shell() {
        assert_eq!(shell_word("my-mutants/x.toml"), "my-mutants/x.toml");
        assert_eq!(shell_word("bad name!"), "'bad name!'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
