//! Wheats: correct implementations of the contract, written differently from
//! the reference wherever the contract leaves freedom (`wheats/`, format in
//! `wheats/README.md`), and the catalogue of those freedoms. A learner's test
//! is valid only if it passes on every wheat; a wheat's freedoms say what a
//! test that fails on it assumed.
//!
//! A wheat is either a file of its own (`<id>.rs` beside `<id>.toml`) or one
//! change of the reference (`find`/`replace` in its `<id>.toml`, as a mutant
//! is written), the latter to take exactly one freedom. Every freedom a wheat
//! names must be in `freedoms.toml`; a wheat names at least one.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Location, at_line};
use crate::lab::lang::Text;
use crate::lab::mutant::{Stale, Title};

/// The freedoms catalogue's file name, inside a wheats directory.
pub(crate) const FREEDOMS_FILE: &str = "freedoms.toml";

/// One correct implementation.
#[derive(Debug, Clone)]
pub struct Wheat {
    /// The file name without `.toml`.
    pub id: String,
    pub title: Text,
    /// The freedoms (ids of the catalogue) it takes.
    pub freedoms: Vec<String>,
    pub(crate) source: WheatSource,
    /// The TOML file it was read from.
    pub path: PathBuf,
}

/// Where a wheat's code comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WheatSource {
    /// A file of its own.
    File(String),
    /// One change of the reference.
    Change { find: String, replace: String },
}

impl Wheat {
    /// Its code, given the reference's.
    pub fn code(&self, reference: &str) -> Result<String, Stale> {
        match &self.source {
            WheatSource::File(source) => Ok(source.clone()),
            WheatSource::Change { find, replace } => {
                crate::lab::mutant::apply(reference, find, replace)
            }
        }
    }
}

/// One freedom the contract leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Freedom {
    pub id: String,
    /// What a test that fails because of it assumed, for the learner.
    pub assumed: Text,
    /// The contract's sentence that leaves it free.
    pub contract: String,
}

/// The wheats and the freedoms they take.
#[derive(Debug, Clone)]
pub struct Wheats {
    pub wheats: Vec<Wheat>,
    pub(crate) freedoms: BTreeMap<String, Freedom>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WheatFile {
    title: Spanned<Title>,
    freedoms: Spanned<Vec<Spanned<String>>>,
    /// Required in every wheat file (the instructor's account of it); no
    /// report shows it.
    #[allow(dead_code)]
    explanation: Text,
    find: Option<String>,
    replace: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FreedomsFile {
    freedom: BTreeMap<String, FreedomEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FreedomEntry {
    ja: String,
    en: String,
    contract: String,
}

/// fencelab's own wheats, as compiled into it.
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/wheats.rs"));

/// fencelab's own Python wheats (`wheats-python/`: `<id>.py` files, and
/// variants of `python/lease.py`), as compiled into it.
const BUILTIN_PYTHON: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/wheats_python.rs"));

impl Wheats {
    /// The project's own wheats (`wheats/`), as compiled into fencelab.
    pub fn builtin() -> Wheats {
        let files: BTreeMap<String, String> = BUILTIN
            .iter()
            .map(|(name, text)| (name.to_string(), text.to_string()))
            .collect();
        parse_all(Path::new("wheats"), &files)
            .expect("the built-in wheats are checked by the tests")
    }

    /// The Python edition's own wheats (`wheats-python/`), as compiled into
    /// fencelab.
    pub fn builtin_python() -> Wheats {
        let files: BTreeMap<String, String> = BUILTIN_PYTHON
            .iter()
            .map(|(name, text)| (name.to_string(), text.to_string()))
            .collect();
        parse_all(Path::new("wheats-python"), &files)
            .expect("the built-in Python wheats are checked by the tests")
    }

    /// The wheats of a directory (`--wheats DIR`). Without a catalogue of
    /// its own, the edition's (`python`) built-in one is theirs: wheats of
    /// the same contract take the same freedoms.
    pub(crate) fn load_dir(dir: &Path, python: bool) -> Result<Wheats, Error> {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            Error::io("read the wheats directory", dir, e)
                .with_next("give a directory of wheats with --wheats DIR (see wheats/README.md)")
        })?;
        let mut files = BTreeMap::new();
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            let wanted = path
                .extension()
                .is_some_and(|x| x == "toml" || x == "rs" || x == "py");
            if wanted && path.is_file() {
                let text =
                    std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                files.insert(name.into_owned(), text);
            }
        }
        if !files.contains_key(FREEDOMS_FILE) {
            let builtin = match python {
                true => BUILTIN_PYTHON,
                false => BUILTIN,
            };
            let catalogue = builtin.iter().find(|(name, _)| *name == FREEDOMS_FILE);
            if let Some((_, text)) = catalogue {
                files.insert(FREEDOMS_FILE.to_string(), text.to_string());
            }
        }
        parse_all(dir, &files)
    }

