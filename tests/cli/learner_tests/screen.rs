//! What `check --mine` prints, as a learner reads it: a judgement made by
//! hand, rendered in both languages at 80 columns, and as a course file's
//! `[mine] reveal` lets it say.

use fencelab::judging::TestsReport;
use fencelab::lab::course::Reveal;

use super::judges;

/// A judgement made by hand, with every part of the screen.
fn report() -> TestsReport {
    use fencelab::commands::predict::ObservationKind;
    use fencelab::judging::{Invalid, JudgedTest, MissedMutant, StepThoroughness, WrongOn};
    use fencelab::lab::lang::Text;
    let text = |en: &str, ja: &str| Text {
        en: en.into(),
        ja: ja.into(),
    };
    let mutant = |id: &str| {
        judges()
            .mutants
            .iter()
            .find(|m| m.id == id)
            .unwrap_or_else(|| panic!("{id}"))
            .clone()
    };
    let boundary = mutant("claim-expiry-inclusive");
    TestsReport {
        schema: 1,
        name: "my-lab".into(),
        file: "tests/mine/main.rs".into(),
        compile_errors: None,
        tests: vec![
            JudgedTest {
                test: "a_job_is_claimed_once".into(),
                valid: true,
                invalid: None,
                wrong_on: Vec::new(),
                assumed: Vec::new(),
                misconceptions: Vec::new(),
                catches: vec!["claim-ignores-until".into(), "complete-ignores-fence".into()],
            },
            JudgedTest {
                test: "a_fresh_job_has_no_owner".into(),
                valid: true,
                invalid: None,
                wrong_on: Vec::new(),
                assumed: Vec::new(),
                misconceptions: Vec::new(),
                catches: Vec::new(),
            },
            JudgedTest {
                test: "the_first_owner_wins".into(),
                valid: false,
                invalid: Some(Invalid::Racy),
                wrong_on: vec![
                    WrongOn {
                        implementation: "reference".into(),
                        title: text("the reference", "参照実装"),
                        outcome: "failed",
                        message: "assertion `left == right` failed\n  left: [None, Some(1), None]\n right: [Some(1), None, None]".into(),
                        runs: 6,
                        failed: 4,
                    },
                    WrongOn {
                        implementation: "variant-claim-many-winner".into(),
                        title: text("The last owner always wins claim_many", "claim_many で常に最後の owner が勝つ"),
                        outcome: "failed",
                        message: "assertion `left == right` failed\n  left: [None, None, Some(1)]\n right: [Some(1), None, None]".into(),
                        runs: 3,
                        failed: 3,
                    },
                ],
                assumed: vec!["claim-many-winner".into()],
                misconceptions: Vec::new(),
                catches: Vec::new(),
            },
            JudgedTest {
                test: "the_journal_is_delete".into(),
                valid: false,
                invalid: Some(Invalid::FailsOnAFullWheat),
                wrong_on: vec![WrongOn {
                    implementation: "returning".into(),
                    title: text("One UPDATE ... RETURNING per write, in WAL mode", "1文の UPDATE ... RETURNING と WAL"),
                    outcome: "failed",
                    message: "assertion `left == right` failed\n  left: \"wal\"\n right: \"delete\"".into(),
                    runs: 3,
                    failed: 3,
                }],
                assumed: Vec::new(),
                misconceptions: Vec::new(),
                catches: Vec::new(),
            },
            JudgedTest {
                test: "the_error_says_why".into(),
                valid: false,
                invalid: Some(Invalid::AssumesAFreedom),
                wrong_on: vec![WrongOn {
                    implementation: "variant-error-text".into(),
                    title: text("Only the errors' texts differ", "エラーの文面だけが違う"),
                    outcome: "failed",
                    message: "assertion `left == right` failed\n  left: \"ttl must be finite and positive, got 0\"\n right: \"invalid ttl 0: a lease needs a finite ttl greater than 0\"".into(),
                    runs: 3,
                    failed: 3,
                }],
                assumed: vec!["error-text".into()],
                misconceptions: Vec::new(),
                catches: Vec::new(),
            },
            JudgedTest {
                test: "a_lease_still_holds_when_it_expires".into(),
                valid: false,
                invalid: Some(Invalid::FailsOnReference),
                wrong_on: vec![WrongOn {
                    implementation: "reference".into(),
                    title: text("the reference", "参照実装"),
                    outcome: "failed",
                    message: "assertion `left == right` failed\n  left: Some(2)\n right: None".into(),
                    runs: 6,
                    failed: 6,
                }],
                assumed: Vec::new(),
                misconceptions: vec![boundary.id.clone(), "claim-ignores-until".into()],
                catches: Vec::new(),
            },
        ],
        valid: false,
        steps: vec![
            StepThoroughness {
                step: 4,
                slug: "claim",
                caught: 1,
                total: 3,
                caught_mutants: vec!["claim-ignores-until".into()],
                missed: vec![
                    MissedMutant {
                        id: boundary.id.clone(),
                        title: boundary.titles.clone(),
                        observation: Some(ObservationKind::ReturnValue),
                        diff: None,
                    },
                    MissedMutant {
                        id: "claim-stores-until-as-f32".into(),
                        title: mutant("claim-stores-until-as-f32").titles,
                        observation: Some(ObservationKind::State),
                        diff: None,
                    },
                ],
            },
            StepThoroughness {
                step: 7,
                slug: "release",
                caught: 0,
                total: 1,
                caught_mutants: Vec::new(),
                missed: vec![MissedMutant {
                    id: "release-resets-fence".into(),
                    title: mutant("release-resets-fence").titles,
                    observation: None,
                    diff: None,
                }],
            },
        ],
        score: 16.67,
        correct_implementations: 25,
        reference_runs: 6,
        mutants: 4,
        reveal: fencelab::lab::course::Reveal::Titles,
        exit_code: fencelab::exit::ExitCode::Failed,
    }
}

