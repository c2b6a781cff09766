//! `fencelab predict`'s command line.

use std::path::PathBuf;

use clap::Args;

use super::Selection;
use crate::commands::{default_lang, has_own_mutants, parse_lang, project_root};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::edition::Edition;
use crate::lab::lang::Lang;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub(crate) struct PredictArgs {
    /// Only these mutants, by id [default: the worksheet's eight fragments].
    #[arg(value_name = "MUTANT", conflicts_with = "all")]
    pub names: Vec<String>,
    /// Every mutant, not only the worksheet's fragments.
    #[arg(long)]
    pub all: bool,
    /// ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// The directory of mutant files [default: mutants/ of the project, or fencelab's own].
    #[arg(long, value_name = "DIR")]
    pub mutants: Option<PathBuf>,
    /// Write the form to FILE (which must not exist) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The Python edition's mutants and fragments [default: in a Python lab].
    #[arg(long)]
    pub python: bool,
}

pub(crate) fn main(args: PredictArgs, printer: &mut Printer) -> Result<ExitCode, Error> {
    // In a Python lab (`lab::edition`), the Python edition without a flag.
    let lab = crate::lab::edition::lab_root(&std::env::current_dir().unwrap_or_default());
    let edition = if args.python {
        Edition::Python
    } else {
        crate::lab::edition::of(&lab)?
    };
    let root = project_root();
    let dir = match edition {
        Edition::Rust => args
            .mutants
            .or_else(|| Some(root.join("mutants")).filter(|_| has_own_mutants(&root))),
        Edition::Python => args.mutants,
    };
    let (all, dir_name) = match (&dir, edition) {
        (Some(dir), _) => (
            crate::lab::mutant::load_dir(dir, &crate::lab::suite::test_names())?,
            dir.display().to_string(),
        ),
        (None, Edition::Rust) => (
            crate::lab::mutant::builtin(),
            crate::lab::mutant::BUILTIN_MUTANTS.to_string(),
        ),
        (None, Edition::Python) => (
            crate::lab::python::mutants(),
            crate::lab::python::MUTANTS_DIR.to_string(),
        ),
    };
    printer.lang = args
        .lang
        .or_else(|| crate::lab::edition::recorded_lang(&lab))
        .unwrap_or_else(default_lang);
    let selection = if args.all {
        Selection::All
    } else if args.names.is_empty() {
        Selection::Worksheet
    } else {
        Selection::Named(args.names.clone())
    };
    let form = super::select(&all, &selection, &dir_name)?;
    let text = super::template_of(&form, &all, &selection, edition, printer.lang);
    match &args.output {
        None => print!("{text}"),
        Some(path) => {
            if path.exists() {
                return Err(Error::input(format!(
                    "{} exists; nothing was written",
                    path.display()
                ))
                .with_next("give a new file name, or remove the old one yourself"));
            }
            std::fs::write(path, text).map_err(|e| Error::io("write", path, e))?;
            printer.status(
                Verb::Wrote,
                &wrote(
                    &path.display().to_string(),
                    &selection,
                    form.len(),
                    printer.lang,
                ),
            );
        }
    }
    Ok(ExitCode::Success)
}

/// What the status line says was written.
pub(crate) fn wrote(path: &str, selection: &Selection, n: usize, lang: Lang) -> String {
    match (lang, selection) {
        (Lang::En, Selection::Worksheet) => {
            format!("{path} (the worksheet's {n} fragments, one per step)")
        }
        (Lang::En, _) if n == 1 => format!("{path} (1 mutant)"),
        (Lang::En, _) => format!("{path} ({n} mutants)"),
        (Lang::Ja, Selection::Worksheet) => {
            format!("{path}（ワークシートの断片 {n} 個、ステップごとに 1 つ）")
        }
        (Lang::Ja, _) => format!("{path}（{n} 個のミュータント）"),
    }
}
