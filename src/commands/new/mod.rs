//! The learner's starter kit, `fencelab new DIR`: a crate with the contract's
//! API and nothing behind it (every function `todo!()`), the behavioural suite
//! (the project's own, bound to the learner's crate), the worksheet in the
//! chosen language, the mutants' format (`mutants/README.md`) for the
//! learner's own mutants, and a README with the commands a learner needs.
//!
//! The API is cut out of `src/lease.rs` itself, so the starter's types are
//! exactly the reference's and cannot drift from them; the reference's
//! function bodies and private helpers are left out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::commands::{default_lang, parse_lang};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::layout::{MINE, MINE_DIR, MINE_HELPERS};
use crate::lab::reference::{REFERENCE, items};
use crate::lab::suite;
use crate::lab::worksheet::{Lang, Worksheet};
use crate::output::printer::{Printer, Verb};

mod name;
pub(crate) mod python;
pub(crate) use name::{check_name, crate_name};

/// The learner's `src/lib.rs`: the reference's public types and impls, and each
/// public function with the worksheet's contract as its doc comment and
/// `todo!()` as its body.
pub(crate) fn learner_lib(worksheet: &Worksheet, lang: Lang) -> String {
    let mut out = String::new();
    let lab = &worksheet.lab;
    let _ = writeln!(out, "//! {}\n//!", lab.title.get(lang));
    for line in lab.summary.get(lang).lines() {
        let _ = writeln!(out, "//! {line}");
    }
    let note = match lang {
        Lang::Ja => {
            "各関数の `todo!()` を、契約どおりの実装に置き換えてください。`fencelab check` が進み具合を示します。"
        }
        Lang::En => {
            "Replace each function's `todo!()` with an implementation of its contract. `fencelab check` shows how far you are."
        }
    };
    let _ = writeln!(out, "//!\n//! {note}\n");
    let _ = writeln!(
        out,
        "// Parameters stay unused until their function is written.\n#![allow(unused_variables)]\n"
    );
    for item in items(REFERENCE) {
        if item.text.starts_with("use ") {
            // Only what the API itself needs; the learner adds the rest.
            if item.text.contains("fmt") || item.text.contains("Path") {
                let _ = write!(out, "{}", item.text);
            }
            continue;
        }
        if let Some((signature, _)) = item.split_body() {
            if !signature.starts_with("pub fn") {
                continue;
            }
            let name = item.function_name().unwrap_or_default();
            if let Some(step) = worksheet.step_by_slug(name) {
                let _ = writeln!(out);
                let _ = writeln!(out, "/// {}", step.title.get(lang));
                let _ = writeln!(out, "///");
                for line in step.contract.get(lang).lines() {
                    let _ = writeln!(out, "/// {line}").map(|_| ());
                }
            }
            let _ = writeln!(out, "{signature} {{\n    todo!()\n}}");
            continue;
        }
        if item.text.starts_with("pub ") || item.text.starts_with("impl ") {
            let _ = write!(out, "\n{}{}", item.head, item.text);
        }
    }
    out.lines()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// What kind of lab crate to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The API to implement, fencelab's suite, and a place for the learner's
    /// own tests.
    Full,
    /// Tests first: the API and the learner's own tests, without fencelab's
    /// suite, so that the tests the learner writes are their own
    /// (`fencelab check --mine` judges them).
    TestsFirst,
    /// The Python edition: a `lease.py` to implement (`new/python.rs`).
    Python,
}

/// Every file of a learner's crate named `name`, as (path, contents).
pub fn files(name: &str, worksheet: &Worksheet, lang: Lang) -> Vec<(PathBuf, String)> {
    files_for(name, worksheet, lang, Mode::Full)
}

