//! Which edition a learner's lab is: the Rust crate (`src/lib.rs`) or the
//! Python module (`lease.py`), so that `check`, `check --mine` and `predict`
//! run in a lab without being told.
//!
//! A Python lab records it in `fencelab.toml` (`edition = "python"`, and the
//! worksheet's `lang`), written by `fencelab new --python`. A Rust lab made
//! before the file existed has none: its `Cargo.toml` says enough (its
//! language is `[package.metadata.fencelab] lang`). The file decides when it
//! is there; otherwise a `lease.py` without a `Cargo.toml` is a Python lab
//! whose record was lost, and anything else is read as a Rust lab (whose
//! commands say it when it is not a lab at all).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Location, at_line};
use crate::lab::lang::Lang;

/// The file of a lab that records its edition and language.
pub(crate) const FILE: &str = "fencelab.toml";

/// A lab's edition: the language the learner implements the contract in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Edition {
    /// A Cargo crate; the learner's file is `src/lib.rs`.
    Rust,
    /// A Python module; the learner's file is `lease.py`.
    Python,
}

impl Edition {
    /// The edition a file is written for: a `.py` file is the Python
    /// edition's, any other the Rust one's. The one place that asks.
    pub fn of_file(path: impl AsRef<std::path::Path>) -> Edition {
        match path.as_ref().extension().is_some_and(|e| e == "py") {
            true => Edition::Python,
            false => Edition::Rust,
        }
    }

    /// The word `fencelab.toml` uses.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Edition::Rust => "rust",
            Edition::Python => "python",
        }
    }

    /// The learner's implementation, relative to the lab's directory.
    pub(crate) fn learner_file(self) -> &'static str {
        match self {
            Edition::Rust => "src/lib.rs",
            Edition::Python => "lease.py",
        }
    }
}

impl fmt::Display for Edition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// What `fencelab.toml` holds.
#[derive(Debug, Deserialize)]
struct Record {
    edition: Option<toml::Spanned<String>>,
    lang: Option<toml::Spanned<String>>,
}

/// The text of a new lab's `fencelab.toml`.
pub(crate) fn record(edition: Edition, lang: Lang) -> String {
    format!(
        "# Read by fencelab: this lab's edition and the language of its texts.\n\
         edition = \"{edition}\"\nlang = \"{}\"\n",
        lang.code()
    )
}

/// The edition of the lab in `lab_dir` (see the module's header for how it
/// is decided). An unreadable or malformed `fencelab.toml` is an error
/// naming its line.
pub fn of(lab_dir: &Path) -> Result<Edition, Error> {
    if let Some((path, text, record)) = read(lab_dir)?
        && let Some(edition) = record.edition
    {
        return match edition.get_ref().as_str() {
            "rust" => Ok(Edition::Rust),
            "python" => Ok(Edition::Python),
            other => Err(Error::input(at_line(
                &path,
                &Location::at(&text, edition.span().start),
                &format!("unknown edition `{other}`: choose rust or python"),
            ))
            .with_next("write `edition = \"python\"` (or \"rust\") at that line and run again")),
        };
    }
    let python_alone = lab_dir.join(Edition::Python.learner_file()).is_file()
        && !lab_dir.join("Cargo.toml").exists();
    Ok(if python_alone {
        Edition::Python
    } else {
        Edition::Rust
    })
}

/// The lab around `dir`: the nearest directory from it up that holds a
/// `fencelab.toml` or a `Cargo.toml` (`dir` itself if none does), so that a
/// command run anywhere inside a Python lab finds it as one run in a crate
/// finds the crate.
pub(crate) fn lab_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(FILE).is_file() || d.join("Cargo.toml").is_file())
        .map_or_else(|| dir.to_path_buf(), Path::to_path_buf)
}

/// The language `fencelab.toml` records, if it records a known one.
pub fn recorded_lang(lab_dir: &Path) -> Option<Lang> {
    let (_, _, record) = read(lab_dir).ok()??;
    record.lang?.get_ref().parse().ok()
}

/// `fencelab.toml` of `lab_dir`, read and parsed; `None` when there is none.
fn read(lab_dir: &Path) -> Result<Option<(PathBuf, String, Record)>, Error> {
    let path = lab_dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        // No record: none written, or `lab_dir` is a file (`check --mine
        // test_mine.py` names the learner's test file, not a lab).
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(Error::io("read", &path, e)),
    };
    let fix = "fix fencelab.toml at that line (a new lab's holds `edition = \"python\"` and `lang = \"en\"`)";
    let record: Record = toml::from_str(&text).map_err(|e| {
        let message = e.message().trim().to_string();
        match e.span() {
            Some(span) => Error::input(at_line(&path, &Location::at(&text, span.start), &message)),
            None => Error::input(format!("{}: {message}", path.display())),
        }
        .with_next(fix)
    })?;
    Ok(Some((path, text, record)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_record_decides_and_reads_back() {
        for edition in [Edition::Rust, Edition::Python] {
            let dir = lab(&[(FILE, &record(edition, Lang::Ja)), ("lease.py", "")]);
            assert_eq!(of(dir.path()).unwrap(), edition);
            assert_eq!(recorded_lang(dir.path()), Some(Lang::Ja));
        }
    }

    #[test]
    fn without_a_record_a_lone_lease_py_is_python_and_anything_else_rust() {
        assert_eq!(
            of(lab(&[("lease.py", "")]).path()).unwrap(),
            Edition::Python
        );
        let both = lab(&[("lease.py", ""), ("Cargo.toml", "")]);
        assert_eq!(of(both.path()).unwrap(), Edition::Rust);
        assert_eq!(
            of(lab(&[("Cargo.toml", "")]).path()).unwrap(),
            Edition::Rust
        );
        assert_eq!(of(lab(&[]).path()).unwrap(), Edition::Rust);
        assert_eq!(recorded_lang(lab(&[]).path()), None);
    }

    #[test]
    fn the_lab_is_found_from_inside_it() {
        let dir = lab(&[(FILE, &record(Edition::Python, Lang::En)), ("sub/x", "")]);
        let inner = dir.path().join("sub");
        assert_eq!(lab_root(&inner), dir.path());
        assert_eq!(lab_root(dir.path()), dir.path());
        let nothing = lab(&[("sub/x", "")]);
        let inner = nothing.path().join("sub");
        assert_eq!(
            lab_root(&inner),
            inner,
            "no lab above: the directory itself"
        );
    }

    #[test]
    fn a_bad_record_names_its_line() {
        let dir = lab(&[(FILE, "lang = \"en\"\nedition = \"ruby\"\n")]);
        let err = of(dir.path()).unwrap_err();
        assert!(err.message.contains("fencelab.toml:2:"), "{err}");
        assert!(err.message.contains("unknown edition `ruby`"), "{err}");
        let dir = lab(&[(FILE, "edition = python\n")]);
        let err = of(dir.path()).unwrap_err();
        assert!(err.message.contains("fencelab.toml:1:"), "{err}");
        assert!(err.next.is_some(), "{err}");
    }
}
