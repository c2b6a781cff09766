//! Text that came from untrusted code, made safe to print on a terminal or
//! in a CI log: what an implementation or a learner's test printed,
//! panicked with or returned, a compiler's messages about a submission, a
//! submission's file name. A control character is shown, never obeyed (an
//! ESC that would clear the screen or write the clipboard, a `\r` that
//! would hide a line), and no line reads as a CI runner's command (GitHub's
//! `::stop-commands::`, `::error`; Azure's `##[error]`, `##vso[`).
//! The files written for machines (JSON, JUnit, CSV) escape by their own
//! rules and keep the text as it was.

/// `text` with every control character but the newline and the tab shown
/// as Rust writes it in a string (`\u{1b}`, `\r`), as are the characters
/// that reorder text (bidirectional overrides), and every line that a CI
/// runner would read as a command started with a backslash.
pub(crate) fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let trimmed = line.trim_start();
        if ["::", "##[", "##vso["]
            .iter()
            .any(|c| trimmed.starts_with(c))
        {
            out.push('\\');
        }
        for c in line.chars() {
            if hidden(c) {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// `text` on one line: as `visible`, its newlines and tabs shown too (a
/// file name, which a report prints within a line of its own).
pub(crate) fn one_line(text: &str) -> String {
    visible(&text.replace('\n', "\\n").replace('\t', "\\t"))
}

/// Whether `c` acts on a terminal rather than shows: a control character
/// (C0 but the tab, DEL, C1) or one that reorders the text around it.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_and_commands_neutralised() {
        let hostile = "clear\u{1b}[2J\u{1b}]52;c;cHduZWQ=\u{7}\rhidden\n  ::stop-commands::tok\n\
                       ::error::pwned\n##[error]pwned\n##vso[task.setvariable]x\nplain\ttab";
        let shown = visible(hostile);
        assert_eq!(
            shown,
            "clear\\u{1b}[2J\\u{1b}]52;c;cHduZWQ=\\u{7}\\rhidden\n\\  ::stop-commands::tok\n\
             \\::error::pwned\n\\##[error]pwned\n\\##vso[task.setvariable]x\nplain\ttab"
        );
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
        );
        for line in shown.lines() {
            let trimmed = line.trim_start();
            assert!(
                !trimmed.starts_with("::") && !trimmed.starts_with("##["),
                "{line}"
            );
        }
        // Bidirectional overrides (a line that reads otherwise than it is).
        assert_eq!(visible("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(one_line("a\n\u{1b}b.rs"), "a\\n\\u{1b}b.rs");
        // What is plain stays as it is, Japanese and a colon within a line.
        let plain = "期待値: Ok(Some(1)) :: not at the start\n  indented\n## a heading";
        assert_eq!(visible(plain), plain);
    }
}
