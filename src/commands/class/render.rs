//! The class report in a terminal, in the reader's language, fitted to its
//! width: the steps, then what no mutant explains, then what one does.

use std::fmt::Write as _;

use super::{ClassReport, EXAMPLES, Group};
use crate::lab::lang::Lang;
use crate::output::printer::Layout;
use crate::output::untrusted::one_line;
use crate::output::width::{truncate, wrap, wrap_hanging};

/// How many mutants the least caught list shows.
const LEAST_CAUGHT: usize = 10;

/// What an `assert_eq!` without a message of its own says when it fails.
pub(super) const PLAIN_ASSERT_EQ: &str = "assertion `left == right` failed";

/// How many lines of a group's clause or observation the terminal shows.
const CLAUSE_LINES: usize = 4;

struct Words {
    steps: &'static str,
    steps_caught: &'static str,
    unexplained: &'static str,
    explained: &'static str,
    least_caught: &'static str,
    invalid: &'static str,
    example: &'static str,
    representative: &'static str,
    none_fail: &'static str,
    none_graded: &'static str,
    not_graded: &'static str,
    whole: &'static str,
    fails_on: &'static str,
    contract: &'static str,
    observed: &'static str,
    expected: &'static str,
    actual: &'static str,
    as_mutant: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::En => Words {
            steps: "Steps passed whole",
            steps_caught: "Steps whose every mutant the suite catches",
            unexplained: "What no mutant explains (bugs the mutant bank lacks)",
            explained: "What a mutant explains",
            least_caught: "Mutants the class's tests catch least",
            invalid: "Invalid tests, by what they assume or contradict",
            example: "e.g.",
            representative: "    its change, and a mutant file to start from: --html, --json, --skeletons DIR",
            none_fail: "Every graded submission passes every test.",
            none_graded: "No submission could be graded.",
            not_graded: "Not graded (did not compile, or could not be graded):",
            whole: "Every test and every member of each group: --json FILE or --html FILE.",
            fails_on: "fail on:",
            contract: "contract:",
            observed: "observed:",
            expected: "expected",
            actual: ", but the reference gave",
            as_mutant: "as if it were the mutant",
        },
        Lang::Ja => Words {
            steps: "全テストを通ったステップ",
            steps_caught: "すべてのミュータントを捕まえたステップ",
            unexplained: "どのミュータントでも説明できない失敗（ミュータントにないバグ）",
            explained: "ミュータントで説明できる失敗",
            least_caught: "クラスのテストが最も捕まえていないミュータント",
            invalid: "妥当でないテスト（前提にした自由、食い違った観察ごと）",
            example: "例:",
            representative: "    変更点と、ミュータントのファイルの下書き: --html、--json、--skeletons DIR に",
            none_fail: "採点できた提出はすべてのテストを通っています。",
            none_graded: "採点できた提出がありません。",
            not_graded: "採点できなかった提出（コンパイルできない、または採点できない）:",
            whole: "各グループのすべてのテストと提出: --json FILE か --html FILE に。",
            fails_on: "失敗する正しい実装:",
            contract: "契約:",
            observed: "観察:",
            expected: "期待した値",
            actual: "、参照実装の答え",
            as_mutant: "次のミュータントのつもり:",
        },
    }
}

