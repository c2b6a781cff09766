use std::path::Path;

use super::*;
use crate::lab::lang::Lang;
use crate::output::printer::Layout;

/// A grade report as `grade --json` writes it: per submission, the tests it
/// fails (every other test of the suite passes).
fn report(suite: &str, submissions: &[(&str, &[&str], Option<&str>)]) -> String {
    let tests = crate::lab::suite::tests();
    let subs: Vec<serde_json::Value> = submissions
        .iter()
        .map(|(name, fails, invalid)| {
            let steps: Vec<serde_json::Value> = (1..=8u32)
                .map(|step| {
                    let of: Vec<_> = tests.iter().filter(|t| t.step == step).collect();
                    let failed = of.iter().filter(|t| fails.contains(&t.name.as_str())).count();
                    serde_json::json!({"step": step, "slug": SLUGS[step as usize - 1],
                        "passed": of.len() - failed, "total": of.len(), "score": 0.0})
                })
                .collect();
            let graded: Vec<serde_json::Value> = tests
                .iter()
                .map(|t| {
                    let outcome = if fails.contains(&t.name.as_str()) { "failed" } else { "passed" };
                    serde_json::json!({"test": t.name, "step": t.step, "outcome": outcome, "secs": 0.1})
                })
                .collect();
            serde_json::json!({"name": name, "file": name, "score": 0.0, "passed_gate": true,
                "compile_errors": null, "unusable": null, "invalid_tests": invalid,
                "steps": steps, "tests": graded})
        })
        .collect();
    serde_json::json!({"schema": 1, "suite": suite, "min_score": 0.0, "test_limit_secs": 10.0,
        "submissions": subs, "exit_code": 0})
    .to_string()
}

fn killers(id: &str) -> Vec<String> {
    let m = crate::lab::mutant::builtin()
        .into_iter()
        .find(|m| m.id == id)
        .expect(id);
    m.killers
}

/// A class: two like renew-revives-at-expiry, one with a bug no mutant
/// has, one that passes everything.
fn class_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let revives = killers("renew-revives-at-expiry");
    let revives: Vec<&str> = revives.iter().map(String::as_str).collect();
    // A complete() that trims the result: only the random calls see it.
    let trims = ["step6::random_calls_agree_with_the_contract"];
    let a = dir.join("a.json");
    std::fs::write(
        &a,
        report(
            "sha256:x",
            &[("zoe.rs", &revives, None), ("amy.rs", &trims, None)],
        ),
    )
    .unwrap();
    let b = dir.join("b.json");
    std::fs::write(
        &b,
        report(
            "sha256:x",
            &[("bob.rs", &revives, None), ("cy.rs", &[], None)],
        ),
    )
    .unwrap();
    vec![a, b]
}

#[test]
fn submissions_are_grouped_by_what_they_fail_and_matched_to_mutants() {
    let dir = tempfile::tempdir().unwrap();
    let read = read::reports(&class_files(dir.path())).unwrap();
    let r = class(&read, false);
    assert_eq!((r.submissions, r.graded, r.kind), (4, 4, "implementations"));
    assert_eq!(r.steps[4].passed_whole, 2, "step 5: amy and cy");
    assert_eq!(r.steps[5].passed_whole, 3, "step 6: all but amy");
    // What no mutant explains first.
    assert_eq!(r.groups[0].members, ["amy.rs"]);
    assert!(r.groups[0].matches.is_empty());
    assert_eq!(r.groups[1].members, ["bob.rs", "zoe.rs"]);
    assert_eq!(r.groups[1].matches[0].mutant, "renew-revives-at-expiry");
    assert!(r.groups[1].matches[0].exact);
    assert_eq!(r.groups[0].representative, None, "amy.rs is nowhere");
    // Beside the reports, amy's file gives the group its representative.
    let reference = crate::lab::reference::REFERENCE;
    let trimmed = reference.replacen("now, result]", "now, result.trim()]", 1);
    std::fs::write(dir.path().join("amy.rs"), &trimmed).unwrap();
    let r = class(&read, false);
    let amy = r.groups[0]
        .representative
        .as_ref()
        .expect("found beside the report");
    assert!(amy.diff.contains("result.trim()") && amy.mutant.contains("killers"));
    assert!(r.groups[1].representative.is_none(), "a mutant explains it");
    assert!(
        class(&read, true).groups[0].representative.is_none(),
        "not shared"
    );
    let screen = render::render(&Layout::plain().with_width(80), &r);
    assert!(screen.contains("a mutant file to start from"), "{screen}");
}

