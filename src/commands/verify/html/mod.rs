//! `verify --html FILE`: the run as one self-contained HTML page for an
//! instructor's browser. It holds the kill matrix, each mutant's diff and
//! explanation, the summary, and the tests that kill nothing. The matrix is
//! tests by mutants, both grouped by step, each cell what the test did to the
//! mutant. The killing test's observation shows on hover, and on click with
//! scripts on.
//!
//! The page loads nothing, so it opens from a CI artifact offline. It stays
//! usable at 80+ mutants and 100+ tests. Without scripts everything is there
//! but the filters and the click panel.

mod matrix;
mod mutants;
mod words;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::commands::verify::{MutantReport, Report};
use crate::engine::outcome::TestOutcome;
use crate::lab::lang::Lang;
use crate::lab::mutant::Mutant;
use crate::lab::suite::{self, SuiteTest};
use crate::lab::worksheet::Worksheet;
use crate::output::markup::{self, Markup};
use words::{Words, words};

// Compiled in, so the page loads nothing. The matrix scrolls in its own box
// under sticky headers: mutant ids on top, test names on the left. Light and
// dark follow the system; a button, or `#dark` or `#light` in the address,
// switches them.
const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("script.js");

/// Escapes text for HTML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    markup::escape(text, Markup::Html)
}

/// The first line of a failure that says what was observed (not where).
fn first_line(message: &str) -> &str {
    message
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with("panicked at"))
        .unwrap_or("")
}

fn short(test: &str) -> &str {
    test.split_once("::").map_or(test, |(_, name)| name)
}

/// What every section of the page reads: the run, its mutants, the suite and
/// the words of the page's language.
struct Page<'a> {
    report: &'a Report,
    mutants: &'a [Mutant],
    lang: Lang,
    w: Words,
    worksheet: Worksheet,
    tests: Vec<SuiteTest>,
    flaky: BTreeSet<&'a str>,
    /// Every step that has a test or a mutant, in order.
    steps: Vec<u32>,
}

impl Page<'_> {
    fn step_title(&self, n: u32) -> String {
        self.worksheet
            .step(n)
            .map(|s| format!("{} {}", s.slug, s.title.get(self.lang)))
            .unwrap_or_default()
    }

    /// The mutant as it was loaded (titles and explanations in both languages).
    fn info(&self, m: &MutantReport) -> Option<&Mutant> {
        self.mutants.iter().find(|x| x.id == m.id)
    }

    fn title_of(&self, m: &MutantReport) -> String {
        self.info(m)
            .map_or(m.title.clone(), |x| x.titles.get(self.lang).to_string())
    }

    /// Whether `t` passed under every mutant of a run whose baseline passed.
    fn kills_nothing(&self, t: &SuiteTest) -> bool {
        self.report.baseline.passed
            && self
                .report
                .mutants
                .iter()
                .all(|m| m.tests.get(&t.name).is_none_or(TestOutcome::passed))
    }
}

/// The page for `report`. `mutants` are the ones it was run with (for their
/// titles and explanations in both languages).
pub fn render(report: &Report, mutants: &[Mutant], lang: Lang) -> String {
    let tests: Vec<SuiteTest> = suite::tests();
    let mut steps: Vec<u32> = tests
        .iter()
        .map(|t| t.step)
        .chain(report.mutants.iter().map(|m| m.step))
        .collect();
    steps.sort_unstable();
    steps.dedup();
    let page = Page {
        report,
        mutants,
        lang,
        w: words(lang),
        worksheet: Worksheet::builtin(),
        tests,
        flaky: report.baseline.flaky.iter().map(String::as_str).collect(),
        steps,
    };
    let mut out = String::with_capacity(1 << 20);
    head(&page, &mut out);
    summary(&page, &mut out);
    filters(&page, &mut out);
    matrix::write(&page, &mut out);
    mutants::write_idle(&page, &mut out);
    mutants::write_details(&page, &mut out);
    cells(&page, &mut out);
    out
}

/// From the doctype to `<body>`: the title, the style sheet and one rule
/// per step and filter, so that a filter is one class on `<body>`, not a walk
/// over thousands of cells.
fn head(page: &Page, out: &mut String) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <title>{} ({})</title>\n<style>\n{STYLE}",
        page.lang.code(),
        escape(page.w.title),
        escape(&page.report.implementation)
    );
    for s in &page.steps {
        let _ = writeln!(
            out,
            "body.hide-ms-{s} [data-ms=\"{s}\"], body.hide-ts-{s} [data-ts=\"{s}\"] {{ display: none; }}"
        );
    }
    out.push_str("</style>\n</head>\n<body>\n");
}