    /// The freedom `id`'s entry.
    pub(crate) fn freedom(&self, id: &str) -> Option<&Freedom> {
        self.freedoms.get(id)
    }
}

/// Reads a wheats directory given as (file name, contents).
fn parse_all(dir: &Path, files: &BTreeMap<String, String>) -> Result<Wheats, Error> {
    let catalogue = dir.join(FREEDOMS_FILE);
    let Some(text) = files.get(FREEDOMS_FILE) else {
        return Err(Error::input(format!(
            "{} has no {FREEDOMS_FILE}: the catalogue of the freedoms its wheats take",
            dir.display()
        ))
        .with_next("add it (the format is in wheats/README.md)"));
    };
    let fix = "fix the file at that line (the format is in wheats/README.md) and run again";
    let catalogue_file: FreedomsFile = parse_toml(&catalogue, text, fix)?;
    let freedoms: BTreeMap<String, Freedom> = catalogue_file
        .freedom
        .into_iter()
        .map(|(id, e)| {
            let freedom = Freedom {
                id: id.clone(),
                assumed: Text {
                    ja: e.ja.trim().to_string(),
                    en: e.en.trim().to_string(),
                },
                contract: e.contract.trim().to_string(),
            };
            (id, freedom)
        })
        .collect();
    let mut wheats = Vec::new();
    for (name, text) in files {
        let Some(id) = name.strip_suffix(".toml") else {
            continue;
        };
        if name == FREEDOMS_FILE {
            continue;
        }
        let path = dir.join(name);
        let problem = |span: Range<usize>, message: String| {
            Error::input(at_line(&path, &Location::at(text, span.start), &message)).with_next(fix)
        };
        let file: WheatFile = parse_toml(&path, text, fix)?;
        // One line for both languages, or one in each, as a mutant's.
        let Some(title) = file.title.get_ref().text() else {
            return Err(problem(file.title.span(), Title::PROBLEM.to_string()));
        };
        for freedom in file.freedoms.get_ref() {
            if !freedoms.contains_key(freedom.get_ref()) {
                return Err(problem(
                    freedom.span(),
                    format!(
                        "{:?} is not a freedom of {}",
                        freedom.get_ref(),
                        catalogue.display()
                    ),
                ));
            }
        }
        if file.freedoms.get_ref().is_empty() {
            return Err(problem(
                file.freedoms.span(),
                "`freedoms` is empty: name the freedoms this wheat takes".to_string(),
            ));
        }
        // A wheat of its own is Rust (`<id>.rs`) or, for the Python edition, `<id>.py`.
        let own_file = files
            .get(&format!("{id}.rs"))
            .or_else(|| files.get(&format!("{id}.py")));
        let source = match (&file.find, &file.replace, own_file) {
            (Some(find), Some(replace), None) => WheatSource::Change {
                find: find.clone(),
                replace: replace.clone(),
            },
            (None, None, Some(source)) => WheatSource::File(source.clone()),
            _ => {
                return Err(Error::input(format!(
                    "{}: a wheat is either a file of its own ({id}.rs or {id}.py beside it) or a change \
                     of the reference (`find` and `replace`), and this is neither or both",
                    path.display()
                ))
                .with_next(fix));
            }
        };
        wheats.push(Wheat {
            id: id.to_string(),
            title,
            freedoms: file
                .freedoms
                .into_inner()
                .into_iter()
                .map(Spanned::into_inner)
                .collect(),
            source,
            path,
        });
    }
    if wheats.is_empty() {
        return Err(
            Error::input(format!("{} holds no wheat", dir.display())).with_next(
                "add wheats (see wheats/README.md) or point --wheats at the right directory",
            ),
        );
    }
    Ok(Wheats { wheats, freedoms })
}

