//! The sections below the matrix: the tests that kill nothing, and one
//! `<details>` per mutant with its explanation, diff, detail, the declared
//! killers that did not fail and the tests that killed it. A mutant not as
//! declared is open, with the command that reruns it.

use std::fmt::Write as _;

use super::{Page, escape, first_line};
use crate::commands::verify::MutantReport;
use crate::lab::suite::SuiteTest;

/// `<section id="idle">`: the tests that passed under every mutant.
pub(super) fn write_idle(page: &Page, out: &mut String) {
    let w = &page.w;
    let idle: Vec<&SuiteTest> = page
        .tests
        .iter()
        .filter(|t| !page.report.mutants.is_empty() && page.kills_nothing(t))
        .collect();
    let _ = write!(
        out,
        "<section id=\"idle\">\n<h2>{} ({})</h2>\n",
        w.idle,
        idle.len()
    );
    if idle.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", w.idle_none);
    } else {
        let _ = write!(out, "<p>{}</p>\n<ul class=\"idle-list\">\n", w.idle_note);
        for t in &idle {
            let _ = writeln!(
                out,
                "<li data-ts=\"{}\"><code>{}</code></li>",
                t.step,
                escape(&t.name)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// `<section id="mutants">`: each mutant in full.
pub(super) fn write_details(page: &Page, out: &mut String) {
    let _ = write!(
        out,
        "<section id=\"mutants\">\n<h2>{}</h2>\n",
        page.w.details
    );
    for m in &page.report.mutants {
        mutant(page, m, out);
    }
    out.push_str("</section>\n</main>\n");
}

fn mutant(page: &Page, m: &MutantReport, out: &mut String) {
    let w = &page.w;
    let open = if m.as_declared { "" } else { " open" };
    let _ = write!(
        out,
        "<details class=\"mutant o-{}\" id=\"m-{}\" data-ms=\"{}\" data-ok=\"{}\"{open}>\n<summary><span class=\"badge o-{}\">{}</span> {} <code>{}</code> {} <span class=\"dim\">{} {} · {}</span></summary>\n",
        m.outcome.label(),
        escape(&m.id),
        m.step,
        m.as_declared,
        m.outcome.label(),
        super::super::words::outcome(m.outcome, page.lang),
        if m.as_declared { "✓" } else { "✗" },
        escape(&m.id),
        escape(&page.title_of(m)),
        w.step,
        m.step,
        escape(&m.path)
    );
    if let Some(x) = page.info(m) {
        let _ = write!(
            out,
            "<h3>{}</h3>\n<div class=\"explanation\">{}</div>\n",
            w.explanation,
            paragraphs(x.explanation.get(page.lang))
        );
    }
    if !m.diff.is_empty() {
        let _ = write!(out, "<h3>{}</h3>\n<pre class=\"diff\">", w.diff);
        for line in m.diff.lines() {
            let class = match line.chars().next() {
                Some('+') if !line.starts_with("+++") => "add",
                Some('-') if !line.starts_with("---") => "del",
                Some('@') => "hunk",
                _ => "ctx",
            };
            let _ = writeln!(out, "<span class=\"{class}\">{}</span>", escape(line));
        }
        out.push_str("</pre>\n");
    }
    if let Some(detail) = &m.detail {
        let _ = write!(
            out,
            "<h3>{}</h3>\n<pre class=\"message\">{}</pre>\n",
            w.detail,
            escape(detail)
        );
    }
    for (label, list, class) in [
        (w.missing, &m.missing_killers, "bad"),
        (w.failed_survivors, &m.failed_survivors, "bad"),
    ] {
        if !list.is_empty() {
            let items: Vec<String> = list
                .iter()
                .map(|t| format!("<code>{}</code>", escape(t)))
                .collect();
            let _ = writeln!(
                out,
                "<p class=\"{class}\">{label}: {}</p>",
                items.join(", ")
            );
        }
    }
    if !m.killed_by.is_empty() {
        let _ = write!(
            out,
            "<h3>{} ({})</h3>\n<ul class=\"kills\">\n",
            w.killed_by,
            m.killed_by.len()
        );
        for k in &m.killed_by {
            let _ = writeln!(
                out,
                "<li><details><summary><code>{}</code> <span class=\"badge k-{}\">{}</span> {}</summary><pre class=\"message\">{}</pre></details></li>",
                escape(&k.test),
                k.outcome.replace(' ', "-"),
                super::super::words::test_outcome(k.outcome, page.lang),
                escape(first_line(&k.message)),
                escape(&k.message)
            );
        }
        out.push_str("</ul>\n");
    }
    if !m.as_declared {
        let _ = writeln!(
            out,
            "<p>{}: <code>fencelab verify --exact {}</code></p>",
            w.rerun,
            escape(&m.id)
        );
    }
    out.push_str("</details>\n");
}

/// Text of paragraphs separated by blank lines, escaped, with `code` kept.
fn paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(|p| {
            let mut html = String::new();
            for (i, part) in escape(p.trim()).split('`').enumerate() {
                if i % 2 == 1 {
                    let _ = write!(html, "<code>{part}</code>");
                } else {
                    html.push_str(part);
                }
            }
            format!("<p>{html}</p>")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backticks_become_code_in_explanations() {
        assert_eq!(
            paragraphs("use `until > now`.\n\nnext <p>"),
            "<p>use <code>until &gt; now</code>.</p>\n<p>next &lt;p&gt;</p>"
        );
    }
}
