//! The worksheet rendered as Markdown in one language (`fencelab worksheet`,
//! and `WORKSHEET.md` in a learner's crate): the framing sections, then per
//! step its contract, rationale, the deliberately broken fragment and the
//! question, then "In the field" and "Next". The fragment is the step's
//! worksheet mutant from `mutants/`, so the worksheet and the mutation checker
//! cannot disagree about it. It shows the broken code only, as it reads in the
//! file: the correct code is what the learner works out. Instructors get the
//! fragment as a diff against the reference too (`--answers`); learners see
//! it once the step passes (`fencelab check --step N`).

use crate::commands::parse_lang;
use crate::exit::ExitCode;
use crate::lab::mutant;
use crate::lab::worksheet::{Lang, Worksheet};
use crate::output::worksheet::render_with;

/// `fencelab worksheet`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct WorksheetArgs {
    /// ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// Also show each fragment as a diff against the reference (for instructors).
    #[arg(long)]
    pub answers: bool,
}

/// Prints the worksheet as Markdown.
pub(crate) fn main(args: WorksheetArgs) -> ExitCode {
    let worksheet = Worksheet::builtin();
    print!(
        "{}",
        render_with(
            &worksheet,
            &mutant::builtin(),
            args.lang.unwrap_or_else(crate::commands::default_lang),
            args.answers
        )
    );
    ExitCode::Success
}
