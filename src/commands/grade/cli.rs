//! `fencelab grade`'s command line: its arguments, the reports it writes.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::commands::{jobs, project_root, scratch, seconds};
use crate::engine::policy::{Policy, Trust};
use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::course::{Course, Visibility};
use crate::lab::edition::Edition;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub(crate) struct GradeArgs {
    /// Learner crates (their src/lib.rs is graded) or single .rs files; with --merge, the shards' JSON reports.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Merge the JSON reports of `--shard K/N` runs (the PATHs) into one, and write every format from it, grading nothing.
    #[arg(long)]
    pub merge: bool,
    /// The least score (0 to 100) that passes; below it the exit code is 1 [default: the course file's, else 0].
    #[arg(long, value_name = "X")]
    pub min_score: Option<f64>,
    /// Write JUnit XML to FILE (GitLab, Jenkins).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write fencelab's JSON report to FILE (schema in README.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write Gradescope's results.json to FILE (one submission only).
    #[arg(long, value_name = "FILE")]
    pub gradescope: Option<PathBuf>,
    /// When Gradescope shows the tests to students [default: the course file's, else visible].
    #[arg(long, value_enum, value_name = "WHEN")]
    pub gradescope_visibility: Option<Visibility>,
    /// When Gradescope shows the autograder's output (stdout) to students [default: the course file's, else hidden].
    #[arg(long, value_enum, value_name = "WHEN")]
    pub gradescope_stdout_visibility: Option<Visibility>,
    /// Write PrairieLearn's external grader results.json to FILE (one submission only).
    #[arg(long, value_name = "FILE")]
    pub prairielearn: Option<PathBuf>,
    /// Append GitHub Classroom's result (`result=` base64) to $GITHUB_OUTPUT, for its autograding reporter (one submission only).
    #[arg(long)]
    pub classroom: bool,
    /// Write a CSV gradebook to FILE: one row per submission, its total and per-step points.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Print GitHub Actions annotations and append a summary to $GITHUB_STEP_SUMMARY [default: when GITHUB_ACTIONS=true].
    #[arg(long)]
    pub github: bool,
    /// A time limit per test, in seconds [default: 10]. A test also stops when its implementation spins (uses 3% of the limit in processor time before it answers a call, at least 0.3 s) or waits with nothing running (for a fifth of it, at least 1 s), and fails for time only if it stops again when run alone after the others: a busy machine costs no test its verdict.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// How long the confirmations of one submission's tests that stop for time may take, in seconds: each stopped again spends what stopped it (the processor time, the waiting or the limit); past the budget, its other stopped tests fail unconfirmed ("over budget") [default: 15]
    #[arg(long, value_name = "SECS")]
    pub budget: Option<f64>,
    /// A time limit for the build, in seconds [default: 600]
    #[arg(long, value_name = "SECS")]
    pub build_timeout: Option<f64>,
    /// How many tests run at once; a test whose processes all wait (hanging, most likely) makes room for another, up to 2N in all [default: four per CPU].
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Grade only share K of N of the paths (for parallel runners), e.g. 2/4; `auto` reads it from the environment (FENCELAB_SHARD, JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, CI_NODE_INDEX).
    #[arg(long, value_name = "K/N|auto", value_parser = crate::commands::grade::shard::parse_arg)]
    pub shard: Option<crate::commands::grade::shard::ShardArg>,
    /// Keep one result per submission in DIR (shared by every shard) and grade only what is not there yet, so a retried or duplicated run grades nothing twice; `--merge DIR` reads the reports it leaves there.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["merge", "tests"])]
    pub results: Option<PathBuf>,
    /// Grade learners' own tests instead of implementations: each PATH is a
    /// lab crate (its tests/mine/ is graded) or a test file. Every test must
    /// be valid (pass on every correct implementation); the score is then how
    /// many mutants they catch, each step weighing as the course file says
    /// (the same by default).
    #[arg(long)]
    pub tests: bool,
    /// With --tests: the mutants to catch [default: fencelab's].
    #[arg(long, value_name = "DIR", requires = "tests")]
    pub mutants: Option<PathBuf>,
    /// With --tests: the correct implementations to pass on [default: fencelab's].
    #[arg(long, value_name = "DIR", requires = "tests")]
    pub wheats: Option<PathBuf>,
    /// The course file: step weights, Gradescope's visibility per test, what a learner's test report reveals, default limits (README, "A course file"); a flag given here wins.
    #[arg(long, value_name = "FILE")]
    pub course: Option<PathBuf>,
    /// What the course file says (resolved once, in `main`).
    #[arg(skip)]
    pub course_read: Box<Course>,
}

