//! Diffs people like to read: unified, with line numbers in a gutter, three
//! lines of context, the changed words emphasised inside changed lines, a
//! visible marker for a missing final newline, and colour only when the style
//! allows it. Used for a mutant's change and for expected-versus-actual values.

use std::fmt::Write;
use std::time::Duration;

use similar::{Algorithm, ChangeTag, TextDiff};

use crate::output::style::Style;

/// A unified diff of `old` and `new` with headers naming them.
pub(crate) fn unified(
    old: &str,
    new: &str,
    old_name: &str,
    new_name: &str,
    style: Style,
) -> String {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .timeout(Duration::from_millis(500))
        .diff_lines(old, new);
    let mut out = String::new();
    let _ = writeln!(out, "{}", style.red(&format!("--- {old_name}")));
    let _ = writeln!(out, "{}", style.green(&format!("+++ {new_name}")));
    let width = old
        .lines()
        .count()
        .max(new.lines().count())
        .to_string()
        .len();
    for (index, group) in diff.grouped_ops(3).iter().enumerate() {
        if index > 0 {
            let _ = writeln!(
                out,
                "{}",
                style.dim(&format!("{:width$} {:width$} ┈", "", ""))
            );
        }
        for op in group {
            for change in diff.iter_inline_changes(op) {
                let number = |n: Option<usize>| {
                    n.map_or(" ".repeat(width), |n| format!("{:>width$}", n + 1))
                };
                let gutter = format!(
                    "{} {} ",
                    number(change.old_index()),
                    number(change.new_index())
                );
                let (sign, paint): (&str, fn(&Style, &str) -> String) = match change.tag() {
                    ChangeTag::Delete => ("-", Style::red),
                    ChangeTag::Insert => ("+", Style::green),
                    ChangeTag::Equal => (" ", Style::dim),
                };
                let mut line = String::new();
                for (emphasised, text) in change.iter_strings_lossy() {
                    let text = text.trim_end_matches('\n');
                    if emphasised && change.tag() != ChangeTag::Equal {
                        line.push_str(&style.emphasis(&paint(&style, text)));
                    } else {
                        line.push_str(&paint(&style, text));
                    }
                }
                let _ = write!(
                    out,
                    "{}{}{line}",
                    style.dim(&gutter),
                    paint(&style, &format!("{sign}|"))
                );
                if change.missing_newline() {
                    let _ = write!(out, "{}", style.dim(" ⏎ (no newline at end)"));
                }
                out.push('\n');
            }
        }
    }
    out
}

/// A plain unified diff (`@@` hunks, three lines of context), as `patch` and
/// `git apply` read it: what `verify --json` records of a mutation.
pub(crate) fn patch(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .timeout(Duration::from_millis(500))
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_with_numbers_and_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let diff = unified(old, new, "old.rs", "new.rs", Style::plain());
        assert_eq!(
            diff,
            "--- old.rs\n+++ new.rs\n2 2  |b\n3 3  |c\n4 4  |d\n5   -|e\n  5 +|E\n6 6  |f\n7 7  |g\n8 8  |h\n"
        );
    }

    #[test]
    fn a_patch_has_hunks_that_patch_reads() {
        let patch = patch("a\nb\nc\n", "a\nB\nc\n", "x.rs", "x.rs");
        assert_eq!(
            patch,
            "--- x.rs\n+++ x.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
    }

    #[test]
    fn colour_emphasises_the_changed_word_only_when_asked() {
        let diff = unified(
            "if until > now {\n",
            "if until >= now {\n",
            "a",
            "b",
            Style { color: true },
        );
        assert!(diff.contains("\x1b[7m"), "{diff:?}");
        assert!(!unified("x\n", "y\n", "a", "b", Style::plain()).contains('\x1b'));
    }
}
