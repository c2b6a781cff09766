//! `fencelab predict`'s command line.

use std::path::PathBuf;

use clap::Args;

use crate::commands::{default_lang, has_own_mutants, parse_lang, project_root};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::lang::Lang;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// The directory of mutant files [default: mutants/ of the project, or fencelab's own].
    #[arg(long, value_name = "DIR")]
    pub mutants: Option<PathBuf>,
    /// Write the form to FILE (which must not exist) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn main(args: PredictArgs, printer: &mut Printer) -> Result<ExitCode, Error> {
    let root = project_root();
    let dir = args
        .mutants
        .or_else(|| Some(root.join("mutants")).filter(|_| has_own_mutants(&root)));
    let mutants = match &dir {
        Some(dir) => crate::lab::mutant::load_dir(dir, &crate::lab::suite::test_names())?,
        None => crate::lab::mutant::builtin(),
    };
    printer.lang = args.lang.unwrap_or_else(default_lang);
    let form = crate::commands::predict::template(&mutants, printer.lang);
    match &args.output {
        None => print!("{form}"),
        Some(path) => {
            if path.exists() {
                return Err(Error::input(format!(
                    "{} exists; nothing was written",
                    path.display()
                ))
                .with_next("give a new file name, or remove the old one yourself"));
            }
            std::fs::write(path, form).map_err(|e| Error::io("write", path, e))?;
            let text = match printer.lang {
                crate::lab::lang::Lang::En => {
                    format!("{} ({} mutants)", path.display(), mutants.len())
                }
                crate::lab::lang::Lang::Ja => {
                    format!("{}（{} 個のミュータント）", path.display(), mutants.len())
                }
            };
            printer.status(Verb::Wrote, &text);
        }
    }
    Ok(ExitCode::Success)
}
