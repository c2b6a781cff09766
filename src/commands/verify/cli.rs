//! `fencelab verify`'s command line: its arguments, resolved into `Options`
//! (the project's mutants and reference, or the built-in ones), and what it
//! prints and writes.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super as verify;
use crate::commands::{
    default_lang, has_own_mutants, in_project, jobs, parse_lang, project_root, scratch, seconds,
};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::lang::Lang;
use crate::output::printer::Printer;

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// Only the mutants whose id contains one of these (all when none is given).
    #[arg(value_name = "MUTANT")]
    pub filters: Vec<String>,
    /// Match the mutant ids exactly.
    #[arg(long)]
    pub exact: bool,
    /// The directory of mutant files [default: mutants/ of the project, else the ones built into fencelab].
    #[arg(long, value_name = "DIR")]
    pub mutants: Option<PathBuf>,
    /// The implementation the mutants apply to [default: src/lease.rs of the project, else the built-in reference].
    #[arg(long = "impl", value_name = "FILE")]
    pub implementation: Option<PathBuf>,
    /// The Python edition: the Python reference (python/lease.py) and its mutants (mutants-python/) [default: in a Python lab, or when --impl is a .py file].
    #[arg(long)]
    pub python: bool,
    /// Also write the results as JSON to FILE (schema in README.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the results as a Stryker mutation testing report to FILE
    /// (mutation-testing-report-schema, for Stryker's dashboard and viewers).
    #[arg(long, value_name = "FILE")]
    pub stryker: Option<PathBuf>,
    /// Also write the kill matrix as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print GitHub Actions annotations and append a summary to $GITHUB_STEP_SUMMARY [default: when GITHUB_ACTIONS=true].
    #[arg(long)]
    pub github: bool,
    /// A fixed time limit per test of a mutant, in seconds [default: max(10, 5 x the baseline)]; the baseline's tests get at least 60 s.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// A time limit for the build, in seconds.
    #[arg(long, value_name = "SECS")]
    pub build_timeout: Option<f64>,
    /// How many tests run at once [default: four per CPU].
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Score the predictions in FILE (written with `fencelab predict`) against what happened;
    /// without MUTANT filters, the mutants run are the form's.
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,
    /// List the mutants (id, step, title) and stop: nothing is built or run.
    #[arg(long)]
    pub list: bool,
    /// The language of what verify prints, and of its HTML report: ja or en [default: the lab's, then the locale's].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
}

