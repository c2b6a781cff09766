//! The command line: fencelab's subcommands, each a thin front end whose
//! arguments and run live with its command (`commands::*::cli`). This file
//! only dispatches, prints the error of a command that failed, and turns
//! how it ended into the process's exit code.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::commands::cache::CacheArgs;
use crate::commands::check::cli::CheckArgs;
use crate::commands::grade::cli::GradeArgs;
use crate::commands::new::NewArgs;
use crate::commands::predict::cli::PredictArgs;
use crate::commands::verify::cli::VerifyArgs;
use crate::commands::worksheet::WorksheetArgs;
use crate::commands::{cache, check, grade, new, predict, verify, worksheet};
use crate::exit::ExitCode;
use crate::output::printer::{Printer, Verbosity};
use crate::output::style::ColorChoice;
use crate::output::width::wrap;

/// A hands-on lab about leases and fencing tokens, and the engine that judges it.
#[derive(Debug, Parser)]
#[command(name = "fencelab", version)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to use colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Where scratch builds are cached [default: FENCELAB_CACHE, else
    /// CARGO_TARGET_DIR, else fencelab's own target directory when it runs
    /// from one, else ~/.cache/fencelab].
    #[arg(long, global = true, value_name = "DIR")]
    pub cache: Option<std::path::PathBuf>,
    /// Say only the verdict and what failed.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Say everything (every mutant's line, the whole kill matrix, the tests that kill nothing).
    #[arg(long, short, global = true)]
    pub verbose: bool,
    /// Refuse to run untrusted code (exit 4) where this machine cannot enforce
    /// every layer of the cage (see DESIGN.md, "What a run trusts").
    #[arg(long, global = true)]
    pub require_isolation: bool,
}

impl Cli {
    /// The command line's description, with each command's exit codes at the
    /// end of its `--help`.
    pub(crate) fn command_with_exit_codes() -> clap::Command {
        // Help wraps at the terminal's width (COLUMNS too), as every screen.
        let mut command = Cli::command()
            .term_width(crate::output::width::terminal_width())
            .after_help(exit_codes_help(""));
        let names: Vec<String> = command
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        for name in names {
            command = command.mut_subcommand(&name, |mut c| {
                // They print a text: nothing is built, run or judged. An
                // argument of their own keeps clap from adding the global one.
                if ["worksheet", "predict"].contains(&name.as_str()) {
                    use clap::{Arg, ArgAction};
                    let flag = |id: &'static str, long: &'static str| {
                        Arg::new(id)
                            .long(long)
                            .action(ArgAction::SetTrue)
                            .hide(true)
                    };
                    c = c
                        .arg(flag("quiet", "quiet").short('q').conflicts_with("verbose"))
                        .arg(flag("verbose", "verbose").short('v'))
                        .arg(flag("require_isolation", "require-isolation"))
                        .arg(
                            Arg::new("cache")
                                .long("cache")
                                .value_parser(clap::value_parser!(std::path::PathBuf))
                                .hide(true),
                        );
                }
                c.after_help(exit_codes_help(&name))
            });
        }
        command
    }