#[test]
fn the_same_reports_give_the_same_bytes_in_any_order_and_pseudonyms_are_stable() {
    let dir = tempfile::tempdir().unwrap();
    let files = class_files(dir.path());
    let json = |files: &[std::path::PathBuf], anonymize| {
        crate::output::report_file::json(&class(&read::reports(files).unwrap(), anonymize))
    };
    let reversed: Vec<_> = files.iter().rev().cloned().collect();
    assert_eq!(json(&files, false), json(&reversed, false));
    let anonymous = json(&files, true);
    assert_eq!(anonymous, json(&reversed, true));
    for name in ["zoe.rs", "amy.rs", "bob.rs", "cy.rs"] {
        assert!(!anonymous.contains(name), "{anonymous}");
    }
    assert!(anonymous.contains(&pseudonym("amy.rs")));
    assert_ne!(pseudonym("amy.rs"), pseudonym("bob.rs"));
}

#[test]
fn learners_tests_give_the_mutants_they_miss_and_their_invalid_tests_by_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tests.json");
    // A grade --tests report: each mutant a test, passed when caught.
    let mutants = crate::lab::mutant::builtin();
    let suite = |caught: &[&str], invalid: Option<&str>, name: &str| {
        let tests: Vec<serde_json::Value> = mutants
            .iter()
            .map(|m| {
                let outcome = if caught.contains(&m.id.as_str()) { "passed" } else { "failed" };
                serde_json::json!({"test": format!("step{}::{}", m.step, m.id), "step": m.step, "outcome": outcome})
            })
            .collect();
        serde_json::json!({"name": name, "file": format!("{name}/tests/mine/main.rs"),
            "invalid_tests": invalid, "steps": [], "tests": tests})
    };
    let report = serde_json::json!({"schema": 1, "suite": "learner-tests-abc", "submissions": [
        suite(&["renew-ignores-owner"], None, "amy"),
        suite(&["renew-ignores-owner", "claim-ignores-until"], None, "bob"),
        suite(&[], Some("first (assumes claim-many-winner), second (fails on the reference)"), "cy"),
        suite(&[], Some("winner (assumes claim-many-winner)"), "dan"),
    ]});
    std::fs::write(&path, report.to_string()).unwrap();
    let r = class(&read::reports(&[path]).unwrap(), false);
    assert_eq!(r.kind, "tests");
    let row = |id: &str| r.mutants.iter().find(|m| m.mutant == id).unwrap().clone();
    assert_eq!(
        (
            row("renew-ignores-owner").caught_by,
            row("renew-ignores-owner").valid_suites
        ),
        (2, 2)
    );
    assert_eq!(row("claim-ignores-until").caught_by, 1);
    assert_eq!(r.mutants[0].caught_by, 0, "the least caught first");
    assert_eq!(r.invalid[0].reason, "assumes claim-many-winner");
    assert_eq!((r.invalid[0].tests, r.invalid[0].suites), (2, 2));
    assert_eq!(r.invalid[0].examples, ["cy: first", "dan: winner"]);
    let layout = Layout::plain().with_width(80);
    for lang in [Lang::En, Lang::Ja] {
        let screen = render::render(&layout.in_lang(lang), &r);
        insta::assert_snapshot!(format!("class_tests_{lang}"), screen);
    }
}

