//! Mutants: deliberate breaks of an implementation, one TOML file each, written
//! by hand (see `mutants/README.md` for the format). This module reads and checks
//! them; `apply.rs` applies one to an implementation's source.
//!
//! A mutant names the tests that must kill it and the tests it must leave
//! passing, so a mutants directory is also a claim about the suite that
//! `fencelab verify` checks.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Location, at_line};
use crate::lab::observation::ObservationKind;
use crate::lab::worksheet::Text;

pub use crate::lab::reference::DEFAULT_FILE;
pub(crate) use apply::dedent;
pub use apply::{Stale, apply};

mod apply;

/// What the mutants are called on screen when they are fencelab's own.
pub(crate) const BUILTIN_MUTANTS: &str = "fencelab's built-in mutants";

/// One mutant, checked.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// The file name without `.toml`.
    pub id: String,
    /// The worksheet step it illustrates (1..=8).
    pub step: u32,
    /// A one-line title (English; `titles` has it in both languages).
    pub title: String,
    /// The title in both languages (the same text twice when the file gives one).
    pub titles: Text,
    /// Whether this is the broken fragment the worksheet shows for its step.
    pub worksheet: bool,
    /// The kind of observation that exposes it, the answer the worksheet's
    /// predictions form asks for (optional; the worksheet's fragments give it).
    pub observation: Option<ObservationKind>,
    /// The implementation file it was written for, relative to the project.
    pub file: PathBuf,
    /// Text that occurs exactly once in the implementation, and what replaces it.
    pub find: String,
    pub replace: String,
    /// Tests that must fail under the mutant (none for an equivalent one).
    pub killers: Vec<String>,
    /// Tests that must still pass under it (the case it leaves intact).
    pub survivors: Vec<String>,
    pub explanation: Text,
    /// Why no test can tell it from the implementation, when the file says it
    /// is equivalent: it is then expected to survive.
    pub equivalent: Option<String>,
    /// The TOML file it was read from.
    pub path: PathBuf,
}

/// The keys of a mutant file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MutantFile {
    id: Option<Spanned<String>>,
    step: Spanned<u32>,
    title: Spanned<Title>,
    #[serde(default)]
    worksheet: bool,
    #[serde(default)]
    observation: Option<Spanned<String>>,
    file: Option<Spanned<String>>,
    find: Spanned<String>,
    replace: String,
    #[serde(default)]
    killers: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    survivors: Vec<Spanned<String>>,
    explanation: Spanned<Text>,
    #[serde(default)]
    equivalent: Option<Spanned<String>>,
}

/// A title as written: one line, or a line in each language (`[title]` with
/// `ja` and `en`). Mutants and wheats are titled alike.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Title {
    One(String),
    Both(Text),
}

impl Title {
    /// What a title that is not one line of text in each language is told.
    pub(crate) const PROBLEM: &str =
        "the title must be one line of text (in each language, when given as ja and en)";

    /// The title in both languages (one line given: the same in both), or
    /// `None` when either is empty or more than one line.
    pub(crate) fn text(&self) -> Option<Text> {
        let text = match self {
            Title::One(text) => Text {
                ja: text.trim().to_string(),
                en: text.trim().to_string(),
            },
            Title::Both(text) => text.clone(),
        };
        let one_line = |t: &String| !t.is_empty() && !t.contains('\n');
        (one_line(&text.ja) && one_line(&text.en)).then_some(text)
    }
}

/// The project's own mutants (`mutants/*.toml`), compiled into fencelab.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/mutants.rs"));

/// The project's own mutants, as compiled into fencelab, sorted by step and id.
pub fn builtin() -> Vec<Mutant> {
    let tests = crate::lab::suite::test_names();
    let mut mutants: Vec<Mutant> = BUILTIN
        .iter()
        .map(|(name, text)| {
            parse(&Path::new("mutants").join(name), text, &tests)
                .expect("the built-in mutants are checked by the tests")
        })
        .collect();
    mutants.sort_by(|a, b| (a.step, &a.id).cmp(&(b.step, &b.id)));
    mutants
}

