//! Widths as a terminal shows them: columns, not bytes or chars (a Japanese
//! character takes two, a colour escape none), the terminal's own width, and
//! prose wrapped to it. Every table and paragraph fencelab prints is laid out
//! with these, so that nothing wraps behind its back.

use std::io::IsTerminal;

/// The width to lay out for when stdout is not a terminal (a file, a pipe, a
/// CI log): wide enough for a table, narrow enough to read.
pub(crate) const DEFAULT_WIDTH: usize = 100;

/// How many columns `text` takes on a terminal: colour escapes take none, wide
/// (East Asian) characters two.
pub fn display_width(text: &str) -> usize {
    let mut width = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters final-byte
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        width += char_width(c);
    }
    width
}

/// The columns one character takes.
pub(crate) fn char_width(c: char) -> usize {
    let c = c as u32;
    if c < 0x20 || (0x7f..0xa0).contains(&c) || (0x300..0x370).contains(&c) || c == 0x200b {
        return 0;
    }
    let wide = (0x1100..=0x115f).contains(&c)
        || (0x2e80..=0x303e).contains(&c)
        || (0x3041..=0x33ff).contains(&c)
        || (0x3400..=0x4dbf).contains(&c)
        || (0x4e00..=0x9fff).contains(&c)
        || (0xa000..=0xa4cf).contains(&c)
        || (0xac00..=0xd7a3).contains(&c)
        || (0xf900..=0xfaff).contains(&c)
        || (0xfe30..=0xfe4f).contains(&c)
        || (0xff00..=0xff60).contains(&c)
        || (0xffe0..=0xffe6).contains(&c)
        || (0x1f300..=0x1f64f).contains(&c)
        || (0x20000..=0x3fffd).contains(&c);
    if wide { 2 } else { 1 }
}

/// `text` padded with spaces on the right to `width` columns.
pub(crate) fn pad_right(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(display_width(text));
    format!("{text}{}", " ".repeat(pad))
}

/// `text` padded with spaces on the left to `width` columns.
pub(crate) fn pad_left(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(display_width(text));
    format!("{}{text}", " ".repeat(pad))
}

/// `text` cut to at most `width` columns, with `…` where it was cut. Colour
/// escapes are kept whole and take no room; a cut one is reset.
pub(crate) fn truncate(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut painted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            out.push(c);
            out.extend(chars.next());
            for c in chars.by_ref() {
                out.push(c);
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
            painted = true;
            continue;
        }
        let w = char_width(c);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    if painted {
        out.push_str("\x1b[0m");
    }
    out
}

/// The width of the terminal stdout writes to, or [`DEFAULT_WIDTH`] when it
/// is not a terminal (or says nothing). `COLUMNS`, when set, wins, as for
/// other tools.
pub(crate) fn terminal_width() -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= 20)
    {
        return columns;
    }
    if !std::io::stdout().is_terminal() {
        return DEFAULT_WIDTH;
    }
    match rustix::termios::tcgetwinsize(std::io::stdout()) {
        Ok(size) if size.ws_col >= 20 => size.ws_col as usize,
        _ => DEFAULT_WIDTH,
    }
}

/// `text` wrapped to `width` columns, paragraph by paragraph (a line that
/// starts with `-`, `|`, a space or a digit and `.`, and fenced code, are kept
/// as they are, save for wrapping a long list item under its text). Breaks at
/// spaces, and between any two wide characters, as Japanese is written.
pub(crate) fn wrap(text: &str, width: usize) -> String {
    let width = width.max(20);
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            out.push(line.to_string());
            continue;
        }
        if in_code || display_width(line) <= width {
            out.push(line.to_string());
            continue;
        }
        let indent: String = line.chars().take_while(|c| *c == ' ').collect();
        let hanging = if line.trim_start().starts_with("- ") {
            format!("{indent}  ")
        } else {
            indent.clone()
        };
        out.extend(wrap_line(line, width, &hanging));
    }
    out.join("\n")
}

/// One line wrapped at `width`, its continuations indented by `hanging`.
pub(crate) fn wrap_hanging(line: &str, width: usize, hanging: &str) -> String {
    wrap_line(line, width.max(20), hanging).join("\n")
}

