//! `fencelab check`'s command line.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::commands::{default_lang, jobs, parse_lang, scratch, seconds};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::course::Course;
use crate::lab::edition::Edition;
use crate::lab::lang::Lang;
use crate::lab::worksheet::Worksheet;
use crate::output::paths::normalize;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The learner's lab, a crate or a Python lab [default: the lab around the current directory].
    pub dir: Option<PathBuf>,
    /// Only this step (1 to 8).
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    /// ja or en [default: the crate's, then the locale's].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// A time limit per test, in seconds [default: 10]. A test also stops when its implementation spins (uses 3% of the limit in processor time before it answers a call, at least 0.3 s) or waits with nothing running (for a fifth of it, at least 1 s), and fails for time only if it stops again when run alone after the others: a busy machine costs no test its verdict.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// How many tests run at once [default: four per CPU].
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Judge your own tests (tests/mine/main.rs) instead of your implementation:
    /// valid when they pass on every correct implementation, thorough when
    /// they catch the broken ones.
    #[arg(long, conflicts_with = "step")]
    pub mine: bool,
    /// With --mine: the mutants to catch [default: fencelab's].
    #[arg(long, value_name = "DIR", requires = "mine")]
    pub mutants: Option<PathBuf>,
    /// With --mine: the correct implementations to pass on [default: fencelab's].
    #[arg(long, value_name = "DIR", requires = "mine")]
    pub wheats: Option<PathBuf>,
    /// With --mine: also write the judgement as JSON to FILE.
    #[arg(long, value_name = "FILE", requires = "mine")]
    pub json: Option<PathBuf>,
    /// Print GitHub Actions annotations and append a summary to $GITHUB_STEP_SUMMARY [default: when GITHUB_ACTIONS=true].
    #[arg(long)]
    pub github: bool,
    /// List the suite's tests (with --step, that step's) and stop: nothing is built or run.
    #[arg(long, conflicts_with = "mine")]
    pub list: bool,
    /// Check again on every save of your file, until Ctrl-C: the first failing step at the top.
    #[arg(long, conflicts_with_all = ["mine", "list", "github"])]
    pub watch: bool,
}

/// The lab `check` reads: `DIR`, else the lab around the current directory.
fn lab_dir(args: &CheckArgs) -> PathBuf {
    match &args.dir {
        Some(dir) => dir.clone(),
        None => crate::lab::edition::lab_root(&std::env::current_dir().unwrap_or_default()),
    }
}

/// The language `check` speaks: `--lang`, else the lab's (its crate's, or
/// the one `new` recorded), else the locale's. Resolved here once, for the
/// check and for what is said before it (cli's isolation warnings).
pub(crate) fn lang(args: &CheckArgs) -> Lang {
    let dir = lab_dir(args);
    args.lang
        .or_else(|| crate::commands::check::crate_lang(&dir))
        .or_else(|| crate::lab::edition::recorded_lang(&dir))
        .unwrap_or_else(default_lang)
}

pub(crate) fn main(
    args: CheckArgs,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<ExitCode, Error> {
    // Nothing the learner's code prints runs as a workflow command.
    let paused = crate::output::github::enabled(args.github).then(crate::output::github::pause);
    let dir = lab_dir(&args);
    let edition = crate::lab::edition::of(&dir)?;
    let lang = lang(&args);
    let jobs = jobs(args.jobs);
    // The lab's course file: its limits under the flags, its weights.
    let course = Course::find_in(if dir.is_dir() {
        &dir
    } else {
        dir.parent().unwrap_or(&dir)
    })?
    .unwrap_or_default();
    let timeout = args.timeout.or(course.limits.test_secs);
    if args.list {
        // What a predictions form names, in a lab with the suite or without.
        let names: Vec<String> = crate::lab::suite::tests()
            .into_iter()
            .filter(|t| args.step.is_none_or(|s| s == t.step))
            .map(|t| t.name)
            .collect();
        printer.line(&names.join("\n"));
        return Ok(ExitCode::Success);
    }
    if args.mine {
        let mine = super::mine::MineArgs {
            dir,
            lang,
            timeout: seconds(timeout, "--timeout")?,
            jobs,
            mutants: args.mutants,
            wheats: args.wheats,
            json: args.json,
            course,
        };
        return super::mine::main(mine, cache, printer);
    }
    let options = crate::commands::check::Options {
        dir: dir.clone(),
        step: args.step,
        timeout: seconds(timeout, "--timeout")?,
        jobs,
    };
    printer.lang = lang;
    if edition == Edition::Python {
        crate::engine::python::interpreter_in(lang)?;
    }
    let scratch = scratch(cache, &dir)?;
    // The crate's own path when inside it, as the learner knows the file.
    let cwd = std::env::current_dir().unwrap_or_default();
    let file = crate::commands::check::learner_file_of(&dir, edition);
    let shown = if normalize(&cwd).starts_with(normalize(&dir)) {
        edition.learner_file().to_string()
    } else {
        file.display().to_string()
    };
    if args.watch {
        return super::watch::watch(&options, &scratch, printer, edition, &file, &shown);
    }
    printer.status(Verb::Checking, &shown);
    let checked = crate::commands::check::run(&options, &scratch, printer)?;
    let text = crate::commands::check::render_check_of(
        &printer.layout(),
        &checked,
        &Worksheet::of(edition),
        edition,
        lang,
    );
    printer.line(text.trim_end());
    drop(paused);
    if crate::output::github::enabled(args.github) {
        let source = std::fs::read_to_string(&file).unwrap_or_default();
        let shown =
            crate::output::paths::shown_path(&file, &std::env::current_dir().unwrap_or_default());
        crate::output::github::print(&crate::commands::check::github::annotations(
            &checked, edition, &shown, &source,
        ));
        crate::output::github::append_summary(&crate::commands::check::github::summary(
            &checked,
            &Worksheet::of(edition),
            edition,
            lang,
        ))?;
    }
    Ok(match &checked {
        crate::commands::check::Checked::DoesNotCompile { .. } => ExitCode::NotJudgeable,
        ran if ran.first_failing().is_some() => ExitCode::Failed,
        _ => ExitCode::Success,
    })
}