pub(crate) fn main(
    args: VerifyArgs,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<ExitCode, Error> {
    // Nothing an implementation prints runs as a workflow command.
    let paused = crate::output::github::enabled(args.github).then(crate::output::github::pause);
    // In a Python lab (`lab::edition`), the Python edition and the lab's
    // language without a flag, as check and predict; a file given with
    // --impl says its edition by its extension.
    let lab = crate::lab::edition::lab_root(&std::env::current_dir().unwrap_or_default());
    printer.lang = args
        .lang
        .or_else(|| crate::lab::edition::recorded_lang(&lab))
        .unwrap_or_else(default_lang);
    let root = project_root();
    let python = args.python
        || match &args.implementation {
            Some(path) => {
                crate::lab::edition::Edition::of_file(path) == crate::lab::edition::Edition::Python
            }
            None => crate::lab::edition::of(&lab)? == crate::lab::edition::Edition::Python,
        };
    let rerun = rerun_command(&args, python);
    let mut options = if python {
        python_options(&args, &root)?
    } else {
        verify::Options {
            // Outside fencelab's project (in a learner's crate, say) the mutants
            // and the reference built into fencelab stand in for the directories.
            mutants: args
                .mutants
                .clone()
                .or_else(|| Some(in_project(&root, "mutants")).filter(|_| has_own_mutants(&root))),
            implementation: args.implementation.clone().or_else(|| {
                let reference = root.join(crate::lab::mutant::DEFAULT_FILE);
                (args.mutants.is_none() && has_own_mutants(&root) && reference.is_file())
                    .then(|| in_project(&root, crate::lab::mutant::DEFAULT_FILE))
            }),
            root: root.clone(),
            filters: args.filters,
            exact: args.exact,
            timeout: seconds(args.timeout, "--timeout")?,
            build_timeout: seconds(args.build_timeout, "--build-timeout")?,
            jobs: jobs(args.jobs),
            python: false,
        }
    };
    // Read the predictions first: a mistake in them is found before the long
    // run. They are checked against every mutant (a filter only narrows what
    // is scored); without a filter, the run is the form's mutants.
    let predictions = match &args.predictions {
        Some(path) => {
            let every = verify::Options {
                filters: Vec::new(),
                ..options.clone()
            };
            let predictions = crate::lab::predictions::load(
                path,
                &verify::load(&every)?,
                &crate::lab::suite::test_names(),
            )?;
            if predictions.is_empty() {
                return Err(
                    Error::input(format!("{} holds no [[prediction]]", path.display()))
                        .with_next("write the form with `fencelab predict -o predictions.toml`"),
                );
            }
            if options.filters.is_empty() && !args.list {
                options.filters = predictions.iter().map(|p| p.mutant.clone()).collect();
                options.exact = true;
            }
            Some(predictions)
        }
        None => None,
    };
    let mutants = verify::load(&options)?;
    if args.list {
        let text = verify::render_mutant_list(
            &printer.layout(),
            &mutants,
            std::io::stdout().is_terminal(),
        );
        printer.line(text.trim_end());
        return Ok(ExitCode::Success);
    }
    if options.python {
        // Said first, and in the reader's language.
        crate::engine::python::interpreter_in(printer.lang)?;
    }
    let scratch = scratch(cache, &root)?;
    let mut report = verify::run(
        &options,
        &mutants,
        &scratch,
        &mut verify::Live::new(printer),
    )?;
    report.rerun = rerun;
    printer.text(&verify::render_verify_report(&printer.layout(), &report));
    if let Some(predictions) = &predictions
        && report.baseline.passed
    {
        let card = crate::commands::verify::predictions::score(predictions, &report.mutants);
        let text = verify::render_predictions(&printer.layout(), &card, &mutants, printer.lang);
        printer.line(text.trim_end());
        report.predictions = Some(card);
    }
    use crate::output::report_file::{json, write};
    if let Some(path) = &args.json {
        write(path, &json(&report), "write the JSON report to")?;
    }
    let lang = printer.lang;
    if let Some(path) = &args.stryker {
        let text = verify::stryker::render(&report, &mutants, lang);
        write(path, &text, "write the Stryker report to")?;
    }
    if let Some(path) = &args.html {
        let text = verify::html::render(&report, &mutants, lang);
        write(path, &text, "write the HTML report to")?;
    }
    drop(paused);
    if crate::output::github::enabled(args.github) {
        printer.clear_progress();
        crate::output::github::print(&verify::github::annotations(&report, &mutants));
        crate::output::github::append_summary(&verify::github::summary(&report))?;
    }
    Ok(report.summary.exit_code)
}

/// `fencelab verify` with every option that chose what ran, as the user
/// wrote them: the hint it gives runs the same mutants of the same code.
fn rerun_command(args: &VerifyArgs, python: bool) -> String {
    use crate::output::paths::shell_word;
    let mut words = vec!["fencelab verify".to_string()];
    if python && args.implementation.is_none() {
        words.push("--python".into());
    }
    let paths = [
        ("--impl", &args.implementation),
        ("--mutants", &args.mutants),
    ];
    for (flag, path) in paths {
        if let Some(path) = path {
            words.push(format!("{flag} {}", shell_word(&path.to_string_lossy())));
        }
    }
    let limits = [
        ("--timeout", args.timeout),
        ("--build-timeout", args.build_timeout),
    ];
    for (flag, secs) in limits {
        if let Some(secs) = secs {
            words.push(format!("{flag} {secs}"));
        }
    }
    words.join(" ")
}

/// The options of `verify --python`: the project's `mutants-python/` and
/// `python/lease.py` in fencelab's own project, else the ones built in.
fn python_options(args: &VerifyArgs, root: &std::path::Path) -> Result<verify::Options, Error> {
    use crate::lab::python::{FILE, MUTANTS_DIR};
    let own = root.join(MUTANTS_DIR).is_dir() && root.join(FILE).is_file();
    Ok(verify::Options {
        mutants: args
            .mutants
            .clone()
            .or_else(|| own.then(|| in_project(root, MUTANTS_DIR))),
        implementation: args
            .implementation
            .clone()
            .or_else(|| (args.mutants.is_none() && own).then(|| in_project(root, FILE))),
        root: root.to_path_buf(),
        filters: args.filters.clone(),
        exact: args.exact,
        timeout: seconds(args.timeout, "--timeout")?,
        build_timeout: seconds(args.build_timeout, "--build-timeout")?,
        jobs: jobs(args.jobs),
        python: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> VerifyArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            verify: VerifyArgs,
        }
        <Cli as clap::Parser>::parse_from(std::iter::once("verify").chain(line.iter().copied()))
            .verify
    }

    #[test]
    fn the_rerun_command_keeps_every_option_that_chose_what_ran() {
        let line = [
            "--impl",
            "my lab/lib.rs",
            "--mutants",
            "m",
            "--timeout",
            "2.5",
            "-j",
            "3",
            "x",
        ];
        assert_eq!(
            rerun_command(&args(&line), false),
            "fencelab verify --impl 'my lab/lib.rs' --mutants m --timeout 2.5"
        );
        // The edition is said unless the file says it.
        assert_eq!(rerun_command(&args(&[]), true), "fencelab verify --python");
        let line = ["--impl", "lease.py", "--build-timeout", "60"];
        assert_eq!(
            rerun_command(&args(&line), true),
            "fencelab verify --impl lease.py --build-timeout 60"
        );
    }
}
