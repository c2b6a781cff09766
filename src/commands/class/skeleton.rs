//! For a group no mutant explains: its first member's change to the
//! reference, and a mutant file to start from (its first changed lines as
//! `find` and `replace`, the group's failed tests as killers), to review.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::lab::edition::Edition;

/// The most of a submission's file read.
const MOST: u64 = 1 << 20;

/// A group's representative: who, how it differs, and the mutant to review.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Representative {
    pub member: String,
    pub diff: String,
    pub mutant: String,
}

/// The source of a submission as `grade` named it, found where the reports
/// are or where fencelab runs; a link is not followed, a read is capped.
pub(crate) fn source(file: &str, beside: &[PathBuf]) -> Option<String> {
    let given = Path::new(file);
    let mut places = vec![given.to_path_buf()];
    places.extend(
        beside
            .iter()
            .filter_map(|r| r.parent())
            .map(|d| d.join(given)),
    );
    places.into_iter().find_map(|p| {
        let meta = std::fs::symlink_metadata(&p).ok()?;
        if !meta.is_file() || meta.len() > MOST {
            return None;
        }
        std::fs::read_to_string(&p).ok()
    })
}

/// The representative of a group whose first member's source is `source`.
pub(crate) fn representative(
    member: &str,
    source: &str,
    edition: Edition,
    fails: &[String],
) -> Representative {
    let reference = match edition {
        Edition::Rust => crate::lab::reference::REFERENCE,
        Edition::Python => crate::lab::python::REFERENCE,
    };
    let diff = crate::output::diff::patch(reference, source, "reference", member);
    Representative {
        member: member.to_string(),
        mutant: mutant(reference, source, fails),
        diff,
    }
}

#[derive(Serialize)]
struct Titles {
    ja: &'static str,
    en: &'static str,
}

#[derive(Serialize)]
struct Skeleton {
    step: u32,
    title: Titles,
    find: String,
    replace: String,
    killers: Vec<String>,
    explanation: Titles,
}

/// A mutant file from the first lines where `source` differs from
/// `reference` (with the line before, when only lines were added).
fn mutant(reference: &str, source: &str, fails: &[String]) -> String {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(reference, source);
    let (mut find, mut replace) = (String::new(), String::new());
    let mut before = "";
    let mut started = false;
    for change in diff.iter_all_changes() {
        match (change.tag(), started) {
            (ChangeTag::Equal, false) => before = change.value(),
            (ChangeTag::Equal, true) => break,
            (ChangeTag::Delete, _) => {
                started = true;
                find.push_str(change.value());
            }
            (ChangeTag::Insert, _) => {
                started = true;
                replace.push_str(change.value());
            }
        }
    }
    if find.is_empty() {
        find = before.to_string();
        replace = format!("{before}{replace}");
    }
    let step = (fails.iter())
        .filter_map(|t| crate::lab::suite::step_of(t))
        .min()
        .unwrap_or(1);
    let skeleton = Skeleton {
        step,
        title: Titles {
            ja: "TODO: 何が壊れているか",
            en: "TODO: what is broken",
        },
        find: find.trim_end_matches('\n').to_string(),
        replace: replace.trim_end_matches('\n').to_string(),
        killers: fails.to_vec(),
        explanation: Titles {
            ja: "TODO",
            en: "TODO",
        },
    };
    let text = toml::to_string(&skeleton).unwrap_or_default();
    format!("# Found in the class, to review before use (mutants/README.md).\n{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skeleton_is_a_mutant_file_that_applies_to_the_reference() {
        let reference = crate::lab::reference::REFERENCE;
        let line = "    params![job_id, owner, fence, now, result]";
        let trimmed = reference.replacen(line, &line.replace("result]", "result.trim()]"), 1);
        assert_ne!(trimmed, reference);
        let fails = vec!["step6::random_calls_agree_with_the_contract".to_string()];
        let r = representative("dee.rs", &trimmed, Edition::Rust, &fails);
        assert!(r.diff.contains("+++ dee.rs") && r.diff.contains("result.trim()"));
        let file: toml::Table = toml::from_str(&r.mutant).expect("valid TOML");
        assert_eq!(file["step"].as_integer(), Some(6));
        let (find, replace) = (
            file["find"].as_str().unwrap(),
            file["replace"].as_str().unwrap(),
        );
        let applied = crate::lab::mutant::apply(reference, find, replace).expect("applies");
        assert_eq!(applied, trimmed, "the mutant makes the member's code");
        // fencelab reads it as a mutant file, as it is.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("complete-trims-the-result.toml");
        std::fs::write(&path, &r.mutant).unwrap();
        let tests = crate::lab::suite::test_names();
        let mutant = crate::lab::mutant::load_file(&path, &tests).expect("a mutant file");
        assert_eq!(mutant.killers, fails);
    }

    #[test]
    fn a_link_or_a_file_too_large_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("real.rs"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.rs"), dir.path().join("link.rs")).unwrap();
        let report = vec![dir.path().join("report.json")];
        assert_eq!(source("real.rs", &report).as_deref(), Some("x"));
        assert_eq!(source("link.rs", &report), None);
        let big = std::fs::File::create(dir.path().join("big.rs")).unwrap();
        big.set_len(MOST + 1).unwrap();
        assert_eq!(source("big.rs", &report), None);
    }
}