/// Reads every `*.toml` file in `dir` as a mutant, sorted by step and id.
/// `tests` are the suite's test names that `killers` and `survivors` may use.
pub fn load_dir(dir: &Path, tests: &BTreeSet<String>) -> Result<Vec<Mutant>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::io("read the mutants directory", dir, e).with_next(
            "give a directory of mutant files with --mutants DIR (see mutants/README.md)",
        )
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml") && path.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(Error::input(format!("{} holds no mutant (*.toml) files", dir.display()))
            .with_next("add mutant files (see mutants/README.md for the format) or point --mutants at the right directory"));
    }
    let mut mutants = paths
        .iter()
        .map(|path| load_file(path, tests))
        .collect::<Result<Vec<_>, _>>()?;
    mutants.sort_by(|a, b| (a.step, &a.id).cmp(&(b.step, &b.id)));
    Ok(mutants)
}

/// Reads and checks one mutant file.
pub fn load_file(path: &Path, tests: &BTreeSet<String>) -> Result<Mutant, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    parse(path, &text, tests)
}

/// Parses and checks the text of a mutant file read from `path`.
pub(crate) fn parse(path: &Path, text: &str, tests: &BTreeSet<String>) -> Result<Mutant, Error> {
    let fix = "fix the mutant file at that line (the format is in mutants/README.md) and run again";
    let problem = |span: Range<usize>, message: String| {
        Error::input(at_line(path, &Location::at(text, span.start), &message)).with_next(fix)
    };
    let file: MutantFile = toml::from_str(text).map_err(|e| {
        let message = e.message().trim().to_string();
        match e.span() {
            Some(span) => problem(span, message),
            None => Error::input(format!("{}: {message}", path.display())).with_next(fix),
        }
    })?;
    let id = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(Error::input(format!(
            "{}: a mutant's id is its file name, which may hold only letters, digits, - and _",
            path.display()
        ))
        .with_next("rename the file"));
    }
    if let Some(given) = &file.id
        && given.get_ref() != &id
    {
        return Err(problem(
            given.span(),
            format!(
                "id = {:?} but the file is named {id}.toml: the file name is the id",
                given.get_ref()
            ),
        ));
    }
    let step = *file.step.get_ref();
    if !(1..=8).contains(&step) {
        return Err(problem(
            file.step.span(),
            format!("step = {step}: the worksheet's steps are 1 to 8"),
        ));
    }
    let Some(titles) = file.title.get_ref().text() else {
        return Err(problem(file.title.span(), Title::PROBLEM.to_string()));
    };
    if file.find.get_ref().is_empty() {
        return Err(problem(
            file.find.span(),
            "`find` is empty: give the exact text to replace".to_string(),
        ));
    }
    let check_names = |names: &[Spanned<String>]| -> Result<Vec<String>, Error> {
        names
            .iter()
            .map(|name| {
                if tests.contains(name.get_ref()) {
                    Ok(name.get_ref().clone())
                } else {
                    let hint = closest(name.get_ref(), tests)
                        .map(|c| format!(" (did you mean {c}?)"))
                        .unwrap_or_default();
                    Err(problem(
                        name.span(),
                        format!("{:?} is not a test of the suite{hint}", name.get_ref()),
                    ))
                }
            })
            .collect()
    };
    let killers = match &file.killers {
        Some(killers) => check_names(killers.get_ref())?,
        None => Vec::new(),
    };
    let equivalent = match &file.equivalent {
        Some(why) if why.get_ref().trim().is_empty() => {
            return Err(problem(
                why.span(),
                "`equivalent` is empty: say why no test can tell this mutant from the implementation"
                    .to_string(),
            ));
        }
        Some(why) if !killers.is_empty() => {
            return Err(problem(
                why.span(),
                "an equivalent mutant survives every test, so it has no killers: remove `killers`, or `equivalent` if a test does kill it"
                    .to_string(),
            ));
        }
        Some(why) if file.worksheet => {
            return Err(problem(
                why.span(),
                "the worksheet's fragment must be one a test catches, not an equivalent mutant"
                    .to_string(),
            ));
        }
        Some(why) => Some(why.get_ref().trim().to_string()),
        None => None,
    };
    if killers.is_empty() && equivalent.is_none() {
        let span = file.killers.as_ref().map_or(file.find.span(), |k| k.span());
        return Err(problem(
            span,
            "`killers` is empty: name at least one test that must fail under this mutant \
             (or, if no test can tell it from the implementation, say why with equivalent = \"...\")"
                .to_string(),
        ));
    }
    let survivors = check_names(&file.survivors)?;
    if let Some(both) = file
        .survivors
        .iter()
        .find(|s| killers.contains(s.get_ref()))
    {
        return Err(problem(
            both.span(),
            format!("{} is both a killer and a survivor", both.get_ref()),
        ));
    }
    let observation = match &file.observation {
        None => None,
        Some(name) => match ObservationKind::parse(name.get_ref().trim()) {
            Some(kind) if equivalent.is_none() => Some(kind),
            Some(_) => {
                return Err(problem(
                    name.span(),
                    "an equivalent mutant is exposed by no observation: remove `observation`"
                        .to_string(),
                ));
            }
            None => {
                return Err(problem(
                    name.span(),
                    format!(
                        "observation = {:?}: write \"return value\", \"error\" or \"state\"",
                        name.get_ref()
                    ),
                ));
            }
        },
    };
    let explanation = file.explanation.get_ref().clone();
    if explanation.ja.is_empty() || explanation.en.is_empty() {
        return Err(problem(
            file.explanation.span(),
            "the explanation needs both ja and en text".to_string(),
        ));
    }
    Ok(Mutant {
        id,
        step,
        title: titles.en.clone(),
        titles,
        worksheet: file.worksheet,
        observation,
        file: PathBuf::from(
            file.file
                .map_or(DEFAULT_FILE.to_string(), |f| f.into_inner()),
        ),
        find: file.find.into_inner(),
        replace: file.replace,
        killers,
        survivors,
        explanation,
        equivalent,
        path: path.to_path_buf(),
    })
}