/// Markdown's code blocks as a terminal shows them: the fences gone, the
/// code indented by four spaces (a learner reads the SQL, not the fences).
pub(crate) fn unfenced(markdown: &str) -> String {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if in_code {
            out.push(format!("    {line}"));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// One long line broken into lines of at most `width` columns; lines after
/// the first start with `hanging`. Breaks where Unicode's line breaking
/// (UAX #14) allows and a space or a wide character is beside: so never
/// before `、」ー` nor after `「（`, and never inside a word or an id.
fn wrap_line(line: &str, width: usize, hanging: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (at, _) in unicode_linebreak::linebreaks(line) {
        let before = line[..at].chars().next_back();
        let after = line[at..].chars().next();
        let wide = |c: Option<char>| c.is_some_and(|c| char_width(c) == 2);
        if at > start && (before == Some(' ') || wide(before) || wide(after) || at == line.len()) {
            pieces.push(&line[start..at]);
            start = at;
        }
    }
    let mut lines = Vec::new();
    let mut current = String::new();
    for piece in pieces {
        let fits = display_width(&current) + display_width(piece.trim_end()) <= width;
        if !fits && !current.trim().is_empty() {
            lines.push(current.trim_end().to_string());
            current = format!("{hanging}{}", piece.trim_start());
        } else {
            current.push_str(piece);
        }
    }
    if !current.trim().is_empty() {
        lines.push(current.trim_end().to_string());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_take_two_columns_and_escapes_none() {
        assert_eq!(display_width("step"), 4);
        assert_eq!(display_width("未着手"), 6);
        assert_eq!(display_width("\x1b[32mok\x1b[0m"), 2);
        assert_eq!(pad_right("合格", 6), "合格  ");
        assert_eq!(pad_left("ab", 4), "  ab");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(
            truncate("\x1b[32mok\x1b[0m and more", 5),
            "\x1b[32mok\x1b[0m a…\x1b[0m"
        );
    }

    #[test]
    fn prose_wraps_at_spaces_and_between_japanese_characters() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        for line in wrap(text, 20).lines() {
            assert!(display_width(line) <= 20, "{line:?}");
        }
        assert_eq!(wrap(text, 20).replace('\n', " "), text);
        let ja = "期限より前と後では正しく動くので、ふつうの時刻を使うテストは通ります。";
        let wrapped = wrap(ja, 20);
        assert!(wrapped.lines().all(|l| display_width(l) <= 20), "{wrapped}");
        assert_eq!(wrapped.replace('\n', ""), ja);
        for text in [
            "あいうえおかきくけこ、さしす",
            "あいうえおかきくけ、こさしす",
        ] {
            let wrapped = wrap(text, 20);
            for line in wrapped.lines() {
                assert!(!line.starts_with('、'), "{wrapped}");
                assert!(display_width(line) <= 20, "{wrapped}");
            }
            assert_eq!(wrapped.replace('\n', ""), text);
        }
        assert_eq!(
            wrap("- a list item that is long enough to wrap", 20),
            "- a list item that\n  is long enough to\n  wrap"
        );
    }

    /// Fails where a fence reaches the terminal, or the code loses its lines.
    #[test]
    fn code_blocks_lose_their_fences_and_keep_their_lines() {
        let text = "The table:\n```sql\nCREATE TABLE jobs (\n  id TEXT\n)\n```\nThen more.";
        assert_eq!(
            unfenced(text),
            "The table:\n    CREATE TABLE jobs (\n      id TEXT\n    )\nThen more."
        );
    }

    /// Fails where a line ends on an opening mark, starts on a closing one
    /// or on ー, or an English word is cut.
    #[test]
    fn japanese_lines_break_where_japanese_allows_and_words_stay_whole() {
        let text = "仕事、リースが有効な仕事（`until > now`）には `Ok(None)` を返します。データベースが使用中なら、失敗せずに待ちます。";
        for width in 20..60 {
            let wrapped = wrap(text, width);
            let lines: Vec<&str> = wrapped.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                assert!(!line.ends_with(['（', '「']), "{width}: {wrapped}");
                if i > 0 {
                    assert!(
                        !line.starts_with(['、', '。', '）', 'ー']),
                        "{width}: {wrapped}"
                    );
                }
            }
            assert_eq!(wrapped.replace(['\n', ' '], ""), text.replace(' ', ""));
        }
        let english = "fencelab's built-in mutants are not a test of the suite";
        for width in 20..50 {
            for line in wrap(english, width).lines() {
                for word in line.split(' ') {
                    assert!(english.split(' ').any(|w| w == word), "{width}: {word}");
                }
            }
        }
    }
}
