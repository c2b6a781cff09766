//! The worksheet rendered as Markdown in one language (`fencelab worksheet`,
//! and `WORKSHEET.md` in a learner's crate): the framing sections, then per
//! step its contract, rationale, the deliberately broken fragment and the
//! question, then "In the field" and "Next". The fragment is the step's
//! worksheet mutant from `mutants/`, so the worksheet and the mutation checker
//! cannot disagree about it. It shows the broken code only, as it reads in the
//! file: the correct code is what the learner works out. Instructors get the
//! fragment as a diff against the reference too (`--answers`); learners see
//! it once the step passes (`fencelab check --step N`). `--python` (or a
//! Python lab around the current directory) gives the Python edition: the
//! contract in Python's words, the Python mutants' fragments.

use crate::commands::parse_lang;
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::edition::Edition;
use crate::lab::mutant;
use crate::lab::worksheet::{Lang, Worksheet};
use crate::output::worksheet::render_edition;

/// `fencelab worksheet`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct WorksheetArgs {
    /// ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// Also show each fragment as a diff against the reference (for instructors).
    #[arg(long)]
    pub answers: bool,
    /// The Python edition: the contract in Python's words and the Python
    /// fragments, as the original worksheet prints them [default: in a Python lab].
    #[arg(long)]
    pub python: bool,
}

/// Prints the worksheet as Markdown.
pub(crate) fn main(args: WorksheetArgs) -> Result<ExitCode, Error> {
    let lab = crate::lab::edition::lab_root(&std::env::current_dir().unwrap_or_default());
    let edition = if args.python {
        Edition::Python
    } else {
        crate::lab::edition::of(&lab)?
    };
    let mutants = match edition {
        Edition::Rust => mutant::builtin(),
        Edition::Python => crate::lab::python::mutants(),
    };
    let lang = args
        .lang
        .or_else(|| crate::lab::edition::recorded_lang(&lab))
        .unwrap_or_else(crate::commands::default_lang);
    print!(
        "{}",
        render_edition(
            &Worksheet::of(edition),
            &mutants,
            edition,
            lang,
            args.answers
        )
    );
    Ok(ExitCode::Success)
}