/// What `fencelab class` prints.
pub(crate) fn render(layout: &Layout, r: &ClassReport) -> String {
    let lang = layout.lang;
    let w = words(lang);
    let s = &layout.out;
    let width = layout.width;
    let mut out = String::new();
    let head = match (lang, r.kind) {
        (Lang::En, "tests") => format!(
            "fencelab class: the tests of {} ({}), {} graded",
            plural(r.submissions, "learner", "learners"),
            r.edition,
            r.graded
        ),
        (Lang::En, _) => format!(
            "fencelab class: {} ({}), {} graded",
            plural(r.submissions, "submission", "submissions"),
            r.edition,
            r.graded
        ),
        (Lang::Ja, "tests") => format!(
            "fencelab class: {} 人のテスト（{}）、採点できたもの {}",
            r.submissions, r.edition, r.graded
        ),
        (Lang::Ja, _) => format!(
            "fencelab class: 提出 {}（{}）、採点できたもの {}",
            r.submissions, r.edition, r.graded
        ),
    };
    let _ = writeln!(out, "{}", s.bold(&head));
    let steps = match r.kind {
        "tests" => w.steps_caught,
        _ => w.steps,
    };
    let _ = writeln!(out, "\n{}", s.bold(steps));
    for st in &r.steps {
        let _ = writeln!(
            out,
            "  {} {:<2} {:<11} {}/{}",
            if lang == Lang::Ja {
                "ステップ"
            } else {
                "step"
            },
            st.step,
            st.slug,
            st.passed_whole,
            r.graded
        );
    }
    if !r.not_graded.is_empty() {
        let names: Vec<String> = r.not_graded.iter().map(|n| one_line(n)).collect();
        let line = format!("{} {}", w.not_graded, names.join(", "));
        let _ = writeln!(out, "\n{}", wrap(&line, width));
    }
    if r.kind == "tests" {
        render_tests(&mut out, layout, r, &w);
        return out;
    }
    if r.graded == 0 {
        let _ = writeln!(out, "\n{}", w.none_graded);
        return out;
    }
    if r.groups.is_empty() {
        let _ = writeln!(out, "\n{}", w.none_fail);
        return out;
    }
    let (unexplained, explained): (Vec<&Group>, Vec<&Group>) =
        r.groups.iter().partition(|g| g.matches.is_empty());
    for (heading, groups) in [(w.unexplained, unexplained), (w.explained, explained)] {
        if groups.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}", s.bold(heading));
        for g in groups {
            let _ = writeln!(out, "{}", truncate(&group_line(g, lang), width));
            if let Some(m) = g.matches.first() {
                let title = format!("    {}", one_line(m.title.get(lang)));
                let _ = writeln!(out, "{}", s.dim(&truncate(&title, width)));
            }
            let names: Vec<String> = (g.members.iter().take(EXAMPLES))
                .map(|n| one_line(n))
                .collect();
            let more = g.members.len().saturating_sub(EXAMPLES);
            let more = match (more, lang) {
                (0, _) => String::new(),
                (n, Lang::En) => format!(" and {n} more"),
                (n, Lang::Ja) => format!(" ほか {n}"),
            };
            let line = format!("    {} {}{more}", w.example, names.join(", "));
            let _ = writeln!(out, "{}", truncate(&line, width));
            if g.representative.is_some() {
                let _ = writeln!(out, "{}", s.dim(&truncate(w.representative, width)));
            }
        }
    }
    let _ = writeln!(out, "\n{}", s.dim(&wrap(w.whole, width)));
    out
}

