//! `fencelab new DIR --python`: the lab's Python edition, as the original
//! worksheet is written. A `lease.py` whose every function of the contract
//! raises `NotImplementedError` (read as "not started", as `todo!()` is in
//! the Rust lab) with its step's contract, in the worksheet's Python words,
//! as its docstring; the Python worksheet; a README saying how to check; and
//! `fencelab.toml`, the lab's record of its edition and language
//! (`lab::edition`), so that `check` and `predict` need no flag there.
//!
//! The functions and their parameters are cut out of the Python reference
//! (`python/lease.py`) itself, so the skeleton cannot drift from the API the
//! suite calls; the reference's bodies and private helpers are left out.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::lab::edition::{self, Edition};
use crate::lab::worksheet::{Lang, Worksheet};
use crate::output::width::wrap;

/// How wide a docstring's prose is wrapped (plus its indentation of four).
const DOC_WIDTH: usize = 72;

/// Every file of a Python lab, as (path, contents).
pub(crate) fn files(name: &str, lang: Lang) -> Vec<(PathBuf, String)> {
    vec![
        (
            PathBuf::from(edition::FILE),
            edition::record(Edition::Python, lang),
        ),
        (PathBuf::from(".gitignore"), "__pycache__/\n".to_string()),
        (
            PathBuf::from(Edition::Python.learner_file()),
            skeleton(&Worksheet::python(), lang),
        ),
        (
            PathBuf::from("WORKSHEET.md"),
            crate::output::worksheet::render_python(lang),
        ),
        (PathBuf::from("README.md"), readme(name, lang)),
    ]
}

/// The contract's functions as the Python reference declares them
/// (`def claim(path, job_id, owner, now, ttl):`), in its order.
fn signatures(reference: &str) -> Vec<(&str, &str)> {
    reference
        .lines()
        .filter(|line| line.starts_with("def ") && !line.starts_with("def _"))
        .filter_map(|line| {
            let name = line.strip_prefix("def ")?.split('(').next()?.trim();
            Some((name, line.trim_end()))
        })
        .collect()
}

