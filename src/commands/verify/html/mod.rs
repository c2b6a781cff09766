//! `verify --html FILE`: the run as one self-contained HTML page for an
//! instructor's browser. The kill matrix (tests by mutants, both grouped by
//! step, each cell what the test did to the mutant, the killing test's
//! observation on hover and, with scripts on, on click), each mutant's diff
//! and explanation, the summary, and the tests that kill nothing.
//!
//! Self-contained: the style sheet and the script are compiled in
//! (`style.css`, `script.js` beside this file) and the page loads nothing,
//! so it opens from a CI artifact offline. It stays usable at 80+ mutants
//! and 100+ tests: the matrix scrolls in its own box under sticky headers
//! (mutant ids on top, test names on the left), and steps are filtered by
//! CSS classes on the body, not by walking thousands of cells. Light and
//! dark follow the system, and a button switches them (`#dark`, `#light`
//! in the address do too). Without scripts everything is there but the
//! filters and the click panel.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::commands::verify::{MutantReport, Report};
use crate::engine::outcome::{FailureKind, TestOutcome};
use crate::lab::lang::Lang;
use crate::lab::mutant::Mutant;
use crate::lab::suite::{self, SuiteTest};
use crate::lab::worksheet::Worksheet;

const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("script.js");

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters a judge's output may hold, which HTML does not.
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The words of the page, per language.
struct Words {
    title: &'static str,
    implementation: &'static str,
    mutants: &'static str,
    as_declared: &'static str,
    not_as_declared: &'static str,
    tests: &'static str,
    matrix: &'static str,
    legend: &'static str,
    mutant_steps: &'static str,
    test_steps: &'static str,
    only_problems: &'static str,
    theme: &'static str,
    search: &'static str,
    idle: &'static str,
    idle_none: &'static str,
    idle_note: &'static str,
    details: &'static str,
    killed_by: &'static str,
    missing: &'static str,
    failed_survivors: &'static str,
    explanation: &'static str,
    diff: &'static str,
    detail: &'static str,
    baseline_failed: &'static str,
    flaky: &'static str,
    click: &'static str,
    declared: &'static str,
    step: &'static str,
    rerun: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::Ja => Words {
            title: "fencelab verify: キルマトリクス",
            implementation: "実装",
            mutants: "ミュータント",
            as_declared: "宣言どおりにキル",
            not_as_declared: "宣言どおりでない",
            tests: "テスト",
            matrix: "キルマトリクス",
            legend: "F 失敗(キル)・C クラッシュ・T タイムアウト・· 合格・– 実行なし。太枠は宣言されたキラー、赤い ! は失敗しなかった宣言キラー、橙の枠は失敗した宣言サバイバー。",
            mutant_steps: "ミュータントのステップ",
            test_steps: "テストのステップ",
            only_problems: "宣言どおりでないものだけ",
            theme: "明暗",
            search: "テスト名で絞り込む",
            idle: "何もキルしないテスト",
            idle_none: "どのテストも少なくとも1つのミュータントをキルします。",
            idle_note: "これらのテストは、どのミュータントの下でも合格しました。",
            details: "ミュータントの詳細",
            killed_by: "キルしたテスト",
            missing: "失敗しなかった宣言キラー",
            failed_survivors: "失敗した宣言サバイバー",
            explanation: "解説",
            diff: "変更",
            detail: "詳細",
            baseline_failed: "変更前の実装がスイートに合格しないため、ミュータントは実行されていません。",
            flaky: "ベースラインで不安定(キルとして数えない)",
            click: "セルをクリックすると、そのテストが観測した内容が出ます。",
            declared: "宣言",
            step: "ステップ",
            rerun: "再実行",
        },
        Lang::En => Words {
            title: "fencelab verify: kill matrix",
            implementation: "implementation",
            mutants: "mutants",
            as_declared: "killed as declared",
            not_as_declared: "not as declared",
            tests: "tests",
            matrix: "Kill matrix",
            legend: "F failed (a kill) · C crashed · T timeout · · passed · – not run. A thick border marks a declared killer, a red ! a declared killer that did not fail, an orange border a declared survivor that failed.",
            mutant_steps: "mutants of steps",
            test_steps: "tests of steps",
            only_problems: "only those not as declared",
            theme: "light/dark",
            search: "filter tests by name",
            idle: "Tests that kill nothing",
            idle_none: "Every test kills at least one mutant.",
            idle_note: "These tests passed under every mutant.",
            details: "Mutants",
            killed_by: "killed by",
            missing: "declared killers that did not fail",
            failed_survivors: "declared survivors that failed",
            explanation: "Explanation",
            diff: "Change",
            detail: "Detail",
            baseline_failed: "The unmutated implementation does not pass the suite, so no mutant was run.",
            flaky: "flaky in the baseline (not trusted for kills)",
            click: "Click a cell to see what its test observed.",
            declared: "declared",
            step: "step",
            rerun: "rerun",
        },
    }
}

