//! The worksheet's exercise: before running, predict which observation (a
//! return value, an error, or the stored state) exposes each broken fragment,
//! and which test will see it. `fencelab predict` writes the blank form;
//! `fencelab verify --predictions FILE` fills in what actually happened and
//! scores the predictions.
//!
//! By default the form holds the worksheet's fragments, one per step (the
//! mutants marked `worksheet = true`, shown exactly as the worksheet shows
//! them); `--all` or mutant names give other mutants. Whatever it holds, the
//! form shows no line of the reference that the worksheet has not shown by
//! that mutant's step: a mutant's code is its broken lines, with the
//! reference's lines around them left out (`...`), so that the form never
//! gives away a step the learner has not written yet.

pub(crate) mod cli;

use std::collections::BTreeSet;

use crate::error::Error;
use crate::lab::edition::Edition;
use crate::lab::mutant::Mutant;
use crate::lab::worksheet::{Lang, Worksheet};

pub use crate::lab::observation::ObservationKind;
pub(crate) use crate::lab::predictions::did_you_mean;
pub use crate::lab::predictions::{Prediction, load};

/// Which mutants a form holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The worksheet's fragments, one per step (the default).
    Worksheet,
    /// Every mutant that a test can expose (equivalent ones have no answer).
    All,
    /// These mutants, by id, in the order of the mutants directory.
    Named(Vec<String>),
}

/// The mutants of `all` that `selection` picks; `dir` names the mutants'
/// directory in messages.
pub fn select(all: &[Mutant], selection: &Selection, dir: &str) -> Result<Vec<Mutant>, Error> {
    let exposable = |m: &&Mutant| m.equivalent.is_none();
    match selection {
        Selection::Worksheet => {
            let chosen: Vec<Mutant> = all
                .iter()
                .filter(|m| m.worksheet)
                .filter(exposable)
                .cloned()
                .collect();
            if chosen.is_empty() {
                return Err(Error::input(format!(
                    "no mutant in {dir} is a fragment of the worksheet (`worksheet = true`)"
                ))
                .with_next(
                    "give `--all` for every mutant, or name the mutants: `fencelab predict ID...`",
                ));
            }
            Ok(chosen)
        }
        Selection::All => Ok(all.iter().filter(exposable).cloned().collect()),
        Selection::Named(names) => {
            let ids: BTreeSet<String> = all.iter().map(|m| m.id.clone()).collect();
            for name in names {
                match all.iter().find(|m| &m.id == name) {
                    None => {
                        return Err(Error::input(format!(
                            "there is no mutant `{name}` in {dir}{}",
                            did_you_mean(name, &ids)
                        ))
                        .with_next("`fencelab verify --list` lists every mutant's id"));
                    }
                    Some(m) if m.equivalent.is_some() => {
                        return Err(Error::input(format!(
                            "`{name}` is an equivalent mutant: no test can expose it, so there is nothing to predict"
                        ))
                        .with_next("name a mutant that a test kills (`fencelab verify --list`)"));
                    }
                    Some(_) => {}
                }
            }
            Ok(all
                .iter()
                .filter(|m| names.contains(&m.id))
                .cloned()
                .collect())
        }
    }
}

