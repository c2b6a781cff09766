//! The mutation checker's own tests: fixture mutants with every outcome other
//! than "killed as declared" (`tests/fixtures/outcomes/`), malformed mutant
//! files (`tests/fixtures/malformed/`) and a filter that selects nothing. What a
//! user reads is checked with snapshots (`cargo insta review` to update them).
//!
//! The outcomes fixture runs once (one build, one baseline), stored on disk
//! (`batch`), and each test looks at one mutant of it. The reports written
//! from that run are in `reports`.
//! The implementation is fencelab's own src/lease.rs, so every shipped wheat
//! runs through the whole suite in the same run (`verify`'s check of the
//! wheats): each must pass every test.

use std::collections::BTreeMap;
use std::path::PathBuf;

use fencelab::commands::verify::{self, Options, Update};
use fencelab::engine::Event;
use fencelab::engine::outcome::MutantOutcome;
use fencelab::exit::ExitCode;
use fencelab::lab::lang::Lang;
use fencelab::lab::suite;
use fencelab::output::printer::{Layout, Verbosity};
use fencelab::output::progress::Progress;
use fencelab::output::width::display_width;

use crate::common::root;
use batch::{MutantJson, outcomes};

mod batch;
mod reports;

fn options(mutants: &str) -> Options {
    Options {
        mutants: Some(root().join(mutants)),
        implementation: Some(root().join("src/lease.rs")),
        root: root().to_path_buf(),
        filters: Vec::new(),
        exact: false,
        // verify's own limits (max(10 s, 5 x the baseline)): far above what
        // any test takes on a loaded machine, so that only the hang reaches
        // them. Its trials sleep, so more of them at once cost no CPU.
        timeout: None,
        build_timeout: None,
        jobs: fencelab::engine::runner::default_jobs() * 2,
        python: false,
    }
}

/// The report of the mutant `id`.
fn mutant(id: &str) -> MutantJson {
    outcomes()
        .mutants()
        .into_iter()
        .find(|m| m.id == id)
        .unwrap_or_else(|| panic!("no report for {id}"))
}

/// What a user reads about the mutant `id`.
fn details(id: &str) -> String {
    outcomes().details[id].clone()
}

macro_rules! snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"tests/behaviour/(step\d|support)\.rs:\d+:\d+", "tests/behaviour/$1.rs:[line]"),
            (r"\d+\.\ds", "[secs]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn the_baseline_passes_and_only_the_crash_is_as_declared() {
    let json = &outcomes().json;
    assert_eq!(json["baseline"]["passed"], true);
    assert_eq!(
        json["baseline"]["flaky"],
        serde_json::json!([]),
        "no flaky test"
    );
    assert_eq!(json["summary"]["mutants"], 8);
    let mutants = outcomes().mutants();
    let mut as_declared: Vec<&str> = mutants
        .iter()
        .filter(|m| m.as_declared)
        .map(|m| m.id.as_str())
        .collect();
    as_declared.sort();
    assert_eq!(
        as_declared,
        vec!["crashes", "declared-equivalent"],
        "a crash counts as a kill, a declared equivalent survives; nothing else here is as declared"
    );
    let exit: ExitCode = serde_json::from_value(json["summary"]["exit_code"].clone()).unwrap();
    assert_eq!(exit, ExitCode::Failed);
}

/// Every shipped wheat (`wheats/`) is a correct implementation: it passes
/// the whole behavioural suite, as the reference does (a wheat that failed a
/// test would make every learner's test that agrees with the suite look
/// invalid). The shared run already takes each through every test (~2,100
/// trials), so this reads it (a `wheats.rs` ran them again through the tests
/// of steps 1 and 8, a subset of these trials).
#[test]
fn every_shipped_wheat_passes_the_whole_suite_in_the_same_run() {
    let shipped = fencelab::lab::wheat::Wheats::builtin().wheats.len();
    let wheats = &outcomes().json["wheats"];
    assert!(
        wheats.is_object(),
        "the shipped wheats run beside the mutants of src/lease.rs"
    );
    let failing: Vec<String> = wheats["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            format!(
                "{} ({}) fails {}:\n{}",
                w["id"], w["path"], w["tests"], w["detail"]
            )
        })
        .collect();
    assert!(failing.is_empty(), "{}", failing.join("\n"));
    assert_eq!(wheats["checked"], shipped);
    assert_eq!(wheats["passed"], shipped);
    let text = outcomes().screen(Verbosity::Normal, Lang::En);
    assert!(
        text.contains(&format!("all {shipped} wheats pass the suite")),
        "{text}"
    );
}

