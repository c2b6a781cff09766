//! The reference implementation as the tool sees it: its source (compiled into
//! fencelab, so that `verify`, `new` and `grade` work from any directory), the
//! path its mutants name by default, and a reader of its top-level items, which
//! `new` cuts the learner's starter out of.
//!
//! The reference's source is `src/lease.rs`, the lab's subject; this module
//! only reads it.

/// The implementation file a mutant applies to when it does not say.
pub const DEFAULT_FILE: &str = "src/lease.rs";

/// The reference implementation, as compiled into fencelab.
pub const REFERENCE: &str = include_str!("../lease.rs");

/// A top-level item of a Rust file formatted by rustfmt: its leading doc
/// comments and attributes, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'a> {
    /// Doc comments and attributes above the item.
    pub head: &'a str,
    /// The item itself, up to and including its last line.
    pub text: &'a str,
}

impl<'a> Item<'a> {
    /// The function's name, if the item is a function.
    pub fn function_name(&self) -> Option<&'a str> {
        let rest = self
            .text
            .strip_prefix("pub fn ")
            .or_else(|| self.text.strip_prefix("fn "))?;
        rest.split(['(', '<']).next()
    }

    /// A function's signature (up to its body's opening brace, excluded) and
    /// its body (from that brace on).
    pub fn split_body(&self) -> Option<(&'a str, &'a str)> {
        self.function_name()?;
        // rustfmt puts the body's opening brace at the end of the signature's
        // last line.
        let open = self.text.find(" {\n").or_else(|| self.text.find(" {"))?;
        Some((&self.text[..open], &self.text[open + 1..]))
    }
}

/// The top-level items of `source`, which must be formatted by rustfmt (items
/// start at column 0, and an item with a body ends at a `}` at column 0).
pub fn items(source: &str) -> Vec<Item<'_>> {
    let mut items = Vec::new();
    let mut offset = 0;
    let mut head_start: Option<usize> = None;
    let mut item_start: Option<usize> = None;
    for line in source.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_end();
        if item_start.is_none() {
            if trimmed.is_empty() || trimmed.starts_with("//!") || trimmed.starts_with("#![") {
                head_start = None;
                continue;
            }
            if trimmed.starts_with("///") || trimmed.starts_with("#[") || trimmed.starts_with("//")
            {
                head_start.get_or_insert(start);
                continue;
            }
            item_start = Some(start);
        }
        let Some(begin) = item_start else { continue };
        let ends = trimmed == "}"
            || trimmed == "};"
            || (begin == start && trimmed.ends_with(';'))
            || (begin == start && trimmed.ends_with("{}"));
        if ends {
            let head = head_start.map_or("", |h| &source[h..begin]);
            items.push(Item {
                head,
                text: &source[begin..offset],
            });
            head_start = None;
            item_start = None;
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_splits_into_its_items() {
        let items = items(REFERENCE);
        let functions: Vec<&str> = items.iter().filter_map(Item::function_name).collect();
        assert_eq!(
            functions,
            [
                "open",
                "check_now",
                "check_ttl",
                "init_db",
                "enqueue",
                "state",
                "claim",
                "renew",
                "complete",
                "release",
                "claim_many"
            ]
        );
        let job = items
            .iter()
            .find(|i| i.text.starts_with("pub struct Job"))
            .unwrap();
        assert!(job.head.contains("#[derive(Debug, Clone, PartialEq)]"));
        assert!(job.text.trim_end().ends_with('}'));
        let (signature, body) = items
            .iter()
            .find(|i| i.function_name() == Some("claim"))
            .unwrap()
            .split_body()
            .unwrap();
        assert!(signature.starts_with("pub fn claim(\n"));
        assert!(signature.ends_with("-> Result<Option<i64>, LeaseError>"));
        assert!(body.starts_with("{\n") && body.trim_end().ends_with('}'));
    }
}
