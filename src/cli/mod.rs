//! The command line: fencelab's subcommands and their arguments. Each
//! subcommand is a thin front end over the engine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::commands::verify;
use crate::engine::scratch::Scratch;
use crate::error::Error;
use crate::lab::worksheet::{Lang, Worksheet};
use crate::output::printer::Printer;
use crate::output::style::ColorChoice;

/// A hands-on lab about leases and fencing tokens, and the engine that judges it.
#[derive(Debug, Parser)]
#[command(name = "fencelab", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to use colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Prove that the suite kills every mutant as declared (for instructors, before term).
    Verify(VerifyArgs),
    /// Create a learner's crate: the API to implement, the suite, the worksheet.
    New(NewArgs),
    /// Show a learner's progress step by step, and what the first failing step needs.
    Check(CheckArgs),
    /// Print the worksheet as Markdown.
    Worksheet(WorksheetArgs),
    /// Write the blank predictions form: which observation exposes each mutant?
    Predict(PredictArgs),
    /// Grade submissions for CI, with JUnit, JSON and Gradescope output.
    Grade(GradeArgs),
}

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

/// The worksheet's language.
fn parse_lang(text: &str) -> Result<Lang, String> {
    text.parse::<Lang>().map_err(|e| e.to_string())
}

/// The language to use when none is given: Japanese when the locale is.
fn default_lang() -> Lang {
    let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    match locale {
        Some(l) if l.starts_with("ja") => Lang::Ja,
        _ => Lang::En,
    }
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The directory to create (it must not exist, or be empty).
    pub dir: PathBuf,
    /// The language of the worksheet and the doc comments: ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The learner's crate [default: the crate around the current directory].
    pub dir: Option<PathBuf>,
    /// Only this step (1 to 8).
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    /// ja or en [default: the crate's, then the locale's].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// A time limit per test, in seconds [default: 10].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// How many tests run at once [default: twice the number of CPUs].
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
}

#[derive(Debug, Args)]
pub struct WorksheetArgs {
    /// ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
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
    /// Also write the results as JSON to FILE (schema in README.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// A fixed time limit per test of a mutant, in seconds [default: max(10, 5 x the baseline)]; the baseline's tests get at least 60 s.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// A time limit for the build, in seconds.
    #[arg(long, value_name = "SECS")]
    pub build_timeout: Option<f64>,
    /// How many tests run at once [default: twice the number of CPUs].
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Score the predictions in FILE (written with `fencelab predict`) against what happened.
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,
    /// The language of the predictions' explanations: ja or en [default: from the locale].
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
}

/// The nearest directory from the current one up that holds a Cargo.toml (the
/// current directory if none does).
pub fn project_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors()
        .find(|dir| dir.join("Cargo.toml").is_file())
        .map_or(cwd.clone(), Path::to_path_buf)
}

fn seconds(value: Option<f64>, flag: &str) -> Result<Option<Duration>, Error> {
    match value {
        None => Ok(None),
        Some(secs) if secs.is_finite() && secs > 0.0 => Ok(Some(Duration::from_secs_f64(secs))),
        Some(secs) => Err(Error::input(format!(
            "{flag} {secs}: give a number of seconds greater than 0"
        ))),
    }
}

/// Runs the command line; the exit code says how it went.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut printer = Printer::new(cli.color);
    let result = match cli.command {
        Command::Verify(args) => run_verify(args, &mut printer),
        Command::New(args) => run_new(args, &mut printer),
        Command::Check(args) => run_check(args, &mut printer),
        Command::Predict(args) => run_predict(args, &mut printer),
        Command::Grade(args) => run_grade(args, &mut printer),
        Command::Worksheet(args) => {
            let worksheet = Worksheet::builtin();
            print!(
                "{}",
                crate::commands::worksheet::render(
                    &worksheet,
                    args.lang.unwrap_or_else(default_lang)
                )
            );
            Ok(0)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            printer.error(&err);
            ExitCode::from(err.exit_code() as u8)
        }
    }
}

/// `name` in the project: relative when the project is the current directory,
/// so that messages show the short path.
fn in_project(root: &Path, name: &str) -> PathBuf {
    match std::env::current_dir() {
        Ok(cwd) if cwd == root => PathBuf::from(name),
        _ => root.join(name),
    }
}