    /// How much to say.
    pub(crate) fn verbosity(&self) -> Verbosity {
        match (self.quiet, self.verbose) {
            (true, _) => Verbosity::Quiet,
            (_, true) => Verbosity::Verbose,
            _ => Verbosity::Normal,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Prove that the suite kills every mutant as declared (for instructors, before term).
    Verify(VerifyArgs),
    /// Create a learner's crate: the API to implement, the suite, the worksheet.
    New(NewArgs),
    /// Show a learner's progress step by step, and what the first failing step needs.
    Check(CheckArgs),
    /// One hint more on each call, for the first test of a step that does not pass.
    Hint(crate::commands::check::hint::HintArgs),
    /// Print the worksheet as Markdown.
    Worksheet(WorksheetArgs),
    /// Write the blank predictions form: which observation exposes each of the worksheet's fragments?
    Predict(PredictArgs),
    /// Grade submissions for CI: JSON, JUnit, CSV, Gradescope, PrairieLearn, GitHub Classroom and Actions.
    Grade(GradeArgs),
    /// After the deadline: what the class got wrong, from grade's JSON reports (terminal, JSON, one HTML page).
    Class(crate::commands::class::ClassArgs),
    /// Where the scratch builds are cached and how big they are; `cache clean` removes them.
    Cache(CacheArgs),
    /// Write a hosted autograder (Gradescope's zip, PrairieLearn's grader image) that grades with fencelab.
    Autograder(crate::commands::grade::bundle::AutograderArgs),
}

/// Says once, before a command that runs untrusted code, what this machine
/// does not enforce of the cage (`bridge::sandbox`); an error instead with
/// `--require-isolation`.
fn isolation(required: bool, printer: &mut Printer) -> Result<(), crate::error::Error> {
    use crate::lab::lang::Lang;
    let gaps = crate::bridge::sandbox::Layers::reported().not_enforced();
    let lang = printer.lang;
    let text = |(en, ja): &(&'static str, &'static str)| -> &'static str {
        if lang == Lang::Ja { ja } else { en }
    };
    if required && !gaps.is_empty() {
        let list: Vec<&str> = gaps.iter().map(text).collect();
        return Err(crate::error::Error::environment(match lang {
            Lang::En => format!("--require-isolation: {}", list.join("; ")),
            Lang::Ja => format!("--require-isolation: {}", list.join("。")),
        })
        .with_next(match lang {
            Lang::En => "run on a machine whose kernel allows unprivileged user namespaces and has Landlock, with a memory cgroup fencelab can write in, or drop --require-isolation",
            Lang::Ja => "特権なしのユーザー名前空間と Landlock が使え、fencelab が書き込めるメモリ cgroup があるマシンで実行するか、--require-isolation を外してください",
        }));
    }
    // Wrapped as the printer shows it: after its label ("warning: ", "警告: "),
    // then indented by two.
    let label = if lang == Lang::Ja {
        "xxxxx "
    } else {
        "xxxxxxxx "
    };
    let width = crate::output::width::terminal_width().saturating_sub(2);
    for gap in &gaps {
        let wrapped = crate::output::width::wrap(&format!("{label}{}", text(gap)), width);
        let shown = wrapped.trim_end().replace('\n', "\n  ");
        printer.warning(shown.strip_prefix(label).unwrap_or(&shown));
    }
    Ok(())
}

/// Runs the command line; the exit code says how it went.
pub fn main() -> std::process::ExitCode {
    let matches = Cli::command_with_exit_codes().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let mut printer = Printer::new(cli.color, cli.verbosity(), crate::commands::default_lang());
    let untrusted = match &cli.command {
        Command::Check(_) | Command::Grade(_) | Command::Hint(_) => true,
        Command::Verify(args) => args.implementation.is_some(),
        _ => false,
    };
    // Said in the command's own language (what --lang or the lab says).
    let said_lang = match &cli.command {
        Command::Check(args) => Some(check::cli::lang(args)),
        Command::Verify(args) => args.lang,
        _ => None,
    };
    if let Some(lang) = said_lang {
        printer.lang = lang;
    }
    if untrusted && let Err(err) = isolation(cli.require_isolation, &mut printer) {
        printer.error(&err);
        return err.exit_code().into();
    }
    // Where scratch builds go is handed to the commands that build, as a value.
    let cache = cli.cache.as_deref();
    let result = match cli.command {
        Command::Verify(args) => verify::cli::main(args, cache, &mut printer),
        Command::New(args) => new::main(args, &mut printer),
        Command::Check(args) => check::cli::main(args, cache, &mut printer),
        Command::Hint(args) => check::hint::main(args, cache, &mut printer),
        Command::Predict(args) => predict::cli::main(args, &mut printer),
        Command::Grade(args) => grade::cli::main(args, cache, &mut printer),
        Command::Worksheet(args) => worksheet::main(args),
        Command::Class(args) => crate::commands::class::main(args, &mut printer),
        Command::Cache(args) => cache::main(args, cache, &mut printer),
        Command::Autograder(args) => grade::bundle::main(args, &mut printer),
    };
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            printer.error(&err);
            err.exit_code().into()
        }
    }
}