/// A report of `grade --tests` that carries each test's verdicts: two
/// suites assume claim_many's winner, one an error's text, two
/// contradict the contract alike, one is valid.
fn judged_tests_report(dir: &Path) -> std::path::PathBuf {
    let fails_on = |ids: &[&str]| -> Vec<serde_json::Value> {
        (ids.iter())
            .map(|id| serde_json::json!({"implementation": id, "runs": 3, "failed": 3}))
            .collect()
    };
    let winner = |test: &str| {
        serde_json::json!({"test": test, "verdict": "assumes-a-freedom",
            "assumed": ["claim-many-winner"],
            "fails_on": fails_on(&["reference", "variant-claim-many-winner"])})
    };
    let expiry = |test: &str| {
        serde_json::json!({"test": test, "verdict": "fails-on-reference",
            "fails_on": fails_on(&["reference", "exclusive"]),
            "observation": {"what": "assertion `left == right` failed", "expected": "None", "actual": "Some(2)"},
            "misconceptions": ["claim-expiry-inclusive"]})
    };
    let suite = |name: &str, invalid: Option<&str>, tests: Vec<serde_json::Value>| {
        serde_json::json!({"name": name, "file": name, "invalid_tests": invalid,
            "steps": [], "tests": [], "learner_tests": tests})
    };
    let report = serde_json::json!({"schema": 1, "suite": "learner-tests-abc",
    "freedoms": {"claim-many-winner": {"assumed": {"en": "asserts which owner wins", "ja": "勝つ owner を前提"},
                                        "contract": "Step 8: which one is not said."}},
    "submissions": [
        suite("amy", Some("winner (assumes claim-many-winner)"), vec![winner("winner")]),
        suite("bob", Some("first_wins (assumes claim-many-winner), holds (fails on the reference)"),
              vec![winner("first_wins"), expiry("holds")]),
        suite("cy", Some("error_text (assumes error-text)"), vec![serde_json::json!(
            {"test": "error_text", "verdict": "assumes-a-freedom", "assumed": ["error-text"],
             "fails_on": fails_on(&["variant-error-text", "exclusive"])})]),
        suite("dan", Some("still_held (fails on the reference)"), vec![expiry("still_held")]),
        suite("eve", None, vec![serde_json::json!({"test": "renews", "verdict": "valid"})]),
        // A full wheat's claim_many races for real: its verdicts split no family.
        suite("fay", Some("winner (racy on variant-claim-many-winner)"), vec![serde_json::json!(
            {"test": "winner", "verdict": "racy", "assumed": ["claim-many-winner"],
             "fails_on": [{"implementation": "reference", "runs": 3, "failed": 3},
                          {"implementation": "variant-claim-many-winner", "runs": 3, "failed": 3},
                          {"implementation": "lazy", "runs": 3, "failed": 1}]})]),
    ]});
    let path = dir.join("judged.json");
    std::fs::write(&path, report.to_string()).unwrap();
    path
}

#[test]
fn invalid_tests_are_grouped_by_their_verdicts_and_by_what_they_contradict() {
    let dir = tempfile::tempdir().unwrap();
    let r = class(
        &read::reports(&[judged_tests_report(dir.path())]).unwrap(),
        false,
    );
    let by = |reason: &str| r.invalid.iter().find(|g| g.reason == reason).unwrap();
    let winner = by("assumes claim-many-winner");
    assert_eq!((winner.by, winner.tests, winner.suites), ("verdicts", 3, 3));
    assert_eq!(winner.fails_on, ["reference", "variant-claim-many-winner"]);
    assert_eq!(
        winner.freedoms[0].contract,
        "Step 8: which one is not said."
    );
    assert_eq!(winner.examples, ["amy: winner", "bob: first_wins"]);
    // A report without the clause: this fencelab's own freedoms.toml says it.
    let text = by("assumes error-text");
    assert!(
        text.freedoms[0].contract.starts_with("Steps 4-6"),
        "{text:?}"
    );
    let contradicts = by("fails on the reference");
    assert_eq!((contradicts.by, contradicts.tests), ("observation", 2));
    let o = contradicts.observation.as_ref().unwrap();
    assert_eq!(
        (o.expected.as_str(), o.actual.as_str()),
        ("None", "Some(2)")
    );
    assert_eq!(contradicts.misconceptions, ["claim-expiry-inclusive"]);
    assert_eq!(contradicts.examples, ["bob: holds", "dan: still_held"]);
    assert_eq!(r.invalid.len(), 3, "{:#?}", r.invalid);
    let layout = Layout::plain().with_width(80);
    for lang in [Lang::En, Lang::Ja] {
        let screen = render::render(&layout.in_lang(lang), &r);
        for line in screen.lines() {
            assert!(crate::output::width::display_width(line) <= 80, "{line}");
        }
        insta::assert_snapshot!(format!("class_judged_tests_{lang}"), screen);
    }
}