#[test]
fn a_missing_find_is_stale_with_the_nearest_lines() {
    let m = mutant("stale-missing");
    assert_eq!(m.outcome, MutantOutcome::Stale.label());
    assert!(m.tests.is_empty(), "a stale mutant runs no test");
    let detail = m.detail.as_deref().unwrap();
    assert!(
        detail.contains("does not occur in src/lease.rs"),
        "{detail}"
    );
    assert!(
        detail.contains("if done || until > now {"),
        "the nearest line is shown: {detail}"
    );
    snapshot!("stale_missing", details("stale-missing"));
}

#[test]
fn an_ambiguous_find_is_stale_with_every_place() {
    let m = mutant("stale-ambiguous");
    assert_eq!(m.outcome, MutantOutcome::Stale.label());
    let detail = m.detail.as_deref().unwrap();
    assert!(detail.contains("occurs 6 times"), "{detail}");
    snapshot!("stale_ambiguous", details("stale-ambiguous"));
}

#[test]
fn a_mutant_that_does_not_compile_is_unviable_with_the_compilers_message() {
    let m = mutant("unviable");
    assert_eq!(m.outcome, MutantOutcome::Unviable.label());
    let detail = m.detail.as_deref().unwrap();
    assert!(detail.contains("cannot add `&str` to `i64`"), "{detail}");
    assert!(
        detail.contains("--> src/lease.rs:"),
        "the path is the project's: {detail}"
    );
    assert!(
        !detail.contains("crates/impl-"),
        "no scratch path: {detail}"
    );
}

#[test]
fn an_equivalent_mutant_survives() {
    let m = mutant("equivalent");
    assert_eq!(m.outcome, MutantOutcome::Survived.label());
    assert_eq!(m.tests.len(), suite::tests().len(), "every test ran");
    assert!(m.killed_by.is_empty());
    assert_eq!(m.missing_killers, vec!["step4::fence_grows_on_every_claim"]);
    snapshot!("equivalent", details("equivalent"));
}

#[test]
fn a_surviving_mutant_says_what_to_do_next() {
    let text = details("equivalent");
    assert!(text.contains("next:"), "{text}");
    assert!(text.contains("equivalent = "), "{text}");
    assert!(text.contains("add a test"), "{text}");
}

#[test]
fn a_mutant_declared_equivalent_survives_as_declared() {
    let m = mutant("declared-equivalent");
    assert_eq!(m.outcome, MutantOutcome::Survived.label());
    assert!(m.as_declared, "{m:#?}");
    assert!(m.equivalent.as_deref().unwrap().contains("NaN included"));
    assert_eq!(m.tests.len(), suite::tests().len(), "every test ran");
}

#[test]
fn a_hang_is_a_timeout_and_the_other_tests_still_run() {
    let m = mutant("hangs");
    assert_eq!(m.outcome, MutantOutcome::Timeout.label());
    assert!(m.killed_by.iter().all(|k| k.outcome == "timeout"));
    assert!(
        m.killed_by
            .iter()
            .any(|k| k.test == "step7::holder_releases")
    );
    // The hang comes before the lookup, so even the declared survivor hangs.
    assert_eq!(m.failed_survivors, vec!["step7::refuses_a_missing_job"]);
    assert!(!m.as_declared);
    assert!(
        m.tests["step4::fresh_job_gets_fence_1"].passed(),
        "tests that do not release are unaffected"
    );
}

#[test]
fn an_abort_is_a_crash_named_as_such() {
    let m = mutant("crashes");
    assert_eq!(m.outcome, MutantOutcome::Crashed.label());
    let kill = m
        .killed_by
        .iter()
        .find(|k| k.test == "step6::holder_completes_under_a_live_lease")
        .unwrap();
    assert_eq!(kill.outcome, "crashed");
    assert!(
        kill.message.contains("was killed by signal 6 (SIGABRT"),
        "{}",
        kill.message
    );
    assert!(
        kill.message.contains("during complete()"),
        "{}",
        kill.message
    );
    assert!(m.as_declared, "a crash counts as a kill");
}