/// Every file of a learner's crate of `mode`, as (path, contents).
pub(crate) fn files_for(
    name: &str,
    worksheet: &Worksheet,
    lang: Lang,
    mode: Mode,
) -> Vec<(PathBuf, String)> {
    if mode == Mode::Python {
        return python::files(name, lang);
    }
    let ident = name.replace('-', "_");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nrusqlite = {{ version = \"0.43.0\", features = [\"bundled\"] }}\n\n\
         [dev-dependencies]\ntempfile = \"3.27.0\"\n\n\
         # Read by `fencelab check`.\n[package.metadata.fencelab]\nlang = \"{}\"\n",
        lang.code()
    );
    let mut files = vec![
        (PathBuf::from("Cargo.toml"), manifest),
        (PathBuf::from(".gitignore"), "/target\n".to_string()),
        (PathBuf::from("src/lib.rs"), learner_lib(worksheet, lang)),
        (
            PathBuf::from("WORKSHEET.md"),
            crate::output::worksheet::render(worksheet, lang),
        ),
        (PathBuf::from("README.md"), readme(name, lang, mode)),
        (PathBuf::from(MINE), mine(&ident, lang)),
        (
            PathBuf::from(MINE_DIR).join("helpers.rs"),
            MINE_HELPERS.to_string(),
        ),
        (
            PathBuf::from("mutants/README.md"),
            include_str!("../../../mutants/README.md").to_string(),
        ),
    ];
    if mode == Mode::Full {
        files.push((
            PathBuf::from("tests/behaviour.rs"),
            suite::root_with(&format!("use {ident} as lease;")),
        ));
        for (path, contents) in suite::MODULES {
            files.push((PathBuf::from("tests").join(path), contents.to_string()));
        }
    }
    files
}

/// The learner's own tests file: the binding line fencelab replaces, and one
/// example test.
fn mine(ident: &str, lang: Lang) -> String {
    let header = match lang {
        Lang::Ja => {
            "//! 自分で書くテストです。`fencelab check --mine` が判定します。\n\
             //! どの正しい実装でも通るテストが「妥当」で、壊れた実装（ミュータント）を\n\
             //! 多く捕まえるほど「網羅的」です。契約が決めていないこと（エラーの文面、\n\
             //! claim_many で勝つ owner など）を確かめるテストは妥当になりません。\n\
             //!\n\
             //! 次の `use ... as lease;` の行は残してください。fencelab はこの行を\n\
             //! 置き換えて、ほかの実装に対してテストを走らせます。"
        }
        Lang::En => {
            "//! Your own tests of the contract. `fencelab check --mine` judges them:\n\
             //! a test is valid when it passes on every correct implementation, and your\n\
             //! tests are thorough when they catch the broken ones (mutants). A test that\n\
             //! checks what the contract leaves open (an error's text, which owner wins\n\
             //! claim_many, ...) is not valid.\n\
             //!\n\
             //! Keep the `use ... as lease;` line: fencelab replaces it to run your tests\n\
             //! against other implementations."
        }
    };
    let example = match lang {
        Lang::Ja => "// 例: 新しい仕事は1回だけ登録され、2回目は false になる。",
        Lang::En => "// An example: a new job is enqueued once; the second time answers false.",
    };
    format!(
        "{header}\n\nuse {ident} as lease;\n\nmod helpers;\n#[allow(unused_imports)]\n\
         use helpers::{{Stored, fresh_db, stored}};\n\n\
         {example}\n#[test]\nfn a_new_job_is_enqueued_once() {{\n    let db = fresh_db();\n    \
         lease::init_db(&db).unwrap();\n    assert!(lease::enqueue(&db, \"job-1\").unwrap());\n    \
         assert!(!lease::enqueue(&db, \"job-1\").unwrap());\n    \
         assert_eq!(stored(&db, \"job-1\").map(|row| row.fence), Some(0));\n}}\n"
    )
}

fn readme(name: &str, lang: Lang, mode: Mode) -> String {
    let mine = match lang {
        Lang::Ja => {
            "\n## 自分のテスト\n\n`tests/mine/main.rs` に自分のテストを書き、`fencelab check --mine` で判定します。\n\
             どの正しい実装でも通るテストが妥当で、壊れた実装（ミュータント）をどれだけ捕まえるかが\n\
             網羅度です。妥当でないテストには、失敗した正しい実装と、前提にしてしまったことが示されます。\n"
        }
        Lang::En => {
            "\n## Your own tests\n\nWrite your own tests in `tests/mine/main.rs` and judge them with `fencelab check --mine`.\n\
             A test is valid when it passes on every correct implementation; how many broken\n\
             implementations (mutants) your valid tests catch is their thoroughness. For a test\n\
             that is not valid you see the correct implementation it failed on and what it assumed.\n"
        }
    };
    let body = match (lang, mode) {
        (Lang::Ja, Mode::Full) => format!(
            "# {name}\n\nリースとフェンシングトークンのラボです。課題は `WORKSHEET.md` にあります。\n\n\
             `src/lib.rs` の `todo!()` を、ステップ 1 から順に実装します。\n\n\
             ```sh\nfencelab check          # ステップごとの進み具合と、最初に失敗しているステップの説明\n\
             cargo test              # 振る舞いのテストをすべて実行\n```\n\n\
             1つのステップだけを見るには `fencelab check --step 4`、テストだけなら \
             `cargo test --test behaviour step4::` です。\n\n\
             ## 予想する\n\n\
             各ステップの誤った断片について、テストを実行する前に、どの観測（戻り値、エラー、保存された状態）が\
             それを暴くかと、どのテストが捕まえるかを予想します。\n\n\
             ```sh\nfencelab predict -o predictions.toml               # 予想シートを書き出す\n\
             fencelab verify --predictions predictions.toml      # 実際の結果と比べて採点する\n```\n\n\
             ## 自分のミュータント\n\n\
             自分の実装をわざと壊すミュータントを書き、テストが捕まえるかを確かめます。形式は `mutants/README.md` にあります。\n\n\
             ```sh\nfencelab verify --impl src/lib.rs --mutants my-mutants/\n```\n"
        ),
        (Lang::En, Mode::Full) => format!(
            "# {name}\n\nA lab about leases and fencing tokens. The worksheet is `WORKSHEET.md`.\n\n\
             Implement the `todo!()`s in `src/lib.rs`, step 1 first.\n\n\
             ```sh\nfencelab check          # progress per step, and what the first failing step needs\n\
             cargo test              # every behavioural test\n```\n\n\
             For one step only: `fencelab check --step 4`, or just its tests with \
             `cargo test --test behaviour step4::`.\n\n\
             ## Predict\n\n\
             Before you run a step's tests, predict for each broken fragment which observation (a return \
             value, an error or the stored state) exposes it, and which tests catch it.\n\n\
             ```sh\nfencelab predict -o predictions.toml               # write the form\n\
             fencelab verify --predictions predictions.toml      # score it against what happens\n```\n\n\
             ## Your own mutants\n\n\
             Break your own implementation on purpose and check that your tests catch it; the format is in \
             `mutants/README.md`.\n\n\
             ```sh\nfencelab verify --impl src/lib.rs --mutants my-mutants/\n```\n"
        ),
        (Lang::Ja, Mode::TestsFirst) => format!(
            "# {name}\n\nリースとフェンシングトークンのラボ（テストから書く版）です。課題は `WORKSHEET.md` にあります。\n\n\
             まず `tests/mine/main.rs` に、各ステップの契約を確かめるテストを書きます。fencelab のテストは\n\
             入っていません。テストはあなた自身のものです。\n\n\
             ```sh\nfencelab check --mine   # テストを正しい実装と壊れた実装に対して判定\n```\n\n\
             実装（`src/lib.rs` の `todo!()`）は、そのあとで書きます。\n"
        ),
        (Lang::En, Mode::TestsFirst) => format!(
            "# {name}\n\nA lab about leases and fencing tokens, tests first. The worksheet is `WORKSHEET.md`.\n\n\
             Start with `tests/mine/main.rs`: tests that check each step's contract. fencelab's own tests are\n\
             not included: the tests here are yours.\n\n\
             ```sh\nfencelab check --mine   # your tests, judged against correct and broken implementations\n```\n\n\
             The implementation (the `todo!()`s of `src/lib.rs`) comes after.\n"
        ),
        (_, Mode::Python) => unreachable!("a Python lab's README is new/python.rs's"),
    };
    body + mine
}

/// Creates the learner's crate in `dir`, which must not exist or be empty.
/// Nothing is written when `dir` holds anything.
pub fn create(dir: &Path, worksheet: &Worksheet, lang: Lang) -> Result<String, Error> {
    create_for(dir, worksheet, lang, Mode::Full)
}

/// Creates a learner's crate of `mode` in `dir` (see `create`).
pub(crate) fn create_for(
    dir: &Path,
    worksheet: &Worksheet,
    lang: Lang,
    mode: Mode,
) -> Result<String, Error> {
    if let Ok(mut entries) = std::fs::read_dir(dir)
        && entries.next().is_some()
    {
        return Err(Error::input(format!(
            "{} exists and is not empty; nothing was written",
            dir.display()
        ))
        .with_next("give a new directory, e.g. `fencelab new my-lease-lab`"));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(
            Error::input(format!("{} exists and is not a directory", dir.display()))
                .with_next("give a new directory, e.g. `fencelab new my-lease-lab`"),
        );
    }
    let name = if mode == Mode::Python {
        // No crate: the lab is named as its directory.
        dir.file_name()
            .map_or_else(|| crate_name(dir), |n| n.to_string_lossy().into_owned())
    } else {
        let name = crate_name(dir);
        check_name(&name, dir)?;
        name
    };
    for (path, contents) in files_for(&name, worksheet, lang, mode) {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        std::fs::write(&path, contents).map_err(|e| Error::io("write", &path, e))?;
    }
    Ok(name)
}

/// `fencelab new`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct NewArgs {
    /// The directory to create (it must not exist, or be empty).
    pub dir: PathBuf,
    /// The language of the worksheet and the doc comments: ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// Tests first: leave fencelab's suite out, so that the tests in the crate
    /// are your own (`fencelab check --mine` judges them).
    #[arg(long)]
    pub tests_first: bool,
    /// The Python edition: a lease.py to implement (Python 3.10 or newer),
    /// as the original worksheet is written, instead of a Rust crate.
    #[arg(long, conflicts_with = "tests_first")]
    pub python: bool,
}

