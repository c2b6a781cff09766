//! `grade --prairielearn FILE`: PrairieLearn's external grader
//! `results.json` for one submission (docs.prairielearn.com, "External
//! Grading", "Grading results"): `gradable`, `score` from 0 to 1, `message`,
//! `output`, and `tests` with `name`, `description`, `points`, `max_points`
//! (`points::of`: to the hundredth, never more than `max_points`, the maxima
//! adding up to 100 and the points to the score), `message` and `output`,
//! which `<pl-external-grader-results>` renders. A
//! submission that cannot be graded (it does not compile) is `gradable:
//! false` with the reason in `format_errors`: PrairieLearn then neither
//! awards nor takes points, nor counts the attempt. The file stays under
//! PrairieLearn's 1 MB.

use serde::Serialize;

use crate::commands::grade::{SubmissionReport, points};

/// PrairieLearn's limit for the file.
pub(crate) const FILE_LIMIT: usize = 1_000_000;

#[derive(Debug, Serialize)]
pub(crate) struct Results {
    pub gradable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub format_errors: Vec<String>,
    pub message: String,
    pub output: String,
    pub tests: Vec<Test>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Test {
    pub name: String,
    pub description: String,
    pub points: f64,
    pub max_points: f64,
    pub message: String,
    pub output: String,
}

fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cut: the rest is in fencelab's JSON report]",
        &text[..end]
    )
}

fn results_with(submission: &SubmissionReport, limit: usize) -> Results {
    if let Some(errors) = submission.not_graded() {
        let why = if submission.unusable.is_some() {
            "The submission cannot be graded.".to_string()
        } else {
            format!(
                "The submission cannot be graded: it {}.",
                submission.unviable()
            )
        };
        return Results {
            gradable: false,
            score: None,
            format_errors: vec![cut(errors, 64 * 1024)],
            message: why.to_string(),
            output: String::new(),
            tests: Vec::new(),
        };
    }
    let points = points::of(submission, 100.0);
    let tests = submission
        .tests
        .iter()
        .zip(&points.tests)
        .map(|(t, p)| {
            let message = submission.message(t).unwrap_or_default();
            let first = message
                .lines()
                .find(|l| !l.trim().is_empty() && !l.starts_with("panicked at"))
                .unwrap_or("")
                .to_string();
            let slug = submission
                .steps
                .iter()
                .find(|s| s.step == t.step)
                .map_or("", |s| s.slug);
            Test {
                name: t.test.clone(),
                description: format!("step {} ({slug})", t.step),
                points: p.earned.points(),
                max_points: p.max.points(),
                message: if t.outcome.passed() {
                    "passed".to_string()
                } else {
                    cut(&format!("{}: {first}", t.outcome.label()), 300)
                },
                output: cut(&message, limit),
            }
        })
        .collect();
    let steps: Vec<String> = submission
        .steps
        .iter()
        .map(|s| format!("step {} {}: {}/{}", s.step, s.slug, s.passed, s.total))
        .collect();
    Results {
        gradable: true,
        // From hundredths of a point: 41.67 is 0.4167, not 0.41670000000000001.
        score: Some(points.score.0 as f64 / 10_000.0),
        format_errors: Vec::new(),
        message: format!("Score {} / 100", points.score),
        output: steps.join("\n"),
        tests,
    }
}

