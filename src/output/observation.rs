//! A failing test's message as people read it, the same in `check`, `grade`
//! and `verify`: what was observed, expected beside actual (a struct such as
//! a `Job` field by field, with the fields that differ marked), where the
//! test is, and what the implementation printed. A message that is no
//! observation (a crash, a timeout, a panic) is shown as it is, without the
//! judge's own panic locations.

use std::fmt::Write as _;

use crate::lab::edition::Edition;
use crate::lab::lang::Lang;
use crate::lab::observation::{Observation, translate};
use crate::output::debug_value::{Leaf, fields, python, python_atom};
use crate::output::printer::indent;
use crate::output::style::Style;
use crate::output::width::{display_width, pad_right, wrap};

/// The words around an observation.
struct Words {
    observed: &'static str,
    expected: &'static str,
    actual: &'static str,
    field: &'static str,
    at: &'static str,
    printed: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::Ja => Words {
            observed: "観測",
            expected: "期待",
            actual: "実際",
            field: "フィールド",
            at: "場所:",
            printed: "出力",
        },
        Lang::En => Words {
            observed: "observed",
            expected: "expected",
            actual: "actual",
            field: "field",
            at: "at",
            printed: "printed",
        },
    }
}

/// `message` (a failing test's, as the suite writes it) rendered for people,
/// every line indented by `n`, long lines wrapped to `width`.
pub(crate) fn render(message: &str, style: Style, lang: Lang, n: usize, width: usize) -> String {
    render_for(Edition::Rust, message, style, lang, n, width)
}

/// `message` rendered for a learner of `edition`: in the Python edition,
/// expected and actual are in Python's terms (`None`, `True`, a `dict`,
/// `ValueError`: `debug_value::python`), a struct's fields are a dict's keys,
/// and the suite's own file (not in a Python lab) is not named.
pub(crate) fn render_for(
    edition: Edition,
    message: &str,
    style: Style,
    lang: Lang,
    n: usize,
    width: usize,
) -> String {
    wrap(&render_unwrapped(edition, message, style, lang, n), width)
}

/// What a failing test observed, without what it expected or saw: its
/// `observation:` line as `render_for` says it. None for a message without.
pub(crate) fn observed(edition: Edition, message: &str, lang: Lang) -> Option<String> {
    let o = Observation::parse(&crate::output::untrusted::visible(message))?;
    let what = translate(&o.what, lang);
    Some(match edition {
        Edition::Rust => what,
        Edition::Python => python_story(&what),
    })
}