/// The "Exit codes" section of `command`'s `--help`, wrapped to 80 columns.
fn exit_codes_help(command: &str) -> String {
    let mut text = String::from("Exit codes:");
    for code in ExitCode::ALL {
        if let Some(meaning) = code.meaning(command) {
            let wrapped = wrap(meaning, 75);
            let mut lines = wrapped.lines();
            text.push_str(&format!(
                "\n  {}  {}",
                code.code(),
                lines.next().unwrap_or("")
            ));
            for line in lines {
                text.push_str(&format!("\n     {line}"));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails where worksheet's help lists the global options, or where the
    /// hidden ones no longer parse into `Cli` (clap panics at a mismatch).
    #[test]
    fn a_text_commands_help_lists_only_what_it_uses() {
        let mut command = Cli::command_with_exit_codes();
        // As clap shows it: the global options propagated.
        command.build();
        for name in ["worksheet", "predict"] {
            let sub = command.find_subcommand(name).unwrap();
            let help = sub.clone().render_help().to_string();
            for hidden in ["--quiet", "--verbose", "--require-isolation", "--cache"] {
                assert!(!help.contains(hidden), "{name}: {help}");
            }
        }
        let check = command.find_subcommand("check").unwrap();
        assert!(check.clone().render_help().to_string().contains("--quiet"));
        for args in [
            &["fencelab", "worksheet", "-q", "--cache", "/tmp/c"][..],
            &["fencelab", "-v", "predict"],
            &["fencelab", "worksheet", "--require-isolation"],
        ] {
            let matches = Cli::command_with_exit_codes()
                .try_get_matches_from(args)
                .unwrap();
            let cli = Cli::from_arg_matches(&matches).unwrap();
            assert!(
                cli.quiet || cli.verbose || cli.require_isolation,
                "{args:?}"
            );
        }
    }

    #[test]
    fn every_command_s_help_lists_its_exit_codes() {
        let command = Cli::command_with_exit_codes();
        for sub in command.get_subcommands() {
            let help = sub.clone().render_help().to_string();
            assert!(help.contains("Exit codes:"), "{}: {help}", sub.get_name());
            for code in ExitCode::ALL {
                if code.meaning(sub.get_name()).is_some() {
                    assert!(
                        help.contains(&format!("\n  {}  ", code.code())),
                        "{} lacks {}: {help}",
                        sub.get_name(),
                        code.code()
                    );
                }
            }
            let section = &help[help.find("Exit codes:").unwrap_or(0)..];
            assert!(
                section.lines().all(|l| l.chars().count() <= 80),
                "{section}"
            );
        }
    }

    /// The limits' defaults are the policy's (`engine/policy.rs`); `--help`
    /// states them in words, so it is held to the policy here.
    #[test]
    fn the_defaults_help_states_are_the_policy_s() {
        use crate::engine::policy::{
            BASELINE_LIMIT, DEFAULT_BUDGET, DEFAULT_BUILD_LIMIT, DEFAULT_TEST_LIMIT, LIMIT_FACTOR,
            LIMIT_FLOOR, Policy, Trust,
        };
        let help = |name: &str| {
            let command = Cli::command_with_exit_codes();
            let sub = command.find_subcommand(name).expect("a command").clone();
            sub.term_width(1000).render_help().to_string()
        };
        let secs = |d: std::time::Duration| d.as_secs();
        let test = format!(
            "per test, in seconds [default: {}]",
            secs(DEFAULT_TEST_LIMIT)
        );
        for (name, trust) in [("check", Trust::Learner), ("grade", Trust::Submissions)] {
            assert!(help(name).contains(&test), "{name}: {}", help(name));
            assert_eq!(Policy::of(trust).limit_after(None), DEFAULT_TEST_LIMIT);
        }
        let budget = format!("(\"over budget\") [default: {}]", secs(DEFAULT_BUDGET));
        assert!(help("grade").contains(&budget), "{}", help("grade"));
        assert_eq!(Policy::of(Trust::Submissions).budget, Some(DEFAULT_BUDGET));
        let build = format!("[default: {}]", secs(DEFAULT_BUILD_LIMIT));
        assert!(help("grade").contains(&build), "{}", help("grade"));
        assert_eq!(
            Policy::of(Trust::Submissions).build_limit,
            Some(DEFAULT_BUILD_LIMIT)
        );
        let verify = format!(
            "[default: max({}, {LIMIT_FACTOR} x the baseline)]; the baseline's tests get at least {} s",
            secs(LIMIT_FLOOR),
            secs(BASELINE_LIMIT)
        );
        assert!(help("verify").contains(&verify), "{}", help("verify"));
    }
}
