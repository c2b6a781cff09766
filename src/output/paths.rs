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

/// The directory every name is in (ending in `/`), or "" when they share
/// none: whole directories only (`sub/a.rs` and `sub/ab.rs` share `sub/`).
pub(crate) fn shared_directory(names: &[String]) -> &str {
    let Some(first) = names.first() else {
        return "";
    };
    let mut end = first.rfind('/').map_or(0, |i| i + 1);
    for name in &names[1..] {
        while end > 0 && !name.starts_with(&first[..end]) {
            end = first[..end - 1].rfind('/').map_or(0, |i| i + 1);
        }
    }
    &first[..end]
}

#[cfg(test)]
mod tests {
    use super::{shared_directory, shell_word};

    #[test]
    fn the_shared_directory_is_whole_directories() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (given, shared) in [
            (&["sub/a.rs", "sub/ab.rs"][..], "sub/"),
            (&["a/b/c.rs", "a/b/d.rs", "a/e.rs"], "a/"),
            (&["a.rs", "b.rs"], ""),
            (&["x/a.rs", "y/a.rs"], ""),
            (&["only/one.rs"], "only/"),
            (&["ab/x.rs", "abc/x.rs"], ""),
        ] {
            assert_eq!(shared_directory(&names(given)), shared, "{given:?}");
        }
    }

    #[test]
    fn a_word_with_spaces_or_quotes_is_quoted_for_the_shell() {
        assert_eq!(shell_word("my-mutants/x.toml"), "my-mutants/x.toml");
        assert_eq!(shell_word("bad name!"), "'bad name!'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
