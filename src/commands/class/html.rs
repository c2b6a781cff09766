//! The class report as one offline HTML page: no script, no font, no URL
//! outside it, so it opens from a file and in an LMS upload alike.

use std::fmt::Write as _;

use super::ClassReport;
use crate::lab::lang::Lang;
use crate::output::markup::{Markup, escape};

/// How many members of a group are listed before the others fold.
const FOLD: usize = 10;

/// Keeps the groups whose row holds the filter's text (a page of 2,000
/// submissions is read by searching it).
const SCRIPT: &str = "function filterGroups(q){q=q.toLowerCase();for(const r of document.querySelectorAll('tr.group,tr.invalid-group')){r.hidden=q!==''&&!r.textContent.toLowerCase().includes(q);}}";

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:24px;max-width:60em;color:#1b1f24}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f6f8fa}code{font-size:13px;overflow-wrap:anywhere}.n{text-align:right}\
h2{margin-top:1.6em}.dim{color:#57606a}td p{margin:0 0 4px}.clause{font-size:13px}\
th{white-space:nowrap}input[type=search]{width:28em}td.ex code{white-space:nowrap}";

fn e(text: &str) -> String {
    escape(text, Markup::Html)
}

/// A clause as the freedoms' file writes it: each `code` span as code
/// (an odd backtick leaves the text as it is).
fn ticked(text: &str) -> String {
    let spans: Vec<&str> = text.split('`').collect();
    if spans.len().is_multiple_of(2) {
        return e(text);
    }
    (spans.iter().enumerate())
        .map(|(i, span)| match i % 2 {
            1 => format!("<code>{}</code>", e(span)),
            _ => e(span),
        })
        .collect()
}

/// The page, in `lang`.
pub(crate) fn page(r: &ClassReport, lang: Lang) -> String {
    let ja = lang == Lang::Ja;
    let t = |en: &'static str, j: &'static str| if ja { j } else { en };
    let mut out = String::new();
    let title = t("fencelab class report", "fencelab クラスの報告");
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
        if ja { "ja" } else { "en" }
    );
    let _ = writeln!(
        out,
        "<p>{}: {} · {}: {} · {}: {}</p>",
        t("kind", "種類"),
        match r.kind {
            "tests" => t("learners' tests", "学習者のテスト"),
            _ => t("implementations", "実装"),
        },
        t("submissions", "提出"),
        r.submissions,
        t("graded", "採点できたもの"),
        r.graded
    );
    let _ = writeln!(
        out,
        "<h2>{}</h2>\n<table><tr><th>{}</th><th></th><th class=\"n\">{}</th></tr>",
        match r.kind {
            "tests" => t(
                "Steps whose every mutant the suite catches",
                "すべてのミュータントを捕まえたステップ"
            ),
            _ => t("Steps passed whole", "全テストを通ったステップ"),
        },
        t("step", "ステップ"),
        t("submissions", "提出")
    );
    for st in &r.steps {
        let _ = writeln!(
            out,
            "<tr><td class=\"n\">{}</td><td><code>{}</code></td><td class=\"n\">{}/{}</td></tr>",
            st.step, st.slug, st.passed_whole, r.graded
        );
    }
    out.push_str("</table>\n");
    if !r.groups.is_empty() {
        let _ = writeln!(
            out,
            "<h2>{}</h2>\n<p class=\"dim\">{}</p>\n<p><input type=\"search\" placeholder=\"{}\" oninput=\"filterGroups(this.value)\"></p>\n<table class=\"groups\"><tr><th class=\"n\">{}</th><th>{}</th><th>{}</th><th>{}</th></tr>",
            t(
                "Submissions grouped by the tests they fail",
                "失敗するテストごとの提出"
            ),
            t(
                "Groups no mutant explains come first: they are the bugs the mutant bank lacks.",
                "どのミュータントでも説明できないグループを先に示します。ミュータントにないバグです。"
            ),
            t(
                "filter: a test, a mutant, a name",
                "絞り込み: テスト、ミュータント、名前"
            ),
            t("size", "件数"),
            t("tests failed", "失敗したテスト"),
            t("fails like", "同じ失敗のミュータント"),
            t("members", "提出")
        );

        for g in &r.groups {
            let fails: Vec<String> = g
                .fails
                .iter()
                .map(|f| format!("<code>{}</code>", e(f)))
                .collect();
            let like: Vec<String> = g
                .matches
                .iter()
                .map(|m| {
                    format!(
                        "<code>{}</code> ({} {}{}): {}",
                        e(&m.mutant),
                        t("step", "ステップ"),
                        m.step,
                        if m.exact {
                            t(", exactly", "、完全一致")
                        } else {
                            ""
                        },
                        e(m.title.get(lang))
                    )
                })
                .collect();
            // A long list folds behind its first few: the counts come first.
            let named: Vec<String> = g.members.iter().map(|m| e(m)).collect();
            let mut members = match named.len() {
                n if n > FOLD => vec![format!(
                    "{}, <details><summary>{}</summary>{}</details>",
                    named[..FOLD].join(", "),
                    n - FOLD,
                    named[FOLD..].join(", ")
                )],
                _ => vec![named.join(", ")],
            };
            if let Some(r) = &g.representative {
                members.push(format!(
                    "<details><summary>{}</summary><pre>{}</pre><p>{}</p><pre>{}</pre></details>",
                    t("its change", "変更点"),
                    e(&r.diff),
                    t(
                        "A mutant file to start from (review it):",
                        "ミュータントのファイルの下書き（見直してから使う）:"
                    ),
                    e(&r.mutant)
                ));
            }
            let _ = writeln!(
                out,
                "<tr class=\"group\"><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                g.size,
                fails.join("<br>"),
                if like.is_empty() {
                    "—".to_string()
                } else {
                    like.join("<br>")
                },
                members.join(" ")
            );
        }
        out.push_str("</table>\n");
    }
    if !r.invalid.is_empty() {
        let _ = writeln!(
            out,
            "<h2>{}</h2>\n<p class=\"dim\">{}</p>\n<p><input type=\"search\" placeholder=\"{}\" oninput=\"filterGroups(this.value)\"></p>\n<table class=\"invalid\"><tr><th class=\"n\">{}</th><th class=\"n\">{}</th><th>{}</th><th>{}</th><th>{}</th></tr>",
            t(
                "Invalid tests, by what they assume or contradict",
                "妥当でないテスト（前提にした自由、食い違った観察ごと）"
            ),
            t(
                "Tests that fail on a correct implementation, grouped by the implementations they fail on, or by what they expected of the reference.",
                "正しい実装で失敗するテストを、失敗する実装の組、または参照実装に期待した値ごとにまとめています。"
            ),
            t(
                "filter: a freedom, a test, a name",
                "絞り込み: 自由、テスト、名前"
            ),
            t("tests", "テスト"),
            t("suites", "人数"),
            t(
                "what they assume or contradict",
                "前提にした自由、食い違った観察"
            ),
            t("fail on", "失敗する正しい実装"),
            t("for example", "例")
        );
        for g in &r.invalid {
            let what = invalid_what(g, lang);
            let fails_on: Vec<String> = (g.fails_on.iter())
                .map(|f| format!("<code>{}</code>", e(f)))
                .collect();
            let examples: Vec<String> = (g.examples.iter())
                .map(|x| format!("<code>{}</code>", e(x)))
                .collect();
            let _ = writeln!(
                out,
                "<tr class=\"invalid-group\" data-by=\"{}\"><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"ex\">{}</td></tr>",
                g.by,
                g.tests,
                g.suites,
                what,
                if fails_on.is_empty() {
                    "—".to_string()
                } else {
                    fails_on.join("<br>")
                },
                examples.join("<br>")
            );
        }
        out.push_str("</table>\n");
    }
    if !r.mutants.is_empty() {
        let _ = writeln!(
            out,
            "<h2>{}</h2>\n<table class=\"mutants\"><tr><th class=\"n\">{}</th><th>{}</th><th class=\"n\">{}</th></tr>",
            t(
                "Mutants, by how many valid suites catch them",
                "妥当なテストが捕まえたミュータント"
            ),
            t("step", "ステップ"),
            t("mutant", "ミュータント"),
            t("caught by", "捕まえた人数")
        );
        for (i, m) in r.mutants.iter().enumerate() {
            // The least caught first; the others fold, so that the page's
            // misconceptions stay in view.
            if i == FOLD && r.mutants.len() > FOLD {
                let _ = writeln!(
                    out,
                    "</table>\n<details><summary>{}</summary>\n<table class=\"mutants\">",
                    match ja {
                        true => format!("ほか {} 件のミュータント", r.mutants.len() - FOLD),
                        false => format!("{} more mutants", r.mutants.len() - FOLD),
                    }
                );
            }
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td><code>{}</code><br><span class=\"dim\">{}</span></td><td class=\"n\">{}/{}</td></tr>",
                m.step,
                e(&m.mutant),
                e(m.title.get(lang)),
                m.caught_by,
                m.valid_suites
            );
        }
        out.push_str("</table>\n");
        if r.mutants.len() > FOLD {
            out.push_str("</details>\n");
        }
    }
    let _ = writeln!(out, "<script>{SCRIPT}</script>");
    out.push_str("</body>\n</html>\n");
    out
}

