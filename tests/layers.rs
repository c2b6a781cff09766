//! The layers of `src/`, as DESIGN.md states them, read from the code: every
//! `crate::` path a file names must point down the order below (never up,
//! never sideways between two commands), and `exit.rs` names nothing of the
//! crate. A new import that breaks the order fails here with the file, the
//! line and the rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod common;
use common::root;

/// The layers, highest first: a module may name only what is below it.
const ORDER: &[&str] = &[
    "main", "cli", "commands", "judging", "output", "engine", "bridge", "lab", "lease", "error",
    "exit",
];

/// Modules that share a rank (neither is above the other).
fn rank(module: &str) -> Option<usize> {
    let i = ORDER.iter().position(|m| *m == module)?;
    // `lease` and `error` are both at the bottom, beside each other.
    Some(if module == "error" { i - 1 } else { i })
}

/// The top-level module of a file under `src/` (`commands` for
/// `src/commands/grade/cli.rs`), and the command folder for a command's file.
fn place(file: &Path) -> (String, Option<String>) {
    let parts: Vec<String> = file
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    let top = parts.first().cloned().unwrap_or_default();
    let command = (top == "commands" && parts.len() > 2)
        .then(|| parts[1].clone())
        .or_else(|| {
            (top == "commands" && parts.len() == 2 && parts[1] != "mod").then(|| parts[1].clone())
        });
    (top, command)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::a::b` path a line names, as `(a, b)` (`b` empty when there
/// is none), `use crate::{a, b::c}` groups included.
fn paths(line: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let mut segments = item.trim().split("::");
                let a = segments.next().unwrap_or("").trim().to_string();
                let b = segments.next().unwrap_or("").trim().to_string();
                found.push((a, b));
            }
            continue;
        }
        let ident = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let a = ident(rest);
        let after = &rest[a.len()..];
        let b = after.strip_prefix("::").map(ident).unwrap_or_default();
        found.push((a, b));
    }
    found
}

#[test]
fn every_import_points_down_the_layers_and_no_command_imports_another() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let commands: BTreeSet<String> = std::fs::read_dir(src.join("commands"))
        .unwrap()
        .flatten()
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .filter(|n| n != "mod")
        .collect();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let (top, command) = place(relative);
        // A module's own unit tests may reach what they test against (the
        // bridge's tests read the reference); only the code itself is held
        // to the order.
        let text = std::fs::read_to_string(file).unwrap();
        if relative.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let mut in_tests = false;
        let mut depth = 0i32;
        let mut lines = text.lines().enumerate().peekable();
        while let Some((n, line)) = lines.next() {
            let line = line.trim_start();
            if line == "#[cfg(test)]"
                && lines
                    .peek()
                    .is_some_and(|(_, next)| next.trim_start().starts_with("mod "))
            {
                in_tests = true;
                depth = 0;
                continue;
            }
            if in_tests {
                depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
                if depth <= 0 && line.contains('}') {
                    in_tests = false;
                }
                continue;
            }
            if line.starts_with("//") {
                continue;
            }
            for (a, b) in paths(line) {
                let at = format!("src/{}:{}", relative.display(), n + 1);
                if top == "exit" {
                    wrong.push(format!("{at}: exit.rs is a leaf, yet it names crate::{a}"));
                    continue;
                }
                if a == top {
                    if let (Some(mine), true) = (&command, a == "commands")
                        && commands.contains(&b)
                        && b != *mine
                    {
                        wrong.push(format!(
                            "{at}: the command `{mine}` imports the command `{b}` \
                             (move what both need below the commands)"
                        ));
                    }
                    continue;
                }
                let (Some(from), Some(to)) = (rank(&top), rank(&a)) else {
                    continue;
                };
                if to <= from {
                    wrong.push(format!(
                        "{at}: `{top}` names `crate::{a}`, which is not below it \
                         (the order is {})",
                        ORDER.join(" -> ")
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reader_of_paths_sees_groups_and_inline_paths() {
    assert_eq!(
        paths("use crate::{engine::Event, lab::mutant};"),
        [
            ("engine".to_string(), "Event".to_string()),
            ("lab".to_string(), "mutant".to_string())
        ]
    );
    assert_eq!(
        paths("let x = crate::commands::verify::BUILTIN; y(crate::exit::ExitCode::Failed)"),
        [
            ("commands".to_string(), "verify".to_string()),
            ("exit".to_string(), "ExitCode".to_string())
        ]
    );
    assert_eq!(
        place(Path::new("commands/grade/cli.rs")),
        ("commands".to_string(), Some("grade".to_string()))
    );
    assert_eq!(
        place(Path::new("commands/cache.rs")),
        ("commands".to_string(), Some("cache".to_string()))
    );
    assert_eq!(place(Path::new("commands/mod.rs")).1, None);
}
