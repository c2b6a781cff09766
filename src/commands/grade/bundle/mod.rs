//! `fencelab autograder gradescope|prairielearn -o DIR`: a directory laid
//! out as the hosted autograder takes it, so that `grade` runs there as a
//! well-behaved worker.
//!
//! Both layouts hold this fencelab program, the reference as `warm.rs`, and the
//! scripts beside this file, verbatim. fencelab is a copy of the one running,
//! so the platform's machine must be able to run it: Linux on x86-64 for both.
//! `prebuild.sh` builds everything but a submission's own file before any
//! submission arrives. Grading is then offline and compiles one file.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::error::Error;
use crate::exit::ExitCode;
use crate::lab::lang::Lang;
use crate::output::printer::{Printer, Verb};

#[derive(Debug, Args)]
pub(crate) struct AutograderArgs {
    /// The platform: gradescope or prairielearn.
    #[arg(value_enum)]
    pub platform: Platform,
    /// The directory to write (created; files of the same names are replaced).
    #[arg(long, short, value_name = "DIR")]
    pub out: PathBuf,
    /// The course file every submission is graded by (README, "A course file"); checked now, copied as course.toml.
    #[arg(long, value_name = "FILE")]
    pub course: Option<PathBuf>,
}

/// The bundle's `course.toml` when none is given: fencelab's defaults.
const NO_COURSE: &str =
    "# fencelab's defaults: every step weighs the same (README, \"A course file\").\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Platform {
    Gradescope,
    Prairielearn,
}

// The scripts, verbatim. Their roots are the platforms' unless
// `FENCELAB_AUTOGRADER_ROOT` or `FENCELAB_GRADE_ROOT` say otherwise. The tests
// set them to run the scripts in a tree laid out the same way.
const ENV: &str = include_str!("env.sh");
// Installs Rust where there is none, fetches the crates the scratch builds
// use, and grades the reference once.
const PREBUILD: &str = include_str!("prebuild.sh");
// Gradescope: `setup.sh` and `run_autograder` at the zip's top, as Gradescope
// requires; `setup.sh` runs `prebuild.sh` when the image is built. The
// submission is in `/autograder/submission`, the results in
// `/autograder/results/results.json`.
const SETUP: &str = include_str!("setup.sh");
const RUN_AUTOGRADER: &str = include_str!("run_autograder");
// PrairieLearn: a `Dockerfile`, whose `RUN` runs `prebuild.sh`, and the
// entrypoint `/fencelab/run.sh`. The submission is in `/grade/student`, the
// results in `/grade/results/results.json`.
const RUN: &str = include_str!("run.sh");
const DOCKERFILE: &str = include_str!("Dockerfile");

/// The files of a bundle but fencelab itself: name, contents, executable.
pub(crate) fn files(platform: Platform) -> Vec<(&'static str, String, bool)> {
    let common = [
        ("env.sh", ENV.to_string(), false),
        ("prebuild.sh", PREBUILD.to_string(), true),
        (
            "warm.rs",
            crate::lab::reference::REFERENCE.to_string(),
            false,
        ),
    ];
    let own = match platform {
        Platform::Gradescope => vec![
            ("setup.sh", SETUP.to_string(), true),
            ("run_autograder", RUN_AUTOGRADER.to_string(), true),
        ],
        Platform::Prairielearn => vec![
            ("Dockerfile", DOCKERFILE.to_string(), false),
            ("run.sh", RUN.to_string(), true),
            ("info.json", question_info(), false),
        ],
    };
    common.into_iter().chain(own).collect()
}

/// What a PrairieLearn question's `info.json` needs to use the image.
fn question_info() -> String {
    let info = serde_json::json!({
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": true,
            "image": "YOUR-ORG/fencelab-grader",
            "entrypoint": "/fencelab/run.sh",
            "timeout": 30
        }
    });
    serde_json::to_string_pretty(&info).expect("json") + "\n"
}

pub(crate) fn main(args: AutograderArgs, printer: &mut Printer) -> Result<ExitCode, Error> {
    // Refused before anything is written, as grading would refuse it.
    let course = match &args.course {
        Some(path) => {
            crate::lab::course::Course::load(path)?;
            std::fs::read_to_string(path).map_err(|e| Error::io("read the course file", path, e))?
        }
        None => NO_COURSE.to_string(),
    };
    write(args.platform, &args.out, &course)?;
    printer.status(Verb::Wrote, &args.out.display().to_string());
    printer.line(render_next(printer.lang, args.platform, &args.out).trim_end());
    Ok(ExitCode::Success)
}

