//! The contract's API as text: what a file must declare to be an
//! implementation of it, and what it must not do while compiling. Checked on
//! the source before anything is built, so that a file that is not an
//! implementation gets one clear sentence, not the compiler's pages.

use crate::lab::worksheet::SLUGS;

/// The first line (1-based) that reads files or the environment at compile
/// time, and what it uses: `include!`, `include_str!`, `include_bytes!`,
/// `env!`, `option_env!`, or a `#[path]` attribute.
pub fn compile_time_read(source: &str) -> Option<(usize, &'static str)> {
    const READERS: [&str; 6] = [
        "include_str",
        "include_bytes",
        "include!",
        "option_env",
        "env!",
        "path",
    ];
    source.lines().enumerate().find_map(|(i, line)| {
        let code = line.split("//").next().unwrap_or("");
        READERS.iter().find_map(|reader| {
            let hit = match *reader {
                "path" => code.contains("#[path") || code.contains("#![path"),
                "env!" => code.match_indices("env!").any(|(at, _)| {
                    !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                }),
                other => code.contains(other),
            };
            hit.then_some((i + 1, *reader))
        })
    })
}

/// The items of the API that `source` does not declare (a textual check;
/// wrong signatures are the compiler's to report).
pub fn missing_api(source: &str) -> Vec<String> {
    let declares = |kind: &str, name: &str| {
        source.lines().any(|line| {
            let line = line.trim_start();
            line.strip_prefix("pub ")
                .and_then(|rest| rest.trim_start().strip_prefix(kind))
                .and_then(|rest| rest.trim_start().strip_prefix(name))
                .is_some_and(|rest| rest.starts_with(['(', '<', ' ', '{']) || rest.is_empty())
        })
    };
    let mut missing: Vec<String> = Vec::new();
    for (kind, name) in [("struct", "Job"), ("enum", "LeaseError")] {
        if !declares(kind, name) {
            missing.push(format!("pub {kind} {name}"));
        }
    }
    for slug in SLUGS {
        if !declares("fn", slug) {
            missing.push(format!("pub fn {slug}"));
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_check_names_what_is_missing() {
        assert!(missing_api(crate::lab::reference::REFERENCE).is_empty());
        let without_release =
            crate::lab::reference::REFERENCE.replace("pub fn release(", "pub fn give_back(");
        assert_eq!(missing_api(&without_release), vec!["pub fn release"]);
        assert_eq!(missing_api("fn main() {}").len(), 10);
    }

    #[test]
    fn reading_at_compile_time_is_found() {
        assert_eq!(compile_time_read(crate::lab::reference::REFERENCE), None);
        assert_eq!(
            compile_time_read("a\nconst K: &str = include_str!(\"/etc/passwd\");"),
            Some((2, "include_str"))
        );
        assert_eq!(
            compile_time_read("let t = env!(\"CI_JOB_TOKEN\");"),
            Some((1, "env!"))
        );
        assert_eq!(
            compile_time_read("let t = option_env!(\"X\");"),
            Some((1, "option_env"))
        );
        assert_eq!(
            compile_time_read("#[path = \"/x.rs\"]\nmod x;"),
            Some((1, "path"))
        );
        assert_eq!(
            compile_time_read("// include_str! in a comment is fine"),
            None
        );
    }
}
