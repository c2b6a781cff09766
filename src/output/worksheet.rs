//! The worksheet as Markdown: what `fencelab worksheet` prints and `fencelab
//! new` writes to WORKSHEET.md, and what the predictions form quotes (its
//! fragments, never more of the reference than the worksheet shows).

use std::fmt::Write as _;

use crate::lab::edition::Edition;
use crate::lab::mutant::{self, Mutant};
use crate::lab::worksheet::{Lang, Worksheet};

struct Labels {
    contract: &'static str,
    rationale: &'static str,
    fragment: &'static str,
    question: &'static str,
    steps: &'static str,
    in_the_field: &'static str,
    next: &'static str,
    answer: &'static str,
    /// What follows a label: a full stop in English, a colon in Japanese.
    after: &'static str,
}

fn labels(lang: Lang) -> Labels {
    match lang {
        Lang::Ja => Labels {
            contract: "契約",
            rationale: "判断の根拠",
            fragment: "レビューする誤った変更の断片",
            question: "実行する前に",
            steps: "ステップ",
            in_the_field: "現場では",
            next: "この先",
            answer: "参照実装との差分（講師用）",
            after: "：",
        },
        Lang::En => Labels {
            contract: "Contract",
            rationale: "Why",
            fragment: "The broken fragment to review",
            question: "Before you run the tests",
            steps: "Steps",
            in_the_field: "In the field",
            next: "Next",
            answer: "Against the reference (for instructors)",
            after: ".",
        },
    }
}

/// The worksheet in `lang`, with the fragments of the built-in mutants.
pub fn render(worksheet: &Worksheet, lang: Lang) -> String {
    render_with(worksheet, &mutant::builtin(), lang, false)
}

/// The worksheet in `lang`, with each step's fragment taken from `mutants`
/// (and, with `answers`, each fragment's diff against the reference).
pub(crate) fn render_with(
    worksheet: &Worksheet,
    mutants: &[Mutant],
    lang: Lang,
    answers: bool,
) -> String {
    render_edition(worksheet, mutants, Edition::Rust, lang, answers)
}

/// The worksheet of the Python edition in `lang` (`Worksheet::python`), with
/// the Python mutants' fragments.
pub fn render_python(lang: Lang) -> String {
    render_edition(
        &Worksheet::python(),
        &crate::lab::python::mutants(),
        Edition::Python,
        lang,
        false,
    )
}

/// A step's broken fragment as the worksheet shows it: in the Rust edition
/// the whole lines of the reference it touches ([`Mutant::broken_code`]); in
/// the Python edition the fragment alone, as the original worksheet prints
/// it (`row[0] >= now`), less its indentation.
pub(crate) fn fragment(m: &Mutant, edition: Edition) -> String {
    match edition {
        Edition::Rust => m.broken_code(crate::lab::reference::REFERENCE),
        Edition::Python => crate::lab::mutant::dedent(m.replace.trim_matches('\n')),
    }
}