/// Parses TOML, an error naming the file, the line and the column.
pub(crate) fn parse_toml<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
    fix: &str,
) -> Result<T, Error> {
    toml::from_str(text).map_err(|e| {
        let message = e.message().trim().to_string();
        match e.span() {
            Some(span) => Error::input(at_line(path, &Location::at(text, span.start), &message))
                .with_next(fix),
            None => Error::input(format!("{}: {message}", path.display())).with_next(fix),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::reference::REFERENCE;

    #[test]
    fn the_built_in_wheats_load_and_every_freedom_is_taken() {
        let wheats = Wheats::builtin();
        assert!(wheats.wheats.len() >= 5, "{}", wheats.wheats.len());
        for (id, freedom) in &wheats.freedoms {
            assert!(
                wheats.wheats.iter().any(|w| w.freedoms.contains(id)),
                "no wheat takes {id}"
            );
            assert!(!freedom.assumed.ja.is_empty() && !freedom.assumed.en.is_empty());
        }
        for wheat in &wheats.wheats {
            let code = wheat
                .code(REFERENCE)
                .unwrap_or_else(|s| panic!("{}: {}", wheat.id, s.describe(&wheat.path)));
            assert_ne!(code, REFERENCE, "{} differs from the reference", wheat.id);
            assert!(
                crate::lab::api::missing_api(&code).is_empty(),
                "{} has the API",
                wheat.id
            );
        }
    }

    #[test]
    fn the_built_in_wheats_are_the_directorys() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("wheats");
        let ids = |w: &Wheats| w.wheats.iter().map(|w| w.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(&Wheats::load_dir(&dir, false).unwrap()),
            ids(&Wheats::builtin())
        );
    }

    /// Fails where a directory without its own catalogue is refused: the
    /// edition's is found.
    #[test]
    fn a_wheats_directory_without_a_catalogue_takes_the_editions() {
        let dir = tempfile::tempdir().unwrap();
        let builtin = Path::new(env!("CARGO_MANIFEST_DIR")).join("wheats");
        for name in ["variant-error-text.toml", "lazy.toml", "lazy.rs"] {
            std::fs::copy(builtin.join(name), dir.path().join(name)).unwrap();
        }
        let wheats = Wheats::load_dir(dir.path(), false).unwrap();
        assert_eq!(wheats.wheats.len(), 2);
        assert!(wheats.freedom("error-text").is_some());
    }

    fn one(name: &str, toml: &str) -> Result<Wheats, Error> {
        let mut files = BTreeMap::new();
        files.insert(
            FREEDOMS_FILE.to_string(),
            "[freedom.error-text]\nja = \"文面\"\nen = \"text\"\ncontract = \"c\"\n".to_string(),
        );
        files.insert(format!("{name}.toml"), toml.to_string());
        parse_all(Path::new("w"), &files)
    }

    #[test]
    fn an_unknown_freedom_names_its_line() {
        let err = one(
            "x",
            "title = { ja = \"a\", en = \"a\" }\nfreedoms = [\"error-txt\"]\nfind = \"a\"\nreplace = \"b\"\n[explanation]\nja = \"a\"\nen = \"a\"\n",
        )
        .unwrap_err();
        assert!(err.message.starts_with("w/x.toml:2:"), "{}", err.message);
        assert!(
            err.message.contains("\"error-txt\" is not a freedom"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_title_is_one_line_for_both_languages_or_one_in_each() {
        let wheat = |title: &str| {
            one(
                "x",
                &format!(
                    "title = {title}\nfreedoms = [\"error-text\"]\nfind = \"a\"\nreplace = \"b\"\n[explanation]\nja = \"a\"\nen = \"a\"\n"
                ),
            )
        };
        let one_string = wheat("\"Errors of its own\"").unwrap();
        assert_eq!(
            one_string.wheats[0].title,
            Text {
                ja: "Errors of its own".into(),
                en: "Errors of its own".into()
            }
        );
        let both = wheat("{ ja = \"独自\", en = \"own\" }").unwrap();
        assert_eq!(both.wheats[0].title.ja, "独自");
        for bad in ["\"a\\nb\"", "\"\"", "{ ja = \"\", en = \"own\" }"] {
            let err = wheat(bad).unwrap_err();
            assert!(err.message.starts_with("w/x.toml:1:"), "{}", err.message);
            assert!(err.message.contains("one line"), "{}", err.message);
        }
    }

    #[test]
    fn a_wheat_is_a_file_or_a_change() {
        let err = one(
            "x",
            "title = { ja = \"a\", en = \"a\" }\nfreedoms = [\"error-text\"]\n[explanation]\nja = \"a\"\nen = \"a\"\n",
        )
        .unwrap_err();
        assert!(err.message.contains("neither or both"), "{}", err.message);
    }
}
