//! The lab crate's name, from the directory `fencelab new` is given: what
//! `cargo new` would make of it, and the names a crate cannot have (Rust's
//! keywords and crates, the lab's dependencies, cargo's directories, names
//! Windows reserves), each refused with the name to use instead, before
//! anything is written.

use std::path::Path;

use crate::error::Error;

/// A crate name from a directory name: lower case, `_` for anything else.
pub(crate) fn crate_name(dir: &Path) -> String {
    let raw = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name = format!("lease_lab_{name}");
    }
    name.trim_end_matches('_').to_string()
}

/// Names a crate cannot have (besides Rust's keywords): Rust's own crates,
/// which the lab's crate would shadow (`test` above all: `cargo test` could
/// not build), the lab's dependencies and the suite's name for the crate,
/// cargo's build directories, and names Windows reserves.
const RESERVED: [&str; 16] = [
    "test",
    "std",
    "core",
    "alloc",
    "proc_macro",
    "build",
    "deps",
    "examples",
    "incremental",
    "con",
    "prn",
    "aux",
    "nul",
    "lease",
    "rusqlite",
    "tempfile",
];

/// Rust's keywords, strict and reserved: none can name a crate.
const KEYWORDS: [&str; 52] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv",
    "typeof", "unsized", "virtual", "yield", "try", "gen", "union",
];

/// Checks that `name` can be the lab crate's name, as `cargo new` would,
/// and says which name to use instead when it cannot.
pub(crate) fn check_name(name: &str, dir: &Path) -> Result<(), Error> {
    let why = if KEYWORDS.contains(&name) {
        Some("it is a Rust keyword")
    } else if name == "test" {
        Some(
            "it is Rust's built-in test crate, which the lab's crate would shadow, so `cargo test` could not build it",
        )
    } else if RESERVED.contains(&name)
        || (name.len() == 4
            && (name.starts_with("com") || name.starts_with("lpt"))
            && name.ends_with(|c: char| c.is_ascii_digit()))
    {
        Some("it is taken (by Rust, by a crate the lab uses, by cargo or by Windows)")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => {
            let suggestion = dir.with_file_name(format!(
                "{}-lab",
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            Err(Error::input(format!(
                "{}: `{name}` cannot be the lab crate's name: {why}; nothing was written",
                dir.display()
            ))
            .with_next(format!(
                "give another directory name, e.g. `fencelab new {}`",
                suggestion.display()
            )))
        }
    }
}