/// The one-letter mark of a test's outcome under a mutant, and its class.
fn mark(outcome: Option<&TestOutcome>) -> (&'static str, &'static str) {
    match outcome {
        None => ("–", "n"),
        Some(TestOutcome::Passed) => ("·", "p"),
        Some(TestOutcome::TimedOut { .. }) => ("T", "t"),
        Some(TestOutcome::Failed {
            kind: FailureKind::Crashed,
            ..
        }) => ("C", "c"),
        Some(TestOutcome::Failed { .. }) => ("F", "f"),
    }
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

/// The page for `report`. `mutants` are the ones it was run with (for their
/// titles and explanations in both languages).
pub fn render(report: &Report, mutants: &[Mutant], lang: Lang) -> String {
    let w = words(lang);
    let worksheet = Worksheet::builtin();
    let step_title = |n: u32| {
        worksheet
            .step(n)
            .map(|s| format!("{} {}", s.slug, s.title.get(lang)))
            .unwrap_or_default()
    };
    let tests: Vec<SuiteTest> = suite::tests();
    let flaky: BTreeSet<&str> = report.baseline.flaky.iter().map(String::as_str).collect();
    let info = |m: &MutantReport| mutants.iter().find(|x| x.id == m.id);
    let title_of =
        |m: &MutantReport| info(m).map_or(m.title.clone(), |x| x.titles.get(lang).to_string());
    let mut steps: Vec<u32> = tests
        .iter()
        .map(|t| t.step)
        .chain(report.mutants.iter().map(|m| m.step))
        .collect();
    steps.sort_unstable();
    steps.dedup();

    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <title>{} ({})</title>\n<style>\n{STYLE}",
        lang.code(),
        escape(w.title),
        escape(&report.implementation)
    );
    // One rule per step and filter, so that a filter is one class on <body>.
    for s in &steps {
        let _ = writeln!(
            out,
            "body.hide-ms-{s} [data-ms=\"{s}\"], body.hide-ts-{s} [data-ts=\"{s}\"] {{ display: none; }}"
        );
    }
    out.push_str("</style>\n</head>\n<body>\n");

    // The summary.
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
        tests.len(),
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
        let _ = writeln!(out, "<span class=\"card o-{outcome}\">{n} {outcome}</span>");
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
    if !flaky.is_empty() {
        let list: Vec<String> = flaky
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

    // The filters.
    out.push_str("<nav class=\"filters\" id=\"filters\">\n");
    for (label, kind) in [(w.mutant_steps, "ms"), (w.test_steps, "ts")] {
        let _ = write!(out, "<fieldset><legend>{label}</legend>");
        for st in &steps {
            let _ = write!(
                out,
                "<label title=\"{}\"><input type=\"checkbox\" data-filter=\"{kind}\" value=\"{st}\" checked> {st}</label>",
                escape(&step_title(*st))
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

    // The kill matrix.
    let _ = write!(
        out,
        "<section id=\"matrix\">\n<h2>{}</h2>\n<p class=\"legend\">{} {}</p>\n<div class=\"matrix-wrap\">\n<table class=\"matrix\">\n<thead>\n<tr><th class=\"corner\" rowspan=\"2\">{} \\ {}</th>",
        w.matrix,
        escape(w.legend),
        escape(w.click),
        w.tests,
        w.mutants
    );
    for st in &steps {
        let n = report.mutants.iter().filter(|m| m.step == *st).count();
        if n > 0 {
            let _ = write!(
                out,
                "<th class=\"step-head\" colspan=\"{n}\" data-ms=\"{st}\" title=\"{}\">{} {st}</th>",
                escape(&step_title(*st)),
                w.step
            );
        }
    }
    out.push_str("</tr>\n<tr>");
    for m in &report.mutants {
        let problem = if m.as_declared { "" } else { " problem" };
        let _ = write!(
            out,
            "<th class=\"mut o-{}{problem}\" data-ms=\"{}\" data-ok=\"{}\" title=\"{} — {} ({})\"><a href=\"#m-{}\"><span>{}</span></a></th>",
            m.outcome.label(),
            m.step,
            m.as_declared,
            escape(&m.id),
            escape(&title_of(m)),
            m.outcome.label(),
            escape(&m.id),
            escape(&m.id)
        );
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    let width = report.mutants.len();
    for st in &steps {
        let of_step: Vec<&SuiteTest> = tests.iter().filter(|t| t.step == *st).collect();
        if of_step.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<tr class=\"step-row\" data-ts=\"{st}\"><th class=\"test\">{} {st} · {}</th><td colspan=\"{width}\"></td></tr>",
            w.step,
            escape(&step_title(*st))
        );
        for t in &of_step {
            let idle = report.baseline.passed
                && report
                    .mutants
                    .iter()
                    .all(|m| m.tests.get(&t.name).is_none_or(TestOutcome::passed));
            let _ = write!(
                out,
                "<tr data-ts=\"{st}\" data-test=\"{}\"><th class=\"test{}\" title=\"{}\">{}</th>",
                escape(&t.name),
                if idle { " idle" } else { "" },
                escape(&t.name),
                escape(short(&t.name))
            );
            for (mi, m) in report.mutants.iter().enumerate() {
                let outcome = m.tests.get(&t.name);
                let (letter, class) = mark(outcome);
                let killer = m.killers.contains(&t.name);
                let survivor = m.survivors.contains(&t.name);
                let mut classes = class.to_string();
                if killer {
                    classes.push_str(" killer");
                    if m.missing_killers.contains(&t.name) {
                        classes.push_str(" missing");
                    }
                }
                if survivor && m.failed_survivors.contains(&t.name) {
                    classes.push_str(" bad-survivor");
                }
                if flaky.contains(t.name.as_str()) {
                    classes.push_str(" flaky");
                }
                let mut hover = format!(
                    "{} × {}: {}",
                    m.id,
                    short(&t.name),
                    outcome.map_or("not run", |o| o.label())
                );
                if killer {
                    let _ = write!(hover, " ({} killer)", w.declared);
                }
                if let Some(message) = outcome.and_then(TestOutcome::message) {
                    let line = first_line(&message);
                    if !line.is_empty() {
                        let _ = write!(hover, "\n{line}");
                    }
                }
                let shown = if killer && m.missing_killers.contains(&t.name) {
                    "!"
                } else {
                    letter
                };
                let _ = write!(
                    out,
                    "<td class=\"{classes}\" data-ms=\"{}\" data-m=\"{mi}\" title=\"{}\">{shown}</td>",
                    m.step,
                    escape(&hover)
                );
            }
            out.push_str("</tr>\n");
        }
    }
    let _ = write!(
        out,
        "</tbody>\n</table>\n</div>\n<div id=\"panel\" class=\"panel\" aria-live=\"polite\" hidden></div>\n</section>\n"
    );

    // Tests that kill nothing.
    let idle: Vec<&SuiteTest> = tests
        .iter()
        .filter(|t| {
            report.baseline.passed
                && !report.mutants.is_empty()
                && report
                    .mutants
                    .iter()
                    .all(|m| m.tests.get(&t.name).is_none_or(TestOutcome::passed))
        })
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

    // Each mutant.
    let _ = write!(out, "<section id=\"mutants\">\n<h2>{}</h2>\n", w.details);
    for m in &report.mutants {
        let open = if m.as_declared { "" } else { " open" };
        let _ = write!(
            out,
            "<details class=\"mutant o-{}\" id=\"m-{}\" data-ms=\"{}\" data-ok=\"{}\"{open}>\n<summary><span class=\"badge o-{}\">{}</span> {} <code>{}</code> {} <span class=\"dim\">{} {} · {}</span></summary>\n",
            m.outcome.label(),
            escape(&m.id),
            m.step,
            m.as_declared,
            m.outcome.label(),
            m.outcome.label(),
            if m.as_declared { "✓" } else { "✗" },
            escape(&m.id),
            escape(&title_of(m)),
            w.step,
            m.step,
            escape(&m.path)
        );
        if let Some(x) = info(m) {
            let _ = write!(
                out,
                "<h3>{}</h3>\n<div class=\"explanation\">{}</div>\n",
                w.explanation,
                paragraphs(x.explanation.get(lang))
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
                    k.outcome,
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
    out.push_str("</section>\n</main>\n");

    // The messages behind the cells, once each, for the click panel.
    out.push_str("<script type=\"application/json\" id=\"cells\">");
    let mut cells = serde_json::Map::new();
    for (mi, m) in report.mutants.iter().enumerate() {
        for (test, outcome) in &m.tests {
            if let Some(message) = outcome.message() {
                cells.insert(format!("{mi} {test}"), serde_json::Value::String(message));
            }
        }
    }
    let ids: Vec<&str> = report.mutants.iter().map(|m| m.id.as_str()).collect();
    let data = serde_json::json!({"mutants": ids, "messages": cells});
    // `</` cannot end the script element early once written as `<\/`.
    out.push_str(&data.to_string().replace("</", "<\\/"));
    out.push_str("</script>\n<script>\n");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
    out
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
    fn escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{1b}[31mb\n"), "a\u{fffd}[31mb\n");
    }

    #[test]
    fn backticks_become_code_in_explanations() {
        assert_eq!(
            paragraphs("use `until > now`.\n\nnext <p>"),
            "<p>use <code>until &gt; now</code>.</p>\n<p>next &lt;p&gt;</p>"
        );
    }
}
