//! The suite's message format: what a failing test observed. The suite's
//! `observe` (tests/behaviour/support.rs) writes `observation:`, `expected:`
//! and `actual:`; `check`, `predict` and the reports read them back here, so the
//! format is known in one place on each side of the suite. What kind of
//! observation a message is (a return value, an error, the stored state) is
//! read here too: the worksheet's exercise asks for it.
//!
//! The suite writes its observations in English; their Japanese is a table
//! beside it (`tests/behaviour/observations_ja.toml`), compiled in, and a
//! test here reads the suite's source to check that every observation it can
//! write has its line (and that every helper passing an observation on is
//! `#[track_caller]`, so that a failure points at the test, not the helper).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::lab::lang::Lang;

/// The suite's observations in Japanese, as written.
const JA: &str = include_str!("../../tests/behaviour/observations_ja.toml");

/// The table's entries, English to Japanese.
fn ja_table() -> &'static BTreeMap<String, String> {
    static TABLE: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str(JA).expect("the Japanese observations are checked by the tests")
    })
}

/// `text`, an observation (or an expected text) as the suite wrote it, in
/// `lang`: its line of the table, with the values the suite filled into its
/// holes (`{now}`) filled in again. A text the table does not know (a
/// learner's own test's, say) is shown as it is.
pub(crate) fn translate(text: &str, lang: Lang) -> String {
    if lang == Lang::En {
        return text.to_string();
    }
    if let Some(ja) = misfit_ja(text) {
        return ja;
    }
    let table = ja_table();
    if let Some(ja) = table.get(text) {
        return ja.clone();
    }
    table
        .iter()
        .filter(|(en, _)| en.contains('{'))
        .find_map(|(en, ja)| {
            let values = holes_of(&pieces(en), text)?;
            Some(fill(ja, &values))
        })
        .unwrap_or_else(|| text.to_string())
}

/// The bridge's words for a Python value the contract has no room for
/// (`fencelab_server.py`'s `Refusal`), in Japanese; `None` for other texts.
fn misfit_ja(text: &str) -> Option<String> {
    const WORDS: [(&str, &str); 11] = [
        ("True or False", "True か False"),
        (
            "an int (the new fence), or None",
            "int（新しい fence）か None",
        ),
        (
            "an int of 64 bits (the new fence), or None",
            "64 ビットの int（新しい fence）か None",
        ),
        (
            "a list, one answer per owner",
            "owner ごとに答えが 1 つずつの list",
        ),
        (
            "None for a missing job, else a dict with exactly the keys id, owner, until, fence, result, done",
            "ない仕事なら None、ある仕事ならキーがちょうど id, owner, until, fence, result, done の dict",
        ),
        ("id a str", "id が str"),
        ("owner a str or None", "owner が str か None"),
        ("until a float", "until が float"),
        ("fence an int", "fence が int"),
        ("result a str or None", "result が str か None"),
        ("done True/False or 1/0", "done が True/False か 1/0"),
    ];
    let word = |en: &str| {
        WORDS
            .iter()
            .find(|(e, _)| *e == en)
            .map(|(_, ja)| ja.to_string())
    };
    if let Some(fields) = text.strip_prefix("a dict whose ") {
        let ja: Option<Vec<String>> = fields.split(", ").map(word).collect();
        return ja.map(|ja| format!("{} である dict", ja.join("、")));
    }
    let function = text
        .strip_prefix("what ")
        .and_then(|t| t.strip_suffix("() returned"));
    match function {
        Some(f) if f.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
            Some(format!("{f}() が返した値"))
        }
        _ => word(text),
    }
}

/// A text with holes, in pieces: `(literal, None)` or `("", Some(hole))`.
fn pieces(template: &str) -> Vec<(&str, Option<&str>)> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push((&rest[..open], None));
        out.push(("", Some(&rest[open + 1..open + close])));
        rest = &rest[open + close + 1..];
    }
    out.push((rest, None));
    out
}

