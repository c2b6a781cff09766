//! Applying a mutant to an implementation's source: its `find` text must
//! occur there exactly once (else the mutant is stale, and the nearest lines
//! say where to look), and the broken code a learner is shown is whole lines
//! with their indentation, never the correct code it replaces.

use std::ops::Range;
use std::path::Path;

use super::Mutant;
use crate::error::Location;

/// Why a mutant cannot be applied to an implementation: its `find` text occurs
/// there not exactly once.
#[derive(Debug, Clone, PartialEq)]
pub struct Stale {
    /// How many times `find` occurs (0, or 2 and more).
    pub occurrences: usize,
    /// Lines of the implementation to look at: where it occurs, or the lines
    /// nearest to its first line, as (line number, text).
    pub nearest: Vec<(usize, String)>,
}

impl Stale {
    /// A sentence for people, with the lines to look at.
    pub fn describe(&self, file: &Path) -> String {
        let mut text = if self.occurrences == 0 {
            format!(
                "its `find` text does not occur in {}; nearest lines:",
                file.display()
            )
        } else {
            format!(
                "its `find` text occurs {} times in {}, so it is ambiguous:",
                self.occurrences,
                file.display()
            )
        };
        for (line, source) in &self.nearest {
            text.push_str(&format!("\n  {line:>4} | {source}"));
        }
        text
    }
}

impl Mutant {
    /// Where the mutant's `find` text sits in `source`, as a byte range, when
    /// it occurs there exactly once (as `apply` requires).
    pub fn span(&self, source: &str) -> Option<Range<usize>> {
        let mut found = source.match_indices(&self.find);
        let (start, _) = found.next()?;
        found
            .next()
            .is_none()
            .then(|| start..start + self.find.len())
    }

    /// Applies the mutant to `source`, the implementation's text.
    pub fn apply(&self, source: &str) -> Result<String, Stale> {
        apply(source, &self.find, &self.replace)
    }
}

/// Replaces `find`, which must occur exactly once in `source`, with `replace`.
pub fn apply(source: &str, find: &str, replace: &str) -> Result<String, Stale> {
    let occurrences = source.matches(find).count();
    if occurrences == 1 {
        return Ok(source.replacen(find, replace, 1));
    }
    let nearest = if occurrences == 0 {
        nearest_lines(source, find)
    } else {
        source
            .match_indices(find)
            .map(|(offset, _)| {
                let at = Location::at(source, offset);
                (at.line, at.source_line)
            })
            .collect()
    };
    Err(Stale {
        occurrences,
        nearest,
    })
}

impl Mutant {
    /// The broken code as a reader sees it in the file: the whole lines the
    /// replacement touches in `source` (the implementation), with their
    /// indentation, less the indentation they share. Only the broken code,
    /// not the correct one it replaces: that is the learner's to find.
    pub(crate) fn broken_code(&self, source: &str) -> String {
        let text = match source.match_indices(&self.find).collect::<Vec<_>>()[..] {
            [(offset, _)] => {
                let start = source[..offset].rfind('\n').map_or(0, |n| n + 1);
                let after = offset + self.find.len();
                let end = source[after..]
                    .find('\n')
                    .map_or(source.len(), |n| after + n);
                format!(
                    "{}{}{}",
                    &source[start..offset],
                    self.replace,
                    &source[after..end]
                )
            }
            _ => self.replace.clone(),
        };
        dedent(text.trim_matches('\n'))
    }
}

/// `text` less the leading whitespace all its non-blank lines share.
pub(crate) fn dedent(text: &str) -> String {
    let common = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| l.get(common..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The three lines of `source` most like the first non-blank line of `find`.
fn nearest_lines(source: &str, find: &str) -> Vec<(usize, String)> {
    let wanted = find
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut scored: Vec<(f32, usize, &str)> = source
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let ratio = similar::TextDiff::from_chars(wanted, line.trim()).ratio();
            (ratio, i + 1, line)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, n, l)| (n, l.to_string()))
        .collect()
}