/// "3 submissions fail exactly like renew-revives-at-expiry (step 5)", or
/// the tests a group fails when no mutant does.
fn group_line(g: &Group, lang: Lang) -> String {
    let first = |n: usize| -> String {
        let shown: Vec<&str> = g.fails.iter().take(n).map(String::as_str).collect();
        let more = g.fails.len().saturating_sub(n);
        match (more, lang) {
            (0, _) => shown.join(", "),
            (m, Lang::En) => format!("{} (+{m} more)", shown.join(", ")),
            (m, Lang::Ja) => format!("{}（ほか {m}）", shown.join(", ")),
        }
    };
    match (g.matches.first(), lang) {
        (None, Lang::En) => format!("  {} {} {}", g.size, noun(g.size), first(2)),
        (None, Lang::Ja) => format!("  {} 件: {} が失敗", g.size, first(2)),
        (Some(m), Lang::En) => format!(
            "  {} {} {} {} (step {})",
            g.size,
            noun(g.size),
            if m.exact { "exactly like" } else { "like" },
            m.mutant,
            m.step
        ),
        (Some(m), Lang::Ja) => format!(
            "  {} 件: {}（ステップ {}）{}",
            g.size,
            m.mutant,
            m.step,
            if m.exact {
                "とまったく同じ失敗"
            } else {
                "と同じ失敗を含む"
            }
        ),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn verb(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

fn noun(n: usize) -> &'static str {
    if n == 1 {
        "submission fails"
    } else {
        "submissions fail"
    }
}

/// The learners' tests: the mutants they catch least, their invalid tests.
fn render_tests(out: &mut String, layout: &Layout, r: &ClassReport, w: &Words) {
    let (s, lang, width) = (&layout.out, layout.lang, layout.width);
    let _ = writeln!(out, "\n{}", s.bold(w.least_caught));
    for m in r.mutants.iter().take(LEAST_CAUGHT) {
        let line = format!(
            "  {} {:<2} {:<36} {}/{}",
            if lang == Lang::Ja {
                "ステップ"
            } else {
                "step"
            },
            m.step,
            m.mutant,
            m.caught_by,
            m.valid_suites
        );
        let _ = writeln!(out, "{}", truncate(&line, width));
        let title = format!("          {}", one_line(m.title.get(lang)));
        let _ = writeln!(out, "{}", s.dim(&truncate(&title, width)));
    }
    if r.invalid.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", s.bold(w.invalid));
    for g in &r.invalid {
        let freedoms: Vec<&str> = g.freedoms.iter().map(|f| f.freedom.as_str()).collect();
        let what = match (lang, g.by, freedoms.is_empty()) {
            (Lang::En, "verdicts", false) => {
                format!(
                    " {} {}",
                    verb(g.tests, "assumes", "assume"),
                    freedoms.join(", ")
                )
            }
            (Lang::Ja, "verdicts", false) => format!("が {} を前提にしている", freedoms.join("、")),
            (Lang::En, "observation", _) => match g.tests {
                1 => " contradicts the contract (fails on the reference)".into(),
                _ => " contradict the contract (fail on the reference)".into(),
            },
            (Lang::Ja, "observation", _) => "が契約と食い違う（参照実装で失敗する）".into(),
            _ => format!(": {}", one_line(&g.reason)),
        };
        let line = match lang {
            Lang::En => format!(
                "  {} in {}{what}",
                plural(g.tests, "test", "tests"),
                plural(g.suites, "suite", "suites"),
            ),
            Lang::Ja => format!("  {} 個のテスト（{} 人）{what}", g.tests, g.suites,),
        };
        let _ = writeln!(out, "{}", wrap_hanging(&line, width, "    "));
        let mut said = Vec::new();
        if !g.fails_on.is_empty() {
            said.push(format!("{} {}", w.fails_on, g.fails_on.join(", ")));
        }
        for f in &g.freedoms {
            said.push(one_line(f.assumed.get(lang)));
            if !f.contract.is_empty() {
                said.push(format!("{} {}", w.contract, one_line(&f.contract)));
            }
        }
        if let Some(o) = &g.observation {
            // An assert_eq!'s own words say nothing its values do not.
            if o.what != PLAIN_ASSERT_EQ {
                said.push(format!("{} {}", w.observed, one_line(&o.what)));
            }
            if !o.expected.is_empty() || !o.actual.is_empty() {
                said.push(format!(
                    "{} {}{} {}",
                    w.expected,
                    one_line(&o.expected),
                    w.actual,
                    one_line(&o.actual)
                ));
            }
        }
        if !g.misconceptions.is_empty() {
            said.push(format!("{} {}", w.as_mutant, g.misconceptions.join(", ")));
        }
        let examples: Vec<String> = g.examples.iter().map(|e| one_line(e)).collect();
        said.push(format!("{} {}", w.example, examples.join(", ")));
        for line in said {
            let line = wrap_hanging(&format!("    {line}"), width, "      ");
            // A clause is long: four lines of it, then the page or the JSON.
            let lines: Vec<&str> = line.lines().collect();
            for (i, l) in lines.iter().enumerate().take(CLAUSE_LINES) {
                let last = i + 1 == CLAUSE_LINES && lines.len() > CLAUSE_LINES;
                let l = if last {
                    format!("{l} …")
                } else {
                    l.to_string()
                };
                let _ = writeln!(out, "{}", s.dim(&truncate(&l, width)));
            }
        }
    }
    let _ = writeln!(out, "\n{}", s.dim(&wrap(w.whole, width)));
}