/// The values of the holes, when `text` is the template filled in (each
/// hole with some text that is not empty).
fn holes_of<'t>(
    pieces: &[(&str, Option<&str>)],
    text: &'t str,
) -> Option<BTreeMap<String, &'t str>> {
    let Some(((literal, hole), rest)) = pieces.split_first() else {
        return text.is_empty().then(BTreeMap::new);
    };
    match hole {
        None => holes_of(rest, text.strip_prefix(literal)?),
        Some(name) => (1..=text.len())
            .filter(|&end| text.is_char_boundary(end))
            .find_map(|end| {
                let mut values = holes_of(rest, &text[end..])?;
                values.insert(name.to_string(), &text[..end]);
                Some(values)
            }),
    }
}

/// `template` with each hole replaced by its value.
fn fill(template: &str, values: &BTreeMap<String, &str>) -> String {
    pieces(template)
        .into_iter()
        .map(|(literal, hole)| match hole {
            Some(name) => values.get(name).copied().unwrap_or_default(),
            None => literal,
        })
        .collect()
}

/// What a failing test observed, read from its message (the suite's `observe`
/// writes `observation:`, `expected:` and `actual:`, a value spanning several
/// lines following on lines indented by four spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Observation {
    /// Where in the suite (`tests/behaviour/step4.rs:106:5`).
    pub location: Option<String>,
    pub what: String,
    pub expected: String,
    pub actual: String,
}