#[test]
fn a_kill_by_an_undeclared_test_is_not_as_declared_and_names_the_real_killers() {
    let m = mutant("undeclared-killer");
    assert_eq!(m.outcome, MutantOutcome::Killed.label());
    assert!(!m.as_declared);
    assert_eq!(m.missing_killers, vec!["step4::held_job_is_refused"]);
    let killers: Vec<&str> = m.killed_by.iter().map(|k| k.test.as_str()).collect();
    assert!(
        killers.contains(&"step4::reclaims_at_exact_expiry"),
        "{killers:?}"
    );
    // Each kill carries its observation, as the screen shows it.
    let kill = m
        .killed_by
        .iter()
        .find(|k| k.test == "step4::reclaims_at_exact_expiry")
        .unwrap();
    let observation = kill.observation.as_ref().unwrap();
    assert_eq!(
        (observation.expected.as_str(), observation.actual.as_str()),
        ("Ok(Some(2))", "Ok(None)")
    );
    let text = details("undeclared-killer");
    for line in [
        "observed: claim at now == until (the lease has just ended)",
        "expected: Ok(Some(2))",
        "actual:   Ok(None)",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // A next step, naming the tests that did kill it.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("next: a test declared in tests/fixtures/outcomes/undeclared-killer.toml")
            && flat.contains("(step4::fence_grows_on_every_claim,"),
        "{text}"
    );
    snapshot!("undeclared_killer", text);
}

#[test]
fn every_mutant_is_reported_as_it_finishes() {
    let mut lines = outcomes().lines.clone();
    lines.sort();
    snapshot!("progress_lines", lines.join("\n"));
}

#[test]
fn a_malformed_mutant_names_file_line_and_column() {
    let tests = suite::test_names();
    let typo = fencelab::lab::mutant::load_file(
        &root().join("tests/fixtures/malformed/typo.toml"),
        &tests,
    )
    .unwrap_err();
    let text = typo.to_string().replace(root().to_str().unwrap(), "[root]");
    snapshot!("malformed_typo", text);
    let syntax = fencelab::lab::mutant::load_file(
        &root().join("tests/fixtures/malformed/broken-syntax.toml"),
        &tests,
    )
    .unwrap_err();
    let text = syntax
        .to_string()
        .replace(root().to_str().unwrap(), "[root]");
    assert!(text.contains("broken-syntax.toml:2:"), "{text}");
    snapshot!("malformed_syntax", text);
}

#[test]
fn a_filter_that_selects_nothing_says_so() {
    let mut options = options("mutants");
    options.filters = vec!["no-such-mutant".to_string()];
    let err = verify::load(&options).unwrap_err();
    let text = err.to_string().replace(root().to_str().unwrap(), "[root]");
    snapshot!("filter_selects_nothing", text);
}

#[test]
fn an_empty_mutants_directory_is_an_error_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = options("mutants");
    options.mutants = Some(PathBuf::from(dir.path()));
    let err = verify::load(&options).unwrap_err();
    assert!(err.to_string().contains("holds no mutant"), "{err}");
}