/// Writes the bundle for `platform` into `out`, `course` as its course file.
pub(crate) fn write(platform: Platform, out: &Path, course: &str) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(out).map_err(|e| {
        Error::io("create", out, e).with_next("give -o a directory this user may write")
    })?;
    let exe = std::env::current_exe().map_err(|e| {
        Error::environment(format!("cannot find this fencelab program to copy it: {e}"))
            .with_next("run fencelab from its file (not a deleted or moved one)")
    })?;
    let mut all: Vec<(PathBuf, bool)> = Vec::new();
    let target = out.join("fencelab");
    std::fs::copy(&exe, &target).map_err(|e| Error::io("copy fencelab to", &target, e))?;
    all.push((target, true));
    let course = (crate::lab::course::FILE, course.to_string(), false);
    for (name, text, executable) in files(platform).into_iter().chain([course]) {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io("write", &path, e))?;
        all.push((path, executable));
    }
    for (path, executable) in all {
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io("set the permissions of", &path, e))?;
    }
    Ok(())
}

/// What to do with the bundle written to `out`.
pub(crate) fn render_next(lang: Lang, platform: Platform, out: &Path) -> String {
    let out = out.display();
    match (platform, lang) {
        (Platform::Gradescope, Lang::En) => format!(
            "Gradescope autograder in {out}: setup.sh and run_autograder at its top.\n\
             next: (cd {out} && zip -r ../autograder.zip .), then upload autograder.zip\n\
             as the assignment's autograder (Ubuntu base image); students submit\n\
             src/lib.rs or one .rs file.\n"
        ),
        (Platform::Gradescope, Lang::Ja) => format!(
            "Gradescope のオートグレーダーを {out} に書きました\n\
             （先頭に setup.sh と run_autograder）。\n\
             次: (cd {out} && zip -r ../autograder.zip .) で zip にして、\n\
             課題のオートグレーダーとしてアップロードしてください（Ubuntu のベースイメージ）。\n\
             学生は src/lib.rs か .rs ファイル1つを提出します。\n"
        ),
        (Platform::Prairielearn, Lang::En) => format!(
            "PrairieLearn external grader in {out}: a Dockerfile, the entrypoint\n\
             run.sh, and info.json.\n\
             next: docker build -t YOUR-ORG/fencelab-grader {out}\n\
             \x20     && docker push YOUR-ORG/fencelab-grader, then merge info.json into\n\
             \x20     the question's info.json (the student submits one .rs file).\n"
        ),
        (Platform::Prairielearn, Lang::Ja) => format!(
            "PrairieLearn の外部採点器を {out} に書きました\n\
             （Dockerfile、エントリポイント run.sh、info.json）。\n\
             次: docker build -t YOUR-ORG/fencelab-grader {out}\n\
             \x20   && docker push YOUR-ORG/fencelab-grader の後、info.json を\n\
             \x20   問題の info.json に取り込んでください（学生の提出物は .rs ファイル1つ）。\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_to_do_next_in_both_languages() {
        let text: String = [Platform::Gradescope, Platform::Prairielearn]
            .into_iter()
            .flat_map(|p| {
                [Lang::En, Lang::Ja]
                    .into_iter()
                    .map(move |lang| render_next(lang, p, Path::new("autograder")))
            })
            .collect();
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_dockerfile_copies_every_file_run_sh_needs_and_prebuilds() {
        // Checked by reading: there is no Docker daemon here.
        let copied: Vec<&str> = DOCKERFILE
            .lines()
            .find_map(|l| l.strip_prefix("COPY "))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(
            copied,
            [
                "fencelab",
                "warm.rs",
                "env.sh",
                "prebuild.sh",
                "run.sh",
                "course.toml",
                "/fencelab/"
            ]
        );
        let written: Vec<&str> = files(Platform::Prairielearn)
            .into_iter()
            .map(|(name, _, _)| name)
            .chain(["fencelab", crate::lab::course::FILE])
            .collect();
        for file in &copied[..copied.len() - 1] {
            assert!(written.contains(file), "{file} is not in the bundle");
        }
        assert!(DOCKERFILE.contains("&& /fencelab/prebuild.sh"));
        assert!(DOCKERFILE.starts_with("# ") && DOCKERFILE.contains("\nFROM rust:1.95"));
        // Run as is (the Kubernetes example), it finds fencelab and the cache
        // the RUN filled: env.sh's "$HERE/cache", HERE being /fencelab.
        assert!(
            DOCKERFILE.contains("\nENV PATH=\"/fencelab:$PATH\" FENCELAB_CACHE=/fencelab/cache\n"),
            "{DOCKERFILE}"
        );
        assert!(ENV.contains("export FENCELAB_CACHE=\"$HERE/cache\""));
        let env_at = DOCKERFILE.find("\nENV ").unwrap();
        assert!(
            env_at < DOCKERFILE.find("\nRUN ").unwrap(),
            "set before the pre-build"
        );
        let info: serde_json::Value = serde_json::from_str(&question_info()).unwrap();
        assert_eq!(
            info["externalGradingOptions"]["entrypoint"],
            "/fencelab/run.sh"
        );
    }
}
