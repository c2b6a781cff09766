//! The suite's message format: what a failing test observed. The suite's
//! `observe` (tests/behaviour/support.rs) writes `observation:`, `expected:`
//! and `actual:`; `check`, `predict` and the reports read them back here, so the
//! format is known in one place on each side of the suite. What kind of
//! observation a message is (a return value, an error, the stored state) is
//! read here too: the worksheet's exercise asks for it.

use serde::{Deserialize, Serialize};

use crate::lab::lang::Lang;

/// What a failing test observed, read from its message (the suite's `observe`
/// writes `observation:`, `expected:` and `actual:`, a value spanning several
/// lines following on lines indented by four spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// Where in the suite (`tests/behaviour/step4.rs:106:5`).
    pub location: Option<String>,
    pub what: String,
    pub expected: String,
    pub actual: String,
}

impl Observation {
    pub fn parse(message: &str) -> Option<Observation> {
        let location = message
            .lines()
            .find_map(|l| l.strip_prefix("panicked at "))
            .map(|l| l.trim_end_matches(':').to_string());
        let mut lines = message
            .lines()
            .skip_while(|l| !l.starts_with("observation: "))
            .peekable();
        let what = lines.next()?.strip_prefix("observation: ")?.to_string();
        let mut field = |name: &str| -> Option<String> {
            let line = lines.next()?;
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            if !rest.trim().is_empty() {
                return Some(rest.trim().to_string());
            }
            let mut value = Vec::new();
            while let Some(next) = lines.peek().and_then(|l| l.strip_prefix("    ")) {
                value.push(next.to_string());
                lines.next();
            }
            Some(value.join("\n"))
        };
        let expected = field("expected")?;
        let actual = field("actual")?;
        Some(Observation {
            location,
            what,
            expected,
            actual,
        })
    }
}

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

    /// Every kind, in the order the predictions form lists them.
    pub const ALL: [ObservationKind; 3] = [
        ObservationKind::ReturnValue,
        ObservationKind::Error,
        ObservationKind::State,
    ];

    /// The kind written as `name` ("return value", "error" or "state").
    pub fn parse(name: &str) -> Option<ObservationKind> {
        ObservationKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind as a reader of `lang` says it (the form's value is `name`).
    pub fn label(self, lang: Lang) -> &'static str {
        match (lang, self) {
            (Lang::En, kind) => kind.name(),
            (Lang::Ja, ObservationKind::ReturnValue) => "戻り値",
            (Lang::Ja, ObservationKind::Error) => "エラー",
            (Lang::Ja, ObservationKind::State) => "保存された状態",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observation_reads_back_from_its_message() {
        let message = "panicked at tests/behaviour/step4.rs:106:5:\nobservation: claim at now == until\nexpected: Ok(Some(2))\nactual: Ok(None)";
        assert_eq!(
            Observation::parse(message),
            Some(Observation {
                location: Some("tests/behaviour/step4.rs:106:5".into()),
                what: "claim at now == until".into(),
                expected: "Ok(Some(2))".into(),
                actual: "Ok(None)".into(),
            })
        );
    }

    #[test]
    fn a_multi_line_value_is_read_whole() {
        let message =
            "observation: state\nexpected:\n    Ok(\n        Some(1),\n    )\nactual: Ok(None)\n";
        let o = Observation::parse(message).unwrap();
        assert_eq!(o.expected, "Ok(\n    Some(1),\n)");
        assert_eq!(o.actual, "Ok(None)");
        assert_eq!(o.location, None);
    }

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
        for kind in ObservationKind::ALL {
            assert_eq!(ObservationKind::parse(kind.name()), Some(kind));
        }
        assert_eq!(ObservationKind::parse("exception"), None);
    }

    #[test]
    fn a_plain_panic_is_no_observation() {
        assert_eq!(
            Observation::parse("panicked at x.rs:1:1:\nsomething else"),
            None
        );
    }
}