pub(crate) fn main(args: NewArgs, printer: &mut Printer) -> Result<ExitCode, Error> {
    let lang = args.lang.unwrap_or_else(default_lang);
    printer.lang = lang;
    let mode = if args.python {
        Mode::Python
    } else if args.tests_first {
        Mode::TestsFirst
    } else {
        Mode::Full
    };
    let name = create_for(&args.dir, &Worksheet::builtin(), lang, mode)?;
    let created = match (lang, mode) {
        (Lang::Ja, Mode::Python) => format!("Python 版のラボ `{name}`（{}）", args.dir.display()),
        (Lang::En, Mode::Python) => format!("the Python lab `{name}` in {}", args.dir.display()),
        (Lang::Ja, _) => format!("ラボのクレート `{name}`（{}）", args.dir.display()),
        (Lang::En, _) => format!("the lab crate `{name}` in {}", args.dir.display()),
    };
    printer.status(Verb::Created, &created);
    let next = next_steps(&args.dir.display().to_string(), lang, mode);
    let width = crate::output::width::terminal_width();
    printer.line(crate::output::width::wrap(&next, width).trim_end());
    if mode == Mode::Python
        && let Err(err) = crate::engine::python::interpreter_in(lang)
    {
        // The lab is written; what it needs to run is said once, now.
        printer.warning(&err.to_string());
    }
    Ok(ExitCode::Success)
}