#[test]
fn what_class_prints_fits_80_columns_in_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    let r = class(&read::reports(&class_files(dir.path())).unwrap(), false);
    for lang in [Lang::En, Lang::Ja] {
        let screen = render::render(&Layout::plain().with_width(80).in_lang(lang), &r);
        for line in screen.lines() {
            assert!(crate::output::width::display_width(line) <= 80, "{line}");
        }
        insta::assert_snapshot!(format!("class_{lang}"), screen);
    }
}

#[test]
fn the_page_holds_nothing_from_outside_and_escapes_every_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut read = read::reports(&class_files(dir.path())).unwrap();
    read.submissions[0].name = "<script>alert(1)</script>".into();
    let page = html::page(&class(&read, false), Lang::En);
    assert!(!page.contains("<script>alert") && page.contains("&lt;script&gt;alert"));
    assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("src="));
    assert_eq!(
        page.matches("<script>").count(),
        1,
        "the filter's own, inline"
    );
    assert!(page.contains("renew-revives-at-expiry"));
}

#[test]
fn a_file_that_is_not_a_report_or_two_kinds_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": 1,\n \"submissions\": 3}").unwrap();
    let err = read::reports(std::slice::from_ref(&bad))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.json:2:") && err.contains("next:"),
        "{err}"
    );
    let tests = dir.path().join("tests.json");
    std::fs::write(&tests, report("learner-tests-x", &[("t", &[], None)])).unwrap();
    let imps = dir.path().join("imps.json");
    std::fs::write(&imps, report("sha256:x", &[("i.rs", &[], None)])).unwrap();
    let err = read::reports(&[imps.clone(), tests])
        .unwrap_err()
        .to_string();
    assert!(err.contains("one class report reads one kind"), "{err}");
    // Two suites' reports do not add up either.
    let other = dir.path().join("other.json");
    std::fs::write(&other, report("sha256:y", &[("j.rs", &[], None)])).unwrap();
    let err = read::reports(&[imps, other]).unwrap_err().to_string();
    assert!(
        err.contains("one class report reads one suite's reports") && err.contains("next:"),
        "{err}"
    );
    // A directory that is not a results directory.
    let err = read::reports(&[dir.path().to_path_buf()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a results directory"), "{err}");
}

#[test]
fn a_submission_not_graded_is_named_and_a_class_of_none_graded_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let mut json: serde_json::Value = serde_json::from_str(&report(
        "sha256:x",
        &[("ok.rs", &[], None), ("bad.rs", &[], None)],
    ))
    .unwrap();
    json["submissions"][1]["compile_errors"] = "error: expected `;`".into();
    std::fs::write(&path, json.to_string()).unwrap();
    let r = class(&read::reports(std::slice::from_ref(&path)).unwrap(), false);
    assert_eq!(
        (r.graded, r.not_graded.clone()),
        (1, vec!["bad.rs".to_string()])
    );
    let screen = render::render(&Layout::plain().with_width(80), &r);
    assert!(
        screen.contains("fencelab class: 2 submissions (rust), 1 graded"),
        "{screen}"
    );
    assert!(screen.contains("could not be graded): bad.rs"), "{screen}");
    json["submissions"][0]["unusable"] = "no API".into();
    std::fs::write(&path, json.to_string()).unwrap();
    let r = class(&read::reports(&[path]).unwrap(), false);
    let screen = render::render(&Layout::plain().with_width(80), &r);
    assert!(
        screen.contains("No submission could be graded."),
        "{screen}"
    );
    assert!(!screen.contains("passes every test"), "{screen}");
}