/// `text` as the lines of a docstring: wrapped, indented by four.
fn docstring_lines(text: &str) -> String {
    wrap(text, DOC_WIDTH)
        .lines()
        .map(|line| {
            if line.is_empty() {
                String::new()
            } else {
                format!("    {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The learner's `lease.py`: the lab's title and summary, then each function
/// of the contract with its step's title and contract as its docstring and
/// `raise NotImplementedError` as its body.
pub(crate) fn skeleton(worksheet: &Worksheet, lang: Lang) -> String {
    let lab = &worksheet.lab;
    let mut out = String::new();
    let note = match lang {
        Lang::Ja => {
            "各関数の `raise NotImplementedError` を、契約どおりの実装に置き換えてください。`fencelab check` が進み具合を示します。"
        }
        Lang::En => {
            "Replace each function's `raise NotImplementedError` with an implementation of its contract. `fencelab check` shows how far you are."
        }
    };
    let module_doc = format!(
        "{}\n\n{}\n\n{note}",
        lab.title.get(lang),
        lab.summary.get(lang)
    );
    let _ = writeln!(
        out,
        "\"\"\"{}\n\"\"\"\n",
        wrap(&module_doc, DOC_WIDTH + 4).trim_end()
    );
    let _ = writeln!(
        out,
        "import sqlite3\nfrom concurrent.futures import ThreadPoolExecutor\n"
    );
    let step_word = match lang {
        Lang::Ja => "ステップ",
        Lang::En => "Step",
    };
    for (name, signature) in signatures(crate::lab::python::REFERENCE) {
        let Some(step) = worksheet.step_by_slug(name) else {
            continue;
        };
        let heading = match lang {
            Lang::Ja => format!("{step_word} {}：{}", step.number, step.title.get(lang)),
            Lang::En => format!("{step_word} {}. {}.", step.number, step.title.get(lang)),
        };
        let _ = writeln!(
            out,
            "\n{signature}\n    \"\"\"{heading}\n\n{}\n    \"\"\"\n    raise NotImplementedError\n",
            docstring_lines(step.contract.get(lang))
        );
    }
    out.trim_end().to_string() + "\n"
}

/// The Python lab's README: what the lab is, and the commands a learner
/// needs.
fn readme(name: &str, lang: Lang) -> String {
    match lang {
        Lang::Ja => format!(
            "# {name}\n\nリースとフェンシングトークンのラボの Python 版です。課題は `WORKSHEET.md` にあります。\n\n\
             `lease.py` の関数を、ステップ 1 から順に実装します。どの関数も、書くまでは `NotImplementedError` を上げます。\
             Python 3.10 以上と標準ライブラリ（`sqlite3`、`concurrent.futures`）だけを使います。\n\n\
             ```sh\nfencelab check            # ステップごとの進み具合と、最初に失敗しているステップの説明\n\
             fencelab check --step 4   # 1つのステップだけ\n```\n\n\
             `fencelab check` は、fencelab のテストを `lease.py` に対して、1つずつ隔離して実行します。\
             関数がまだ `NotImplementedError` を上げるステップは「未着手」と表示されます。\
             期待した値と実際の値は Python の言葉（`None`、`True`、`{{'id': ...}}`、`ValueError`）で示されます。\n\n\
             ## 予想する\n\n\
             各ステップの誤った断片について、テストを実行する前に、どの観測（戻り値、例外、保存された状態）が\
             それを暴くかと、どのテストが捕まえるかを予想します。\n\n\
             ```sh\nfencelab predict -o predictions.toml                       # 予想シートを書き出す\n\
             fencelab verify --python --predictions predictions.toml     # 実際の結果と比べて採点する\n```\n\n\
             ## 自分のテスト\n\n\
             `lease.py` の横に `test_lease.py` を作り、`import lease` のあと `def test_...():` の関数\
             （または `unittest.TestCase` のクラス）で assert を書きます。\n\n\
             ```sh\nfencelab check --mine   # どの正しい実装でも通れば妥当、壊れた実装（ミュータント）を捕まえれば網羅的\n```\n"
        ),
        Lang::En => format!(
            "# {name}\n\nA lab about leases and fencing tokens, in Python. The worksheet is `WORKSHEET.md`.\n\n\
             Implement the functions of `lease.py`, step 1 first; each raises `NotImplementedError` until you \
             write it. Python 3.10 or newer, and the standard library only (`sqlite3`, `concurrent.futures`).\n\n\
             ```sh\nfencelab check            # progress per step, and what the first failing step needs\n\
             fencelab check --step 4   # one step only\n```\n\n\
             `fencelab check` runs fencelab's tests against your `lease.py`, each one isolated. A step whose \
             functions still raise `NotImplementedError` is \"not started\". What a test expected and what came \
             back are in Python's terms (`None`, `True`, `{{'id': ...}}`, `ValueError`).\n\n\
             ## Predict\n\n\
             Before you run a step's tests, predict for each broken fragment which observation (a return \
             value, an exception or the stored state) exposes it, and which tests catch it.\n\n\
             ```sh\nfencelab predict -o predictions.toml                       # write the form\n\
             fencelab verify --python --predictions predictions.toml     # score it against what happens\n```\n\n\
             ## Your own tests\n\n\
             Write them in `test_lease.py` beside `lease.py`: `import lease`, then `def test_...():` functions \
             with assert (or `unittest.TestCase` classes).\n\n\
             ```sh\nfencelab check --mine   # valid when they pass on every correct implementation, thorough when they catch the broken ones\n```\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skeleton_has_the_api_with_its_contract_and_no_solution() {
        for lang in Lang::ALL {
            let lease = skeleton(&Worksheet::python(), lang);
            assert!(crate::lab::python::missing_api(&lease).is_empty(), "{lang}");
            assert_eq!(
                lease.matches("\n    raise NotImplementedError\n").count(),
                8,
                "{lang}: one per function"
            );
            for (name, signature) in signatures(crate::lab::python::REFERENCE) {
                assert!(lease.contains(&format!("\n{signature}\n")), "{name}");
            }
            let claim = Worksheet::python();
            let claim = claim.step_by_slug("claim").unwrap();
            let first_words: String = claim.contract.get(lang).chars().take(30).collect();
            assert!(
                lease.contains(&first_words),
                "{lang}: the contract is the docstring"
            );
            for private in [
                "def _connect",
                "BUSY_TIMEOUT",
                "INSERT OR IGNORE",
                "BEGIN IMMEDIATE\")",
                "row[0] > now",
                "ROLLBACK",
            ] {
                assert!(!lease.contains(private), "{lang}: gives away {private}");
            }
            // A docstring is plain text to Python: no escape, no end inside it.
            let bodies: Vec<&str> = lease.split("\"\"\"").collect();
            assert_eq!(bodies.len(), 2 * 9 + 1, "{lang}: nine docstrings");
            assert!(!lease.contains('\\'), "{lang}: a backslash in a docstring");
        }
    }

    /// What a Python learner reads in a new lab, and what the command says
    /// once it has written it, in both languages.
    #[test]
    fn new_python_writes_a_lab_in_both_languages() {
        for lang in Lang::ALL {
            let files = files("my-lab", lang);
            let get = |name: &str| {
                files
                    .iter()
                    .find(|(p, _)| p == std::path::Path::new(name))
                    .map(|(_, c)| c.clone())
                    .unwrap_or_else(|| panic!("no {name}"))
            };
            insta::assert_snapshot!(format!("python_new_lease_{}", lang.code()), get("lease.py"));
            // Where the learner's own tests go, as check --mine reads them.
            let readme = get("README.md");
            let tests = crate::judging::python::LAB_TESTS;
            assert!(readme.contains(&format!("`{tests}`")) && readme.contains("check --mine"));
            insta::assert_snapshot!(format!("python_new_readme_{}", lang.code()), readme);
            insta::assert_snapshot!(
                format!("python_new_next_{}", lang.code()),
                super::super::next_steps("my-lab", lang, super::super::Mode::Python)
            );
            assert_eq!(
                get("WORKSHEET.md"),
                crate::output::worksheet::render_python(lang)
            );
        }
    }

    #[test]
    fn a_python_lab_records_its_edition_and_language() {
        let files = files("my-lab", Lang::Ja);
        let record = files
            .iter()
            .find(|(path, _)| path == &PathBuf::from(edition::FILE))
            .map(|(_, text)| text.as_str())
            .unwrap();
        assert!(record.contains("edition = \"python\"") && record.contains("lang = \"ja\""));
        let paths: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert!(!paths.contains(&"Cargo.toml".to_string()), "{paths:?}");
        assert!(paths.contains(&"lease.py".to_string()), "{paths:?}");
    }
}