/// What `new` says to do next in the lab it made at `dir`.
pub(crate) fn next_steps(dir: &str, lang: Lang, mode: Mode) -> String {
    let first = match (lang, mode) {
        (Lang::Ja, Mode::Python) => {
            "最初の `fencelab check`（この機械で1回だけ）は fencelab のテストと SQLite をコンパイルするので 1、2 分かかります。"
        }
        (Lang::En, Mode::Python) => {
            "The first `fencelab check` (once per machine) compiles fencelab's tests and SQLite, and takes a minute or two."
        }
        (Lang::Ja, _) => {
            "最初のビルド（この機械で1回だけ）は SQLite をコンパイルするので 1、2 分かかります。"
        }
        (Lang::En, _) => {
            "The first build (once per machine) compiles SQLite and takes a minute or two."
        }
    };
    // Copied into a shell: a name with a space or a `!` is quoted.
    let cd = crate::output::paths::shell_word(dir);
    match (lang, mode) {
        (Lang::Ja, Mode::Full) => format!(
            "次に:\n  cd {cd}\n  fencelab check      # ステップごとの進み具合\n  cargo test          # すべてのテスト\n  fencelab check --mine  # tests/mine/main.rs の自分のテストを判定\n課題は {dir}/WORKSHEET.md にあります。{first}"
        ),
        (Lang::En, Mode::Full) => format!(
            "Next:\n  cd {cd}\n  fencelab check      # progress per step\n  cargo test          # every test\n  fencelab check --mine  # your own tests (tests/mine/main.rs), judged\nThe worksheet is {dir}/WORKSHEET.md. {first}"
        ),
        (Lang::Ja, Mode::TestsFirst) => format!(
            "次に:\n  cd {cd}\n  tests/mine/main.rs にテストを書く\n  fencelab check --mine  # テストを判定\n課題は {dir}/WORKSHEET.md にあります。{first}"
        ),
        (Lang::En, Mode::TestsFirst) => format!(
            "Next:\n  cd {cd}\n  write your tests in tests/mine/main.rs\n  fencelab check --mine  # your tests, judged\nThe worksheet is {dir}/WORKSHEET.md. {first}"
        ),
        (Lang::Ja, Mode::Python) => format!(
            "次に:\n  cd {cd}\n  lease.py の関数をステップ 1 から実装する\n  fencelab check      # ステップごとの進み具合\n課題は {dir}/WORKSHEET.md にあります。{first}"
        ),
        (Lang::En, Mode::Python) => format!(
            "Next:\n  cd {cd}\n  implement the functions of lease.py, step 1 first\n  fencelab check      # progress per step\nThe worksheet is {dir}/WORKSHEET.md. {first}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails where the `cd` line is the bare name (`cd bad name!`).
    #[test]
    fn the_next_steps_cd_line_runs_in_a_shell() {
        for lang in [Lang::En, Lang::Ja] {
            for mode in [Mode::Full, Mode::TestsFirst, Mode::Python] {
                let next = next_steps("bad name!", lang, mode);
                assert!(next.contains("\n  cd 'bad name!'\n"), "{next}");
                assert!(next_steps("my-lab", lang, mode).contains("\n  cd my-lab\n"));
            }
        }
    }

    #[test]
    fn the_learners_lib_has_the_api_and_no_solution() {
        let lib = learner_lib(&Worksheet::builtin(), Lang::En);
        for slug in crate::lab::worksheet::SLUGS {
            assert!(lib.contains(&format!("pub fn {slug}(")), "{slug}");
        }
        assert_eq!(
            lib.matches("{\n    todo!()\n}").count(),
            8,
            "one todo per function"
        );
        assert!(lib.contains("pub struct Job {"));
        assert!(lib.contains("pub enum LeaseError {"));
        assert!(lib.contains("impl From<rusqlite::Error> for LeaseError"));
        for private in [
            "fn open(",
            "fn check_ttl(",
            "BUSY_TIMEOUT",
            "BEGIN IMMEDIATE\" ",
            "INSERT OR IGNORE",
        ] {
            assert!(!lib.contains(private), "the starter gives away {private}");
        }
    }

    #[test]
    fn names_cargo_would_refuse_are_refused_with_one_to_use() {
        let err = create(
            &tempfile::tempdir().unwrap().path().join("test"),
            &Worksheet::builtin(),
            Lang::En,
        )
        .unwrap_err();
        assert!(err.message.contains("built-in test crate"), "{err}");
        assert!(
            err.next.as_deref().unwrap_or("").contains("test-lab"),
            "{err}"
        );
        for bad in ["std", "fn", "self", "com1", "build", "core"] {
            assert!(check_name(bad, Path::new(bad)).is_err(), "{bad}");
        }
        for good in ["my_lab", "lab_2", "testing", "lease_lab_2026"] {
            assert!(check_name(good, Path::new(good)).is_ok(), "{good}");
        }
    }

    #[test]
    fn crate_names_are_valid_identifiers() {
        assert_eq!(crate_name(Path::new("/tmp/My Lab")), "my_lab");
        assert_eq!(crate_name(Path::new("lab-2")), "lab_2");
        assert_eq!(crate_name(Path::new("2026")), "lease_lab_2026");
    }
}
