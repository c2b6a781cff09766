//! The commands, each a front end over the engine: its arguments (`cli`), its
//! run, its report and how it is printed, side by side. What several share
//! (the project's root, the language, a number of seconds) is here.

pub(crate) mod cache;
pub mod check;
pub(crate) mod class;
pub(crate) mod grade;
pub mod new;
pub mod predict;
pub mod verify;
pub(crate) mod worksheet;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::engine::scratch::{Place, Scratch};
use crate::error::Error;
use crate::lab::lang::Lang;

/// The worksheet's language.
pub(crate) fn parse_lang(text: &str) -> Result<Lang, String> {
    text.parse::<Lang>().map_err(|e| e.to_string())
}

/// The language to use when none is given: Japanese when the locale is.
pub(crate) fn default_lang() -> Lang {
    let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    match locale {
        Some(l) if l.starts_with("ja") => Lang::Ja,
        _ => Lang::En,
    }
}

/// The nearest directory from the current one up that holds a Cargo.toml (the
/// current directory if none does).
pub(crate) fn project_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors()
        .find(|dir| dir.join("Cargo.toml").is_file())
        .map_or(cwd.clone(), Path::to_path_buf)
}

/// How many tests run at once: `--jobs N`, else four per CPU.
pub(crate) fn jobs(given: Option<usize>) -> usize {
    given
        .unwrap_or_else(crate::engine::runner::default_jobs)
        .max(1)
}

/// The scratch workspace for the project at `root`: in `cache` (`--cache
/// DIR`) when given, else where `Place::find` says.
pub(crate) fn scratch(cache: Option<&Path>, root: &Path) -> Result<Scratch, Error> {
    Scratch::at(&Place::find(cache, &root.join("target")))
}

pub(crate) fn seconds(value: Option<f64>, flag: &str) -> Result<Option<Duration>, Error> {
    match value {
        None => Ok(None),
        Some(secs) if secs.is_finite() && secs > 0.0 => Ok(Some(Duration::from_secs_f64(secs))),
        Some(secs) => Err(Error::input(format!(
            "{flag} {secs}: give a number of seconds greater than 0"
        ))),
    }
}

/// Whether the project has mutants of its own: a `mutants/` directory with a
/// mutant file in it (a learner's crate has `mutants/README.md` alone, and
/// then the mutants built into fencelab stand in).
pub(crate) fn has_own_mutants(root: &Path) -> bool {
    std::fs::read_dir(root.join("mutants")).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "toml"))
    })
}

/// `name` in the project: relative when the project is the current directory,
/// so that messages show the short path.
pub(crate) fn in_project(root: &Path, name: &str) -> PathBuf {
    match std::env::current_dir() {
        Ok(cwd) if cwd == root => PathBuf::from(name),
        _ => root.join(name),
    }
}