/// PrairieLearn's results for `submission`, under its size limit.
pub(crate) fn results(submission: &SubmissionReport) -> Results {
    for limit in [16 * 1024, 2048, 256] {
        let results = results_with(submission, limit);
        if serde_json::to_string_pretty(&results).map_or(0, |j| j.len()) < FILE_LIMIT {
            return results;
        }
    }
    results_with(submission, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::points::tests::submission;

    const TOP: [&str; 8] = [
        "gradable",
        "score",
        "format_errors",
        "message",
        "output",
        "images",
        "tests",
        "partial_scores",
    ];
    const TEST: [&str; 7] = [
        "name",
        "description",
        "points",
        "max_points",
        "message",
        "output",
        "images",
    ];

    fn fields_are_prairielearns(json: &serde_json::Value) {
        for key in json.as_object().unwrap().keys() {
            assert!(TOP.contains(&key.as_str()), "{key}");
        }
        for t in json["tests"].as_array().unwrap() {
            for key in t.as_object().unwrap().keys() {
                assert!(TEST.contains(&key.as_str()), "{key}");
            }
        }
    }

    #[test]
    fn a_graded_submission_has_a_score_from_0_to_1_and_points_that_add_up() {
        let s = submission(
            &[9, 10, 11, 13, 12, 9, 11, 19],
            &[9, 3, 11, 12, 0, 9, 11, 5],
        );
        let json = serde_json::to_value(results(&s)).unwrap();
        fields_are_prairielearns(&json);
        assert_eq!(json["gradable"], true);
        let score = json["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&score));
        assert!((score * 100.0 - s.score).abs() < 1e-9);
        let tests = json["tests"].as_array().unwrap();
        let cents = |key: &str| -> Vec<i64> {
            tests
                .iter()
                .map(|t| crate::commands::grade::points::tests::cents(t[key].as_f64().unwrap()))
                .collect()
        };
        let (points, max) = (cents("points"), cents("max_points"));
        assert_eq!(points.iter().sum::<i64>(), 6858, "{}", s.score);
        assert_eq!(max.iter().sum::<i64>(), 10_000);
        assert!(points.iter().zip(&max).all(|(p, m)| p <= m));
        assert_eq!(score, 0.6858);
        assert!(json.get("format_errors").is_none());
    }

    #[test]
    fn a_submission_that_cannot_be_graded_is_not_gradable_with_format_errors() {
        let mut s = submission(&[2; 8], &[0; 8]);
        s.compile_errors = Some("error[E0308]: mismatched types".into());
        s.tests.clear();
        let json = serde_json::to_value(results(&s)).unwrap();
        fields_are_prairielearns(&json);
        assert_eq!(json["gradable"], false);
        assert!(json.get("score").is_none());
        assert_eq!(json["format_errors"][0], "error[E0308]: mismatched types");
        // One that cannot be used at all (no API, say) is not gradable either,
        // and says why.
        let mut u = submission(&[2; 8], &[0; 8]);
        u.unusable = Some("x.rs does not have the contract's API".into());
        let json = serde_json::to_value(results(&u)).unwrap();
        assert_eq!(json["gradable"], false);
        assert_eq!(
            json["format_errors"][0],
            "x.rs does not have the contract's API"
        );
        // The gradebook gives the same reason, and no points.
        let report = crate::commands::grade::GradeReport {
            schema: 1,
            fencelab_version: String::new(),
            suite: String::new(),
            min_score: 0.0,
            test_limit_secs: 10.0,
            build_limit_secs: 600.0,
            budget_secs: Some(15.0),
            shard: None,
            weights: crate::lab::course::Weights::default().by_slug(),
            correct_implementations: Vec::new(),
            freedoms: Default::default(),
            submissions: vec![u],
            exit_code: crate::exit::ExitCode::UnusableInput,
        };
        let csv = crate::commands::grade::csv::render(&report);
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.contains(",0.00,") && row.ends_with("does not have the contract's API"),
            "{row}"
        );
    }

    #[test]
    fn huge_outputs_stay_under_a_megabyte() {
        let mut s = submission(&[12; 8], &[0; 8]);
        for t in &mut s.tests {
            t.outcome = crate::engine::outcome::TestOutcome::Failed {
                kind: crate::engine::outcome::FailureKind::Crashed,
                message: "y".repeat(64 * 1024),
            };
        }
        let json = serde_json::to_string_pretty(&results(&s)).unwrap();
        assert!(json.len() < FILE_LIMIT, "{}", json.len());
    }
}
