//! The mutation matrix as part of `cargo test`: one trial for the reference
//! (every test of the suite passes on `src/lease.rs`, twice) and one per mutant
//! in `mutants/` (killed exactly as its file declares). It runs the same engine
//! as `fencelab verify --exact <the mutants selected>`.
//!
//! A libtest-mimic harness (`harness = false`), so that filters, `--list`,
//! `--exact`, `--skip`, `--ignored` and `--format json` work as for any cargo
//! test. Only the selected trials are built and run.
//!
//! `cargo test` runs the reference and a sample: per step, the first mutant
//! (by id) that is not one of the worksheet's fragments (those are verified by
//! the predictions tests). Every other mutant is an ignored trial, run by
//! `.ci/run`'s second step (`cargo test -- --ignored`), so that each `.ci/run`
//! checks every mutant and `cargo test` stays quick.
//!
//! cargo-nextest runs each trial in a process of its own: there, one trial
//! judges its whole group (the sample, or the rest) once, stored on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use fencelab::commands::verify::{self, Report, Update};
use fencelab::engine::Event;
use fencelab::engine::scratch::Scratch;
use fencelab::lab::mutant;
use fencelab::lab::suite;
use fencelab::output::printer::{Layout, indent};
use fencelab::output::progress::Progress;
use libtest_mimic::{Arguments, Failed, Trial};

#[path = "common/stored.rs"]
mod stored;

const REFERENCE: &str = "reference";

/// Says on stderr how the engine is getting on; libtest-mimic prints the trials.
struct Status;