/// The known name most like `name`, if any is close.
fn closest<'a>(name: &str, known: &'a BTreeSet<String>) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (similar::TextDiff::from_chars(name, k.as_str()).ratio(), k))
        .filter(|(ratio, _)| *ratio > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tests() -> BTreeSet<String> {
        crate::lab::suite::test_names()
    }

    const GOOD: &str = r#"
step = 4
title = "boundary"
find = "until > now"
replace = "until >= now"
killers = ["step4::reclaims_at_exact_expiry"]
survivors = ["step4::fresh_job_gets_fence_1"]

[explanation]
ja = "境界"
en = "boundary"
"#;

    fn parse_str(text: &str) -> Result<Mutant, Error> {
        parse(Path::new("mutants/x.toml"), text, &tests())
    }

    #[test]
    fn a_good_mutant_reads_back_whole() {
        let m = parse_str(GOOD).unwrap();
        assert_eq!(
            (m.id.as_str(), m.step, m.title.as_str()),
            ("x", 4, "boundary")
        );
        assert_eq!(m.file, PathBuf::from(DEFAULT_FILE));
        assert_eq!(m.killers, vec!["step4::reclaims_at_exact_expiry"]);
        assert_eq!(m.survivors, vec!["step4::fresh_job_gets_fence_1"]);
        assert!(!m.worksheet);
    }

    #[test]
    fn a_title_may_be_given_in_both_languages() {
        let both = GOOD.replace(
            "title = \"boundary\"",
            "title = { ja = \"境界\", en = \"boundary\" }",
        );
        let m = parse_str(&both).unwrap();
        assert_eq!(
            (m.title.as_str(), m.titles.ja.as_str()),
            ("boundary", "境界")
        );
        let one = parse_str(GOOD).unwrap();
        assert_eq!(one.titles.ja, "boundary");
        let two_lines = GOOD.replace("title = \"boundary\"", "title = \"a\\nb\"");
        assert!(
            parse_str(&two_lines)
                .unwrap_err()
                .message
                .contains("one line")
        );
    }

    #[test]
    fn an_unknown_key_names_file_line_and_column() {
        let err = parse_str(&GOOD.replace("title =", "tittle =")).unwrap_err();
        assert!(
            err.message.starts_with("mutants/x.toml:3:1: "),
            "{}",
            err.message
        );
        assert!(err.message.contains("tittle"), "{}", err.message);
        assert!(err.next.is_some());
    }

    #[test]
    fn an_unknown_test_is_refused_with_a_suggestion() {
        let err = parse_str(&GOOD.replace("reclaims_at_exact_expiry", "reclaim_at_exact_expiry"))
            .unwrap_err();
        assert!(
            err.message.starts_with("mutants/x.toml:6:"),
            "{}",
            err.message
        );
        assert!(
            err.message
                .contains("did you mean step4::reclaims_at_exact_expiry"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_step_outside_the_worksheet_is_refused() {
        let err = parse_str(&GOOD.replace("step = 4", "step = 9")).unwrap_err();
        assert!(
            err.message.starts_with("mutants/x.toml:2:8: step = 9"),
            "{}",
            err.message
        );
    }

    #[test]
    fn an_observation_is_one_of_the_three_kinds() {
        let with = |line: &str| parse_str(&GOOD.replace("step = 4", &format!("step = 4\n{line}")));
        assert_eq!(
            with("observation = \"return value\"").unwrap().observation,
            Some(ObservationKind::ReturnValue)
        );
        assert_eq!(parse_str(GOOD).unwrap().observation, None);
        let err = with("observation = \"exception\"").unwrap_err();
        assert!(
            err.message
                .starts_with("mutants/x.toml:3:15: observation = \"exception\""),
            "{}",
            err.message
        );
    }

    #[test]
    fn an_id_must_match_the_file_name() {
        let err = parse_str(&format!("id = \"y\"\n{GOOD}")).unwrap_err();
        assert!(
            err.message.contains("the file name is the id"),
            "{}",
            err.message
        );
        assert!(parse_str(&format!("id = \"x\"\n{GOOD}")).is_ok());
    }

    #[test]
    fn killers_and_survivors_must_not_overlap_nor_killers_be_empty() {
        let both = GOOD.replace(
            "step4::fresh_job_gets_fence_1",
            "step4::reclaims_at_exact_expiry",
        );
        assert!(
            parse_str(&both)
                .unwrap_err()
                .message
                .contains("both a killer and a survivor")
        );
        let none = GOOD.replace(
            "killers = [\"step4::reclaims_at_exact_expiry\"]",
            "killers = []",
        );
        assert!(
            parse_str(&none)
                .unwrap_err()
                .message
                .contains("`killers` is empty")
        );
    }

    #[test]
    fn an_equivalent_mutant_says_why_and_has_no_killers() {
        let equivalent = GOOD.replace(
            "killers = [\"step4::reclaims_at_exact_expiry\"]",
            "equivalent = \"1 + fence is fence + 1\"",
        );
        let m = parse_str(&equivalent).unwrap();
        assert_eq!(m.equivalent.as_deref(), Some("1 + fence is fence + 1"));
        assert!(m.killers.is_empty());
        let with_killers = GOOD.replace("step = 4", "step = 4\nequivalent = \"x\"");
        assert!(
            parse_str(&with_killers)
                .unwrap_err()
                .message
                .contains("has no killers"),
        );
        let neither = GOOD.replace("killers = [\"step4::reclaims_at_exact_expiry\"]\n", "");
        assert!(
            parse_str(&neither)
                .unwrap_err()
                .message
                .contains("equivalent = "),
        );
    }

    #[test]
    fn apply_replaces_exactly_once_or_reports_stale() {
        let m = parse_str(GOOD).unwrap();
        assert_eq!(
            m.apply("a\nif until > now {\nb").unwrap(),
            "a\nif until >= now {\nb"
        );
        assert_eq!(m.span("a\nif until > now {\nb"), Some(5..16));
        assert_eq!(m.span("until > now\nuntil > now"), None);
        let missing = m.apply("a\nif until >= now {\nb").unwrap_err();
        assert_eq!(missing.occurrences, 0);
        assert_eq!(missing.nearest[0], (2, "if until >= now {".to_string()));
        let twice = m.apply("until > now\nx\nuntil > now").unwrap_err();
        assert_eq!(twice.occurrences, 2);
        assert_eq!(
            twice.nearest,
            vec![(1, "until > now".into()), (3, "until > now".into())]
        );
    }

    #[test]
    fn broken_code_is_whole_lines_with_their_indentation_and_no_correct_line() {
        let source = "fn f() {\n    let a = 1;\n    if until > now {\n        go();\n    }\n}\n";
        let m = Mutant {
            find: "until > now {\n        go();".into(),
            replace: "until >= now {\n        go();\n        again();".into(),
            ..parse_str(GOOD).unwrap()
        };
        assert_eq!(
            m.broken_code(source),
            "if until >= now {\n    go();\n    again();"
        );
        let reference = crate::lab::reference::REFERENCE;
        for m in builtin() {
            let broken = m.broken_code(reference);
            assert!(
                !broken.is_empty() || m.replace.trim().is_empty(),
                "{}",
                m.id
            );
            if m.worksheet && !m.replace.contains(m.find.trim()) {
                assert!(
                    !broken.contains(m.find.trim()),
                    "{}: the correct code is not shown",
                    m.id
                );
            }
        }
    }

    #[test]
    fn the_built_in_mutants_are_the_directorys() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("mutants");
        let from_dir: Vec<String> = load_dir(&dir, &tests())
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect();
        let built_in: Vec<String> = builtin().into_iter().map(|m| m.id).collect();
        assert_eq!(built_in, from_dir);
    }

    /// A named bug for every test: each test of the suite is a declared
    /// killer of some mutant, so (with `verify` holding every declaration,
    /// as `tests/mutants.rs` checks) no test of the kill matrix kills nothing.
    #[test]
    fn every_test_of_the_suite_is_a_declared_killer_of_some_mutant() {
        let killers: BTreeSet<String> = builtin().into_iter().flat_map(|m| m.killers).collect();
        let idle: Vec<String> = crate::lab::suite::test_names()
            .into_iter()
            .filter(|t| !killers.contains(t))
            .collect();
        assert!(
            idle.is_empty(),
            "tests no mutant names as its killer: {idle:?}"
        );
    }

    #[test]
    fn the_projects_mutants_all_load_and_apply_to_the_reference() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("mutants");
        let mutants = load_dir(&dir, &tests()).unwrap();
        let reference = include_str!("../../lease.rs");
        for step in 1..=8 {
            let of_step: Vec<&Mutant> = mutants.iter().filter(|m| m.step == step).collect();
            assert!(
                of_step.len() >= 2,
                "step {step} has {} mutants",
                of_step.len()
            );
            let shown: Vec<&&Mutant> = of_step.iter().filter(|m| m.worksheet).collect();
            assert_eq!(shown.len(), 1, "step {step} has one worksheet fragment");
            // The predictions form's answer for the fragment is declared with it.
            assert!(
                shown[0].observation.is_some(),
                "{} declares the observation that exposes it",
                shown[0].id
            );
        }
        for m in &mutants {
            let mutated = m
                .apply(reference)
                .unwrap_or_else(|s| panic!("{}: {}", m.id, s.describe(&m.file)));
            assert_ne!(mutated, reference, "{} changes the reference", m.id);
        }
    }
}
