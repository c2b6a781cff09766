//! A fixture class of learners' tests, made from the lab's own fixtures
//! (`happy_path.rs`, `over_specified.rs`) and suite, graded with `grade
//! --tests --json`, then summarised by `fencelab class`: each family of
//! over-specified tests grouped under its freedom, each contradicting one
//! under its observation, each valid suite counted for the mutants it
//! catches.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::class;

/// A learner's test file, a fixture class's member: a name, then the
/// files of a lab crate's `tests/mine/` (one: a single test file).
struct Member {
    name: String,
    files: Vec<(String, String)>,
}

/// The lab's fixtures as a learner's: `happy_path.rs`'s helper and valid
/// test, its misunderstanding, and `over_specified.rs`'s test per freedom.
struct Sources {
    happy: String,
    over: String,
}

impl Sources {
    fn read() -> Sources {
        let read = |name: &str| {
            std::fs::read_to_string(
                crate::common::root()
                    .join("tests/fixtures/learner_tests")
                    .join(name),
            )
            .unwrap()
        };
        Sources {
            happy: read("happy_path.rs"),
            over: read("over_specified.rs"),
        }
    }

    /// `happy_path.rs` up to its misunderstanding: the binding, `db()` and
    /// one valid test, renamed `name` when given.
    fn happy(&self, name: Option<&str>) -> String {
        let cut = self
            .happy
            .find("// Written from the misunderstanding")
            .unwrap();
        let valid = &self.happy[..cut];
        match name {
            Some(name) => valid.replace(
                "fn a_job_is_claimed_renewed_and_completed(",
                &format!("fn {name}("),
            ),
            None => valid.to_string(),
        }
    }

    /// `happy_path.rs`'s misunderstanding (a lease still holds at its
    /// expiry), named `name`.
    fn holds_at_expiry(&self, name: &str) -> String {
        let cut = self
            .happy
            .find("// Written from the misunderstanding")
            .unwrap();
        self.happy[cut..].replace(
            "fn a_lease_still_holds_when_it_expires(",
            &format!("fn {name}("),
        )
    }

    /// `over_specified.rs`'s helpers and its test of `freedom`, named
    /// `name`, reaching the implementation as a learner's file does.
    fn over_specified(&self, freedom: &str, name: &str) -> String {
        let mut out = String::from("use lab as lease;\n");
        let mark = format!("// freedom: {freedom}\n");
        let mut found = false;
        for item in fencelab::lab::reference::items(&self.over) {
            if item.text.starts_with("use crate::lease") {
                continue;
            }
            let test = item.head.contains("#[test]");
            if test && !item.head.contains(&mark) {
                continue;
            }
            let text = match (test, item.function_name()) {
                (true, Some(old)) => {
                    found = true;
                    item.text
                        .replacen(&format!("fn {old}("), &format!("fn {name}("), 1)
                }
                _ => item.text.to_string(),
            };
            out.push_str(item.head);
            out.push_str(&text);
            out.push('\n');
        }
        assert!(found, "over_specified.rs has no test of {freedom}");
        out
    }
}

/// A test written from the misunderstanding that enqueueing an id twice
/// answers true twice (the contract: `false` the second time).
fn enqueue_twice(name: &str) -> String {
    format!(
        "\n#[test]\nfn {name}() {{\n    let (_dir, db) = db();\n    assert!(lease::enqueue(&db, \"job\").unwrap());\n    \
         assert_eq!(lease::enqueue(&db, \"job\").unwrap(), true);\n}}\n"
    )
}

/// A single test file.
fn single(name: &str, text: String) -> Member {
    Member {
        name: format!("{name}.rs"),
        files: vec![("main.rs".into(), text)],
    }
}

/// fencelab's own suite's step `step` as a learner's lab crate: valid, and
/// it catches every mutant of its step.
fn own_step(step: u32) -> Member {
    Member {
        name: format!("valid-step{step}"),
        files: crate::common::lab::own_suite_files(&[step]),
    }
}