impl Observation {
    pub(crate) fn parse(message: &str) -> Option<Observation> {
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
    pub(crate) const ALL: [ObservationKind; 3] = [
        ObservationKind::ReturnValue,
        ObservationKind::Error,
        ObservationKind::State,
    ];

    /// The kind written as `name` ("return value", "error" or "state").
    pub(crate) fn parse(name: &str) -> Option<ObservationKind> {
        ObservationKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind as a reader of `lang` says it (the form's value is `name`).
    pub(crate) fn label(self, lang: Lang) -> &'static str {
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
    pub(crate) fn of_failure(message: &str) -> Option<ObservationKind> {
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
    fn a_python_value_the_contract_has_no_room_for_is_said_in_japanese() {
        assert_eq!(
            translate("what state() returned", Lang::Ja),
            "state() が返した値"
        );
        assert_eq!(translate("True or False", Lang::Ja), "True か False");
        assert_eq!(
            translate("a dict whose id a str, done True/False or 1/0", Lang::Ja),
            "id が str、done が True/False か 1/0 である dict"
        );
        // A part it does not know leaves the whole as it is.
        let unknown = "a dict whose id a str, colour blue";
        assert_eq!(translate(unknown, Lang::Ja), unknown);
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
    fn an_observation_is_translated_with_its_values_filled_in() {
        assert_eq!(
            translate("claim at now == until (the lease has just ended)", Lang::Ja),
            "now == until での claim（リースはちょうど終わった）"
        );
        assert_eq!(
            translate("column until is NOT NULL", Lang::Ja),
            "列 until が NOT NULL である"
        );
        assert_eq!(
            translate("claim of the ghost job with now = NaN, ttl = 10", Lang::Ja),
            "仕事 ghost の now = NaN、ttl = 10 での claim"
        );
        assert_eq!(
            translate("claim at now == until (the lease has just ended)", Lang::En),
            "claim at now == until (the lease has just ended)"
        );
        // A learner's own observation is kept as written.
        assert_eq!(translate("my own check", Lang::Ja), "my own check");
    }

    // ---- The suite's source, read as text: its observations and its helpers.

    /// A call's arguments (`text[open]` is its `(`), split at the commas
    /// outside brackets and string literals.
    fn arguments(text: &str, open: usize) -> Vec<String> {
        let mut args = Vec::new();
        let mut current = String::new();
        let mut depth = 0;
        let mut chars = text[open..].chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    current.push(c);
                    while let Some(c) = chars.next() {
                        current.push(c);
                        match c {
                            '\\' => current.extend(chars.next()),
                            '"' => break,
                            _ => {}
                        }
                    }
                    continue;
                }
                '(' | '[' | '{' => {
                    depth += 1;
                    if depth == 1 {
                        continue;
                    }
                }
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        if !current.trim().is_empty() {
                            args.push(current.trim().to_string());
                        }
                        return args;
                    }
                }
                ',' if depth == 1 => {
                    args.push(std::mem::take(&mut current).trim().to_string());
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
        panic!("unclosed call at {open}")
    }

    /// A string literal's text (`"a \"b\""`), or a `format!`'s template.
    fn literal(arg: &str) -> Option<String> {
        let arg = arg.trim_start_matches('&');
        let arg = match arg.strip_prefix("format!") {
            Some(rest) => {
                let inner = arguments(rest, 0);
                assert_eq!(inner.len(), 1, "a format! with arguments: {arg}");
                inner[0].clone()
            }
            None => arg.to_string(),
        };
        let inner = arg.strip_prefix('"')?.strip_suffix('"')?;
        Some(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
    }

    /// Every function of `source` with its parameters' names, its
    /// attributes and its body.
    fn functions(source: &str) -> Vec<(String, Vec<String>, String, String)> {
        let mut out = Vec::new();
        for (at, _) in source.match_indices("fn ") {
            if at > 0 && !source[..at].ends_with(char::is_whitespace) {
                continue;
            }
            let rest = &source[at + 3..];
            let Some(open) = rest.find('(') else { continue };
            let name = rest[..open].trim().to_string();
            let params: Vec<String> = arguments(rest, open)
                .iter()
                .map(|p| p.split(':').next().unwrap_or_default().trim().to_string())
                .collect();
            // Its attributes, above its visibility if it has one.
            let before = source[..at].trim_end_matches(' ');
            let before = before
                .strip_suffix("pub(crate)")
                .or_else(|| before.strip_suffix("pub"))
                .unwrap_or(before)
                .trim_end_matches(' ');
            let attributes: String = before
                .lines()
                .rev()
                .take_while(|l| {
                    l.trim_start().starts_with("#[") || l.trim_start().starts_with("///")
                })
                .collect::<Vec<_>>()
                .join("\n");
            let body_start = at + 3 + rest.find('{').unwrap_or(0);
            let body = arguments(source, body_start).join(",");
            out.push((name, params, attributes, body));
        }
        out
    }

    /// The step files of the suite.
    fn steps() -> impl Iterator<Item = (&'static str, &'static str)> {
        crate::lab::suite::MODULES
            .into_iter()
            .filter(|(path, _)| !path.ends_with("support.rs"))
    }

    /// Per function that fails with an observation, the arguments that are
    /// observation texts: `observe` and `observe_that` the first (and the
    /// expected text of `observe_that`), a helper of a step its `what`.
    fn observers(source: &str) -> BTreeMap<String, Vec<usize>> {
        let mut observers: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        observers.insert("observe".into(), vec![0]);
        observers.insert("observe_that".into(), vec![0, 3]);
        // The support's helpers by their signatures alone (its bodies hold
        // character literals, which `arguments` does not read).
        let support = crate::lab::suite::MODULES
            .into_iter()
            .filter(|(path, _)| path.ends_with("support.rs"))
            .flat_map(|(_, source)| {
                source
                    .match_indices("\npub fn ")
                    .map(|(at, _)| {
                        let start = at + 1;
                        let end = start + source[start..].find('{').unwrap_or(0);
                        functions(&format!("{} {{}}", &source[start..end]))
                    })
                    .collect::<Vec<_>>()
            })
            .flatten();
        for (name, params, _, _) in support.chain(functions(source)) {
            if let Some(what) = params.iter().position(|p| p == "what") {
                let expected = params.iter().position(|p| p == "expected");
                observers.insert(name, [Some(what), expected].into_iter().flatten().collect());
            }
        }
        observers
    }

    /// Every observation text the suite can write (`format!` templates with
    /// their holes), with where it is.
    fn suite_observations() -> Vec<(String, String)> {
        let mut found = Vec::new();
        for (path, source) in steps() {
            for (name, positions) in observers(source) {
                let call = format!("{name}(");
                for (at, _) in source.match_indices(&call) {
                    let before = source[..at].chars().next_back().unwrap_or(' ');
                    if before.is_alphanumeric() || before == '_' || source[..at].ends_with("fn ") {
                        continue;
                    }
                    let args = arguments(source, at + name.len());
                    for &i in &positions {
                        // A text bound to a name first (`let what = "..";`,
                        // `const ONE: &str = "..";`) is read where it is bound.
                        let bound = [
                            format!("let {} = ", args[i]),
                            format!("const {}: &str = ", args[i]),
                        ]
                        .into_iter()
                        .find_map(|binding| {
                            // The nearest binding before the call, else a constant.
                            let start = source[..at]
                                .rfind(&binding)
                                .or_else(|| source.find(&binding))?
                                + binding.len();
                            let end = start + source[start..].find(";\n")?;
                            Some(source[start..end].to_string())
                        });
                        let arg = bound.as_ref().unwrap_or(&args[i]);
                        if arg == "what" || arg == "expected" {
                            continue; // passed on by a helper, found at its calls
                        }
                        let text = literal(arg).unwrap_or_else(|| {
                            panic!("{path}: {name}'s observation is neither a literal nor a format!: {arg}")
                        });
                        let line = source[..at].lines().count();
                        found.push((text, format!("{path}:{line}")));
                    }
                }
            }
        }
        // What the suite shows as an actual value in words (`Said`), the
        // support's own sentences among them.
        for (path, source) in crate::lab::suite::MODULES {
            for (at, _) in source.match_indices("Said(") {
                if source[..at].ends_with("struct ") {
                    continue;
                }
                let args = arguments(source, at + "Said".len());
                let arg = args[0].trim_end_matches(".to_string()");
                let text = literal(arg).unwrap_or_else(|| {
                    panic!(
                        "{path}: a Said is neither a literal nor a format!: {}",
                        args[0]
                    )
                });
                let line = source[..at].lines().count();
                found.push((text, format!("{path}:{line}")));
            }
        }
        found
    }

    #[test]
    fn every_observation_the_suite_can_write_is_in_japanese() {
        let found = suite_observations();
        assert!(
            found.len() >= 130,
            "the suite's observations are read: {}",
            found.len()
        );
        let table = ja_table();
        let missing: Vec<String> = found
            .iter()
            .filter(|(text, _)| !table.contains_key(text))
            .map(|(text, at)| format!("{at}: {text:?}"))
            .collect();
        assert!(
            missing.is_empty(),
            "add these to tests/behaviour/observations_ja.toml:\n{}",
            missing.join("\n")
        );
        let written: std::collections::BTreeSet<&str> =
            found.iter().map(|(text, _)| text.as_str()).collect();
        let unused: Vec<&String> = table
            .keys()
            .filter(|en| !written.contains(en.as_str()))
            .collect();
        assert!(
            unused.is_empty(),
            "no longer written by the suite: {unused:?}"
        );
        for (en, ja) in table {
            let holes = |t: &str| -> Vec<String> {
                let mut h: Vec<String> = pieces(t)
                    .into_iter()
                    .filter_map(|(_, hole)| hole.map(String::from))
                    .collect();
                h.sort();
                h
            };
            assert_eq!(holes(en), holes(ja), "the holes of {en:?}");
            assert!(!ja.is_ascii(), "{en:?} is given no Japanese: {ja:?}");
        }
    }

    #[test]
    fn every_helper_that_fails_with_an_observation_points_at_its_caller() {
        // A helper without `#[track_caller]` makes every test that calls it
        // fail at the helper's own line: two failures, one place.
        let mut helpers = 0;
        for (path, source) in steps() {
            let observing = observers(source);
            for (name, _, attributes, body) in functions(source) {
                let observes = observing
                    .keys()
                    .any(|o| *o != name && body.contains(&format!("{o}(")));
                if !observes || attributes.contains("#[test]") {
                    continue;
                }
                helpers += 1;
                assert!(
                    attributes.contains("#[track_caller]"),
                    "{path}: fn {name} fails with an observation but is not #[track_caller]"
                );
            }
        }
        assert!(helpers >= 5, "the helpers are found: {helpers}");
    }

    #[test]
    fn a_plain_panic_is_no_observation() {
        assert_eq!(
            Observation::parse("panicked at x.rs:1:1:\nsomething else"),
            None
        );
    }
}