/// A story of calls (`enqueue(db, "j") -> Ok(true); claim(...) -> Ok(Some(1))`)
/// in Python's terms: each answer after `->` as Python gives it, and a list
/// argument without Rust's `&`.
fn python_story(text: &str) -> String {
    let text = text.replace(", &[", ", [");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(" -> ") {
        out.push_str(&rest[..at + 4]);
        rest = &rest[at + 4..];
        // The answer runs to the first space or `;` outside its brackets
        // (the next call, or the rest of a translated sentence).
        let mut depth = 0i32;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    _ => {}
                }
                depth <= 0 && (c == ';' || c == ' ')
            })
            .map_or(rest.len(), |(i, _)| i);
        let answer = &rest[..end];
        out.push_str(
            &crate::output::debug_value::python(answer).unwrap_or_else(|| answer.to_string()),
        );
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A sentence of the suite's (`exactly one Some(1), None for every other
/// owner`) in Python's words: each `Ok(..)` and `Some(..)` is its value.
fn python_prose(text: &str) -> String {
    let mut out = text.to_string();
    loop {
        let found = ["Err(", "Ok(", "Some("].iter().find_map(|wrapper| {
            out.match_indices(wrapper)
                .find(|(at, _)| {
                    !out[..*at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
                .map(|(at, _)| (at, wrapper.len()))
        });
        let Some((at, len)) = found else {
            return out;
        };
        let inner_start = at + len;
        let mut depth = 1;
        let close = out[inner_start..].char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(inner_start + i)
        });
        let Some(close) = close else {
            return out;
        };
        // An error is what the Python contract raises (`sqlite3.Error(..)`).
        let inner = if out[at..].starts_with("Err(") {
            python(&out[at..=close]).unwrap_or_else(|| out[inner_start..close].to_string())
        } else {
            out[inner_start..close].to_string()
        };
        out.replace_range(at..=close, &inner);
    }
}

fn render_unwrapped(edition: Edition, message: &str, style: Style, lang: Lang, n: usize) -> String {
    // fencelab's own sentences in the learner's language, worded from their
    // marked lines (`bridge::said`); then what the implementation printed,
    // panicked with or returned is shown, never obeyed (`untrusted`).
    let message = &crate::output::own_words::word(message, lang);
    let message = &crate::output::untrusted::visible(message);
    let mut w = words(lang);
    if edition == Edition::Python {
        w.field = match lang {
            Lang::Ja => "キー",
            Lang::En => "key",
        };
    }
    let mut out = String::new();
    let Some(o) = Observation::parse(message) else {
        let lines: Vec<&str> = message
            .lines()
            .filter(|l| !l.starts_with("panicked at "))
            .collect();
        let text = lines.join("\n");
        return indent(text.trim(), n);
    };
    // The suite writes in English; a learner reading Japanese reads its
    // observations in Japanese too.
    let what = translate(&o.what, lang);
    let what = match edition {
        Edition::Rust => what,
        // A story of calls (`random`), each answer in Python's terms.
        Edition::Python => python_story(&what),
    };
    let _ = writeln!(out, "{}: {}", w.observed, what);
    let (expected, actual) = match edition {
        // The expected text may be a sentence of the suite's, in English.
        Edition::Rust => (o.expected.clone(), o.actual.clone()),
        Edition::Python => {
            let expected =
                python(&o.expected).unwrap_or_else(|| python_prose(&translate(&o.expected, lang)));
            let actual =
                python(&o.actual).unwrap_or_else(|| python_prose(&translate(&o.actual, lang)));
            // Two values that read alike in Python but differ (`Ok(None)`
            // and `Ok(())`) are shown as they are, so that the difference shows.
            if expected == actual {
                (o.expected.clone(), o.actual.clone())
            } else {
                (expected, actual)
            }
        }
    };
    match field_table(edition, &o.expected, &o.actual, &w, style) {
        Some(table) => out.push_str(&table),
        None if expected.contains('\n') || actual.contains('\n') => {
            let diff = crate::output::diff::unified(
                &(expected.clone() + "\n"),
                &(actual.clone() + "\n"),
                w.expected,
                w.actual,
                style,
            );
            let _ = writeln!(out, "{}", diff.trim_end());
        }
        None => {
            let width = display_width(w.expected).max(display_width(w.actual)) + 1;
            let _ = writeln!(
                out,
                "{} {}",
                pad_right(&format!("{}:", w.expected), width),
                style.green(&match edition {
                    Edition::Rust => translate(&expected, lang),
                    Edition::Python => expected.clone(),
                })
            );
            let _ = writeln!(
                out,
                "{} {}",
                pad_right(&format!("{}:", w.actual), width),
                // An actual in words (`more than one answer is Some(1)`) is
                // the suite's sentence too.
                style.red(&match edition {
                    Edition::Rust => translate(&actual, lang),
                    Edition::Python => actual.clone(),
                })
            );
        }
    }
    if let Some(at) = o.location.as_ref().filter(|_| edition == Edition::Rust) {
        let _ = writeln!(out, "{}", style.dim(&format!("{} {at}", w.at)));
    }
    // What the implementation printed during the test (a learner's own
    // println!s) comes before the panic.
    let printed: Vec<&str> = message
        .lines()
        .take_while(|l| !l.starts_with("panicked at "))
        .collect();
    let printed = printed.join("\n");
    if !printed.trim().is_empty() {
        let _ = writeln!(out, "{}:", w.printed);
        let _ = writeln!(out, "{}", indent(printed.trim_end(), 2));
    }
    indent(out.trim_end(), n)
}

/// Expected and actual field by field, when both are values of the same
/// shape with named fields (a `Job`, a `Row`, in an `Ok(Some(..))` or not):
/// one line per field, the ones that differ marked.
fn field_table(
    edition: Edition,
    expected: &str,
    actual: &str,
    w: &Words,
    style: Style,
) -> Option<String> {
    let (mut expected, named_e) = fields(expected)?;
    let (mut actual, named_a) = fields(actual)?;
    if edition == Edition::Python {
        for leaf in expected.iter_mut().chain(actual.iter_mut()) {
            leaf.text = python_atom(&leaf.text);
        }
    }
    let same_shape = expected.len() == actual.len()
        && expected
            .iter()
            .zip(&actual)
            .all(|(e, a)| e.shape == a.shape);
    if !(named_e && named_a && same_shape) {
        return None;
    }
    let rows: Vec<(&Leaf, &Leaf)> = expected.iter().zip(&actual).collect();
    if rows.iter().all(|(e, a)| e.text == a.text) {
        return None;
    }
    let path_width = rows
        .iter()
        .map(|(e, _)| display_width(&e.path))
        .chain([display_width(w.field)])
        .max()
        .unwrap_or(0);
    let value_width = rows
        .iter()
        .map(|(e, _)| display_width(&e.text))
        .chain([display_width(w.expected)])
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {} {} {}",
        style.dim(&pad_right(w.field, path_width)),
        style.dim(&pad_right(w.expected, value_width)),
        style.dim(w.actual)
    );
    for (e, a) in rows {
        if e.text == a.text {
            let _ = writeln!(
                out,
                "  {} {} {}",
                pad_right(&e.path, path_width),
                pad_right(&e.text, value_width),
                a.text
            );
        } else {
            let _ = writeln!(
                out,
                "{} {} {} {}",
                style.red("✗"),
                style.bold(&pad_right(&e.path, path_width)),
                style.green(&pad_right(&e.text, value_width)),
                style.red(&a.text)
            );
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(expected: &str, actual: &str) -> String {
        let field = |name: &str, value: &str| {
            if value.contains('\n') {
                let lines: Vec<String> = value.lines().map(|l| format!("    {l}")).collect();
                format!("{name}:\n{}\n", lines.join("\n"))
            } else {
                format!("{name}: {value}\n")
            }
        };
        format!(
            "panicked at tests/behaviour/step7.rs:10:5:\nobservation: stored row after release\n{}{}",
            field("expected", expected),
            field("actual", actual)
        )
    }

    #[test]
    fn a_wrong_struct_is_compared_field_by_field() {
        let expected = "Some(\n    Row {\n        owner: None,\n        until: 0.0,\n        fence: 2,\n        result: None,\n        done: 0,\n    },\n)";
        let actual = "Some(\n    Row {\n        owner: None,\n        until: 0.0,\n        fence: 0,\n        result: None,\n        done: 0,\n    },\n)";
        let text = render(&message(expected, actual), Style::plain(), Lang::En, 0, 100);
        assert_eq!(
            text,
            "observed: stored row after release\n  field  expected actual\n  owner  None     None\n  until  0.0      0.0\n✗ fence  2        0\n  result None     None\n  done   0        0\nat tests/behaviour/step7.rs:10:5"
        );
    }

    #[test]
    fn values_of_different_shapes_and_plain_values_are_shown_whole() {
        let text = render(
            &message("Ok(Some(2))", "Ok(None)"),
            Style::plain(),
            Lang::En,
            2,
            100,
        );
        assert!(
            text.contains("  expected: Ok(Some(2))\n  actual:   Ok(None)"),
            "{text}"
        );
        let text = render(
            &message("Some(\n    Row {\n        fence: 2,\n    },\n)", "None"),
            Style::plain(),
            Lang::En,
            0,
            100,
        );
        assert!(text.contains("--- expected"), "a line diff: {text}");
    }

    #[test]
    fn what_the_implementation_printed_is_shown_after_the_observation() {
        let text = render(
            &format!("claiming job-1\n{}", message("Ok(Some(2))", "Ok(None)")),
            Style::plain(),
            Lang::Ja,
            0,
            100,
        );
        assert!(text.ends_with("出力:\n  claiming job-1"), "{text}");
        assert!(text.starts_with("観測: "), "{text}");
    }

    #[test]
    fn in_japanese_every_line_of_an_observation_of_the_suite_is_japanese() {
        let message = "panicked at tests/behaviour/step5.rs:78:5:\nobservation: renew at now == until\nexpected: Ok(false)\nactual: Ok(true)\n";
        let text = render(message, Style::plain(), Lang::Ja, 0, 100);
        assert_eq!(
            text,
            "観測: now == until での renew\n期待: Ok(false)\n実際: Ok(true)\n場所: tests/behaviour/step5.rs:78:5"
        );
        let message = "observation: claim_many of four owners on a fresh job\nexpected: exactly one Some(1), None for every other owner\nactual: more than one answer is Some(1)\n";
        let text = render(message, Style::plain(), Lang::Ja, 0, 100);
        assert!(
            text.contains("期待: Some(1) がちょうど 1 つ、ほかの owner にはすべて None"),
            "{text}"
        );
        // What a race amounted to, in words, is the suite's sentence too.
        assert!(
            text.contains("実際: Some(1) の答えが 2 つ以上あります"),
            "{text}"
        );
        // English stays as the suite wrote it.
        let text = render(message, Style::plain(), Lang::En, 0, 100);
        assert!(text.starts_with("observed: claim_many of four owners on a fresh job\n"));
    }

    /// What a learner is told of a race, in both editions and both
    /// languages: what the answers amount to, never a winner's name or
    /// index, so the same implementation reads the same words on every run.
    #[test]
    fn a_race_is_told_without_naming_the_winner() {
        let messages = [
            "panicked at tests/behaviour/step8.rs:47:5:\nobservation: claim_many of four owners on a fresh job\nexpected: exactly one Some(1), None for every other owner\nactual: more than one answer is Some(1)\n",
            "panicked at tests/behaviour/step4.rs:360:5:\nobservation: four claims on one thread each, started while the write lock is held, then let go\nexpected: exactly one Ok(Some(1)) and three Ok(None)\nactual: an answer other than Ok(Some(1)) or Ok(None): Err(Db(\"database is locked\"))\n",
            "panicked at tests/behaviour/step8.rs:203:5:\nobservation: answer given to the stored owner\nexpected: Some(1)\nactual: None\n",
            "panicked at tests/behaviour/step8.rs:150:5:\nobservation: claim_many on a held job\nexpected: Ok([None, None, None])\nactual: an answer other than None: Some(6), Some(7), Some(8)\n",
            "panicked at tests/behaviour/step8.rs:74:9:\nobservation: stored row of job-0 (its owner, the winner, written as <the winner>)\nexpected:\n    Some(\n        Row {\n            owner: Some(\n                \"<the winner>\",\n            ),\n            until: 15.0,\n            fence: 1,\n            result: None,\n            done: 0,\n        },\n    )\nactual:\n    Some(\n        Row {\n            owner: Some(\n                \"<the winner>\",\n            ),\n            until: 25.0,\n            fence: 1,\n            result: None,\n            done: 0,\n        },\n    )\n",
        ];
        let mut shown = String::new();
        for edition in [Edition::Rust, Edition::Python] {
            for lang in [Lang::En, Lang::Ja] {
                let _ = writeln!(shown, "== {edition:?} {lang:?}");
                for message in messages {
                    let text = render_for(edition, message, Style::plain(), lang, 2, 80);
                    let _ = writeln!(shown, "{text}\n");
                }
            }
        }
        insta::assert_snapshot!(shown);
    }

    /// A panic in a call, as the bridge says it (a marked `Said`): worded in
    /// the reader's language, without the judge's location line.
    #[test]
    fn a_plain_panic_loses_only_its_location_line() {
        let said = crate::bridge::said::Said::FailedInCall {
            call: "claim".to_string(),
            at: None,
            panicked: true,
        };
        let message = format!(
            "panicked at tests/behaviour/step8.rs:1:1:\n{}\nboom",
            said.marked()
        );
        let shown = |lang| render(&message, Style::plain(), lang, 4, 100);
        assert_eq!(
            shown(Lang::En),
            "    fencelab: the implementation panicked in claim():\n    boom"
        );
        assert_eq!(
            shown(Lang::Ja),
            "    fencelab: 実装が claim() の中でパニックしました:\n    boom"
        );
    }

    /// A line that only reads like fencelab's (a learner printed it) stays
    /// as printed, in every language; a stray mark is shown, never obeyed.
    #[test]
    fn a_learners_look_alike_line_is_not_worded() {
        let message = "fencelab: the implementation panicked in claim():\n\u{1}said\u{1}{oops";
        assert_eq!(
            render(message, Style::plain(), Lang::Ja, 0, 100),
            "fencelab: the implementation panicked in claim():\n\\u{1}said\\u{1}{oops"
        );
    }

    #[test]
    fn a_python_learner_reads_python_values_keys_and_no_panic() {
        let py = |message: &str, lang: Lang| {
            render_for(Edition::Python, message, Style::plain(), lang, 0, 100)
        };
        let text = py(&message("Ok(Some(2))", "Ok(None)"), Lang::En);
        assert_eq!(
            text,
            "observed: stored row after release\nexpected: 2\nactual:   None"
        );
        let text = py(&message("Err(InvalidTtl(_))", "Ok(true)"), Lang::Ja);
        assert!(text.ends_with("期待: ValueError\n実際: True"), "{text}");
        let expected = "Some(\n    Row {\n        owner: Some(\n            \"a\",\n        ),\n        until: 0.0,\n        fence: 2,\n        result: None,\n        done: 0,\n    },\n)";
        let actual = expected.replace("fence: 2", "fence: 0");
        let text = py(&message(expected, &actual), Lang::En);
        assert!(
            text.contains("\n  key    expected actual\n  owner  'a'      'a'\n"),
            "{text}"
        );
        assert!(text.contains("\n✗ fence  2        0\n"), "{text}");
        // A sentence of the suite's, in Japanese and in Python's words.
        let sentence = "observation: claim_many of four owners on a fresh job\nexpected: exactly one Some(1), None for every other owner\nactual: no answer is Some(1): every one is None\n";
        let text = py(sentence, Lang::Ja);
        assert!(
            text.contains("期待: 1 がちょうど 1 つ、ほかの owner にはすべて None"),
            "{text}"
        );
        assert!(
            text.contains("実際: 1 の答えがありません: すべて None です"),
            "{text}"
        );
        let sentence = "panicked at tests/behaviour/step4.rs:1:1:\nobservation: claim from four processes started while the write lock was held, then let go\nexpected: exactly one Ok(Some(1)) and three Ok(None)\nactual: an answer other than Ok(Some(1)) or Ok(None): Err(Db(\"database is locked\"))\n";
        let text = py(sentence, Lang::En);
        assert!(
            text.ends_with(
                "actual:   an answer other than 1 or None: sqlite3.Error('database is locked')"
            ),
            "{text}"
        );
        assert_eq!(
            python_prose("exactly one Ok(Some(1)) and three Ok(None)"),
            "exactly one 1 and three None"
        );
        // Values that read alike in Python keep their difference.
        let text = py(&message("Ok(None)", "Ok(())"), Lang::En);
        assert!(
            text.ends_with("expected: Ok(None)\nactual:   Ok(())"),
            "{text}"
        );
        let failed = crate::bridge::said::Said::FailedInCall {
            call: "claim".to_string(),
            at: Some("lease.py:3".to_string()),
            panicked: false,
        };
        let text = py(
            &format!(
                "panicked at tests/behaviour/step8.rs:1:1:\n{}\nTypeError: x",
                failed.marked()
            ),
            Lang::En,
        );
        assert_eq!(
            text,
            "fencelab: the implementation failed in claim() at lease.py:3:\nTypeError: x"
        );
    }

    #[test]
    fn a_story_of_calls_reads_in_pythons_terms() {
        let story = "claim_many(db, \"j\", &[\"a\", \"b\"], 1.0, 30.5), after init_db(db) -> Ok(()); \
                     enqueue(db, \"j\") -> Ok(true); claim(db, \"j\", \"a\", 1.0, 0.0) -> Err(InvalidTtl(_)); \
                     state(db, \"x\") -> Ok(None); claim_many(db, \"j\", &[\"a\", \"b\"], 1.0, 1.0) -> \
                     Ok([Some(1), None]); claim(db, \"j\", \"a\", 1.0, 1.0) -> Ok(Some(1)) の後の state(db, \"j\")";
        assert_eq!(
            python_story(story),
            "claim_many(db, \"j\", [\"a\", \"b\"], 1.0, 30.5), after init_db(db) -> None; \
             enqueue(db, \"j\") -> True; claim(db, \"j\", \"a\", 1.0, 0.0) -> ValueError; \
             state(db, \"x\") -> None; claim_many(db, \"j\", [\"a\", \"b\"], 1.0, 1.0) -> \
             [1, None]; claim(db, \"j\", \"a\", 1.0, 1.0) -> 1 の後の state(db, \"j\")"
        );
    }
}