/// Writes `members` into `dir` (a file, or a lab crate per member) and
/// grades them with `grade --tests --json`, against `judges` (a directory
/// with `wheats/` and `mutants/`) or all of fencelab's; the report's path.
fn grade_tests(dir: &Path, members: &[Member], judges: Option<&Path>) -> PathBuf {
    let mut paths = Vec::new();
    for m in members {
        if let [(_, text)] = m.files.as_slice() {
            std::fs::write(dir.join(&m.name), text).unwrap();
        } else {
            crate::common::lab::write_lab(&dir.join(&m.name), &m.files);
        }
        paths.push(m.name.clone());
    }
    let report = dir.join("tests.json");
    let mut grade = Command::new(env!("CARGO_BIN_EXE_fencelab"));
    grade
        .args(["--color", "never", "grade", "--tests"])
        .args(&paths)
        .arg("--json")
        .arg(&report)
        .current_dir(dir);
    if let Some(judges) = judges {
        grade
            .arg("--wheats")
            .arg(judges.join("wheats"))
            .arg("--mutants")
            .arg(judges.join("mutants"));
    }
    let out = grade.output().unwrap();
    assert!(report.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    report
}

/// `fencelab class` of `report` as JSON, twice: the same bytes.
fn class_json(dir: &Path, report: &Path) -> serde_json::Value {
    let json = dir.join("class.json");
    let args = [report.as_os_str(), "--json".as_ref(), json.as_os_str()];
    let (exit, _, stderr) = class(&args);
    assert_eq!(exit, 0, "{stderr}");
    let first = std::fs::read_to_string(&json).unwrap();
    class(&args);
    assert_eq!(
        std::fs::read_to_string(&json).unwrap(),
        first,
        "the same bytes twice"
    );
    serde_json::from_str(&first).unwrap()
}

/// The group of invalid tests that holds every test in `tests` (as
/// `suite: test` ends), and only them: a family grouped whole.
fn group_of<'a>(class: &'a serde_json::Value, tests: &[String]) -> &'a serde_json::Value {
    let groups = class["invalid"].as_array().unwrap();
    let g = (groups.iter())
        .find(|g| {
            let examples = g["examples"].as_array().unwrap();
            examples.iter().any(|e| {
                tests
                    .iter()
                    .any(|t| e.as_str().unwrap().ends_with(&format!(": {t}")))
            })
        })
        .unwrap_or_else(|| panic!("{tests:?}: in no group\n{class:#}"));
    assert_eq!(g["tests"], tests.len(), "{tests:?} in one group: {g:#}");
    g
}

/// The fast form: five files against one variant and two mutants. Two take
/// the error's text as a rule, two contradict the contract alike, one is
/// valid and catches a mutant.
#[test]
fn a_fixture_class_of_learners_tests_groups_each_family() {
    let s = Sources::read();
    let mut members = vec![single("valid", s.happy(None))];
    for i in 1..=2 {
        let mut text = s.over_specified("error-text", &format!("error_text_{i}"));
        if i == 1 {
            text.push_str(&s.happy(None).replace("use lab as lease;", ""));
        }
        members.push(single(&format!("over-error-text-{i}"), text));
        let holds =
            s.happy(Some(&format!("happy_{i}"))) + &s.holds_at_expiry(&format!("holds_{i}"));
        members.push(single(&format!("contradicts-{i}"), holds));
    }
    let dir = tempfile::tempdir().unwrap();
    let judges = dir.path().join("judges");
    for (kind, name) in [
        ("wheats", "freedoms.toml"),
        ("wheats", "variant-error-text.toml"),
        ("mutants", "claim-expiry-inclusive.toml"),
        ("mutants", "state-owner-and-result-swapped.toml"),
    ] {
        std::fs::create_dir_all(judges.join(kind)).unwrap();
        std::fs::copy(
            crate::common::root().join(kind).join(name),
            judges.join(kind).join(name),
        )
        .unwrap();
    }
    let report = grade_tests(dir.path(), &members, Some(&judges));
    // What grade --tests wrote is as its schema says, and the schema can
    // refuse a verdict it does not know.
    let schema = crate::common::root().join("schemas/fencelab/grade-report.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("the schema compiles");
    let mut graded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&graded)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(
        graded["freedoms"]["error-text"]["assumed"]["en"]
            .as_str()
            .map(|t| t.is_empty()),
        Some(false)
    );
    graded["submissions"][0]["learner_tests"][0]["verdict"] = "other".into();
    assert!(!validator.is_valid(&graded));
    let class = class_json(dir.path(), &report);
    let text = group_of(&class, &["error_text_1".into(), "error_text_2".into()]);
    assert_eq!(text["by"], "verdicts");
    assert_eq!(text["freedoms"][0]["freedom"], "error-text");
    assert!(
        text["freedoms"][0]["contract"]
            .as_str()
            .unwrap()
            .contains("InvalidTtl")
    );
    assert_eq!(text["fails_on"], serde_json::json!(["variant-error-text"]));
    let holds = group_of(&class, &["holds_1".into(), "holds_2".into()]);
    assert_eq!(holds["by"], "observation");
    assert_eq!(
        (
            holds["observation"]["expected"].as_str(),
            holds["observation"]["actual"].as_str()
        ),
        (Some("None"), Some("Some(2)")),
        "{holds:#}"
    );
    assert_eq!(
        holds["misconceptions"],
        serde_json::json!(["claim-expiry-inclusive"])
    );
    // The terminal at 80 columns, as tmux shows it, in both languages.
    for lang in ["en", "ja"] {
        let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(["class", "tests.json", "--lang", lang])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("COLUMNS", "80")
            .output()
            .unwrap();
        let screen = String::from_utf8(out.stdout).unwrap();
        for line in screen.lines() {
            assert!(fencelab::output::width::display_width(line) <= 80, "{line}");
        }
        insta::assert_snapshot!(format!("class_of_learners_tests_{lang}"), screen);
    }
    let swapped = (class["mutants"].as_array().unwrap().iter())
        .find(|m| m["mutant"] == "state-owner-and-result-swapped")
        .unwrap();
    assert_eq!(
        (
            swapped["caught_by"].as_u64(),
            swapped["valid_suites"].as_u64()
        ),
        (Some(1), Some(1))
    );
}

