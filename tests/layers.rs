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

/// Every file under `src/commands/`, with its path relative to `src/`.
fn command_files() -> Vec<(PathBuf, String)> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src.join("commands"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f.strip_prefix(&src).unwrap().to_path_buf(), text)
        })
        .collect()
}

/// `impl Printer` or `impl Trait for Printer` on `line` (by any path).
fn extends_the_printer(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix("impl") else {
        return false;
    };
    let rest = rest.trim_start_matches(|c: char| c != ' ');
    let target = rest.split_once(" for ").map_or(rest, |(_, t)| t);
    let ty = target
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == '{' || c == '<')
        .next()
        .unwrap_or("");
    ty.rsplit("::").next() == Some("Printer")
}

#[test]
fn no_command_extends_the_printer() {
    // A command's report is a function from its report type to text; what
    // it shows while it runs is a `Progress` of its own. The printer keeps
    // status lines and progress.
    let wrong: Vec<String> = command_files()
        .iter()
        .flat_map(|(file, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, l)| extends_the_printer(l))
                .map(move |(n, l)| format!("src/{}:{}: {}", file.display(), n + 1, l.trim()))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "commands extend the printer (render with a free function from the report \
         type and an output::printer::Layout instead):\n{}",
        wrong.join("\n")
    );
}

/// The flags whose defaults the policy owns: those its `with_limits` is
/// documented to take, read from `src/engine/policy.rs`.
fn policy_flags() -> BTreeSet<String> {
    let policy = std::fs::read_to_string(root().join("src/engine/policy.rs")).unwrap();
    let at = policy.find("fn with_limits(").expect("Policy::with_limits");
    let doc = policy[..at]
        .lines()
        .rev()
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("///"));
    let mut flags = BTreeSet::new();
    for line in doc {
        for word in
            line.split(|c: char| c == '`' || c.is_whitespace() || c == ',' || c == '(' || c == ')')
        {
            if word.starts_with("--") && word.len() > 2 {
                flags.insert(word.to_string());
            }
        }
    }
    flags
}

/// Each clap `#[arg(...)]` with a default, as `(line, flag)`: the flag is
/// its `long = "..."` or the field's name below it.
fn clap_defaults(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let line = line.trim_start();
        if !(line.starts_with("#[arg(") && line.contains("default_value")) {
            continue;
        }
        let long = line
            .split("long = \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_string);
        let field = lines[n + 1..]
            .iter()
            .map(|l| l.trim_start())
            .find(|l| l.starts_with("pub ") && l.contains(':'))
            .and_then(|l| l["pub ".len()..].split(':').next())
            .map(|f| f.trim().replace('_', "-"));
        if let Some(name) = long.or(field) {
            found.push((n + 1, format!("--{name}")));
        }
    }
    found
}

#[test]
fn no_default_of_the_policy_is_repeated_in_clap() {
    let flags = policy_flags();
    assert!(
        flags.contains("--timeout") && flags.contains("--build-timeout"),
        "the policy's with_limits names the flags it takes: {flags:?}"
    );
    let mut files = command_files();
    let cli = root().join("src/cli/mod.rs");
    files.push((
        PathBuf::from("cli/mod.rs"),
        std::fs::read_to_string(cli).unwrap(),
    ));
    let wrong: Vec<String> = files
        .iter()
        .flat_map(|(file, text)| {
            clap_defaults(text)
                .into_iter()
                .filter(|(_, flag)| flags.contains(flag))
                .map(move |(n, flag)| {
                    format!(
                        "src/{}:{n}: {flag} has a default in clap; the policy \
                         (src/engine/policy.rs) owns it: take an Option and \
                         apply it with Policy::with_limits",
                        file.display()
                    )
                })
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_readers_of_printers_and_defaults_see_what_they_look_for() {
    assert!(extends_the_printer("impl Printer {"));
    assert!(extends_the_printer(
        "impl crate::output::printer::Printer {}"
    ));
    assert!(extends_the_printer("impl Progress for Printer {"));
    assert!(extends_the_printer(
        "impl<'a> Progress<Update<'a>> for Printer {"
    ));
    assert!(!extends_the_printer("impl Progress<Update> for Live<'_> {"));
    let text = "    #[arg(long, value_name = \"SECS\", default_value_t = 10.0)]\n    pub timeout: f64,\n    #[arg(long = \"impl\", default_value = \"x\")]\n    pub implementation: PathBuf,";
    assert_eq!(
        clap_defaults(text),
        [(1, "--timeout".to_string()), (3, "--impl".to_string())]
    );
}

/// A module's `//!` header says what it is for and its invariants in at
/// most 15 lines: detail belongs on the item it explains, or in DESIGN.md.
#[test]
fn no_module_header_runs_past_15_lines() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("crates"), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let header = text.lines().take_while(|l| l.starts_with("//!")).count();
            (header > 15).then(|| format!("{} ({header} lines)", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "headers over 15 lines: {long:#?}");
}

/// The lines of `text` before its inline tests: a `#[cfg(test)]` followed
/// by `mod tests {` at any visibility. Tests in `module/tests.rs` are a file
/// of their own, held to the same bar.
fn lines_before_tests(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let inline = |n: usize| {
        let next = lines.get(n + 1).map_or("", |l| l.trim_start());
        let next = next.strip_prefix("pub(crate) ").unwrap_or(next);
        let next = next.strip_prefix("pub ").unwrap_or(next);
        lines[n].trim() == "#[cfg(test)]" && next.starts_with("mod tests") && next.ends_with('{')
    };
    (0..lines.len()).find(|&n| inline(n)).unwrap_or(lines.len())
}

/// The files of `files` over 600 lines before their tests.
fn over_600_lines(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let lines = lines_before_tests(&text);
            (lines > 600).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect()
}

/// Every module is short enough to read whole (issues 46 and 47): no file
/// of `src/` or the cage crate over 600 lines before its tests. A file grown
/// past it is split by concern.
#[test]
fn no_file_of_src_or_the_cage_crate_runs_past_600_lines_before_its_tests() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let in_src = files.len();
    rust_files(&root().join("crates/cage/src"), &mut files);
    assert!(in_src > 100 && files.len() > in_src + 10, "{files:?}");
    let long = over_600_lines(&files);
    assert!(long.is_empty(), "files over 600 lines: {long:#?}");
}

#[test]
fn the_count_of_lines_stops_at_inline_tests_of_any_visibility() {
    let code = "fn a() {}\n".repeat(3);
    let tests = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
    assert_eq!(lines_before_tests(&format!("{code}\n{tests}")), 4);
    let public = tests.replace("mod tests", "pub(crate) mod tests");
    assert_eq!(lines_before_tests(&format!("{code}{public}")), 3);
    // Tests in a file of their own leave every line to be counted.
    assert_eq!(
        lines_before_tests(&format!("{code}#[cfg(test)]\nmod tests;\n")),
        5
    );
    assert_eq!(lines_before_tests(&code), 3);
}