/// The top of the page: what was run, the verdict's cards, and the
/// warnings (a baseline that failed, flaky tests).
fn summary(page: &Page, out: &mut String) {
    let (w, report) = (&page.w, page.report);
    let s = &report.summary;
    let verdict_class = if s.not_as_declared == 0 && report.baseline.passed {
        "good"
    } else {
        "bad"
    };
    let _ = write!(
        out,
        "<header class=\"top\">\n<h1>{}</h1>\n<p class=\"meta\">{}: <code>{}</code> · {}: <code>{}</code> · {} {} · {} {}</p>\n",
        escape(w.title),
        w.implementation,
        escape(&report.implementation),
        w.mutants,
        escape(&report.mutants_dir),
        report.mutants.len(),
        w.mutants,
        page.tests.len(),
        w.tests
    );
    let _ = write!(
        out,
        "<div class=\"summary\" id=\"summary\">\n<span class=\"card {verdict_class}\"><b>{}</b> / {} {}</span>\n",
        s.as_declared, s.mutants, w.as_declared
    );
    if s.not_as_declared > 0 {
        let _ = writeln!(
            out,
            "<span class=\"card bad\"><b>{}</b> {}</span>",
            s.not_as_declared, w.not_as_declared
        );
    }
    for (outcome, n) in &s.outcomes {
        let named = super::words::outcome_named(page.lang, outcome);
        let _ = writeln!(out, "<span class=\"card o-{outcome}\">{n} {named}</span>");
    }
    out.push_str("</div>\n");
    if !report.baseline.passed {
        let _ = writeln!(
            out,
            "<p class=\"warning\">{}</p>",
            escape(w.baseline_failed)
        );
        if let Some(errors) = &report.baseline.compile_errors {
            let _ = writeln!(out, "<pre class=\"message\">{}</pre>", escape(errors));
        }
    }
    if !page.flaky.is_empty() {
        let list: Vec<String> = page
            .flaky
            .iter()
            .map(|t| format!("<code>{}</code>", escape(t)))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"warning\">{}: {}</p>",
            w.flaky,
            list.join(", ")
        );
    }
}

/// The step filters, the "only problems" switch, the search box and the
/// theme button; the header ends here and `<main>` begins.
fn filters(page: &Page, out: &mut String) {
    let w = &page.w;
    out.push_str("<nav class=\"filters\" id=\"filters\">\n");
    for (label, kind) in [(w.mutant_steps, "ms"), (w.test_steps, "ts")] {
        let _ = write!(out, "<fieldset><legend>{label}</legend>");
        for st in &page.steps {
            let _ = write!(
                out,
                "<label title=\"{}\"><input type=\"checkbox\" data-filter=\"{kind}\" value=\"{st}\" checked> {st}</label>",
                escape(&page.step_title(*st))
            );
        }
        out.push_str("</fieldset>\n");
    }
    let _ = write!(
        out,
        "<label><input type=\"checkbox\" id=\"only-problems\"> {}</label>\n\
         <input type=\"search\" id=\"search\" placeholder=\"{}\" aria-label=\"{}\">\n\
         <button type=\"button\" id=\"theme\">{}</button>\n</nav>\n</header>\n<main>\n",
        w.only_problems,
        escape(w.search),
        escape(w.search),
        w.theme
    );
}

/// The messages behind the cells, once each, for the click panel, and the
/// page's script.
fn cells(page: &Page, out: &mut String) {
    out.push_str("<script type=\"application/json\" id=\"cells\">");
    let mut cells = serde_json::Map::new();
    for (mi, m) in page.report.mutants.iter().enumerate() {
        for (test, outcome) in &m.tests {
            if let Some(message) = outcome.message() {
                cells.insert(format!("{mi} {test}"), serde_json::Value::String(message));
            }
        }
    }
    let ids: Vec<&str> = page.report.mutants.iter().map(|m| m.id.as_str()).collect();
    let data = serde_json::json!({"mutants": ids, "messages": cells});
    // `</` cannot end the script element early once written as `<\/`.
    out.push_str(&data.to_string().replace("</", "<\\/"));
    out.push_str("</script>\n<script>\n");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{1b}[31mb\n"), "a\u{fffd}[31mb\n");
    }

    /// A step's title wraps in the narrow first column (a 480-pixel window
    /// cut "step 1 · init_db Create the lease table" to "step 1 · init_db C…").
    #[test]
    fn a_steps_title_wraps_where_a_tests_name_is_cut() {
        let rule = |selector: &str| {
            let at = STYLE.find(&format!("{selector} {{")).expect(selector);
            STYLE[at..].split_once('}').unwrap().0.to_string()
        };
        let step = rule(".matrix tr.step-row th.test");
        assert!(step.contains("white-space: normal") && step.contains("overflow: visible"));
        assert!(rule(".matrix th.test").contains("text-overflow: ellipsis"));
    }
}