/// The worksheet of `edition` in `lang`, with each step's fragment taken
/// from `mutants` (and, with `answers`, each fragment's diff against the
/// edition's reference).
pub(crate) fn render_edition(
    worksheet: &Worksheet,
    mutants: &[Mutant],
    edition: Edition,
    lang: Lang,
    answers: bool,
) -> String {
    let (reference, fence) = match edition {
        Edition::Rust => (crate::lab::reference::REFERENCE, "rust"),
        Edition::Python => (crate::lab::python::REFERENCE, "python"),
    };
    let l = labels(lang);
    let lab = &worksheet.lab;
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", lab.title.get(lang));
    for section in [&lab.summary, &lab.why, &lab.how, &lab.exercise] {
        let _ = writeln!(out, "{}\n", section.get(lang));
    }
    let _ = writeln!(out, "## {}\n", l.steps);
    for step in &worksheet.steps {
        let _ = writeln!(out, "### {}. {}\n", step.number, step.title.get(lang));
        let _ = writeln!(
            out,
            "**{}{}** {}\n",
            l.contract,
            l.after,
            step.contract.get(lang)
        );
        let _ = writeln!(
            out,
            "**{}{}** {}\n",
            l.rationale,
            l.after,
            step.rationale.get(lang)
        );
        if let Some(m) = mutants
            .iter()
            .find(|m| m.step == step.number && m.worksheet)
        {
            let _ = writeln!(
                out,
                "**{}** (`{}`: {})\n",
                l.fragment,
                m.id,
                m.titles.get(lang)
            );
            let shown = fragment(m, edition);
            // A Python fragment inside an SQL string is SQL, not Python.
            let sql = ["CREATE ", "INSERT ", "UPDATE ", "SELECT ", "DELETE "];
            let fence = match sql.iter().any(|k| shown.trim_start().starts_with(k)) {
                true => "sql",
                false => fence,
            };
            let _ = writeln!(out, "```{fence}\n{shown}\n```\n");
            if answers && let Ok(broken) = m.apply(reference) {
                let diff = super::diff::patch(reference, &broken, "reference", &m.id);
                let _ = writeln!(out, "**{}**\n\n```diff\n{}```\n", l.answer, diff);
            }
        }
        let _ = writeln!(
            out,
            "**{}{}** {}\n",
            l.question,
            l.after,
            step.question.get(lang)
        );
    }
    for (heading, section) in [(l.in_the_field, &lab.in_the_field), (l.next, &lab.next)] {
        let _ = writeln!(out, "## {heading}\n\n{}\n", section.get(lang));
    }
    out.trim_end().to_string() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worksheet_and_mutants_agree() {
        let worksheet = Worksheet::builtin();
        let mutants = mutant::builtin();
        for step in &worksheet.steps {
            let shown: Vec<&str> = mutants
                .iter()
                .filter(|m| m.step == step.number && m.worksheet)
                .map(|m| m.id.as_str())
                .collect();
            assert_eq!(
                shown.len(),
                1,
                "step {} shows exactly one fragment: {shown:?}",
                step.number
            );
            let all = mutants.iter().filter(|m| m.step == step.number).count();
            assert!(all >= 2, "step {} has {all} mutants", step.number);
        }
        for m in &mutants {
            assert!(
                worksheet.step(m.step).is_some(),
                "{} names step {}",
                m.id,
                m.step
            );
        }
    }

    #[test]
    fn each_fragment_the_worksheet_shows_is_its_mutants_change() {
        // The worksheet names no mutant in its own files: a step's fragment is
        // the mutant marked `worksheet = true` for that step. What it shows is
        // that mutant's change: consecutive lines of the mutated source, with
        // every line the mutant adds and none it removes.
        let reference = crate::lab::reference::REFERENCE;
        let md = render(&Worksheet::builtin(), Lang::En);
        let blocks: Vec<&str> = md
            .split("```rust\n")
            .skip(1)
            .map(|b| b.split("\n```").next().unwrap())
            .collect();
        let fragments: Vec<Mutant> = mutant::builtin()
            .into_iter()
            .filter(|m| m.worksheet)
            .collect();
        assert_eq!(blocks.len(), 8);
        assert_eq!(fragments.len(), 8);
        for (block, m) in blocks.iter().zip(&fragments) {
            let mutated = m.apply(reference).unwrap();
            let shown: Vec<&str> = block.lines().map(str::trim).collect();
            let lines: Vec<&str> = mutated.lines().map(str::trim).collect();
            assert!(
                lines.windows(shown.len()).any(|w| w == shown),
                "{}: the fragment is not a run of the mutated source:\n{block}",
                m.id
            );
            let diff = similar::TextDiff::from_lines(reference, &mutated);
            for change in diff.iter_all_changes() {
                let line = change.value().trim();
                match change.tag() {
                    similar::ChangeTag::Insert => {
                        assert!(shown.contains(&line), "{}: `{line}` not shown", m.id);
                    }
                    similar::ChangeTag::Delete => {
                        assert!(
                            !shown.contains(&line),
                            "{}: the correct `{line}` shown",
                            m.id
                        );
                    }
                    similar::ChangeTag::Equal => {}
                }
            }
        }
    }

    #[test]
    fn every_step_renders_with_its_fragment_in_both_languages() {
        let worksheet = Worksheet::builtin();
        for lang in Lang::ALL {
            let md = render(&worksheet, lang);
            assert_eq!(md.matches("\n### ").count(), 8, "{lang:?}");
            assert_eq!(md.matches("```rust").count(), 8, "{lang:?}");
            assert_eq!(md.matches("```diff").count(), 0, "no answers: {lang:?}");
            assert!(md.contains("\nif done || until >= now {\n"), "{lang:?}");
            assert!(!md.contains("if done || until > now {"), "{lang:?}");
            assert!(md.contains(&format!("\n## {}\n", labels(lang).in_the_field)));
            assert!(md.contains(&format!("\n## {}\n", labels(lang).next)));
            let answers = render_with(&worksheet, &mutant::builtin(), lang, true);
            assert_eq!(answers.matches("```diff").count(), 8, "{lang:?}");
            assert!(
                answers.contains("-    if done || until > now {"),
                "{lang:?}"
            );
        }
        assert!(render(&worksheet, Lang::Ja).contains("判断の根拠"));
        assert!(render(&worksheet, Lang::En).contains("The broken fragment to review"));
    }

    /// The original worksheet's eight broken fragments, as it prints them
    /// (its "レビューする誤った変更の断片"), step by step.
    const SEED_FRAGMENTS: [&str; 8] = [
        "CREATE TABLE jobs",
        "INSERT OR REPLACE INTO jobs",
        "if row else {}",
        "row[0] >= now",
        "AND until>=?\", (now+ttl",
        "AND done>=0 AND until>?\", (result",
        "SET owner=NULL,until=0,fence=0 WHERE",
        "return [claim(path,job_id,owners[0],now,ttl)]",
    ];

    #[test]
    fn the_python_worksheet_prints_the_original_fragments_exactly() {
        for lang in Lang::ALL {
            let md = render_python(lang);
            // Each in its language's fence: a fragment of an SQL string is SQL.
            let blocks: Vec<&str> = md
                .split("\n```")
                .filter_map(|b| {
                    b.strip_prefix("python\n")
                        .or_else(|| b.strip_prefix("sql\n"))
                })
                .filter(|b| !b.starts_with("jobs("))
                .collect();
            assert_eq!(blocks, SEED_FRAGMENTS, "{lang:?}");
            assert_eq!(
                md.matches("```sql\nCREATE TABLE jobs\n```").count(),
                1,
                "{lang:?}"
            );
            assert_eq!(md.matches("```rust").count(), 0, "{lang:?}");
            assert_eq!(md.matches("\n### ").count(), 8, "{lang:?}");
            assert!(md.contains("`ValueError`"), "{lang:?}");
        }
        let answers = render_edition(
            &Worksheet::python(),
            &crate::lab::python::mutants(),
            Edition::Python,
            Lang::En,
            true,
        );
        assert_eq!(answers.matches("```diff").count(), 8);
        assert!(answers.contains("-            if row is None or row[2] or row[0] > now:"));
    }
}