/// A group of invalid tests: the freedoms they assume, each with its
/// clause folded, or the observation they contradict.
fn invalid_what(g: &super::InvalidGroup, lang: Lang) -> String {
    let ja = lang == Lang::Ja;
    let t = |en: &'static str, j: &'static str| if ja { j } else { en };
    let mut parts = Vec::new();
    for f in &g.freedoms {
        parts.push(format!(
            "<p class=\"freedom\"><b>{} <code>{}</code></b><br>{}</p><details><summary>{}</summary><p class=\"clause\">{}</p></details>",
            t("assume", "前提:"),
            e(&f.freedom),
            ticked(f.assumed.get(lang)),
            t("the contract's clause", "契約の条文"),
            ticked(&f.contract)
        ));
    }
    if let Some(o) = &g.observation {
        let observed = match o.what == super::render::PLAIN_ASSERT_EQ {
            true => String::new(),
            false => format!(
                "{} <code>{}</code><br>",
                t("observed:", "観察:"),
                e(&o.what)
            ),
        };
        parts.push(format!(
            "<p class=\"observation\"><b>{}</b><br>{observed}{} <code>{}</code><br>{} <code>{}</code></p>",
            t(
                "contradict the contract (fail on the reference)",
                "契約と食い違う（参照実装で失敗する）"
            ),
            t("expected:", "期待した値:"),
            e(&o.expected),
            t("the reference gave:", "参照実装の答え:"),
            e(&o.actual)
        ));
    }
    if !g.misconceptions.is_empty() {
        let named: Vec<String> = (g.misconceptions.iter())
            .map(|m| format!("<code>{}</code>", e(m)))
            .collect();
        parts.push(format!(
            "<p class=\"dim\">{} {}</p>",
            t("as if it were the mutant", "次のミュータントのつもり:"),
            named.join(", ")
        ));
    }
    if parts.is_empty() {
        parts.push(e(&g.reason));
    }
    parts.join("")
}
