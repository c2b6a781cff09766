//! The worksheet's exercise: before running, predict which observation (a
//! return value, an error, or the stored state) exposes each broken fragment,
//! and which test will see it. `fencelab predict` writes the blank form from the
//! mutants; `fencelab verify --predictions FILE` fills in what actually happened
//! and scores the predictions.

pub mod cli;

use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{Error, Location, at_line};
use crate::lab::mutant::Mutant;
use crate::lab::observation::Observation;
use crate::lab::worksheet::Lang;

/// What kind of observation exposes a mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ObservationKind {
    #[serde(rename = "return value")]
    ReturnValue,
    #[serde(rename = "error")]
    Error,
    #[serde(rename = "state")]
    State,
}

impl ObservationKind {
    pub fn name(self) -> &'static str {
        match self {
            ObservationKind::ReturnValue => "return value",
            ObservationKind::Error => "error",
            ObservationKind::State => "state",
        }
    }

    /// What a failing test's message says it observed: an error when either
    /// side is an `Err`, the stored state when it read rows or the schema, and
    /// otherwise a return value. `None` for a crash or a timeout.
    pub fn of_failure(message: &str) -> Option<ObservationKind> {
        let o = Observation::parse(message)?;
        let what = o.what.to_lowercase();
        if o.expected.starts_with("Err(") || o.actual.starts_with("Err(") {
            Some(ObservationKind::Error)
        } else if ["row", "stored", "column", "table", "primary key", "schema"]
            .iter()
            .any(|w| what.contains(w))
        {
            Some(ObservationKind::State)
        } else {
            Some(ObservationKind::ReturnValue)
        }
    }
}

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

/// The blank predictions form for `mutants`, with comments in `lang`. Each
/// mutant shows its broken code only, as it reads in the reference.
pub fn template(mutants: &[Mutant], lang: Lang) -> String {
    let reference = crate::lab::reference::REFERENCE;
    let mut out = match lang {
        Lang::Ja => String::from(
            "# fencelab の予想シート。テストを実行する前に、誤った断片ごとに、違いが現れる観測\n\
             # （\"return value\" 戻り値、\"error\" エラー、\"state\" 保存された状態）と、\n\
             # それを捕まえるテストを予想して書き込みます。テストは、失敗するものを\n\
             # すべて書きます。1 つ当たるごとに得点が上がり、失敗しないテストを書くと\n\
             # 得点が下がります（適合率と再現率で採点します）。テストの名前は\n\
             #   cargo test --test behaviour -- --list\n\
             # で一覧できます。書き終えたら\n\
             #   fencelab verify --predictions このファイル\n\
             # を実行して、実際の結果と比べます。\n",
        ),
        Lang::En => String::from(
            "# fencelab predictions. Before you run the tests, predict for each broken\n\
             # fragment the observation that exposes it (\"return value\", \"error\" or\n\
             # \"state\", the stored state) and the tests that will catch it. Name all\n\
             # the tests that will fail under it: each one right raises the score, each\n\
             # one that does not fail lowers it (precision and recall). The tests'\n\
             # names are listed by\n\
             #   cargo test --test behaviour -- --list\n\
             # When you are done, run\n\
             #   fencelab verify --predictions THIS-FILE\n\
             # and compare with what happened.\n",
        ),
    };
    for m in mutants {
        out.push_str(&format!("\n[[prediction]]\nmutant = {:?}\n", m.id));
        out.push_str(&format!("# step {}: {}\n", m.step, m.titles.get(lang)));
        for line in m.broken_code(reference).lines() {
            out.push_str(&format!("#     {line}\n"));
        }
        let tests = match lang {
            Lang::Ja => "失敗するテストをすべて",
            Lang::En => "every test that fails under it",
        };
        out.push_str(&format!(
            "observation = \"\"   # \"return value\" | \"error\" | \"state\"\ntests = []         # {tests}\n"
        ));
    }
    out
}