fn run_verify(args: VerifyArgs, printer: &mut Printer) -> Result<i32, Error> {
    let root = project_root();
    let options = verify::Options {
        // Outside fencelab's project (in a learner's crate, say) the mutants
        // and the reference built into fencelab stand in for the directories.
        mutants: args.mutants.clone().or_else(|| {
            Some(in_project(&root, "mutants")).filter(|_| root.join("mutants").is_dir())
        }),
        implementation: args.implementation.clone().or_else(|| {
            let reference = root.join(crate::lab::mutant::DEFAULT_FILE);
            (args.mutants.is_none() && root.join("mutants").is_dir() && reference.is_file())
                .then(|| in_project(&root, crate::lab::mutant::DEFAULT_FILE))
        }),
        root: root.clone(),
        filters: args.filters,
        exact: args.exact,
        timeout: seconds(args.timeout, "--timeout")?,
        build_timeout: seconds(args.build_timeout, "--build-timeout")?,
        jobs: args
            .jobs
            .unwrap_or_else(crate::engine::runner::default_jobs)
            .max(1),
    };
    let scratch = Scratch::locate(&root.join("target"))?;
    let mutants = verify::load(&options)?;
    // Read the predictions first: a mistake in them is found before the long run.
    let predictions = match &args.predictions {
        Some(path) => {
            // Checked against every mutant: a filter only narrows what is scored.
            let every = verify::Options {
                filters: Vec::new(),
                ..options.clone()
            };
            Some(crate::commands::predict::load(
                path,
                &verify::load(&every)?,
                &crate::lab::suite::test_names(),
            )?)
        }
        None => None,
    };
    let mut report = verify::run(&options, &mutants, &scratch, printer)?;
    printer.verify_report(&report);
    if let Some(predictions) = &predictions
        && report.baseline.passed
    {
        let card = crate::commands::predict::score(predictions, &report);
        let text =
            printer.render_predictions(&card, &mutants, args.lang.unwrap_or_else(default_lang));
        printer.line(text.trim_end());
        report.predictions = Some(card);
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&report).expect("the report serializes");
        std::fs::write(path, json + "\n")
            .map_err(|e| Error::io("write the JSON report to", path, e))?;
    }
    Ok(report.summary.exit_code)
}

fn run_new(args: NewArgs, printer: &mut Printer) -> Result<i32, Error> {
    let lang = args.lang.unwrap_or_else(default_lang);
    let name = crate::commands::new::create(&args.dir, &Worksheet::builtin(), lang)?;
    printer.status(
        "Created",
        &format!("the lab crate `{name}` in {}", args.dir.display()),
    );
    let dir = args.dir.display();
    let next = match lang {
        Lang::Ja => format!(
            "次に:\n  cd {dir}\n  fencelab check      # ステップごとの進み具合\n  cargo test          # すべてのテスト\n課題は {dir}/WORKSHEET.md にあります。"
        ),
        Lang::En => format!(
            "Next:\n  cd {dir}\n  fencelab check      # progress per step\n  cargo test          # every test\nThe worksheet is {dir}/WORKSHEET.md."
        ),
    };
    printer.line(&next);
    Ok(0)
}

fn run_check(args: CheckArgs, printer: &mut Printer) -> Result<i32, Error> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => project_root(),
    };
    let lang = args
        .lang
        .or_else(|| crate::commands::check::crate_lang(&dir))
        .unwrap_or_else(default_lang);
    let options = crate::commands::check::Options {
        dir: dir.clone(),
        step: args.step,
        timeout: seconds(args.timeout, "--timeout")?,
        jobs: args
            .jobs
            .unwrap_or_else(crate::engine::runner::default_jobs)
            .max(1),
    };
    let scratch = Scratch::locate(&dir.join("target"))?;
    printer.status(
        "Checking",
        &crate::commands::check::learner_file(&dir)
            .display()
            .to_string(),
    );
    let checked = crate::commands::check::run(&options, &scratch, |done, total| {
        printer.progress(&format!("  running tests: {done}/{total}"));
    })?;
    let text = printer.render_check(&checked, &Worksheet::builtin(), lang);
    printer.line(text.trim_end());
    Ok(match &checked {
        crate::commands::check::Checked::DoesNotCompile { .. } => {
            crate::commands::check::exit::DOES_NOT_COMPILE
        }
        ran if ran.first_failing().is_some() => crate::commands::check::exit::SOME_FAIL,
        _ => crate::commands::check::exit::ALL_PASS,
    })
}

fn run_predict(args: PredictArgs, printer: &mut Printer) -> Result<i32, Error> {
    let root = project_root();
    let dir = args
        .mutants
        .or_else(|| Some(root.join("mutants")).filter(|d| d.is_dir()));
    let mutants = match &dir {
        Some(dir) => crate::lab::mutant::load_dir(dir, &crate::lab::suite::test_names())?,
        None => crate::lab::mutant::builtin(),
    };
    let form = crate::commands::predict::template(&mutants, args.lang.unwrap_or_else(default_lang));
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
            printer.status(
                "Wrote",
                &format!("{} ({} mutants)", path.display(), mutants.len()),
            );
        }
    }
    Ok(0)
}

fn run_grade(args: GradeArgs, printer: &mut Printer) -> Result<i32, Error> {
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
    // Every input is read and checked before anything is built.
    let mut submissions = Vec::new();
    let mut problems = Vec::new();
    for path in &paths {
        match crate::commands::grade::read_submission(path) {
            Ok(submission) => submissions.push(submission),
            Err(err) => problems.push(err.to_string()),
        }
    }
    if !problems.is_empty() {
        return Err(Error::input(problems.join("\n")));
    }
    if args.gradescope.is_some() && submissions.len() != 1 {
        return Err(Error::input(format!(
            "--gradescope writes the results of one submission, and {} are graded here",
            submissions.len()
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
    printer.status("Grading", &format!("{} submission(s)", submissions.len()));
    let report = crate::commands::grade::run(&options, &submissions, &scratch, |done, total| {
        printer.progress(&format!("  running tests: {done}/{total}"));
    })?;
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
