//! `fencelab grade`'s command line: its arguments, the reports it writes.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::commands::{project_root, seconds};
use crate::engine::scratch::Scratch;
use crate::error::Error;
use crate::exit::ExitCode;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub struct GradeArgs {
    /// Learner crates (their src/lib.rs is graded) or single .rs files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The least score (0 to 100) that passes; below it the exit code is 1.
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    pub min_score: f64,
    /// Write JUnit XML to FILE (GitLab, Jenkins).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write fencelab's JSON report to FILE (schema in README.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write Gradescope's results.json to FILE (one submission only).
    #[arg(long, value_name = "FILE")]
    pub gradescope: Option<PathBuf>,
    /// A time limit per test, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
    /// A time limit for the build, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub build_timeout: f64,
    /// How many tests run at once [default: twice the number of CPUs].
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Grade only share K of N of the paths (for parallel CI runners), e.g. 2/4.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
}

fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?}: give K/N with 1 <= K <= N, e.g. 2/4");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

pub fn main(args: GradeArgs, printer: &mut Printer) -> Result<ExitCode, Error> {
    // grade's reports are for CI and instructors, in English throughout.
    printer.lang = crate::lab::lang::Lang::En;
    if !(0.0..=100.0).contains(&args.min_score) {
        return Err(Error::input(format!(
            "--min-score {}: give a score from 0 to 100",
            args.min_score
        )));
    }
    let paths = match args.shard {
        Some((k, n)) => crate::commands::grade::shard(&args.paths, k, n),
        None => args.paths.clone(),
    };
    // Every input is read and checked before anything is built; one that
    // cannot be used scores 0 with its reason, and the others are graded.
    let inputs = crate::commands::grade::read_all(&paths);
    if args.gradescope.is_some() && inputs.len() != 1 {
        return Err(Error::input(format!(
            "--gradescope writes the results of one submission, and {} are graded here",
            inputs.len()
        ))
        .with_next("grade one submission per run for Gradescope, or use --json/--junit"));
    }
    let options = crate::commands::grade::Options {
        paths,
        min_score: args.min_score,
        test_limit: seconds(Some(args.timeout), "--timeout")?
            .unwrap_or(crate::commands::grade::DEFAULT_TEST_LIMIT),
        build_limit: seconds(Some(args.build_timeout), "--build-timeout")?
            .unwrap_or(crate::commands::grade::DEFAULT_BUILD_LIMIT),
        jobs: args
            .jobs
            .unwrap_or_else(crate::engine::runner::default_jobs)
            .max(1),
        shard: args.shard,
    };
    let root = project_root();
    let scratch = Scratch::locate(&root.join("target"))?;
    if crate::bridge::sandbox::available().is_none() {
        printer.warning(
            "this kernel has no Landlock, so a submission may write wherever the grader can; \
             run the grader as a user of its own",
        );
    }
    let count = match inputs.len() {
        1 => "1 submission".to_string(),
        n => format!("{n} submissions"),
    };
    printer.status(Verb::Grading, &count);
    printer.done = 0;
    printer.total = inputs.len();
    let report = crate::commands::grade::run(&options, &inputs, &scratch, printer)?;
    let text = printer.render_grade(&report);
    printer.line(text.trim_end());
    let write = |path: &Path, text: String| {
        std::fs::write(path, text).map_err(|e| Error::io("write", path, e))
    };
    if let Some(path) = &args.junit {
        write(path, crate::commands::grade::junit::render(&report))?;
    }
    if let Some(path) = &args.json {
        write(
            path,
            serde_json::to_string_pretty(&report).expect("the report serializes") + "\n",
        )?;
    }
    if let Some(path) = &args.gradescope {
        let results = crate::commands::grade::gradescope::results(&report.submissions[0]);
        write(
            path,
            serde_json::to_string_pretty(&results).expect("the results serialize") + "\n",
        )?;
    }
    Ok(report.exit_code)
}