/// Every line of `screen` fits 80 columns.
fn fits_80(screen: &str) {
    for line in screen.lines() {
        assert!(
            fencelab::output::width::display_width(line) <= 80,
            "wider than 80: {line}"
        );
    }
}

/// What `check --mine` prints, pinned in both languages at 80 columns.
#[test]
fn what_check_mine_prints_in_both_languages() {
    use fencelab::lab::lang::Lang;
    let report = report();
    let printer = fencelab::output::printer::Layout::plain().with_width(80);
    let verbose = fencelab::output::printer::Layout::plain()
        .with_width(80)
        .at(fencelab::output::printer::Verbosity::Verbose);
    for lang in [Lang::En, Lang::Ja] {
        let screen = fencelab::commands::check::render_mine(&printer, &report, judges(), lang);
        let long = fencelab::commands::check::render_mine(&verbose, &report, judges(), lang);
        fits_80(&long);
        insta::assert_snapshot!(format!("check_mine_verbose_{lang}"), long);
        fits_80(&screen);
        insta::assert_snapshot!(format!("check_mine_{lang}"), screen);
    }
}

/// A course that reveals a count names no mutant, in the screen or the
/// JSON; one that reveals diffs shows each missed mutant's change.
#[test]
fn a_course_file_says_how_much_the_report_reveals() {
    use fencelab::lab::lang::Lang;
    let judges = judges();
    let layout = fencelab::output::printer::Layout::plain().with_width(80);
    let counted = report().revealing(Reveal::Count, &judges.mutants, &judges.reference);
    let titles: Vec<String> = (report().steps.iter())
        .flat_map(|st| st.missed.iter().map(|m| m.title.en.clone()))
        .collect();
    let json = serde_json::to_string(&counted).unwrap();
    for lang in [Lang::En, Lang::Ja] {
        let screen = fencelab::commands::check::render_mine(&layout, &counted, judges, lang);
        fits_80(&screen);
        for m in report().steps.iter().flat_map(|st| &st.missed) {
            assert!(!screen.contains(m.title.get(lang)), "{screen}");
            assert!(!json.contains(&m.id), "{json}");
        }
        insta::assert_snapshot!(format!("check_mine_count_{lang}"), screen);
    }
    assert!(
        !json.contains("claim-ignores-until"),
        "what was caught is not named either"
    );
    assert!(json.contains("\"caught\":1"), "{json}");
    let diffs = report().revealing(Reveal::Diffs, &judges.mutants, &judges.reference);
    let screen = fencelab::commands::check::render_mine(&layout, &diffs, judges, Lang::En);
    fits_80(&screen);
    for t in &titles {
        assert!(screen.contains(t.as_str()), "{t}");
    }
    // Each missed mutant's change, under its title.
    assert!(screen.contains("+++ claim-expiry-inclusive"), "{screen}");
    assert!(screen.contains("+++ release-resets-fence"), "{screen}");
    insta::assert_snapshot!("check_mine_diffs_en", screen);
    // A changed line longer than the screen wraps: its change is at its end.
    let mut long = report();
    long.steps[1].missed[0].id = "claim_many-passes-until-as-ttl".into();
    let long = long.revealing(Reveal::Diffs, &judges.mutants, &judges.reference);
    let screen = fencelab::commands::check::render_mine(&layout, &long, judges, Lang::En);
    fits_80(&screen);
    assert!(screen.contains("now + ttl))"), "{screen}");
}