#[test]
fn the_json_is_valid_against_its_schema_in_both_kinds() {
    let schema: serde_json::Value = serde_json::from_str(include_str!(
        "../../../schemas/fencelab/class-report.schema.json"
    ))
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("the schema compiles");
    let dir = tempfile::tempdir().unwrap();
    let files = class_files(dir.path());
    std::fs::write(
        dir.path().join("amy.rs"),
        crate::lab::reference::REFERENCE.replacen("now, result]", "now, result.trim()]", 1),
    )
    .unwrap();
    let tests = dir.path().join("tests.json");
    std::fs::write(
        &tests,
        report("learner-tests-x", &[("t", &[], Some("a (assumes x)"))]),
    )
    .unwrap();
    for read in [
        read::reports(&files).unwrap(),
        read::reports(&[tests]).unwrap(),
        read::reports(&[judged_tests_report(dir.path())]).unwrap(),
    ] {
        let json: serde_json::Value =
            serde_json::from_str(&crate::output::report_file::json(&class(&read, false))).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:#?}\n{json:#}");
    }
    // And it can fail: a kind it does not know.
    let mut json = serde_json::to_value(class(&read::reports(&files).unwrap(), false)).unwrap();
    json["kind"] = "other".into();
    assert!(!validator.is_valid(&json));
}

#[test]
fn the_page_says_what_the_report_says_read_back_with_an_html_parser() {
    use scraper::{Html, Selector};
    let dir = tempfile::tempdir().unwrap();
    let r = class(&read::reports(&class_files(dir.path())).unwrap(), false);
    for lang in [Lang::En, Lang::Ja] {
        let page = Html::parse_document(&html::page(&r, lang));
        assert!(page.errors.is_empty(), "{:?}", page.errors);
        let rows = Selector::parse("table.groups tr.group").unwrap();
        let groups: Vec<_> = page.select(&rows).collect();
        assert_eq!(groups.len(), r.groups.len());
        let size = Selector::parse("td.n").unwrap();
        for (row, g) in groups.iter().zip(&r.groups) {
            let shown: String = row.select(&size).next().unwrap().text().collect();
            assert_eq!(shown, g.size.to_string());
            let text: String = row.text().collect();
            for m in &g.members {
                assert!(text.contains(m.as_str()), "{text}");
            }
        }
        let lang_attr = Selector::parse("html").unwrap();
        let html = page.select(&lang_attr).next().unwrap();
        assert_eq!(
            html.value().attr("lang"),
            Some(if lang == Lang::Ja { "ja" } else { "en" })
        );
    }
}

#[test]
fn the_page_shows_each_group_of_invalid_tests_with_its_clause_or_observation() {
    use scraper::{Html, Selector};
    let dir = tempfile::tempdir().unwrap();
    let r = class(
        &read::reports(&[judged_tests_report(dir.path())]).unwrap(),
        false,
    );
    let rows = Selector::parse("table.invalid tr.invalid-group").unwrap();
    let cell = Selector::parse("td").unwrap();
    for lang in [Lang::En, Lang::Ja] {
        let text = html::page(&r, lang);
        assert!(
            text.contains("<code>Display</code>"),
            "a clause's code as code"
        );
        let page = Html::parse_document(&text);
        assert!(page.errors.is_empty(), "{:?}", page.errors);
        let shown: Vec<_> = page.select(&rows).collect();
        assert_eq!(shown.len(), r.invalid.len());
        for (row, g) in shown.iter().zip(&r.invalid) {
            assert_eq!(row.value().attr("data-by"), Some(g.by));
            let cells: Vec<String> = row.select(&cell).map(|c| c.text().collect()).collect();
            assert_eq!(cells[0], g.tests.to_string());
            assert_eq!(cells[1], g.suites.to_string());
            // Backticks become code: the text reads without them.
            let plain = |t: &str| t.replace('`', "");
            for f in &g.freedoms {
                assert!(cells[2].contains(&f.freedom), "{}", cells[2]);
                assert!(cells[2].contains(&plain(&f.contract)), "{}", cells[2]);
                assert!(
                    cells[2].contains(&plain(f.assumed.get(lang))),
                    "{}",
                    cells[2]
                );
            }
            if let Some(o) = &g.observation {
                assert!(cells[2].contains(&o.expected) && cells[2].contains(&o.actual));
            }
            for x in g.fails_on.iter().chain(&g.examples) {
                assert!(cells[3].contains(x.as_str()) || cells[4].contains(x.as_str()));
            }
        }
    }
}