impl Progress<Update> for Status {
    fn engine(&mut self, event: &Event<'_>) {
        if let Event::Built {
            implementations,
            secs,
        } = event
        {
            eprintln!(
                "fencelab: built the judge and {implementations} implementations in {secs:.1}s"
            );
        }
    }
    fn own(&mut self, update: &Update) {
        match update {
            Update::Started {
                mutants,
                implementation,
                ..
            } => eprintln!("fencelab: verifying {mutants} mutants of {implementation}"),
            Update::Baseline(baseline) => eprintln!(
                "fencelab: baseline ran {} tests twice in {:.1}s",
                baseline.tests.len(),
                baseline.secs
            ),
            Update::Mutant(_) => {}
        }
    }
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let options = verify::Options {
        mutants: Some(root.join("mutants")),
        implementation: Some(root.join(mutant::DEFAULT_FILE)),
        root: root.to_path_buf(),
        filters: Vec::new(),
        exact: true,
        timeout: None,
        build_timeout: None,
        jobs: fencelab::engine::runner::default_jobs(),
        python: false,
    };
    let mutants = match mutant::load_dir(options.mutants.as_ref().unwrap(), &suite::test_names()) {
        Ok(mutants) => mutants,
        Err(err) => {
            let message = err.to_string();
            let trial = Trial::test("mutants", move || Err(Failed::from(message)));
            return libtest_mimic::run(&args, vec![trial]).exit_code();
        }
    };
    let sample = sample(&mutants);
    // Each trial's name, and whether it is left to `--ignored` (step 2).
    let names: Vec<(String, bool)> = std::iter::once((REFERENCE.to_string(), false))
        .chain(
            mutants
                .iter()
                .map(|m| (format!("mutant::{}", m.id), !sample.contains(&m.id))),
        )
        .collect();
    let probes: Vec<Trial> = names
        .iter()
        .map(|(n, slow)| Trial::test(n.as_str(), || Ok(())).with_ignored_flag(*slow))
        .collect();
    if args.list {
        return libtest_mimic::run(&args, probes).exit_code();
    }
    let selected: Vec<&str> = probes
        .iter()
        .filter(|t| !args.is_filtered_out(t) && !args.is_ignored(t))
        .map(Trial::name)
        .collect();
    if selected.is_empty() {
        eprintln!(
            "note: no trial matches {:?}; the trials are `{REFERENCE}` and `mutant::<id>` for the files in mutants/ (see --list)",
            args.filter.as_deref().unwrap_or("")
        );
    }
    let judge = |names: &[&str]| judge(&options, &mutants, names, root);
    // A trial alone in its process (cargo-nextest) would pay for the
    // baseline again: it reads its group's verdicts, judged once on disk.
    let alone = std::env::var("NEXTEST_EXECUTION_MODE").is_ok_and(|m| m == "process-per-test");
    let verdicts = match selected.as_slice() {
        [] => BTreeMap::new(),
        [one] if alone => {
            let slow = names.iter().any(|(n, slow)| n == one && *slow);
            let group: Vec<&str> = (names.iter())
                .filter(|(_, s)| *s == slow)
                .map(|(n, _)| n.as_str())
                .collect();
            let name = if slow {
                "mutants-rest"
            } else {
                "mutants-sample"
            };
            let inputs = [root.join("mutants"), root.join(mutant::DEFAULT_FILE)];
            let inputs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
            stored::stored(name, &inputs, || {
                let verdicts = judge(&group);
                // Not kept when fencelab could not verify: the next trial tries again.
                if let Some(Err(err)) = verdicts.values().find(|v| v.is_err())
                    && err.starts_with(COULD_NOT)
                {
                    panic!("{err}");
                }
                verdicts
            })
        }
        _ => judge(&selected),
    };
    let verdicts = Arc::new(verdicts);
    let trials = names
        .into_iter()
        .map(|(name, slow)| {
            let verdicts = Arc::clone(&verdicts);
            Trial::test(name.clone(), move || match verdicts.get(&name) {
                Some(verdict) => verdict.clone().map_err(Failed::from),
                None => Err("not run".into()),
            })
            .with_ignored_flag(slow)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// How a verdict begins when the engine failed rather than a trial.
const COULD_NOT: &str = "fencelab could not verify";

/// The verdicts of the trials `names`, from one engine run of their mutants.
fn judge(
    options: &verify::Options,
    mutants: &[mutant::Mutant],
    names: &[&str],
    root: &Path,
) -> BTreeMap<String, Result<(), String>> {
    let chosen: Vec<mutant::Mutant> = mutants
        .iter()
        .filter(|m| names.contains(&format!("mutant::{}", m.id).as_str()))
        .cloned()
        .collect();
    // Named, as `verify --exact` names them: the shipped wheats run only
    // in a whole run, and this harness checks mutants (the wheats are
    // checked by tests/cli/verify_outcomes and instructor_content.rs).
    let options = verify::Options {
        filters: chosen.iter().map(|m| m.id.clone()).collect(),
        ..options.clone()
    };
    let scratch = Scratch::locate(&root.join("target")).expect("the scratch workspace");
    let report = verify::run(&options, &chosen, &scratch, &mut Status).map_err(|e| e.to_string());
    names
        .iter()
        .map(|name| {
            let verdict = verdict(&report, name).map_err(|f| f.message().unwrap_or("").to_string());
            (name.to_string(), verdict)
        })
        .collect()
}

/// The mutants `cargo test` runs: per step, the first by id that is not a
/// worksheet fragment. A step without one is a mistake of this sample, not a
/// pass: it panics, naming the step.
fn sample(mutants: &[mutant::Mutant]) -> BTreeSet<String> {
    let steps: BTreeSet<u32> = mutants.iter().map(|m| m.step).collect();
    steps
        .into_iter()
        .map(|step| {
            mutants
                .iter()
                .filter(|m| m.step == step && !m.worksheet)
                .map(|m| m.id.clone())
                .min()
                .unwrap_or_else(|| panic!("step {step} has no mutant but its fragment to sample"))
        })
        .collect()
}

/// The trial `name` passes when the engine says so.
fn verdict(report: &Result<Report, String>, name: &str) -> Result<(), Failed> {
    let report = match report {
        Ok(report) => report,
        Err(err) => return Err(format!("{COULD_NOT}: {err}").into()),
    };
    let printer = Layout::plain();
    if name == REFERENCE || !report.baseline.passed {
        return match (&report.baseline.compile_errors, report.baseline.passed) {
            (Some(errors), _) => Err(format!("src/lease.rs does not compile:\n{errors}").into()),
            (None, true) => Ok(()),
            (None, false) => {
                let failing: Vec<String> = report
                    .baseline
                    .tests
                    .iter()
                    .filter(|t| !t.runs.iter().any(|r| r.passed()))
                    .map(|t| {
                        format!(
                            "{} ({})\n{}",
                            t.test,
                            t.runs[0].label(),
                            indent(&t.runs[0].message().unwrap_or_default(), 4)
                        )
                    })
                    .collect();
                Err(format!("the baseline fails:\n{}", failing.join("\n")).into())
            }
        };
    }
    let id = name.strip_prefix("mutant::").unwrap_or(name);
    match report.mutants.iter().find(|m| m.id == id) {
        Some(m) if m.as_declared => Ok(()),
        Some(m) => Err(fencelab::commands::verify::render_mutant_details(&printer, m).into()),
        None => Err(format!("no result for {id}").into()),
    }
}
