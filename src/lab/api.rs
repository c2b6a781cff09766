//! The contract's API as text: what a file must declare to be an
//! implementation of it, and what it must not do while compiling. Checked on
//! the source before anything is built, so that a file that is not an
//! implementation gets one clear sentence, not the compiler's pages.
//!
//! The compile-time check reads Rust tokens, not lines: a `//` inside a string,
//! a reader hidden in a raw string's neighbourhood, whitespace inside an
//! attribute or a comment between a macro's name and its `!` change nothing.
//! Strings, characters and comments are skipped whole; what is left is matched
//! as identifiers and punctuation. It refuses more than the compiler would
//! need to read a file, on purpose: any way of naming a reader that a macro
//! could turn into a call (an argument, a renaming `use`, a `macro_rules!`
//! body that calls a macro it was handed) is refused too.

use crate::lab::worksheet::SLUGS;

/// The macros that read files or the environment while compiling.
const READERS: [&str; 5] = [
    "include",
    "include_str",
    "include_bytes",
    "env",
    "option_env",
];

/// A token of Rust source, as far as the check needs it.
#[derive(Debug, Clone, PartialEq)]
enum Token<'a> {
    /// An identifier or keyword, `r#` taken off.
    Ident(&'a str),
    /// A macro metavariable or `$crate`: `$` and what follows it.
    Dollar,
    /// One punctuation character.
    Punct(char),
    /// A literal (string, character, number) or a lifetime: its text never matters.
    Literal,
}

