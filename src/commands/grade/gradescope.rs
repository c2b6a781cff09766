//! `grade --gradescope FILE`: Gradescope's `results.json` for one submission
//! (gradescope-autograders.readthedocs.io, "Autograder Specifications"):
//! `score` out of 100, `execution_time` in seconds, the per-step table as
//! Markdown `output` (`output_format: "md"`), `visibility` and
//! `stdout_visibility` as chosen, and per test its share of its step's
//! weight as `max_score` and what it earned as `score` (`points::of`: to the
//! hundredth, never more than `max_score`, the maxima adding up to 100 and
//! the scores to `score`), `status`,
//! `number` ("4.3": step 4, third test), `tags` (the step), and its output
//! as Markdown.

use std::fmt::Write as _;

use serde::Serialize;

use crate::commands::grade::{SubmissionReport, points};

pub(crate) use crate::lab::course::Visibility;

/// When Gradescope shows what: the results, the autograder's output, and
/// each test (the course file's entries by step or test).
pub(crate) struct Shown<'a> {
    pub results: Visibility,
    pub stdout: Visibility,
    pub tests: &'a crate::lab::course::Gradescope,
}

impl Shown<'_> {
    /// Everything visible, as `grade --gradescope` shows by default.
    #[cfg(test)]
    pub(crate) fn all() -> Shown<'static> {
        static NONE: std::sync::LazyLock<crate::lab::course::Gradescope> =
            std::sync::LazyLock::new(Default::default);
        Shown {
            results: Visibility::Visible,
            stdout: Visibility::Visible,
            tests: &NONE,
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct Results {
    pub score: f64,
    pub execution_time: u64,
    pub output: String,
    pub output_format: &'static str,
    pub test_output_format: &'static str,
    pub visibility: Visibility,
    pub stdout_visibility: Visibility,
    pub tests: Vec<TestResult>,
}

#[derive(Debug, Serialize)]
pub(crate) struct TestResult {
    pub name: String,
    pub number: String,
    pub score: f64,
    pub max_score: f64,
    /// `passed` or `failed`.
    pub status: &'static str,
    pub tags: Vec<String>,
    pub output: String,
    pub output_format: &'static str,
    /// Its own, when the course file gives one (else the results').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
}

/// A failure's text as Markdown: its kind, then the text in a fence longer
/// than any backtick run inside it.
fn markdown_output(label: &str, message: &str) -> String {
    let mut fence = "```".to_string();
    while message.contains(&fence) {
        fence.push('`');
    }
    format!(
        "**{label}**\n\n{fence}text\n{}\n{fence}",
        message.trim_end()
    )
}

/// Gradescope's results for `submission`.
pub(crate) fn results(submission: &SubmissionReport, shown: &Shown) -> Results {
    let (visibility, stdout_visibility) = (shown.results, shown.stdout);
    let execution_time = submission.tests.iter().map(|t| t.secs).sum::<f64>().ceil() as u64;
    let why = submission
        .unusable
        .as_ref()
        .map(|reason| ("cannot be graded", reason))
        .or(submission
            .compile_errors
            .as_ref()
            .map(|errors| (submission.unviable(), errors)));
    if let Some((what, errors)) = why {
        return Results {
            score: 0.0,
            execution_time,
            output: markdown_output("The submission cannot be graded", errors),
            output_format: "md",
            test_output_format: "md",
            visibility,
            stdout_visibility,
            tests: vec![TestResult {
                name: "build".to_string(),
                number: "0.1".to_string(),
                score: 0.0,
                max_score: 100.0,
                status: "failed",
                tags: vec!["build".to_string()],
                output: markdown_output(what, errors),
                output_format: "md",
                visibility: None,
            }],
        };
    }
    let points = points::of(submission, 100.0);
    let mut index_in_step = 0;
    let mut last_step = 0;
    let tests = submission
        .tests
        .iter()
        .zip(&points.tests)
        .map(|(t, p)| {
            if t.step != last_step {
                last_step = t.step;
                index_in_step = 0;
            }
            index_in_step += 1;
            let slug = submission
                .steps
                .iter()
                .find(|s| s.step == t.step)
                .map_or("", |s| s.slug);
            TestResult {
                name: t.test.clone(),
                number: format!("{}.{index_in_step}", t.step),
                score: p.earned.points(),
                max_score: p.max.points(),
                status: if t.outcome.passed() {
                    "passed"
                } else {
                    "failed"
                },
                tags: vec![format!("step{}", t.step), slug.to_string()],
                output: submission
                    .message(t)
                    .map(|m| markdown_output(t.outcome.label(), &m))
                    .unwrap_or_default(),
                output_format: "md",
                visibility: shown.tests.test_visibility(&t.test, slug),
            }
        })
        .collect::<Vec<TestResult>>();
    // A step with a test shown later than the results is left out of the
    // table, which would tell how it fared.
    let later = |step: u32| {
        tests
            .iter()
            .zip(&submission.tests)
            .any(|(r, t)| t.step == step && r.visibility.is_some_and(|v| v != Visibility::Visible))
    };
    let mut output = String::from("| step | | tests passed | points |\n|---:|---|---:|---:|\n");
    let mut left_out = false;
    for s in &submission.steps {
        if later(s.step) {
            left_out = true;
            continue;
        }
        let _ = writeln!(
            output,
            "| {} | `{}` | {}/{} | {} |",
            s.step,
            s.slug,
            s.passed,
            s.total,
            points.step(s.step).earned
        );
    }
    if left_out {
        output.push_str("\nSteps with tests shown later are left out of this table.\n");
    }
    let _ = write!(output, "\n**Score: {} / 100**", points.score);
    Results {
        score: points.score.points(),
        execution_time,
        output,
        output_format: "md",
        test_output_format: "md",
        visibility,
        stdout_visibility,
        tests,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::points::tests::submission;
    use serde_json::Value;

    /// The fields of Gradescope's published example, top level and per test.
    const TOP: [&str; 11] = [
        "score",
        "execution_time",
        "output",
        "output_format",
        "test_output_format",
        "test_name_format",
        "visibility",
        "stdout_visibility",
        "extra_data",
        "tests",
        "leaderboard",
    ];
    const TEST: [&str; 11] = [
        "score",
        "max_score",
        "status",
        "name",
        "name_format",
        "number",
        "output",
        "output_format",
        "tags",
        "visibility",
        "extra_data",
    ];
    const VISIBILITIES: [&str; 4] = ["hidden", "after_due_date", "after_published", "visible"];
    const FORMATS: [&str; 5] = ["text", "simple_format", "html", "md", "ansi"];

    fn check(json: &Value) {
        for key in json.as_object().unwrap().keys() {
            assert!(
                TOP.contains(&key.as_str()),
                "{key} is not a Gradescope field"
            );
        }
        for key in ["visibility", "stdout_visibility"] {
            assert!(VISIBILITIES.contains(&json[key].as_str().unwrap()), "{key}");
        }
        for key in ["output_format", "test_output_format"] {
            assert!(FORMATS.contains(&json[key].as_str().unwrap()), "{key}");
        }
        assert!(json["execution_time"].is_u64());
        for t in json["tests"].as_array().unwrap() {
            for key in t.as_object().unwrap().keys() {
                assert!(TEST.contains(&key.as_str()), "{key} is not a test field");
            }
            assert!(["passed", "failed"].contains(&t["status"].as_str().unwrap()));
            assert!(FORMATS.contains(&t["output_format"].as_str().unwrap()));
        }
    }

    #[test]
    fn results_have_gradescopes_fields_numbers_tags_and_add_up() {
        let s = submission(&[3, 2, 2, 2, 2, 2, 2, 3], &[3, 1, 2, 0, 2, 2, 1, 3]);
        let json = serde_json::to_value(results(
            &s,
            &Shown {
                results: Visibility::AfterDueDate,
                stdout: Visibility::Hidden,
                ..Shown::all()
            },
        ))
        .unwrap();
        check(&json);
        assert_eq!(json["visibility"], "after_due_date");
        assert_eq!(json["stdout_visibility"], "hidden");
        assert_eq!(json["output_format"], "md");
        let tests = json["tests"].as_array().unwrap();
        assert_eq!(tests[0]["number"], "1.1");
        assert_eq!(tests[2]["number"], "1.3");
        assert_eq!(tests[3]["number"], "2.1");
        assert_eq!(tests[3]["tags"], serde_json::json!(["step2", "enqueue"]));
        let sum = tests
            .iter()
            .fold(0.0, |acc, t| acc + t["score"].as_f64().unwrap());
        assert_eq!(sum, json["score"].as_f64().unwrap());
        let failed = tests.iter().find(|t| t["status"] == "failed").unwrap();
        assert!(
            failed["output"]
                .as_str()
                .unwrap()
                .contains("```text\npanicked at")
        );
        insta::assert_snapshot!(json["output"].as_str().unwrap());
    }

    #[test]
    fn a_submission_that_cannot_be_graded_scores_0_with_the_reason() {
        let mut s = submission(&[2; 8], &[0; 8]);
        s.compile_errors = Some("error: expected `;`\n --> a.rs:2:3\n```".into());
        s.tests.clear();
        let json = serde_json::to_value(results(&s, &Shown::all())).unwrap();
        check(&json);
        assert_eq!(json["score"], 0.0);
        let output = json["output"].as_str().unwrap();
        assert!(output.contains("````text\nerror: expected"), "{output}");
        assert_eq!(json["tests"][0]["status"], "failed");
    }
}