/// Reads a predictions file; every mutant (of `mutants`, all of the directory,
/// not only those a filter selected) and test it names must exist.
pub fn load(
    path: &Path,
    mutants: &[Mutant],
    tests: &std::collections::BTreeSet<String>,
) -> Result<Vec<Prediction>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::io("read the predictions", path, e)
            .with_next("write one with `fencelab predict > predictions.toml`")
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
    let mut predictions = Vec::new();
    for entry in file.prediction {
        let id = entry.mutant.get_ref();
        if !mutants.iter().any(|m| &m.id == id) {
            return Err(problem(
                entry.mutant.span().start,
                format!("there is no mutant {id:?}"),
            ));
        }
        let observation = match entry
            .observation
            .as_ref()
            .map(|o| (o.get_ref().trim(), o.span().start))
        {
            None | Some(("", _)) => None,
            Some(("return value", _)) => Some(ObservationKind::ReturnValue),
            Some(("error", _)) => Some(ObservationKind::Error),
            Some(("state", _)) => Some(ObservationKind::State),
            Some((other, at)) => {
                return Err(problem(
                    at,
                    format!(
                        "observation = {other:?}: write \"return value\", \"error\" or \"state\""
                    ),
                ));
            }
        };
        for test in &entry.tests {
            if !tests.contains(test.get_ref()) {
                return Err(problem(
                    test.span().start,
                    format!("{:?} is not a test of the suite", test.get_ref()),
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
    fn observations_are_told_apart_by_what_they_compared() {
        let of = |what: &str, expected: &str, actual: &str| {
            ObservationKind::of_failure(&format!(
                "observation: {what}\nexpected: {expected}\nactual: {actual}"
            ))
        };
        assert_eq!(
            of("claim at now == until", "Ok(Some(2))", "Ok(None)"),
            Some(ObservationKind::ReturnValue)
        );
        assert_eq!(
            of("claim with ttl = 0", "Err(InvalidTtl(_))", "Ok(Some(1))"),
            Some(ObservationKind::Error)
        );
        assert_eq!(
            of(
                "rows after the refused claim (must be unchanged)",
                "[]",
                "[x]"
            ),
            Some(ObservationKind::State)
        );
        assert_eq!(
            ObservationKind::of_failure("fencelab: the implementation's process was killed"),
            None
        );
    }

    #[test]
    fn the_template_reads_back_as_empty_predictions() {
        let mutants = crate::lab::mutant::builtin();
        for lang in Lang::ALL {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.toml");
            std::fs::write(&path, template(&mutants, lang)).unwrap();
            let predictions = load(&path, &mutants, &crate::lab::suite::test_names()).unwrap();
            assert_eq!(predictions.len(), mutants.len());
            assert!(
                predictions
                    .iter()
                    .all(|p| p.observation.is_none() && p.tests.is_empty())
            );
        }
    }

    #[test]
    fn the_form_shows_only_the_broken_code_and_asks_for_every_killer() {
        let mutants = crate::lab::mutant::builtin();
        for lang in Lang::ALL {
            let form = template(&mutants, lang);
            let block = form
                .split("[[prediction]]")
                .find(|b| b.contains("\"claim-expiry-inclusive\""))
                .unwrap();
            assert!(block.contains("#     if done || until >= now {"), "{block}");
            assert!(!block.contains("until > now"), "no correct line: {block}");
            let asked = match lang {
                Lang::Ja => "失敗するテストをすべて",
                Lang::En => "every test that fails under it",
            };
            assert_eq!(form.matches(asked).count(), mutants.len(), "{lang:?}");
        }
    }

    #[test]
    fn a_wrong_observation_names_its_line() {
        let mutants = crate::lab::mutant::builtin();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        let text = format!(
            "[[prediction]]\nmutant = {:?}\nobservation = \"exception\"\n",
            mutants[0].id
        );
        std::fs::write(&path, text).unwrap();
        let err = load(&path, &mutants, &crate::lab::suite::test_names()).unwrap_err();
        assert!(
            err.message
                .contains("p.toml:3:15: observation = \"exception\""),
            "{}",
            err.message
        );
    }
}
