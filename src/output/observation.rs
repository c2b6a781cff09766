//! A failing test's message as people read it, the same in `check`, `grade`
//! and `verify`: what was observed, expected beside actual (a struct such as
//! a `Job` field by field, with the fields that differ marked), where the
//! test is, and what the implementation printed. A message that is no
//! observation (a crash, a timeout, a panic) is shown as it is, without the
//! judge's own panic locations.

use std::fmt::Write as _;

use crate::lab::lang::Lang;
use crate::lab::observation::{Observation, translate};
use crate::output::debug_value::{Leaf, fields};
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
    wrap(&render_unwrapped(message, style, lang, n), width)
}

fn render_unwrapped(message: &str, style: Style, lang: Lang, n: usize) -> String {
    let w = words(lang);
    let mut out = String::new();
    let Some(o) = Observation::parse(message) else {
        let lines: Vec<&str> = message
            .lines()
            .filter(|l| !l.starts_with("panicked at "))
            .collect();
        return indent(lines.join("\n").trim(), n);
    };
    // The suite writes in English; a learner reading Japanese reads its
    // observations in Japanese too.
    let _ = writeln!(out, "{}: {}", w.observed, translate(&o.what, lang));
    match field_table(&o.expected, &o.actual, &w, style) {
        Some(table) => out.push_str(&table),
        None if o.expected.contains('\n') || o.actual.contains('\n') => {
            let diff = crate::output::diff::unified(
                &(o.expected.clone() + "\n"),
                &(o.actual.clone() + "\n"),
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
                style.green(&translate(&o.expected, lang))
            );
            let _ = writeln!(
                out,
                "{} {}",
                pad_right(&format!("{}:", w.actual), width),
                style.red(&o.actual)
            );
        }
    }
    if let Some(at) = &o.location {
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
fn field_table(expected: &str, actual: &str, w: &Words, style: Style) -> Option<String> {
    let (expected, named_e) = fields(expected)?;
    let (actual, named_a) = fields(actual)?;
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
        let message = "observation: claim_many of four owners on a fresh job\nexpected: exactly one Some(1), None for every other owner\nactual: [None, None, None, None]\n";
        let text = render(message, Style::plain(), Lang::Ja, 0, 100);
        assert!(
            text.contains("期待: Some(1) がちょうど 1 つ、ほかの owner にはすべて None"),
            "{text}"
        );
        // English stays as the suite wrote it.
        let text = render(message, Style::plain(), Lang::En, 0, 100);
        assert!(text.starts_with("observed: claim_many of four owners on a fresh job\n"));
    }

    #[test]
    fn a_plain_panic_loses_only_its_location_line() {
        assert_eq!(
            render(
                "panicked at tests/behaviour/step8.rs:1:1:\nfencelab: the implementation panicked in claim()",
                Style::plain(),
                Lang::En,
                4,
                100
            ),
            "    fencelab: the implementation panicked in claim()"
        );
    }
}
