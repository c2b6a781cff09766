//! The mutation checker's own tests: fixture mutants with every outcome other
//! than "killed as declared" (`tests/fixtures/outcomes/`), malformed mutant
//! files (`tests/fixtures/malformed/`) and a filter that selects nothing. What a
//! user reads is checked with snapshots (`cargo insta review` to update them).
//!
//! The outcomes fixture runs once (one build, one baseline) and each test looks
//! at one mutant of it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fencelab::commands::verify::{self, Baseline, MutantReport, Options, Progress, Report};
use fencelab::engine::outcome::MutantOutcome;
use fencelab::engine::scratch::Scratch;
use fencelab::lab::lang::Lang;
use fencelab::lab::suite;
use fencelab::output::printer::{Printer, Verbosity};
use fencelab::output::width::display_width;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

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

/// Collects the per-mutant lines as the terminal would show them.
#[derive(Default)]
struct Lines(Vec<String>);

impl Progress for Lines {
    fn started(&mut self, _: usize, _: &str, _: &str) {}
    fn built(&mut self, _: usize, _: f64) {}
    fn trial_done(&mut self, _: usize, _: usize) {}
    fn baseline(&mut self, _: &Baseline) {}
    fn mutant(&mut self, report: &MutantReport) {
        self.0
            .push(format!("{} {}", report.id, report.outcome.label()));
    }
}

fn outcomes() -> &'static (Report, Vec<String>) {
    static REPORT: OnceLock<(Report, Vec<String>)> = OnceLock::new();
    REPORT.get_or_init(|| {
        let options = options("tests/fixtures/outcomes");
        let mutants = verify::load(&options).expect("the fixture mutants load");
        let scratch = Scratch::locate(&root().join("target")).expect("the scratch workspace");
        let mut lines = Lines::default();
        let report = verify::run(&options, &mutants, &scratch, &mut lines).expect("verify runs");
        (report, lines.0)
    })
}

fn mutant(id: &str) -> &'static MutantReport {
    outcomes()
        .0
        .mutants
        .iter()
        .find(|m| m.id == id)
        .unwrap_or_else(|| panic!("no report for {id}"))
}

/// What a user reads about a mutant, with timings and line numbers of the suite
/// (which move whenever it is edited) blotted out.
fn details(id: &str) -> String {
    Printer::plain().render_mutant_details(mutant(id))
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
    let (report, _) = outcomes();
    assert!(report.baseline.passed);
    assert!(
        report.baseline.flaky.is_empty(),
        "{:?}",
        report.baseline.flaky
    );
    assert_eq!(report.summary.mutants, 8);
    let mut as_declared: Vec<&str> = report
        .mutants
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
    assert_eq!(report.summary.exit_code, fencelab::exit::ExitCode::Failed);
}

#[test]
fn a_missing_find_is_stale_with_the_nearest_lines() {
    let m = mutant("stale-missing");
    assert_eq!(m.outcome, MutantOutcome::Stale);
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
    assert_eq!(m.outcome, MutantOutcome::Stale);
    let detail = m.detail.as_deref().unwrap();
    assert!(detail.contains("occurs 6 times"), "{detail}");
    snapshot!("stale_ambiguous", details("stale-ambiguous"));
}

#[test]
fn a_mutant_that_does_not_compile_is_unviable_with_the_compilers_message() {
    let m = mutant("unviable");
    assert_eq!(m.outcome, MutantOutcome::Unviable);
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
    assert_eq!(m.outcome, MutantOutcome::Survived);
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
    assert_eq!(m.outcome, MutantOutcome::Survived);
    assert!(m.as_declared, "{m:#?}");
    assert!(m.equivalent.as_deref().unwrap().contains("NaN included"));
    assert_eq!(m.tests.len(), suite::tests().len(), "every test ran");
}

#[test]
fn a_hang_is_a_timeout_and_the_other_tests_still_run() {
    let m = mutant("hangs");
    assert_eq!(m.outcome, MutantOutcome::Timeout);
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
    assert_eq!(m.outcome, MutantOutcome::Crashed);
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
    assert_eq!(m.outcome, MutantOutcome::Killed);
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
    snapshot!("undeclared_killer", text);
}

