//! `grade --gradescope FILE`: Gradescope's `results.json` for one submission
//! (score and max_score out of 100, and per test its share of its step's
//! weight, status and output).

use serde::Serialize;

use crate::commands::grade::SubmissionReport;

#[derive(Debug, Serialize)]
pub struct Results {
    pub score: f64,
    pub max_score: f64,
    pub output: String,
    pub tests: Vec<TestResult>,
}

#[derive(Debug, Serialize)]
pub struct TestResult {
    pub name: String,
    pub score: f64,
    pub max_score: f64,
    /// `passed` or `failed`.
    pub status: &'static str,
    pub output: String,
}

fn round(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

/// Gradescope's results for `submission`.
pub fn results(submission: &SubmissionReport) -> Results {
    let step_weight = 100.0 / submission.steps.len().max(1) as f64;
    if let Some(reason) = &submission.unusable {
        return Results {
            score: 0.0,
            max_score: 100.0,
            output: format!("The submission cannot be graded:\n\n{reason}"),
            tests: Vec::new(),
        };
    }
    if let Some(errors) = &submission.compile_errors {
        return Results {
            score: 0.0,
            max_score: 100.0,
            output: format!("The submission does not compile:\n\n{errors}"),
            tests: Vec::new(),
        };
    }
    let tests = submission
        .tests
        .iter()
        .map(|t| {
            let in_step = submission
                .steps
                .iter()
                .find(|s| s.step == t.step)
                .map_or(1, |s| s.total.max(1));
            let max_score = round(step_weight / in_step as f64);
            TestResult {
                name: t.test.clone(),
                score: if t.outcome.passed() { max_score } else { 0.0 },
                max_score,
                status: if t.outcome.passed() {
                    "passed"
                } else {
                    "failed"
                },
                output: t.outcome.message().unwrap_or_default(),
            }
        })
        .collect();
    let steps: Vec<String> = submission
        .steps
        .iter()
        .map(|s| format!("step {} {}: {}/{}", s.step, s.slug, s.passed, s.total))
        .collect();
    Results {
        score: submission.score,
        max_score: 100.0,
        output: steps.join("\n"),
        tests,
    }
}
