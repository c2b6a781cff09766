//! `fencelab check --mine`: the learner's own tests, judged on the learner's
//! machine (the arguments are `check`'s).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::Error;
use crate::exit::ExitCode;
use crate::judging::{Judges, Options, judge, read};
use crate::lab::lang::Lang;
use crate::output::printer::{Printer, Verb};
use crate::output::progress::Trials;

/// What `check --mine` was asked.
pub(crate) struct MineArgs {
    pub dir: PathBuf,
    pub lang: Lang,
    pub timeout: Option<Duration>,
    pub jobs: usize,
    pub mutants: Option<PathBuf>,
    pub wheats: Option<PathBuf>,
    pub json: Option<PathBuf>,
    /// The lab's course file (weights, what the report reveals).
    pub course: crate::lab::course::Course,
}

pub(crate) fn main(
    args: MineArgs,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<ExitCode, Error> {
    let tests = read(&args.dir)?;
    let judges = Judges::load_for(&tests, args.mutants.as_deref(), args.wheats.as_deref())?;
    let scratch = crate::commands::scratch(cache, &args.dir)?;
    printer.lang = args.lang;
    let label = match args.lang {
        Lang::En => "  checking the wheats against the suite (once)",
        Lang::Ja => "  正しい実装（wheat）をスイートで確認中（初回のみ）",
    };
    crate::judging::content::check(
        &judges,
        &scratch,
        args.jobs,
        &mut Trials::new(printer, label),
    )?;
    printer.status(Verb::Judging, &tests.shown);
    let options = Options {
        jobs: args.jobs,
        timeout: args.timeout,
        build_timeout: None,
        weights: args.course.weights,
    };
    let report = judge(
        &tests,
        &judges,
        &options,
        &scratch,
        &mut Trials::new(printer, "  running tests"),
    )?;
    let report = tests.name_root_in(report).revealing(
        args.course.reveal,
        &judges.mutants,
        &judges.reference,
    );
    let text = super::render_mine(&printer.layout(), &report, &judges, args.lang);
    printer.line(text.trim_end());
    if let Some(path) = &args.json {
        use crate::output::report_file::{json, write};
        write(path, &json(&report), "write")?;
    }
    Ok(report.exit_code)
}
