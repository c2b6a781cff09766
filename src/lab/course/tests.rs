use super::*;

fn parse(text: &str) -> Result<Course, String> {
    Course::parse(Path::new("course.toml"), text).map_err(|e| e.to_string())
}

/// The example README.md gives, as an instructor would copy it.
fn readme_example() -> String {
    let readme = include_str!("../../../README.md");
    let (_, after) = readme
        .split_once("### A course file")
        .expect("README has a section \"A course file\"");
    let (_, block) = after.split_once("```toml\n").expect("with a TOML example");
    block.split_once("```").expect("closed").0.to_string()
}

#[test]
fn the_readme_example_is_read_as_it_says() {
    let course = parse(&readme_example()).expect("the README's example is valid");
    assert_eq!(course.weights.of(4), 2.0);
    assert_eq!(course.weights.of(8), 2.0);
    assert_eq!(course.weights.of(1), 1.0);
    assert_eq!(course.limits.test_secs, Some(5.0));
    assert_eq!(course.limits.min_score, Some(60.0));
    assert_eq!(course.gradescope.visibility, Some(Visibility::AfterDueDate));
    assert_eq!(
        course
            .gradescope
            .test_visibility("step8::many_owners_repeatedly", "claim_many"),
        Some(Visibility::Hidden)
    );
    assert_eq!(
        course
            .gradescope
            .test_visibility("step8::held_job_gives_none_to_everybody", "claim_many"),
        Some(Visibility::AfterPublished),
        "a test without an entry of its own takes its step's"
    );
    assert_eq!(
        course.gradescope.test_visibility("step1::x", "init_db"),
        None
    );
    assert_eq!(course.reveal, Reveal::Count);
}

#[test]
fn an_empty_file_is_fencelabs_defaults() {
    assert_eq!(parse("").expect("empty is valid"), Course::default());
    assert_eq!(Course::default().reveal, Reveal::Titles);
}

#[test]
fn the_weighted_mean_counts_each_step_by_its_weight() {
    let mut weights = Weights::default();
    assert_eq!(weights.mean([(1, 1.0), (2, 0.0)]), 0.5);
    weights.0[0] = 3.0;
    assert_eq!(weights.mean([(1, 1.0), (2, 0.0)]), 0.75);
    weights.0[1] = 0.0;
    assert_eq!(
        weights.mean([(1, 0.5), (2, 0.0)]),
        0.5,
        "a step of weight 0 does not count"
    );
    assert_eq!(Weights([0.0; 8]).mean([(1, 1.0)]), 0.0);
}

#[test]
fn every_wrong_name_or_value_is_refused_at_its_line() {
    let cases = [
        (
            "[weights]\nclaimmany = 2\n",
            "course.toml:2:1: there is no step `claimmany` (did you mean `claim_many`?)",
        ),
        (
            "[weights]\nclaim = -1\n",
            "course.toml:2:9: weight -1: give a number from 0 to 1000",
        ),
        ("[weights]\nclaim = nan\n", "weight NaN"),
        (
            "[weights]\nclaim = 1.23456\n",
            "course.toml:2:9: weight 1.23456: give a number from 0 to 1000, with at most three decimals",
        ),
        (
            "[weights]\ninit_db = 0\nenqueue = 0\nstate = 0\nclaim = 0\nrenew = 0\ncomplete = 0\nrelease = 0\nclaim_many = 0\n",
            "every step weighs 0",
        ),
        (
            "[limits]\ntimeout = 0\n",
            "course.toml:2:11: timeout = 0: give a number of seconds",
        ),
        (
            "[limits]\nmin_score = 101\n",
            "course.toml:2:13: min_score = 101: give a score from 0 to 100",
        ),
        ("[limits]\ntimeout = \"5\"\n", "course.toml:2:11:"),
        (
            "[gradescope]\nvisibility = \"sometimes\"\n",
            "course.toml:2:14: unknown variant `sometimes`",
        ),
        (
            "[gradescope.tests]\n\"step8::many_owner_repeatedly\" = \"hidden\"\n",
            "course.toml:2:1: `step8::many_owner_repeatedly` is neither a step nor a test of the suite (did you mean `step8::many_owners_repeatedly`?)",
        ),
        (
            "[mine]\nreveal = \"everything\"\n",
            "course.toml:2:10: unknown variant `everything`",
        ),
        (
            "[weight]\nclaim = 2\n",
            "course.toml:1:2: unknown field `weight`",
        ),
    ];
    for (text, said) in cases {
        let err = parse(text).expect_err(text);
        assert!(err.contains(said), "{text:?} said:\n{err}\nnot: {said}");
        assert!(err.contains("next:"), "{err}");
    }
}

#[test]
fn an_invalid_file_is_told_with_its_line_and_what_to_do() {
    let text = "# course.toml\n[weights]\nclaim = 2\nclaim_mny = 2\n";
    insta::assert_snapshot!(parse(text).expect_err("a misspelt step"));
}

#[test]
fn a_course_file_found_in_a_lab_must_be_a_plain_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(Course::find_in(dir.path()).expect("none"), None);
    std::fs::write(
        dir.path().join("elsewhere.toml"),
        "[mine]\nreveal = \"count\"\n",
    )
    .expect("write");
    std::os::unix::fs::symlink("elsewhere.toml", dir.path().join(FILE)).expect("link");
    let err = Course::find_in(dir.path()).expect_err("a link is not followed");
    assert!(err.to_string().contains("not a plain file"), "{err}");
    std::fs::remove_file(dir.path().join(FILE)).expect("rm");
    std::fs::write(dir.path().join(FILE), "[mine]\nreveal = \"count\"\n").expect("write");
    let found = Course::find_in(dir.path()).expect("read").expect("found");
    assert_eq!(found.reveal, Reveal::Count);
}