/// The blank predictions form holding `form` (picked from `all` by
/// `selection`), for a lab of `edition`, with comments in `lang`. Each
/// mutant shows its broken code only (in the Python edition the Python
/// worksheet's fragment), less the reference's lines the worksheet has not
/// shown by its step; the commands it names are the edition's.
pub(crate) fn template_of(
    form: &[Mutant],
    all: &[Mutant],
    selection: &Selection,
    edition: Edition,
    lang: Lang,
) -> String {
    let shown = Shown::of(all, edition, lang);
    let n = form.len();
    let mut out = match (lang, selection) {
        (Lang::Ja, Selection::Worksheet) => format!(
            "# fencelab の予想シート：ワークシートの誤った断片 {n} 個（ステップごとに 1 つ）。\n"
        ),
        (Lang::Ja, _) => format!("# fencelab の予想シート：ミュータント {n} 個。\n"),
        (Lang::En, Selection::Worksheet) => {
            format!("# fencelab predictions: the worksheet's {n} broken fragments, one per step.\n")
        }
        (Lang::En, _) => format!("# fencelab predictions: {n} mutants.\n"),
    };
    out.push_str(match lang {
        Lang::Ja => {
            "# テストを実行する前に、誤った断片ごとに、違いが現れる観測\n\
             # （\"return value\" 戻り値、\"error\" エラー、\"state\" 保存された状態）と、\n\
             # それを捕まえるテストを予想して書き込みます。テストは、失敗するものを\n\
             # すべて書きます。1 つ当たるごとに得点が上がり、失敗しないテストを書くと\n\
             # 得点が下がります（適合率と再現率で採点します）。テストの名前は\n"
        }
        Lang::En => {
            "# Before you run the tests, predict for each broken fragment the\n\
             # observation that exposes it (\"return value\", \"error\" or \"state\", the\n\
             # stored state) and the tests that will catch it. Name all the tests that\n\
             # will fail under it: each one right raises the score, each one that does\n\
             # not fail lowers it (precision and recall). The tests' names are listed by\n"
        }
    });
    let (list, verify) = match edition {
        Edition::Rust => (
            "cargo test --test behaviour -- --list",
            "fencelab verify --predictions",
        ),
        Edition::Python => (
            "fencelab check --list",
            "fencelab verify --python --predictions",
        ),
    };
    out.push_str(&match lang {
        Lang::Ja => format!(
            "#   {list}\n# で一覧できます。書き終えたら\n#   {verify} このファイル\n\
             # を実行して、実際の結果と比べます。\n"
        ),
        Lang::En => format!(
            "#   {list}\n# When you are done, run\n#   {verify} THIS-FILE\n\
             # and compare with what happened.\n"
        ),
    });
    if *selection == Selection::Worksheet {
        out.push_str(match lang {
            Lang::Ja => "# ほかのミュータントもすべて予想するには fencelab predict --all。\n",
            Lang::En => "# Every other mutant too: fencelab predict --all.\n",
        });
    }
    let tests = match lang {
        Lang::Ja => "失敗するテストをすべて",
        Lang::En => "every test that fails under it",
    };
    for m in form {
        out.push_str(&format!("\n[[prediction]]\nmutant = {:?}\n", m.id));
        let step = match lang {
            Lang::Ja => format!("# ステップ {}：", m.step),
            Lang::En => format!("# step {}: ", m.step),
        };
        out.push_str(&format!("{step}{}\n", m.titles.get(lang)));
        for line in shown.code(m) {
            out.push_str(format!("#     {line}").trim_end());
            out.push('\n');
        }
        out.push_str(&format!(
            "observation = \"\"   # \"return value\" | \"error\" | \"state\"\ntests = []         # {tests}\n"
        ));
    }
    out
}

/// What the worksheet has shown by each step, to keep the form from showing
/// more of the reference.
pub(crate) struct Shown {
    edition: Edition,
    /// The worksheet as rendered, cut after each step (index 0: step 1).
    through: Vec<String>,
    /// The reference's lines that say something (trimmed, with a letter or
    /// digit: a lone `}` gives nothing away).
    reference: BTreeSet<String>,
}

impl Shown {
    /// The worksheet of `edition` with the fragments of `all`, in `lang`.
    pub(crate) fn of(all: &[Mutant], edition: Edition, lang: Lang) -> Shown {
        let worksheet = Worksheet::of(edition);
        let text = crate::output::worksheet::render_edition(&worksheet, all, edition, lang, false);
        let through = (1..=worksheet.steps.len() as u32)
            .map(|step| {
                let next = format!("\n### {}. ", step + 1);
                text.find(&next)
                    .map_or(text.clone(), |at| text[..at].to_string())
            })
            .collect();
        let reference = match edition {
            Edition::Rust => crate::lab::reference::REFERENCE,
            Edition::Python => crate::lab::python::REFERENCE,
        };
        let reference = reference
            .lines()
            .map(str::trim)
            .filter(|l| telling(l))
            .map(str::to_string)
            .collect();
        Shown {
            edition,
            through,
            reference,
        }
    }