/// The kill matrix read back from its text: per mutant id, the symbol of
/// every test that has a row, by column position under the header digits.
fn parse_matrix(text: &str) -> BTreeMap<String, BTreeMap<String, char>> {
    let tests = suite::tests();
    let mut by_number: BTreeMap<usize, BTreeMap<String, char>> = BTreeMap::new();
    let mut ids: BTreeMap<usize, String> = BTreeMap::new();
    let mut header: Vec<Vec<char>> = Vec::new();
    let mut columns: Vec<(usize, usize)> = Vec::new();
    let mut step = 0;
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let is_header = !line.trim().is_empty()
            && line.starts_with("     ")
            && line.chars().all(|c| c == ' ' || c.is_ascii_digit());
        if is_header {
            header.push(chars);
            continue;
        }
        if !header.is_empty() {
            // The header is complete: each column is a digit of its last line.
            let last = header.last().unwrap();
            columns = (0..last.len())
                .filter(|&i| last[i].is_ascii_digit())
                .map(|i| {
                    let number: String = header
                        .iter()
                        .filter_map(|h| h.get(i).copied().filter(char::is_ascii_digit))
                        .collect();
                    (i, number.parse().unwrap())
                })
                .collect();
            header.clear();
        }
        if let Some(n) = line.strip_prefix("  step ").and_then(|n| n.parse().ok()) {
            step = n;
        } else if line.starts_with("    ") && !columns.is_empty() {
            let first = columns[0].0;
            let name: String = chars[4..first.min(chars.len())].iter().collect();
            let name = name.trim();
            let full = tests
                .iter()
                .filter(|t| t.step == step)
                .map(|t| t.name.clone())
                .find(|t| {
                    let short = t.split_once("::").unwrap().1;
                    short == name || name.strip_suffix('…').is_some_and(|p| short.starts_with(p))
                })
                .unwrap_or_else(|| panic!("no test of step {step} reads as {name:?}"));
            for &(at, number) in &columns {
                let symbol = chars[at];
                by_number
                    .entry(number)
                    .or_default()
                    .insert(full.clone(), symbol);
            }
        } else if let [number, mark, id, ..] = line.split_whitespace().collect::<Vec<_>>()[..]
            && (mark == "✓" || mark == "✗")
        {
            ids.insert(number.parse().unwrap(), id.to_string());
        }
    }
    by_number
        .into_iter()
        .map(|(n, cells)| (ids[&n].clone(), cells))
        .collect()
}

