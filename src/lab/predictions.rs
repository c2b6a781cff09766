//! The predictions form, as a learner fills it in: one `[[prediction]]` per
//! mutant, the kind of observation that exposes it and the tests that see
//! it. `fencelab predict` writes the blank form; `verify --predictions`
//! reads it here and scores it. Every name in it is checked against the
//! mutants and the suite, with the nearest known name when one is near.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Location, at_line};
use crate::lab::mutant::Mutant;
use crate::lab::observation::ObservationKind;

/// One learner's prediction for one mutant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    pub mutant: String,
    pub observation: Option<ObservationKind>,
    pub tests: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictionsFile {
    #[serde(default)]
    prediction: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    mutant: Spanned<String>,
    #[serde(default)]
    observation: Option<Spanned<String>>,
    #[serde(default)]
    tests: Vec<Spanned<String>>,
}

/// " (did you mean `x`?)" for the name of `known` nearest to `name`, when one
/// is near: by edit distance, or the one test whose name ends with it (a test
/// named without its `stepN::`).
pub(crate) fn did_you_mean(name: &str, known: &BTreeSet<String>) -> String {
    let suffix: Vec<&String> = known
        .iter()
        .filter(|k| k.ends_with(&format!("::{name}")))
        .collect();
    if let [only] = suffix[..] {
        return format!(" (did you mean `{only}`?)");
    }
    let limit = (name.chars().count() / 3).max(2);
    known
        .iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

/// The Levenshtein distance between `a` and `b`, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Reads a predictions file; every mutant (of `mutants`, all of the directory,
/// not only those a filter selected) and test it names must exist, and no
/// mutant may be predicted twice.
pub fn load(
    path: &Path,
    mutants: &[Mutant],
    tests: &BTreeSet<String>,
) -> Result<Vec<Prediction>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::io("read the predictions", path, e)
            .with_next("write one with `fencelab predict -o predictions.toml`")
    })?;
    let fix = "fix the predictions file at that line and run again";
    let problem = |offset: usize, message: String| {
        Error::input(at_line(path, &Location::at(&text, offset), &message)).with_next(fix)
    };
    let file: PredictionsFile = toml::from_str(&text).map_err(|e| {
        let message = e.message().trim().to_string();
        match e.span() {
            Some(span) => problem(span.start, message),
            None => Error::input(format!("{}: {message}", path.display())).with_next(fix),
        }
    })?;
    let ids: BTreeSet<String> = mutants.iter().map(|m| m.id.clone()).collect();
    let mut predictions: Vec<Prediction> = Vec::new();
    let mut seen: Vec<(String, usize)> = Vec::new();
    for entry in file.prediction {
        let id = entry.mutant.get_ref();
        let at = entry.mutant.span().start;
        if !ids.contains(id) {
            return Err(problem(
                at,
                format!("there is no mutant `{id}`{}", did_you_mean(id, &ids)),
            )
            .with_next(
                "fix the name at that line (`fencelab verify --list` lists every mutant's id)",
            ));
        }
        if let Some((_, first)) = seen.iter().find(|(s, _)| s == id) {
            return Err(problem(
                at,
                format!(
                    "`{id}` is predicted twice (first on line {})",
                    Location::at(&text, *first).line
                ),
            )
            .with_next("keep one [[prediction]] per mutant and run again"));
        }
        seen.push((id.clone(), at));
        let observation = match entry
            .observation
            .as_ref()
            .map(|o| (o.get_ref().trim(), o.span().start))
        {
            None | Some(("", _)) => None,
            Some((name, at)) => match ObservationKind::parse(name) {
                Some(kind) => Some(kind),
                None => {
                    return Err(problem(
                        at,
                        format!(
                            "observation = {name:?}: write \"return value\", \"error\" or \"state\""
                        ),
                    ));
                }
            },
        };
        for test in &entry.tests {
            if !tests.contains(test.get_ref()) {
                return Err(problem(
                    test.span().start,
                    format!(
                        "`{}` is not a test of the suite{}",
                        test.get_ref(),
                        did_you_mean(test.get_ref(), tests)
                    ),
                )
                .with_next(
                    "fix the name at that line (`cargo test --test behaviour -- --list` lists the tests)",
                ));
            }
        }
        predictions.push(Prediction {
            mutant: id.clone(),
            observation,
            tests: entry.tests.into_iter().map(Spanned::into_inner).collect(),
        });
    }
    Ok(predictions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("あい", "あう"), 1);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
