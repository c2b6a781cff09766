//! The suite's message format: what a failing test observed. The suite's
//! `observe` (tests/behaviour/support.rs) writes `observation:`, `expected:`
//! and `actual:`; `check`, `predict` and the reports read them back here, so the
//! format is known in one place on each side of the suite.

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
    fn a_plain_panic_is_no_observation() {
        assert_eq!(
            Observation::parse("panicked at x.rs:1:1:\nsomething else"),
            None
        );
    }
}