#[test]
fn the_kill_matrix_reads_back_as_the_json_report_at_every_width() {
    let json = &outcomes().json;
    for width in batch::WIDTHS {
        let text = &outcomes().matrices[&width];
        for line in text.lines() {
            assert!(
                display_width(line) <= width,
                "{width}: {line:?} is too wide"
            );
        }
        let matrix = parse_matrix(text);
        for m in json["mutants"].as_array().unwrap() {
            let id = m["id"].as_str().unwrap();
            let names = |key: &str| -> Vec<String> {
                m[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect()
            };
            let killed: Vec<String> = m["killed_by"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["test"].as_str().unwrap().to_string())
                .collect();
            let (killers, survivors) = (names("killers"), names("survivors"));
            let rows = matrix.get(id).cloned().unwrap_or_default();
            for test in &killed {
                assert!(rows.contains_key(test), "{width}: {id} is killed by {test}");
            }
            for (test, symbol) in &rows {
                let ran = m["tests"].get(test).is_some();
                let expected = match (ran, killed.contains(test)) {
                    (false, _) => '-',
                    (true, true) if survivors.contains(test) => '!',
                    (true, true) if killers.contains(test) => 'K',
                    (true, true) => 'k',
                    (true, false) if killers.contains(test) => 'x',
                    (true, false) if survivors.contains(test) => 'o',
                    (true, false) => '.',
                };
                assert_eq!(*symbol, expected, "{width}: {id} × {test}");
            }
        }
    }
}

#[test]
fn no_report_of_a_run_names_a_scratch_path() {
    let run = outcomes();
    let mut texts = vec![serde_json::to_string_pretty(&run.json).unwrap()];
    for verbosity in [Verbosity::Quiet, Verbosity::Normal, Verbosity::Verbose] {
        for lang in Lang::ALL {
            texts.push(run.screen(verbosity, lang).to_string());
        }
    }
    for m in run.mutants() {
        texts.push(run.details[&m.id].clone());
    }
    for text in texts {
        for internal in ["crates/", "/fencelab/ws", "impl-", "judge-"] {
            assert!(!text.contains(internal), "{internal} in:\n{text}");
        }
    }
}

#[test]
fn what_verify_says_at_each_verbosity_and_in_japanese() {
    let run = outcomes();
    let quiet = run.screen(Verbosity::Quiet, Lang::En);
    let normal = run.screen(Verbosity::Normal, Lang::En);
    let verbose = run.screen(Verbosity::Verbose, Lang::En);
    assert!(quiet.lines().count() < normal.lines().count());
    assert!(normal.lines().count() < verbose.lines().count());
    assert!(verbose.contains("Tests that kill no mutant"), "{verbose}");
    assert!(!normal.contains("Tests that kill no mutant"), "{normal}");
    // Summary last: the verdict, then what to rerun.
    for text in [quiet, normal, verbose] {
        let verdict = text
            .rfind("\nfencelab verify: 6 of 8 mutants not as declared")
            .unwrap_or_else(|| panic!("no verdict: {text}"));
        let rerun = text
            .rfind("\nrerun them with: fencelab verify --exact")
            .unwrap();
        assert!(verdict < rerun, "{text}");
        assert!(
            text[verdict..rerun].trim().lines().count() <= 2,
            "the verdict comes last: {text}"
        );
        assert_eq!(
            text.trim_end().lines().last(),
            text[rerun..].trim().lines().last()
        );
    }
    snapshot!("report_quiet", quiet);
    snapshot!("report_normal", normal);
    snapshot!("report_normal_ja", run.screen(Verbosity::Normal, Lang::Ja));
}

/// What `Update::Started` says, and the lines it would show; and when
/// the build was said to be over and when the baseline was.
#[derive(Default)]
struct Started(
    Vec<String>,
    Option<std::time::Instant>,
    Option<std::time::Instant>,
);

impl Progress<Update> for Started {
    fn engine(&mut self, event: &Event<'_>) {
        if let Event::Built { .. } = event {
            // However long the build and what the front end does after it,
            // the baseline's time is its own.
            std::thread::sleep(std::time::Duration::from_secs(2));
            self.1 = Some(std::time::Instant::now());
        }
    }
    fn own(&mut self, update: &Update) {
        match update {
            Update::Started {
                mutants,
                implementation,
                mutants_dir,
            } => self
                .0
                .push(format!("{mutants} {implementation} {mutants_dir}")),
            Update::Baseline(_) => self.2 = Some(std::time::Instant::now()),
            Update::Mutant(_) => {}
        }
    }
}

#[test]
fn the_built_in_reference_is_named_so_and_a_green_run_fits_a_screen() {
    let options = Options {
        mutants: None,
        implementation: None,
        root: root().to_path_buf(),
        filters: vec![
            "claim-expiry-inclusive".to_string(),
            "release-resets-fence".to_string(),
            "enqueue-insert-or-replace".to_string(),
        ],
        exact: true,
        timeout: None,
        build_timeout: None,
        jobs: fencelab::engine::runner::default_jobs(),
        python: false,
    };
    let mutants = verify::load(&options).unwrap();
    let scratch = crate::common::scratch();
    let mut started = Started::default();
    let report = verify::run(&options, &mutants, &scratch, &mut started).unwrap();
    assert_eq!(
        started.0,
        vec!["3 the built-in reference fencelab's built-in mutants".to_string()]
    );
    assert_eq!(report.summary.not_as_declared, 0, "{:#?}", report.mutants);
    // "Baseline ... twice (1.4s)": from the end of the build to the baseline's end.
    let (Some(built), Some(baseline)) = (started.1, started.2) else {
        panic!("the build and the baseline were both said to end");
    };
    let between = baseline.duration_since(built).as_secs_f64();
    assert!(
        report.baseline.secs <= between + 0.5,
        "the baseline took {between:.1}s after the build, not {:.1}s",
        report.baseline.secs
    );
    let normal = fencelab::commands::verify::render_verify_report(&Layout::plain(), &report);
    assert!(normal.lines().count() <= 12, "{normal}");
    assert!(!normal.contains("Kill matrix"), "{normal}");
    assert!(normal.contains("fencelab verify --verbose"), "{normal}");
    let verbose = fencelab::commands::verify::render_verify_report(
        &Layout::plain().at(Verbosity::Verbose),
        &report,
    );
    assert!(verbose.contains("Kill matrix"), "{verbose}");
    let quiet = fencelab::commands::verify::render_verify_report(
        &Layout::plain().at(Verbosity::Quiet),
        &report,
    );
    assert_eq!(
        quiet.trim().lines().count(),
        1,
        "the verdict alone: {quiet}"
    );
}