    /// Whether `line` is a line of the reference that the worksheet has not
    /// shown by `step`.
    pub(crate) fn hidden(&self, line: &str, step: u32) -> bool {
        let line = line.trim();
        let through = step
            .checked_sub(1)
            .and_then(|i| self.through.get(i as usize))
            .or(self.through.last());
        self.reference.contains(line) && !through.is_some_and(|t| t.contains(line))
    }

    /// `m`'s broken code as the form shows it: as the worksheet shows it, less
    /// the reference's lines the worksheet has not shown by `m`'s step (each
    /// run of them one `...`).
    pub(crate) fn code(&self, m: &Mutant) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut elided = false;
        for line in crate::output::worksheet::fragment(m, self.edition).lines() {
            if self.hidden(line, m.step) {
                if !elided {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    out.push(format!("{indent}..."));
                }
                elided = true;
            } else {
                out.push(line.to_string());
                elided = false;
            }
        }
        out
    }
}

/// Whether a line of code says anything (holds a letter or a digit).
fn telling(line: &str) -> bool {
    line.chars().any(|c| c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> Vec<Mutant> {
        crate::lab::mutant::builtin()
    }

    fn form(selection: &Selection, lang: Lang) -> (Vec<Mutant>, String) {
        let all = builtin();
        let chosen = select(&all, selection, "mutants").unwrap();
        let text = template_of(&chosen, &all, selection, Edition::Rust, lang);
        (chosen, text)
    }

    /// The `[[prediction]]` blocks of a form, with the step each is about.
    fn entries(form: &str) -> Vec<(u32, &str)> {
        form.split("\n[[prediction]]\n")
            .skip(1)
            .map(|block| {
                let step = block
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("# step ")
                            .or_else(|| l.strip_prefix("# ステップ "))
                    })
                    .and_then(|l| l.split([':', '：']).next())
                    .and_then(|n| n.parse().ok())
                    .expect("each entry names its step");
                (step, block)
            })
            .collect()
    }

    #[test]
    fn the_default_form_holds_the_worksheets_fragments_as_it_shows_them() {
        let all = builtin();
        let fragments: Vec<&Mutant> = all.iter().filter(|m| m.worksheet).collect();
        assert_eq!(fragments.len(), 8);
        for lang in Lang::ALL {
            let (chosen, text) = form(&Selection::Worksheet, lang);
            assert_eq!(
                chosen.iter().map(|m| &m.id).collect::<Vec<_>>(),
                fragments.iter().map(|m| &m.id).collect::<Vec<_>>()
            );
            let worksheet = crate::output::worksheet::render(&Worksheet::builtin(), lang);
            let blocks = entries(&text);
            assert_eq!(blocks.len(), 8, "{lang:?}");
            for ((step, block), m) in blocks.iter().zip(&fragments) {
                assert_eq!(*step, m.step);
                // The code block is the worksheet's, line for line.
                let code: Vec<&str> = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("#     "))
                    .collect();
                let shown = format!("```rust\n{}\n```", code.join("\n"));
                assert!(worksheet.contains(&shown), "{}:\n{shown}", m.id);
            }
        }
    }

    #[test]
    fn no_form_shows_a_reference_line_before_the_worksheet_does() {
        let reference: BTreeSet<&str> = crate::lab::reference::REFERENCE
            .lines()
            .map(str::trim)
            .filter(|l| l.chars().any(char::is_alphanumeric))
            .collect();
        let all = builtin();
        for lang in Lang::ALL {
            let worksheet = crate::output::worksheet::render(&Worksheet::builtin(), lang);
            let through = |step: u32| match worksheet.find(&format!("\n### {}. ", step + 1)) {
                Some(at) => &worksheet[..at],
                None => &worksheet[..],
            };
            let every: Vec<String> = all.iter().map(|m| m.id.clone()).collect();
            for selection in [
                Selection::Worksheet,
                Selection::All,
                Selection::Named(every),
            ] {
                let (_, text) = form(&selection, lang);
                for (step, block) in entries(&text) {
                    for line in block.lines().filter_map(|l| l.strip_prefix("#     ")) {
                        let line = line.trim();
                        assert!(
                            !reference.contains(line) || through(step).contains(line),
                            "{selection:?} {lang:?}: step {step} shows the reference's `{line}`, which the worksheet has not shown by then:\n{block}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_form_leaves_out_the_reference_around_a_mutants_broken_lines() {
        let all = builtin();
        let (_, text) = form(&Selection::All, Lang::En);
        let block = entries(&text)
            .into_iter()
            .find(|(_, b)| b.contains("\"init_db-defaults-only-in-enqueue\""))
            .unwrap()
            .1;
        assert!(
            block
                .lines()
                .any(|l| l.trim_end().ends_with(" until REAL NOT NULL,")),
            "{block}"
        );
        assert!(block.contains("#     ..."), "{block}");
        assert!(!block.contains("pub fn enqueue"), "{block}");
        assert_eq!(entries(&text).len(), all.len());
    }

    #[test]
    fn the_template_reads_back_as_empty_predictions() {
        let all = builtin();
        for lang in Lang::ALL {
            for selection in [Selection::Worksheet, Selection::All] {
                let (chosen, text) = form(&selection, lang);
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("p.toml");
                std::fs::write(&path, text).unwrap();
                let predictions = load(&path, &all, &crate::lab::suite::test_names()).unwrap();
                assert_eq!(predictions.len(), chosen.len());
                assert!(
                    predictions
                        .iter()
                        .all(|p| p.observation.is_none() && p.tests.is_empty())
                );
            }
        }
    }

    #[test]
    fn the_form_shows_only_the_broken_code_and_asks_for_every_killer() {
        for lang in Lang::ALL {
            let (chosen, text) = form(&Selection::Worksheet, lang);
            let block = text
                .split("[[prediction]]")
                .find(|b| b.contains("\"claim-expiry-inclusive\""))
                .unwrap();
            assert!(block.contains("#     if done || until >= now {"), "{block}");
            assert!(!block.contains("until > now"), "no correct line: {block}");
            let asked = match lang {
                Lang::Ja => "失敗するテストをすべて",
                Lang::En => "every test that fails under it",
            };
            assert_eq!(text.matches(asked).count(), chosen.len(), "{lang:?}");
        }
    }

    #[test]
    fn mutants_are_picked_by_name_and_an_unknown_one_gets_a_suggestion() {
        let all = builtin();
        let picked = select(
            &all,
            &Selection::Named(vec![
                "renew-revives-at-expiry".into(),
                "claim-expiry-inclusive".into(),
            ]),
            "mutants",
        )
        .unwrap();
        let ids: Vec<&str> = picked.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["claim-expiry-inclusive", "renew-revives-at-expiry"]);
        let err = select(
            &all,
            &Selection::Named(vec!["claim-expiry-inclusiv".into()]),
            "mutants",
        )
        .unwrap_err();
        assert!(
            err.message
                .contains("no mutant `claim-expiry-inclusiv` in mutants (did you mean `claim-expiry-inclusive`?)"),
            "{}",
            err.message
        );
        assert!(err.next.is_some());
    }

    #[test]
    fn a_directory_without_worksheet_fragments_or_an_equivalent_name_is_refused() {
        let none: Vec<Mutant> = builtin().into_iter().filter(|m| !m.worksheet).collect();
        let err = select(&none, &Selection::Worksheet, "my-mutants").unwrap_err();
        assert!(
            err.message
                .contains("no mutant in my-mutants is a fragment of the worksheet"),
            "{}",
            err.message
        );
        assert!(err.next.as_deref().unwrap().contains("--all"));
        let mut all = builtin();
        all[0].equivalent = Some("no call tells them apart".into());
        let id = all[0].id.clone();
        let err = select(&all, &Selection::Named(vec![id.clone()]), "mutants").unwrap_err();
        assert!(
            err.message.contains("is an equivalent mutant"),
            "{}",
            err.message
        );
        let every = select(&all, &Selection::All, "mutants").unwrap();
        assert!(
            every.iter().all(|m| m.id != id),
            "nothing to predict for it"
        );
    }

    fn load_text(text: &str) -> Result<Vec<Prediction>, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, text).unwrap();
        load(&path, &builtin(), &crate::lab::suite::test_names())
    }

    #[test]
    fn a_wrong_observation_names_its_line() {
        let err = load_text(
            "[[prediction]]\nmutant = \"claim-expiry-inclusive\"\nobservation = \"exception\"\n",
        )
        .unwrap_err();
        assert!(
            err.message
                .contains("p.toml:3:15: observation = \"exception\""),
            "{}",
            err.message
        );
    }

    #[test]
    fn an_unknown_test_or_mutant_names_its_line_and_the_nearest_name() {
        let err = load_text(
            "[[prediction]]\nmutant = \"claim-expiry-inclusive\"\ntests = [\"step4::reclaims_at_exact_expiry\",\n  \"step4::reclaim_at_exact_expiry\"]\n",
        )
        .unwrap_err();
        assert!(
            err.message.contains(
                "p.toml:4:3: `step4::reclaim_at_exact_expiry` is not a test of the suite (did you mean `step4::reclaims_at_exact_expiry`?)"
            ),
            "{}",
            err.message
        );
        assert!(err.next.as_deref().unwrap().contains("--list"));
        // Without its step, the test is found by the rest of its name.
        let err = load_text(
            "[[prediction]]\nmutant = \"claim-expiry-inclusive\"\ntests = [\"reclaims_at_exact_expiry\"]\n",
        )
        .unwrap_err();
        assert!(
            err.message
                .contains("(did you mean `step4::reclaims_at_exact_expiry`?)"),
            "{}",
            err.message
        );
        let err = load_text("[[prediction]]\nmutant = \"claim-expiry-inclusiv\"\n").unwrap_err();
        assert!(
            err.message.contains(
                "p.toml:2:10: there is no mutant `claim-expiry-inclusiv` (did you mean `claim-expiry-inclusive`?)"
            ),
            "{}",
            err.message
        );
        let err = load_text("[[prediction]]\nmutant = \"nothing-like-any\"\n").unwrap_err();
        assert!(!err.message.contains("did you mean"), "{}", err.message);
    }

    #[test]
    fn a_mutant_predicted_twice_is_refused() {
        let err = load_text(
            "[[prediction]]\nmutant = \"claim-expiry-inclusive\"\n\n[[prediction]]\nmutant = \"claim-expiry-inclusive\"\n",
        )
        .unwrap_err();
        assert!(
            err.message.contains(
                "p.toml:5:10: `claim-expiry-inclusive` is predicted twice (first on line 2)"
            ),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_python_form_quotes_the_python_worksheet_and_names_python_commands() {
        let all = crate::lab::python::mutants();
        for lang in Lang::ALL {
            let chosen = select(&all, &Selection::Worksheet, "mutants-python").unwrap();
            assert_eq!(chosen.len(), 8);
            let text = template_of(&chosen, &all, &Selection::Worksheet, Edition::Python, lang);
            let worksheet = crate::output::worksheet::render_python(lang);
            for (step, block) in entries(&text) {
                let code: Vec<&str> = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("#     "))
                    .collect();
                // In the worksheet's fence for it (sql for a piece of SQL).
                let shown = format!("\n{}\n```", code.join("\n"));
                assert!(
                    worksheet.contains(&format!("```python{shown}"))
                        || worksheet.contains(&format!("```sql{shown}")),
                    "step {step}:\n{shown}"
                );
            }
            assert!(text.contains("#   fencelab check --list\n"), "{text}");
            assert!(
                text.contains("#   fencelab verify --python --predictions "),
                "{text}"
            );
            assert!(!text.contains("cargo"), "{text}");
            // Every mutant's form shows no line of the Python reference
            // before the Python worksheet does.
            let every = template_of(&all, &all, &Selection::All, Edition::Python, lang);
            assert!(
                !every.contains("BUSY_TIMEOUT = 10.0"),
                "a hidden line shown"
            );
        }
    }
}