impl GradeArgs {
    /// The gate, as given or as the course file says (0 unless said).
    pub(crate) fn min_score(&self) -> f64 {
        self.min_score.unwrap_or(0.0)
    }

    /// The course file's defaults under the flags: resolved here, once.
    fn resolve(&mut self) -> Result<(), Error> {
        if let Some(path) = &self.course {
            *self.course_read = Course::load(path)?;
        }
        let limits = self.course_read.limits;
        self.min_score = self.min_score.or(limits.min_score);
        self.timeout = self.timeout.or(limits.test_secs);
        self.budget = self.budget.or(limits.budget_secs);
        self.build_timeout = self.build_timeout.or(limits.build_secs);
        let gradescope = &self.course_read.gradescope;
        self.gradescope_visibility = self.gradescope_visibility.or(gradescope.visibility);
        self.gradescope_stdout_visibility = (self.gradescope_stdout_visibility)
            .or(gradescope.stdout_visibility)
            .or(Some(Visibility::Hidden));
        Ok(())
    }
}

pub(crate) fn main(
    mut args: GradeArgs,
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<ExitCode, Error> {
    args.resolve()?;
    let one_only = [
        (args.gradescope.is_some(), "--gradescope"),
        (args.prairielearn.is_some(), "--prairielearn"),
        (args.classroom, "--classroom"),
    ];
    if args.classroom {
        // Known before the long run.
        classroom_output()?;
    }
    // Nothing a submission prints runs as a workflow command.
    let paused = crate::output::github::enabled(args.github).then(crate::output::github::pause);
    let report = if args.merge {
        crate::commands::grade::merge::merge(&args.paths)?
    } else {
        grade(&args, &one_only, cache, printer)?
    };
    if let Some((_, flag)) = one_only.iter().find(|(on, _)| *on)
        && report.submissions.len() != 1
    {
        return Err(Error::input(format!(
            "{flag} writes the results of one submission, and the report has {}",
            report.submissions.len()
        ))
        .with_next("grade one submission per run for it, or use --json/--junit/--csv"));
    }
    let text = crate::commands::grade::render_grade(&printer.layout(), &report);
    printer.line(text.trim_end());
    write_reports(&args, &report)?;
    drop(paused);
    if crate::output::github::enabled(args.github) {
        use crate::output::github;
        github::print(&crate::commands::grade::github::annotations(&report));
        if github::summary_file().is_some() {
            github::append_summary(&crate::commands::grade::github::summary(&report))?;
        } else {
            printer.warning(github::no_summary_warning(printer.lang));
        }
    }
    Ok(report.exit_code)
}

/// Grades the submissions the arguments name.
fn grade(
    args: &GradeArgs,
    one_only: &[(bool, &str)],
    cache: Option<&Path>,
    printer: &mut Printer,
) -> Result<crate::commands::grade::GradeReport, Error> {
    if !(0.0..=100.0).contains(&args.min_score()) {
        return Err(Error::input(format!(
            "--min-score {}: give a score from 0 to 100",
            args.min_score()
        )));
    }
    let (paths, shard) = crate::commands::grade::shard::select(&args.paths, args.shard, printer)?;
    if let Some((_, flag)) = one_only.iter().find(|(on, _)| *on)
        && paths.len() != 1
    {
        return Err(Error::input(format!(
            "{flag} writes the results of one submission, and {} are graded here",
            paths.len()
        ))
        .with_next("grade one submission per run for it, or use --json/--junit/--csv"));
    }
    if args.tests {
        return super::learner_tests::grade(args, &paths, shard, cache, printer);
    }
    refuse_mixed_editions(&args.paths)?;
    if paths.iter().any(|p| Edition::of_file(p) == Edition::Python) {
        // Said first, and in the reader's language.
        crate::engine::python::interpreter_in(printer.lang)?;
    }
    // Every input is read and checked before anything is built; one that
    // cannot be used scores 0 with its reason, and the others are graded.
    let inputs = crate::commands::grade::read_all(&paths);
    let options = crate::commands::grade::Options {
        min_score: args.min_score(),
        // The policy's limits, with the user's on top.
        policy: Policy::of(Trust::Submissions)
            .with_limits(
                seconds(args.timeout, "--timeout")?,
                seconds(args.build_timeout, "--build-timeout")?,
            )
            .with_budget(seconds(args.budget, "--budget")?),
        jobs: jobs(args.jobs),
        shard,
        weights: args.course_read.weights,
    };
    let scratch = scratch(cache, &project_root())?;
    let count = match inputs.len() {
        1 => "1 submission".to_string(),
        n => format!("{n} submissions"),
    };
    if let Some(dir) = &args.results {
        return crate::commands::grade::results::run(dir, &options, &inputs, &scratch, printer);
    }
    if shard.is_none() {
        printer.status(Verb::Grading, &count);
    }
    let mut live = crate::commands::grade::Live::new(printer, inputs.len());
    crate::commands::grade::run(&options, &inputs, &scratch, &mut live)
}

/// One run grades one edition of the lab: Python files (`.py`) or Rust
/// submissions, never both (their scores would not be of the same lab).
fn refuse_mixed_editions(paths: &[PathBuf]) -> Result<(), Error> {
    let (Some(py), Some(rs)) = (
        paths
            .iter()
            .find(|p| Edition::of_file(p) == Edition::Python),
        paths.iter().find(|p| Edition::of_file(p) == Edition::Rust),
    ) else {
        return Ok(());
    };
    Err(Error::input(format!(
        "{} is a Python submission and {} is not: one run grades one edition of the lab",
        py.display(),
        rs.display()
    ))
    .with_next("grade the .py files and the Rust submissions in two runs"))
}

/// Writes every report the arguments ask for.
fn write_reports(
    args: &GradeArgs,
    report: &crate::commands::grade::GradeReport,
) -> Result<(), Error> {
    use crate::commands::grade::{classroom, csv, gradescope, junit, prairielearn};
    use crate::output::report_file::json;
    let write = |path: &Path, text: String| crate::output::report_file::write(path, &text, "write");
    if let Some(path) = &args.junit {
        write(path, junit::render(report))?;
    }
    if let Some(path) = &args.json {
        write(path, json(report))?;
    }
    if let Some(path) = &args.csv {
        write(path, csv::render(report))?;
    }
    if let Some(path) = &args.gradescope {
        let results = gradescope::results(
            &report.submissions[0],
            &gradescope::Shown {
                results: args.gradescope_visibility.unwrap_or_default(),
                stdout: args.gradescope_stdout_visibility.unwrap_or_default(),
                tests: &args.course_read.gradescope,
            },
        );
        write(path, json(&results))?;
    }
    if let Some(path) = &args.prairielearn {
        write(path, json(&prairielearn::results(&report.submissions[0])))?;
    }
    if args.classroom {
        let path = classroom_output()?;
        use std::io::Write as _;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| {
                f.write_all(classroom::output_line(&report.submissions[0]).as_bytes())
            })
            .map_err(|e| Error::io("append the Classroom result to $GITHUB_OUTPUT", &path, e))?;
    }
    Ok(())
}

/// Where `--classroom` writes: the file `$GITHUB_OUTPUT` names.
fn classroom_output() -> Result<PathBuf, Error> {
    std::env::var_os("GITHUB_OUTPUT")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Error::input(
                "--classroom writes GitHub Classroom's result to $GITHUB_OUTPUT, which is not set",
            )
            .with_next("run it as a step of a GitHub Actions workflow (see README, \"GitHub Classroom\"), or set GITHUB_OUTPUT to a file")
        })
}
