//! A course file (`grade --course`), honoured by every format `grade`
//! writes: its weights change the score as README.md says, its gate and
//! limits stand under the flags, a test it hides is hidden in Gradescope's
//! results, and a wrong name in it grades nothing.

use serde_json::Value;

use super::{grade, made_file};

/// Release weighs 3 of 10, one of its tests is hidden, the gate is 95.
const COURSE: &str = "[weights]\nrelease = 3\n\n[limits]\nmin_score = 95\n\n\
                      [gradescope.tests]\n\"step7::refuses_a_stale_fence_of_the_same_owner\" = \"hidden\"\n";

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_course_file_weighs_the_score_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let course = dir.path().join("course.toml");
    std::fs::write(&course, COURSE).unwrap();
    let out = |name: &str| dir.path().join(name).display().to_string();
    let file = made_file("release_resets_fence.rs");
    let course_arg = course.display().to_string();
    let (exit, stdout, stderr) = grade(&[
        &file,
        "--course",
        &course_arg,
        "--json",
        &out("r.json"),
        "--junit",
        &out("r.xml"),
        "--csv",
        &out("r.csv"),
        "--gradescope",
        &out("gs.json"),
        "--prairielearn",
        &out("pl.json"),
    ]);
    let json: Value = serde_json::from_str(&read(&dir.path().join("r.json"))).unwrap();
    let s = &json["submissions"][0];
    let step7 = &s["steps"][6];
    let share = step7["passed"].as_f64().unwrap() / step7["total"].as_f64().unwrap();
    assert!(
        share < 1.0,
        "release_resets_fence fails some of step 7: {s}"
    );
    // (7 steps passed whole + 3 x step 7's share) / 10.
    let expected = ((7.0 + 3.0 * share) / 10.0 * 100.0 * 100.0).round() / 100.0;
    assert_eq!(s["score"].as_f64().unwrap(), expected, "{s}");
    assert_eq!(step7["weight"], 3.0);
    assert_eq!(json["weights"]["release"], 3.0);
    assert_eq!(json["weights"]["claim"], 1.0);
    assert_eq!(json["min_score"], 95.0, "the course's gate");
    assert_eq!(exit, 1, "below the course's gate: {stdout}{stderr}");
    let shown = format!("{expected:.2}");
    assert!(stdout.contains(&shown), "{stdout}");
    // JUnit and the gradebook: the same score; step 7 out of 30 points.
    assert!(read(&dir.path().join("r.xml")).contains(&format!("name=\"score\" value=\"{shown}\"")));
    let csv = read(&dir.path().join("r.csv"));
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[2], shown, "{csv}");
    let step7_points: f64 = row[10].parse().unwrap();
    assert!((step7_points - 30.0 * share).abs() < 0.011, "{csv}");
    // Gradescope: step 7's tests are worth 30, the one named is hidden.
    let gs: Value = serde_json::from_str(&read(&dir.path().join("gs.json"))).unwrap();
    assert_eq!(gs["score"].as_f64().unwrap(), expected);
    let tests = gs["tests"].as_array().unwrap();
    let of_step7 = |points: &str| -> f64 {
        (tests.iter())
            .filter(|t| t["name"].as_str().unwrap().starts_with("step7::"))
            .map(|t| t[points].as_f64().unwrap())
            .sum()
    };
    assert!((of_step7("max_score") - 30.0).abs() < 0.011, "{gs}");
    let hidden: Vec<&Value> = tests
        .iter()
        .filter(|t| t["visibility"] == "hidden")
        .collect();
    assert_eq!(hidden.len(), 1, "{gs}");
    assert_eq!(
        hidden[0]["name"],
        "step7::refuses_a_stale_fence_of_the_same_owner"
    );
    assert!(tests.iter().filter(|t| t["visibility"].is_null()).count() > 90);
    let table = gs["output"].as_str().unwrap();
    assert!(
        !table.contains("`release`"),
        "the hidden test's step is not in the table: {table}"
    );
    // PrairieLearn: the same points.
    let pl: Value = serde_json::from_str(&read(&dir.path().join("pl.json"))).unwrap();
    assert!(
        (pl["score"].as_f64().unwrap() - expected / 100.0).abs() < 1e-9,
        "{pl}"
    );
    let max7: f64 = (pl["tests"].as_array().unwrap().iter())
        .filter(|t| t["name"].as_str().unwrap().starts_with("step7::"))
        .map(|t| t["max_points"].as_f64().unwrap())
        .sum();
    assert!((max7 - 30.0).abs() < 0.011, "{pl}");
    // A flag wins over the course file: no gate.
    let (exit, _, stderr) = grade(&[&file, "--course", &course_arg, "--min-score", "0"]);
    assert_eq!(exit, 0, "{stderr}");
}

#[test]
fn a_wrong_name_in_the_course_file_grades_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let course = dir.path().join("course.toml");
    std::fs::write(&course, "[weights]\nrelase = 3\n").unwrap();
    let json = dir.path().join("r.json");
    let (exit, stdout, stderr) = grade(&[
        &made_file("release_resets_fence.rs"),
        "--course",
        &course.display().to_string(),
        "--json",
        &json.display().to_string(),
    ]);
    assert_eq!(exit, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("course.toml:2:1: there is no step `relase` (did you mean `release`?)"),
        "{stderr}"
    );
    assert!(stderr.contains("next:"), "{stderr}");
    assert!(!json.exists(), "nothing graded, nothing written");
}

/// `fencelab autograder PLATFORM -o DIR --course FILE`: the file is checked
/// first (a wrong one writes nothing) and carried as `course.toml`.
#[test]
fn a_bundle_carries_the_course_file_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let autograder = |out: &str, course: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(["autograder", "prairielearn", "-o"])
            .arg(dir.path().join(out))
            .arg("--course")
            .arg(course)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let wrong = dir.path().join("wrong.toml");
    std::fs::write(&wrong, "[mine]\nreveal = \"all\"\n").unwrap();
    let out = autograder("refused", &wrong);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("wrong.toml:2:10: unknown variant `all`"),
        "{stderr}"
    );
    assert!(!dir.path().join("refused").exists(), "nothing written");
    let course = dir.path().join("course.toml");
    std::fs::write(&course, COURSE).unwrap();
    let out = autograder("bundle", &course);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&dir.path().join("bundle/course.toml")), COURSE);
}

/// `check` reads the course file at the lab's root: a wrong one is told
/// before anything is judged.
#[test]
fn check_reads_the_course_file_at_the_labs_root() {
    let dir = tempfile::tempdir().unwrap();
    let fencelab = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    assert!(fencelab(&["new", "lab", "--lang", "en"]).status.success());
    std::fs::write(
        dir.path().join("lab/course.toml"),
        "[limits]\ntimeout = -1\n",
    )
    .unwrap();
    for args in [&["check", "lab"][..], &["check", "--mine", "lab"]] {
        let out = fencelab(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("course.toml:2:11: timeout = -1: give a number of seconds"),
            "{args:?}: {stderr}"
        );
    }
}