/// The freedoms the slow fixture class over-specifies, three files each
/// (their tests are quick: not the lock-holding `busy-timeout` or
/// `reader-wait`).
const FAMILIES: [&str; 8] = [
    "claim-many-winner",
    "error-text",
    "complete-row",
    "check-order",
    "journal-mode",
    "column-order",
    "extra-schema",
    "before-init",
];

/// Issue 48's fixture class: 42 learners' test files, graded against every
/// wheat and mutant, then summarised. Each over-specified family is one
/// group under its freedom, each contradicting family one group under its
/// observation, and each valid suite of a step of fencelab's own is counted
/// for its step's mutants.
#[test]
#[ignore = "slow: .ci/run step 2"]
fn a_fixture_class_of_42_learners_test_files_groups_every_family() {
    let s = Sources::read();
    let mut members: Vec<Member> = [1, 2, 5, 7].into_iter().map(own_step).collect();
    members.push(single("valid-happy-1", s.happy(None)));
    members.push(single("valid-happy-2", s.happy(Some("happy_2"))));
    for freedom in FAMILIES {
        for i in 1..=3 {
            let name = format!("{}_{i}", freedom.replace('-', "_"));
            members.push(single(
                &format!("over-{freedom}-{i}"),
                s.over_specified(freedom, &name),
            ));
        }
    }
    for i in 1..=6 {
        let text = s.happy(Some(&format!("happy_{i}"))) + &s.holds_at_expiry(&format!("holds_{i}"));
        members.push(single(&format!("contradicts-expiry-{i}"), text));
    }
    for i in 1..=6 {
        let text = s.happy(Some(&format!("happy_{i}"))) + &enqueue_twice(&format!("twice_{i}"));
        members.push(single(&format!("contradicts-enqueue-{i}"), text));
    }
    assert_eq!(members.len(), 42);
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let report = grade_tests(dir.path(), &members, None);
    eprintln!("graded 42 files in {:?}", started.elapsed());
    let class = class_json(dir.path(), &report);
    let family = |prefix: &str, n: usize| -> Vec<String> {
        (1..=n).map(|i| format!("{prefix}_{i}")).collect()
    };
    for freedom in FAMILIES {
        let g = group_of(&class, &family(&freedom.replace('-', "_"), 3));
        assert_eq!(g["by"], "verdicts", "{g:#}");
        let named: Vec<&str> = (g["freedoms"].as_array().unwrap().iter())
            .map(|f| f["freedom"].as_str().unwrap())
            .collect();
        assert_eq!(named, [freedom], "{g:#}");
        assert!(!g["freedoms"][0]["contract"].as_str().unwrap().is_empty());
        let variant = format!("variant-{freedom}");
        assert!(
            g["fails_on"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == variant.as_str()),
            "{g:#}"
        );
    }
    let holds = group_of(&class, &family("holds", 6));
    assert_eq!(holds["by"], "observation");
    assert_eq!(holds["observation"]["actual"], "Some(2)", "{holds:#}");
    let twice = group_of(&class, &family("twice", 6));
    assert_eq!(twice["by"], "observation");
    assert_eq!(
        (
            twice["observation"]["expected"].as_str(),
            twice["observation"]["actual"].as_str()
        ),
        (Some("true"), Some("false")),
        "{twice:#}"
    );
    assert_eq!(
        class["invalid"].as_array().unwrap().len(),
        FAMILIES.len() + 2,
        "{class:#}"
    );
    // Six valid suites; each step of fencelab's own catches its mutants.
    let mutants = class["mutants"].as_array().unwrap();
    for m in mutants {
        assert_eq!(m["valid_suites"], 6, "{m}");
        if [1, 2, 5, 7].contains(&m["step"].as_u64().unwrap()) {
            assert!(m["caught_by"].as_u64().unwrap() >= 1, "{m}");
        }
    }
}