/// The tokens of `source` with their 1-based lines; comments and whitespace
/// are dropped, literals kept as one opaque token each.
fn tokens(source: &str) -> Vec<(usize, Token<'_>)> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let is_ident_start = |b: u8| b == b'_' || b.is_ascii_alphabetic() || b >= 0x80;
    let is_ident = |b: u8| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80;
    // Counts the newlines in bytes[from..to] into `line`.
    let lines_in = |from: usize, to: usize| {
        bytes[from..to.min(bytes.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
    };
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        if b == b'\n' {
            line += 1;
            i += 1;
        } else if b.is_ascii_whitespace() {
            i += 1;
        } else if source[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if source[i..].starts_with("/*") {
            // Block comments nest.
            let mut depth = 0;
            while i < bytes.len() {
                if source[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if source[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += lines_in(start, i);
        } else if let Some(end) = raw_string_end(bytes, i) {
            i = end;
            out.push((line, Token::Literal));
            line += lines_in(start, i);
        } else if b == b'"' || ((b == b'b' || b == b'c') && bytes.get(i + 1) == Some(&b'"')) {
            i = quoted_end(bytes, i + usize::from(b != b'"') + 1, b'"');
            out.push((line, Token::Literal));
            line += lines_in(start, i);
        } else if b == b'\'' || (b == b'b' && bytes.get(i + 1) == Some(&b'\'')) {
            // A character, or a lifetime (or a label): 'a' / '\n' / 'a
            let open = i + usize::from(b == b'b');
            let after = bytes.get(open + 1).copied();
            let char_end = if after == Some(b'\\') {
                Some(quoted_end(bytes, open + 1, b'\''))
            } else {
                // One character (maybe several bytes) and a closing quote.
                let ch_len = source[open + 1..].chars().next().map_or(1, char::len_utf8);
                (bytes.get(open + 1 + ch_len) == Some(&b'\'')).then_some(open + 2 + ch_len)
            };
            i = match char_end {
                Some(end) => end,
                None => {
                    let mut j = open + 1;
                    while j < bytes.len() && is_ident(bytes[j]) {
                        j += 1;
                    }
                    j
                }
            };
            out.push((line, Token::Literal));
        } else if source[i..].starts_with("r#")
            && bytes.get(i + 2).is_some_and(|b| is_ident_start(*b))
        {
            let mut j = i + 2;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            out.push((line, Token::Ident(&source[i + 2..j])));
            i = j;
        } else if is_ident_start(b) {
            let mut j = i;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            // Non-ASCII letters are part of identifiers; keep to char boundaries.
            while !source.is_char_boundary(j) {
                j += 1;
            }
            out.push((line, Token::Ident(&source[i..j])));
            i = j;
        } else if b.is_ascii_digit() {
            while i < bytes.len()
                && (is_ident(bytes[i])
                    || bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
            {
                i += 1;
            }
            out.push((line, Token::Literal));
        } else if b == b'$' {
            out.push((line, Token::Dollar));
            i += 1;
        } else {
            let ch = source[i..].chars().next().unwrap_or('?');
            out.push((line, Token::Punct(ch)));
            i += ch.len_utf8();
        }
    }
    out
}

/// Where a raw string (`r"…"`, `r#"…"#`, `br##"…"##`, `cr"…"`) that starts at
/// `at` ends, if one does.
fn raw_string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    if matches!(bytes.get(i), Some(b'b' | b'c')) {
        i += 1;
    }
    if bytes.get(i) != Some(&b'r') {
        return None;
    }
    // Not the tail of an identifier such as `bar"`: the caller only asks at a
    // token's start.
    i += 1;
    let hashes = bytes[i..].iter().take_while(|b| **b == b'#').count();
    i += hashes;
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while i < bytes.len() {
        if bytes[i] == b'"'
            && bytes[i + 1..]
                .iter()
                .take(hashes)
                .filter(|b| **b == b'#')
                .count()
                == hashes
            && bytes.len() >= i + 1 + hashes
        {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(bytes.len())
}

/// Where a quoted literal whose body starts at `at` ends (after its closing
/// `quote`), escapes skipped.
fn quoted_end(bytes: &[u8], at: usize, quote: u8) -> usize {
    let mut i = at;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The first line (1-based) that reads files or the environment at compile
/// time, or could be made to, and what does it: `include!`, `include_str!`,
/// `include_bytes!`, `env!`, `option_env!` (the name, as `include_str` or
/// `env!`), a `#[path]` attribute (`path`), or a way of building one of these
/// with a macro (`$name!`, `#[$…]`, `${…}`, a reader named in a macro's
/// arguments or renamed by `use`).
pub(crate) fn compile_time_read(source: &str) -> Option<(usize, &'static str)> {
    let tokens = tokens(source);
    let ident = |k: usize| match tokens.get(k) {
        Some((_, Token::Ident(name))) => Some(*name),
        _ => None,
    };
    let punct = |k: usize, c: char| matches!(tokens.get(k), Some((_, Token::Punct(p))) if *p == c);
    let opens = |k: usize| punct(k, '(') || punct(k, '[') || punct(k, '{');
    // What each group opened at an index is: `a` an attribute (`#[…]`,
    // `#![…]`), `m` a macro's arguments or a `macro_rules!` body.
    let mut kinds = std::collections::HashMap::new();
    for k in 0..tokens.len() {
        if let Some(name) = ident(k)
            && punct(k + 1, '!')
        {
            if name == "macro_rules" && ident(k + 2).is_some() && opens(k + 3) {
                kinds.insert(k + 3, 'm');
            } else if opens(k + 2) {
                kinds.insert(k + 2, 'm');
            }
        }
        if punct(k, '#') {
            let at = k + 1 + usize::from(punct(k + 1, '!'));
            if punct(at, '[') {
                kinds.insert(at, 'a');
            }
        }
    }
    let mut open: Vec<char> = Vec::new();
    for (k, (line, token)) in tokens.iter().enumerate() {
        let in_attribute = open.contains(&'a');
        let in_macro = open.contains(&'m');
        match token {
            Token::Ident(name) => {
                if let Some(reader) = READERS.iter().find(|r| *r == name) {
                    let called = punct(k + 1, '!');
                    let renamed = ident(k + 1) == Some("as");
                    let path_segment = punct(k + 1, ':') || (k >= 1 && punct(k - 1, ':'));
                    // `env` alone is mostly the module `std::env`, in a path;
                    // the other names are never innocent.
                    if *reader != "env" || called || renamed || (in_macro && !path_segment) {
                        return Some((*line, called_name(reader)));
                    }
                }
                if *name == "path" && in_attribute {
                    return Some((*line, "path"));
                }
            }
            Token::Dollar if in_macro => {
                // `$x!(…)`: a call of a macro named by the input; `${…}`: a
                // metavariable expression (`${concat(…)}` builds names).
                if (ident(k + 1).is_some() && punct(k + 2, '!')) || punct(k + 1, '{') {
                    return Some((*line, "$name!"));
                }
                // An attribute built from the input: `#[$a]`, or `$a:meta`.
                if in_attribute || (punct(k + 2, ':') && ident(k + 3) == Some("meta")) {
                    return Some((*line, "#[$…]"));
                }
            }
            Token::Punct('(' | '[' | '{') => open.push(kinds.get(&k).copied().unwrap_or('(')),
            Token::Punct(')' | ']' | '}') => {
                open.pop();
            }
            _ => {}
        }
    }
    None
}

/// How a reader is named in the check's answer.
fn called_name(reader: &'static str) -> &'static str {
    match reader {
        "include" => "include!",
        "env" => "env!",
        other => other,
    }
}

/// The items of the API that `source` does not declare (a textual check;
/// wrong signatures are the compiler's to report).
pub(crate) fn missing_api(source: &str) -> Vec<String> {
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

    /// Each way of hiding a reader from a line-based scan, and the innocent
    /// code around it that must still pass.
    #[test]
    fn readers_are_found_in_tokens_wherever_they_hide() {
        let found = |source: &str| compile_time_read(source);
        // A `//` inside a string did end the old scan's line.
        assert_eq!(
            found("let s = \"//\"; const K: &str = include_str!(\"/etc/passwd\");"),
            Some((1, "include_str"))
        );
        assert_eq!(
            found("let s = \"\\\"//\"; let t = env!(\"TOKEN\");"),
            Some((1, "env!"))
        );
        // A raw string that a naive scan thinks goes on.
        assert_eq!(
            found("let s = r#\"\\\"#; let k = include_bytes!(\"/x\");"),
            Some((1, "include_bytes"))
        );
        assert_eq!(found("let s = r##\"include_str!(\"/x\") \"# \"##;"), None);
        // A quote inside a character literal opens no string.
        assert_eq!(
            found("let q = '\"'; let k = include_str!(\"/x\");"),
            Some((1, "include_str"))
        );
        assert_eq!(
            found("fn f<'a>(x: &'a str) -> &'a str { x }\nconst K: &str = include!(\"/x\");"),
            Some((2, "include!"))
        );
        // Whitespace and comments between the tokens.
        assert_eq!(found("#[ path = \"/x.rs\" ]\nmod x;"), Some((1, "path")));
        assert_eq!(found("# ! [path=\"/x.rs\"]"), Some((1, "path")));
        assert_eq!(
            found("#[cfg_attr(all(), path = \"/x.rs\")]\nmod x;"),
            Some((1, "path"))
        );
        assert_eq!(found("let t = env /* */ ! (\"X\");"), Some((1, "env!")));
        assert_eq!(
            found("let t = core::option_env!(\"X\");"),
            Some((1, "option_env"))
        );
        assert_eq!(
            found("let t = r#include_str!(\"/x\");"),
            Some((1, "include_str"))
        );
        // Nested block comments.
        assert_eq!(found("/* /* */ include_str!(\"/x\") */"), None);
        assert_eq!(
            found("/* /* */ */ include_str!(\"/x\")"),
            Some((1, "include_str"))
        );
        // Calls built by macros, or readers renamed.
        assert_eq!(
            found("macro_rules! m {\n ($x:ident) => { $x!(\"HOME\") }\n}\nm!(env);"),
            Some((2, "$name!"))
        );
        assert_eq!(found("m!(env);"), Some((1, "env!")));
        assert_eq!(found("m!(include_str);"), Some((1, "include_str")));
        assert_eq!(
            found("macro_rules! m { ($a:meta) => { #[$a] mod x; } }"),
            Some((1, "#[$…]"))
        );
        assert_eq!(
            found("macro_rules! m { ($($t:tt)*) => { #[$($t)*] mod x; } }"),
            Some((1, "#[$…]"))
        );
        assert_eq!(found("m!(# [path = \"/x.rs\"]);"), Some((1, "path")));
        assert_eq!(
            found("macro_rules! m { ($a:ident) => { ${concat($a, _str)} } }"),
            Some((1, "$name!"))
        );
        assert_eq!(
            found("use std::include_str as inc;\nconst K: &str = inc!(\"/x\");"),
            Some((1, "include_str"))
        );
        assert_eq!(
            found("use std::env as e;\nconst K: &str = e!(\"X\");"),
            Some((1, "env!"))
        );
        // Reading at run time is not this check's business (the runner clears
        // the environment), and `path` outside attributes is a name.
        assert_eq!(
            found(
                "use std::env;\nfn f(path: &str) -> String { env::var(path).unwrap_or_default() }"
            ),
            None
        );
        assert_eq!(found("let v: Vec<_> = std::env::vars().collect();"), None);
        assert_eq!(
            found("println!(\"{}\", std::env::temp_dir().display());"),
            None
        );
        assert_eq!(found("macro_rules! two { ($e:expr) => { $e + $e } }"), None);
        assert_eq!(found("if !done { x != y }"), None);
        assert_eq!(found("let s = \"日本語\"; let é = 'é';"), None);
    }

    #[test]
    fn the_labs_own_sources_read_nothing_at_compile_time() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = vec![root.join("src/lease.rs")];
        for dir in [
            "wheats",
            "tests/fixtures/learner_tests",
            "tests/fixtures/submissions",
        ] {
            let mut stack = vec![root.join(dir)];
            while let Some(at) = stack.pop() {
                for entry in std::fs::read_dir(&at).unwrap().flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        files.push(path);
                    }
                }
            }
        }
        assert!(files.len() > 5, "{files:?}");
        for file in files {
            // Some fixtures are not UTF-8 on purpose.
            if let Ok(text) = std::fs::read_to_string(&file) {
                assert_eq!(compile_time_read(&text), None, "{}", file.display());
            }
        }
    }
}