#[test]
fn every_mutant_is_reported_as_it_finishes() {
    let (_, lines) = outcomes();
    let mut lines = lines.clone();
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

// ---- The reports people and tools read: Stryker's schema, the HTML page,
// GitHub's annotations and summary, all from the same run.

fn fixture_mutants() -> Vec<fencelab::lab::mutant::Mutant> {
    verify::load(&options("tests/fixtures/outcomes")).expect("the fixture mutants load")
}

/// Every key of `instance` is a property the schema declares where it is
/// (the schema allows others; the published field list does not).
fn declared_keys_only(
    schema: &serde_json::Value,
    root: &serde_json::Value,
    instance: &serde_json::Value,
    at: &str,
) {
    let resolved = match schema.get("$ref").and_then(|r| r.as_str()) {
        Some(r) => root
            .pointer(r.trim_start_matches('#'))
            .expect("a $ref of the schema"),
        None => schema,
    };
    match instance {
        serde_json::Value::Object(map) => {
            let properties = resolved.get("properties").and_then(|p| p.as_object());
            let additional = resolved.get("additionalProperties");
            if properties.is_none() && additional.is_none() {
                // A free-format object (`config`).
                return;
            }
            for (key, value) in map {
                let sub = match (properties.and_then(|p| p.get(key)), additional) {
                    (Some(sub), _) => sub,
                    (None, Some(sub)) if sub.is_object() => sub,
                    _ => panic!("{at}.{key} is not a field of the schema"),
                };
                declared_keys_only(sub, root, value, &format!("{at}.{key}"));
            }
        }
        serde_json::Value::Array(items) => {
            if let Some(sub) = resolved.get("items") {
                for (i, item) in items.iter().enumerate() {
                    declared_keys_only(sub, root, item, &format!("{at}[{i}]"));
                }
            }
        }
        _ => {}
    }
}

#[test]
fn the_stryker_report_is_valid_against_the_official_schema() {
    let (report, _) = outcomes();
    let mutants = fixture_mutants();
    let json = fencelab::commands::verify::stryker::report(
        report,
        &mutants,
        fencelab::lab::lang::Lang::En,
    );
    let schema: serde_json::Value = serde_json::from_str(include_str!(
        "../schemas/mutation-testing-report-schema/mutation-testing-report-schema.json"
    ))
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("the official schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    declared_keys_only(&schema, &schema, &json, "report");
    // The validator does catch what is wrong: a status outside the enum.
    let mut broken = json.clone();
    broken["files"]["src/lease.rs"]["mutants"][0]["status"] = "Caught".into();
    assert!(!validator.is_valid(&broken));

    let file = &json["files"]["src/lease.rs"];
    assert_eq!(file["language"], "rust");
    assert_eq!(file["source"], fencelab::lab::reference::REFERENCE);
    let entries = file["mutants"].as_array().unwrap();
    assert_eq!(entries.len(), report.mutants.len());
    let entry = |id: &str| entries.iter().find(|e| e["id"] == id).unwrap();
    for (id, status) in [
        ("crashes", "Killed"),
        ("undeclared-killer", "Killed"),
        ("hangs", "Timeout"),
        ("equivalent", "Survived"),
        ("unviable", "CompileError"),
        ("stale-missing", "Ignored"),
        ("stale-ambiguous", "Ignored"),
    ] {
        assert_eq!(entry(id)["status"], status, "{id}");
        assert!(
            entry(id)["statusReason"]
                .as_str()
                .is_some_and(|r| !r.is_empty()),
            "{id}"
        );
    }
    // The location is where `find` sits in the source, end exclusive.
    let source = fencelab::lab::reference::REFERENCE;
    for m in mutants.iter().filter(|m| m.span(source).is_some()) {
        let span = m.span(source).unwrap();
        let loc = &entry(&m.id)["location"];
        let offset = |p: &serde_json::Value| {
            let line = p["line"].as_u64().unwrap() as usize;
            let column = p["column"].as_u64().unwrap() as usize;
            let start: usize = source
                .split_inclusive('\n')
                .take(line - 1)
                .map(str::len)
                .sum();
            start
                + source[start..]
                    .char_indices()
                    .nth(column - 1)
                    .map_or(source.len() - start, |(i, _)| i)
        };
        assert_eq!(offset(&loc["start"])..offset(&loc["end"]), span, "{}", m.id);
        assert_eq!(&source[span.clone()], m.find, "{}", m.id);
    }
    // killedBy is the full matrix's kill set, not the first killer.
    let undeclared = mutant("undeclared-killer");
    let killed_by: Vec<&str> = entry("undeclared-killer")["killedBy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        killed_by,
        undeclared
            .killed_by
            .iter()
            .map(|k| k.test.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        entry("undeclared-killer")["coveredBy"]
            .as_array()
            .unwrap()
            .len(),
        suite::tests().len()
    );
    // Every suite test is in testFiles, at the line of its `fn`.
    let mut ids = Vec::new();
    for (path, test_file) in json["testFiles"].as_object().unwrap() {
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        for t in test_file["tests"].as_array().unwrap() {
            let line = t["location"]["start"]["line"].as_u64().unwrap() as usize;
            let short = t["id"].as_str().unwrap().split("::").nth(1).unwrap();
            assert!(
                text.lines()
                    .nth(line - 1)
                    .unwrap()
                    .contains(&format!("fn {short}(")),
                "{path}:{line} for {}",
                t["id"]
            );
            ids.push(t["id"].as_str().unwrap().to_string());
        }
    }
    ids.sort();
    let mut names: Vec<String> = suite::tests().into_iter().map(|t| t.name).collect();
    names.sort();
    assert_eq!(ids, names);
    let text = serde_json::to_string(&json).unwrap();
    assert!(!text.contains("crates/impl-") && !text.contains("target/fencelab"));
}

/// A report with `copies` times the fixture's mutants (renamed), for scale.
fn scaled(copies: usize) -> (Report, Vec<fencelab::lab::mutant::Mutant>) {
    let (report, _) = outcomes();
    let base = fixture_mutants();
    let mut report = report.clone();
    let originals = std::mem::take(&mut report.mutants);
    let mut mutants = Vec::new();
    report.mutants = (0..copies)
        .flat_map(|i| {
            originals
                .iter()
                .map(move |m| {
                    let mut m = m.clone();
                    m.id = format!("{}-{i}", m.id);
                    m
                })
                .collect::<Vec<_>>()
        })
        .collect();
    for i in 0..copies {
        for m in &base {
            let mut m = m.clone();
            m.id = format!("{}-{i}", m.id);
            mutants.push(m);
        }
    }
    (report, mutants)
}

#[test]
fn the_html_report_is_one_self_contained_page_with_the_whole_matrix() {
    use scraper::{Html, Selector};
    let (report, mutants) = scaled(12);
    assert!(report.mutants.len() >= 80 && suite::tests().len() >= 90);
    for lang in [fencelab::lab::lang::Lang::En, fencelab::lab::lang::Lang::Ja] {
        let html = fencelab::commands::verify::html::render(&report, &mutants, lang);
        let doc = Html::parse_document(&html);
        let select = |css: &str| Selector::parse(css).unwrap();
        let count = |css: &str| doc.select(&select(css)).count();
        assert_eq!(
            doc.select(&select("html"))
                .next()
                .unwrap()
                .value()
                .attr("lang"),
            Some(lang.code())
        );
        // Self-contained: nothing to fetch.
        assert_eq!(count("link, img, iframe, script[src], object, embed"), 0);
        for element in doc.select(&select("[href], [src]")) {
            for attr in ["href", "src"] {
                if let Some(url) = element.value().attr(attr) {
                    assert!(
                        url.starts_with('#'),
                        "{attr}={url} reaches outside the page"
                    );
                }
            }
        }
        assert!(!html.contains("url(") && !html.contains("@import"));
        // The matrix: a column per mutant, a row per test, a cell for each pair.
        let tests = suite::tests().len();
        assert_eq!(count("table.matrix thead th.mut"), report.mutants.len());
        assert_eq!(count("table.matrix tbody tr[data-test]"), tests);
        assert_eq!(
            count("table.matrix tbody td[data-m]"),
            tests * report.mutants.len()
        );
        assert_eq!(count("table.matrix tbody tr.step-row"), 8);
        for row in doc.select(&select("table.matrix tbody tr[data-test]")) {
            assert_eq!(
                row.select(&select("td[data-m]")).count(),
                report.mutants.len()
            );
            assert!(row.select(&select("th.test")).next().is_some());
        }
        // A cell says what the test did, and a kill's cell carries its observation.
        let undeclared = report
            .mutants
            .iter()
            .position(|m| m.id == "undeclared-killer-0")
            .unwrap();
        let killer = &report.mutants[undeclared].killed_by[0];
        let cell = doc
            .select(&select(&format!(
                "tr[data-test=\"{}\"] td[data-m=\"{undeclared}\"]",
                killer.test
            )))
            .next()
            .unwrap();
        assert_eq!(cell.text().collect::<String>(), "F");
        let title = cell.value().attr("title").unwrap();
        assert!(title.contains("failed"), "{title}");
        // Sticky headers and a filter per step, for both axes.
        assert!(html.contains("position: sticky"));
        assert_eq!(count("input[data-filter=ms]"), 8);
        assert_eq!(count("input[data-filter=ts]"), 8);
        for s in 1..=8 {
            assert!(html.contains(&format!("body.hide-ms-{s} [data-ms=\"{s}\"]")));
        }
        // Light and dark.
        assert!(
            html.contains("prefers-color-scheme: dark") && html.contains("[data-theme=\"dark\"]")
        );
        // Each mutant's details, with its diff (when it has one) and explanation.
        assert_eq!(
            count("section#mutants details.mutant"),
            report.mutants.len()
        );
        assert!(count("details.mutant pre.diff") >= report.mutants.len() - 2 * 12);
        assert!(count("details.mutant .explanation") == report.mutants.len());
        // The tests that kill nothing are listed.
        assert_eq!(count("section#idle"), 1);
        // The messages behind the cells are JSON the script can read.
        let data = doc
            .select(&select("script#cells"))
            .next()
            .unwrap()
            .text()
            .collect::<String>();
        let data: serde_json::Value = serde_json::from_str(&data).unwrap();
        assert_eq!(
            data["mutants"].as_array().unwrap().len(),
            report.mutants.len()
        );
        assert!(!html.contains("crates/impl-") && !html.contains("target/fencelab"));
        // The page stays a size a browser opens at once.
        assert!(html.len() < 8 * 1024 * 1024, "{} bytes", html.len());
    }
    let ja =
        fencelab::commands::verify::html::render(&report, &mutants, fencelab::lab::lang::Lang::Ja);
    assert!(ja.contains("キルマトリクス"));
    let step4 = fencelab::lab::worksheet::Worksheet::builtin()
        .step(4)
        .unwrap()
        .title
        .ja
        .clone();
    assert!(ja.contains(&step4), "the worksheet's Japanese step titles");
}

#[test]
fn github_annotations_point_at_each_mutant_not_as_declared() {
    let (report, _) = outcomes();
    let mutants = fixture_mutants();
    let annotations = fencelab::commands::verify::github::annotations(report, &mutants);
    let not_as_declared = report.mutants.iter().filter(|m| !m.as_declared).count();
    assert_eq!(annotations.len(), not_as_declared);
    let hangs = annotations
        .iter()
        .find(|a| a.title.contains("mutant hangs"))
        .unwrap();
    let m = mutants.iter().find(|m| m.id == "hangs").unwrap();
    let span = m.span(fencelab::lab::reference::REFERENCE).unwrap();
    let start = fencelab::error::Location::at(fencelab::lab::reference::REFERENCE, span.start);
    assert_eq!(hangs.file.as_deref(), Some("src/lease.rs"));
    assert_eq!(hangs.line, Some(start.line));
    let stale = annotations
        .iter()
        .find(|a| a.title.contains("stale-missing"))
        .unwrap();
    assert!(
        stale
            .file
            .as_deref()
            .unwrap()
            .ends_with("stale-missing.toml")
    );
    for command in fencelab::output::github::commands(&annotations) {
        assert!(command.starts_with("::error file=") || command.starts_with("::notice"));
        assert!(
            !command.contains('\n') && !command.contains('\r'),
            "{command}"
        );
    }
    let summary = fencelab::commands::verify::github::summary(report);
    let heading = format!(
        "## fencelab verify: {} of {} mutants killed as declared ❌",
        report.summary.as_declared, report.summary.mutants
    );
    assert!(summary.starts_with(&heading), "{summary}");
    assert!(summary.contains("| `hangs` | "), "{summary}");
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
    let (report, _) = outcomes();
    let json = serde_json::to_value(report).unwrap();
    for width in [120, 100, 80, 60] {
        let text = Printer::plain()
            .with_width(width)
            .render_kill_matrix(report);
        for line in text.lines() {
            assert!(
                display_width(line) <= width,
                "{width}: {line:?} is too wide"
            );
        }
        let matrix = parse_matrix(&text);
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
    let (report, _) = outcomes();
    let mut texts = vec![serde_json::to_string_pretty(report).unwrap()];
    for verbosity in [Verbosity::Quiet, Verbosity::Normal, Verbosity::Verbose] {
        for lang in Lang::ALL {
            let printer = Printer::plain().at(verbosity).in_lang(lang);
            texts.push(printer.render_verify_report(report));
        }
    }
    for m in &report.mutants {
        texts.push(Printer::plain().render_mutant_details(m));
    }
    for text in texts {
        for internal in ["crates/", "/fencelab/ws", "impl-", "judge-"] {
            assert!(!text.contains(internal), "{internal} in:\n{text}");
        }
    }
}

#[test]
fn what_verify_says_at_each_verbosity_and_in_japanese() {
    let (report, _) = outcomes();
    let quiet = Printer::plain()
        .at(Verbosity::Quiet)
        .render_verify_report(report);
    let normal = Printer::plain().render_verify_report(report);
    let verbose = Printer::plain()
        .at(Verbosity::Verbose)
        .render_verify_report(report);
    assert!(quiet.lines().count() < normal.lines().count());
    assert!(normal.lines().count() < verbose.lines().count());
    assert!(verbose.contains("Tests that kill no mutant"), "{verbose}");
    assert!(!normal.contains("Tests that kill no mutant"), "{normal}");
    // Summary last: the verdict, then what to rerun.
    for text in [&quiet, &normal, &verbose] {
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
    let ja = Printer::plain()
        .in_lang(Lang::Ja)
        .render_verify_report(report);
    snapshot!("report_normal_ja", ja);
}

/// What `Progress::started` is told, and the lines it would show; and when
/// the build was said to be over and when the baseline was.
#[derive(Default)]
struct Started(
    Vec<String>,
    Option<std::time::Instant>,
    Option<std::time::Instant>,
);

impl Progress for Started {
    fn started(&mut self, mutants: usize, implementation: &str, dir: &str) {
        self.0.push(format!("{mutants} {implementation} {dir}"));
    }
    fn built(&mut self, _: usize, _: f64) {
        // However long the build and what the front end does after it, the
        // baseline's time is its own.
        std::thread::sleep(std::time::Duration::from_secs(2));
        self.1 = Some(std::time::Instant::now());
    }
    fn trial_done(&mut self, _: usize, _: usize) {}
    fn baseline(&mut self, _: &Baseline) {
        self.2 = Some(std::time::Instant::now());
    }
    fn mutant(&mut self, _: &MutantReport) {}
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
    let scratch = Scratch::locate(&root().join("target")).unwrap();
    let mut started = Started::default();
    let report = verify::run(&options, &mutants, &scratch, &mut started).unwrap();
    assert_eq!(
        started.0,
        vec![format!(
            "3 {} {}",
            verify::BUILTIN_REFERENCE,
            verify::BUILTIN_MUTANTS
        )]
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
    let normal = Printer::plain().render_verify_report(&report);
    assert!(normal.lines().count() <= 12, "{normal}");
    assert!(!normal.contains("Kill matrix"), "{normal}");
    assert!(normal.contains("fencelab verify --verbose"), "{normal}");
    let verbose = Printer::plain()
        .at(Verbosity::Verbose)
        .render_verify_report(&report);
    assert!(verbose.contains("Kill matrix"), "{verbose}");
    let quiet = Printer::plain()
        .at(Verbosity::Quiet)
        .render_verify_report(&report);
    assert_eq!(
        quiet.trim().lines().count(),
        1,
        "the verdict alone: {quiet}"
    );
}
