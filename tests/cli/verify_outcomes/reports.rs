//! The reports people and tools read, from the same run of the outcomes
//! fixture: Stryker's schema, the HTML page (at the scale of a real run), and
//! GitHub's annotations and summary.

use fencelab::commands::verify;
use fencelab::lab::suite;

use super::batch::COPIES;
use super::{mutant, options, outcomes};
use crate::common::root;

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
    let mutants = fixture_mutants();
    let json = &outcomes().stryker;
    let schema: serde_json::Value = serde_json::from_str(include_str!(
        "../../../schemas/mutation-testing-report-schema/mutation-testing-report-schema.json"
    ))
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("the official schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    declared_keys_only(&schema, &schema, json, "report");
    // The validator does catch what is wrong: a status outside the enum.
    let mut broken = json.clone();
    broken["files"]["src/lease.rs"]["mutants"][0]["status"] = "Caught".into();
    assert!(!validator.is_valid(&broken));

    let file = &json["files"]["src/lease.rs"];
    assert_eq!(file["language"], "rust");
    assert_eq!(file["source"], fencelab::lab::reference::REFERENCE);
    let entries = file["mutants"].as_array().unwrap();
    assert_eq!(entries.len(), outcomes().mutants().len());
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
    let text = serde_json::to_string(json).unwrap();
    assert!(!text.contains("crates/impl-") && !text.contains("target/fencelab"));
}

#[test]
fn the_html_report_is_one_self_contained_page_with_the_whole_matrix() {
    use scraper::{Html, Selector};
    let run = outcomes();
    let base = run.mutants();
    // The page's mutants: `COPIES` times the run's, renamed, with their titles.
    let scaled: Vec<(String, &str)> = (0..COPIES)
        .flat_map(|i| {
            base.iter()
                .map(move |m| (format!("{}-{i}", m.id), m.title.as_str()))
        })
        .collect();
    assert!(scaled.len() >= 80 && suite::tests().len() >= 90);
    for lang in [fencelab::lab::lang::Lang::En, fencelab::lab::lang::Lang::Ja] {
        let html = &run.html[lang.code()];
        let doc = Html::parse_document(html);
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
        assert_eq!(count("table.matrix thead th.mut"), scaled.len());
        assert_eq!(count("table.matrix tbody tr[data-test]"), tests);
        assert_eq!(count("table.matrix tbody td[data-m]"), tests * scaled.len());
        assert_eq!(count("table.matrix tbody tr.step-row"), 8);
        for row in doc.select(&select("table.matrix tbody tr[data-test]")) {
            assert_eq!(row.select(&select("td[data-m]")).count(), scaled.len());
            assert!(row.select(&select("th.test")).next().is_some());
        }
        // A cell says what the test did, and a kill's cell carries its observation.
        let undeclared = scaled
            .iter()
            .position(|(id, _)| id == "undeclared-killer-0")
            .unwrap();
        let killer = &mutant("undeclared-killer").killed_by[0];
        let cell = doc
            .select(&select(&format!(
                "tr[data-test=\"{}\"] td[data-m=\"{undeclared}\"]",
                killer.test
            )))
            .next()
            .unwrap();
        assert_eq!(cell.text().collect::<String>(), "F");
        let title = cell.value().attr("title").unwrap();
        let failed = ["failed", "失敗"][usize::from(lang == fencelab::lab::lang::Lang::Ja)];
        assert!(title.contains(failed), "{title}");
        // Badges and cards in the page's language, as the terminal says them.
        if lang == fencelab::lab::lang::Lang::Ja {
            for element in doc.select(&select(".badge, .card, th.mut")) {
                let mut text = format!(
                    "{} {}",
                    element.text().collect::<String>(),
                    element.value().attr("title").unwrap_or_default()
                );
                // Ids and the fixtures' titles are the author's words, not ours.
                for (id, title) in &scaled {
                    text = text.replace(id, "").replace(title, "");
                }
                for english in [
                    "killed", "survived", "crashed", "timeout", "failed", "unviable", "stale",
                    "not run",
                ] {
                    assert!(!text.contains(english), "{english} in {text}");
                }
            }
        }
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
        assert_eq!(count("section#mutants details.mutant"), scaled.len());
        assert!(count("details.mutant pre.diff") >= scaled.len() - 2 * 12);
        assert!(count("details.mutant .explanation") == scaled.len());
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
        assert_eq!(data["mutants"].as_array().unwrap().len(), scaled.len());
        assert!(!html.contains("crates/impl-") && !html.contains("target/fencelab"));
        // The page stays a size a browser opens at once.
        assert!(html.len() < 8 * 1024 * 1024, "{} bytes", html.len());
    }
    let ja = &run.html["ja"];
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
    let run = outcomes();
    let mutants = fixture_mutants();
    let annotations = &run.annotations;
    let not_as_declared = run.mutants().iter().filter(|m| !m.as_declared).count();
    assert_eq!(annotations.len(), not_as_declared);
    let hangs = annotations
        .iter()
        .find(|a| a.title.contains("mutant hangs"))
        .unwrap();
    let m = mutants.iter().find(|m| m.id == "hangs").unwrap();
    let span = m.span(fencelab::lab::reference::REFERENCE).unwrap();
    let line = fencelab::lab::reference::REFERENCE[..span.start]
        .matches('\n')
        .count()
        + 1;
    assert_eq!(hangs.file.as_deref(), Some("src/lease.rs"));
    assert_eq!(hangs.line, Some(line));
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
    for command in &run.commands {
        assert!(command.starts_with("::error file=") || command.starts_with("::notice"));
        assert!(
            !command.contains('\n') && !command.contains('\r'),
            "{command}"
        );
    }
    let summary = &run.summary;
    let heading = format!(
        "## fencelab verify: {} of {} mutants killed as declared ❌",
        run.json["summary"]["as_declared"], run.json["summary"]["mutants"]
    );
    assert!(summary.starts_with(&heading), "{summary}");
    assert!(summary.contains("| `hangs` | "), "{summary}");
}
