//! Escaping text for the markup fencelab writes: HTML pages (`verify --html`,
//! GitHub step summaries) and XML (JUnit). One loop for both, since any text
//! may hold a judge's or a submission's output, and so any character: the
//! five markup characters become entities, and the characters the language
//! cannot hold become U+FFFD.

/// The language being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Markup {
    /// HTML content and attribute values: no C0 controls but tab and line
    /// breaks, no DEL.
    Html,
    /// XML 1.0: no C0 controls but tab and line breaks, no U+FFFE or U+FFFF.
    Xml,
}

/// `text` escaped for `markup`.
pub(crate) fn escape(text: &str, markup: Markup) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str(match markup {
                Markup::Html => "&#39;",
                Markup::Xml => "&apos;",
            }),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push('\u{fffd}'),
            '\u{7f}' if markup == Markup::Html => out.push('\u{fffd}'),
            '\u{fffe}' | '\u{ffff}' if markup == Markup::Xml => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
