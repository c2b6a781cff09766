//! `grade --classroom`: the result GitHub Classroom's autograding reporter
//! (`education/autograding-grading-reporter`) reads, written as
//! `result=BASE64` to `$GITHUB_OUTPUT` like the `education/autograding-*-grader`
//! actions write theirs.
//!
//! The result is `{"version": 1, "status": "pass" | "fail" | "error",
//! "max_score": 100, "tests": [{"name", "status", "score", "message",
//! "test_code", "filename", "line_no", "duration"}]}`, as JSON, base64 on one
//! line. The reporter gives Classroom the sum of the tests' `score`s out of
//! `max_score`; they add up exactly to the step-weighted score, each test
//! earning its share of its step's weight or 0 (`points::of`), also when the
//! reporter adds them up as floats. `status` is `pass` when the submission reaches
//! `--min-score`, `error` when it cannot be graded (it does not compile),
//! `fail` otherwise; the reporter fails the job unless it is `pass`.

use base64::Engine as _;
use serde::Serialize;

use crate::commands::grade::{SubmissionReport, points};
use crate::lab::suite;

/// The points of a submission in Classroom.
pub(crate) const MAX_SCORE: f64 = 100.0;

/// The most of a test's message kept (the reporter prints names, not
/// messages, for failures; the message is for whoever decodes the result).
const MESSAGE_LIMIT: usize = 1000;

/// The most the base64 result may take: a step's outputs share 1 MB, counted
/// in UTF-16, so a quarter of it leaves room for the rest of the job.
pub(crate) const RESULT_LIMIT: usize = 256 * 1024;

#[derive(Debug, Serialize)]
pub(crate) struct Result {
    pub version: u32,
    pub status: &'static str,
    pub max_score: f64,
    pub tests: Vec<Test>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Test {
    pub name: String,
    pub status: &'static str,
    pub score: f64,
    pub message: String,
    pub test_code: String,
    pub filename: String,
    pub line_no: usize,
    /// Milliseconds, as the command grader writes it.
    pub duration: u64,
}

/// `text` cut to at most `limit` bytes, at a character boundary.
fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Classroom's result for `submission`, messages cut to `message_limit`.
fn result_with(submission: &SubmissionReport, message_limit: usize) -> Result {
    if let Some(errors) = submission.not_graded() {
        return Result {
            version: 1,
            status: "error",
            max_score: MAX_SCORE,
            tests: vec![Test {
                name: "build".to_string(),
                status: "error",
                score: 0.0,
                message: cut(
                    &format!("the submission cannot be graded:\n{errors}"),
                    message_limit.max(200),
                ),
                test_code: String::new(),
                filename: submission.file.clone(),
                line_no: 0,
                duration: 0,
            }],
        };
    }
    let locations = suite::locations();
    // A Python learner has no Rust suite to run: the step's check, and
    // their own function, stand for the test's code and place.
    let python = submission.edition() == crate::lab::edition::Edition::Python;
    let source = if python {
        std::fs::read_to_string(&submission.file).unwrap_or_default()
    } else {
        String::new()
    };
    let points = points::of(submission, MAX_SCORE);
    let scores = float_scores(&points);
    let tests = submission
        .tests
        .iter()
        .zip(scores)
        .map(|(t, score)| {
            let at = locations.iter().find(|l| l.test.name == t.test);
            let (test_code, filename, line_no) = if python {
                let slug = submission
                    .steps
                    .iter()
                    .find(|s| s.step == t.step)
                    .map_or("", |s| s.slug);
                (
                    format!("fencelab check --step {}", t.step),
                    submission.file.clone(),
                    crate::output::github::line_of_fn(&source, slug).unwrap_or(0),
                )
            } else {
                (
                    format!("cargo test --test behaviour {} -- --exact", t.test),
                    at.map_or(String::new(), |l| l.file.clone()),
                    at.map_or(0, |l| l.line),
                )
            };
            Test {
                name: t.test.clone(),
                status: if t.outcome.passed() { "pass" } else { "fail" },
                score,
                message: cut(&submission.message(t).unwrap_or_default(), message_limit),
                test_code,
                filename,
                line_no,
                duration: (t.secs * 1000.0).round() as u64,
            }
        })
        .collect();
    Result {
        version: 1,
        status: if submission.passed_gate {
            "pass"
        } else {
            "fail"
        },
        max_score: MAX_SCORE,
        tests,
    }
}

/// The tests' scores as the reporter adds them up: in order, in binary
/// floats (`acc.totalScore += score`), and prints the sum as it is
/// (`Points 41.669999999999995/100`). 0.01 is not exact in binary, so the
/// last earning test's score is nudged by a few units in the last place, if
/// need be, for the sum to be the float of the score: it still shows as its
/// hundredths (`points::of`) to any reader that rounds.
fn float_scores(points: &points::Points) -> Vec<f64> {
    let mut scores: Vec<f64> = points.tests.iter().map(|t| t.earned.points()).collect();
    let target = points.score.points();
    let Some(last) = scores.iter().rposition(|s| *s > 0.0) else {
        return scores;
    };
    // The sum in order is monotonic in the last earning test's score: the
    // score nearest its own (in a window of a billionth of it, far more
    // than rounding moves it) whose sum is the target, found by halving
    // over the floats in between (positive floats order as their bits).
    // Stepping it by one unit in its last place at a time could take
    // thousands of steps where it is much smaller than the sum.
    let own = scores[last];
    let search = |scores: &mut Vec<f64>| {
        let sum_with = |scores: &mut Vec<f64>, x: f64| {
            scores[last] = x;
            scores.iter().fold(0.0, |acc, s| acc + s)
        };
        let (mut lo, mut hi) = (
            (own * (1.0 - 1e-9)).to_bits(),
            (own * (1.0 + 1e-9)).to_bits(),
        );
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if sum_with(scores, f64::from_bits(mid)) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        sum_with(scores, f64::from_bits(lo)) == target
    };
    if search(&mut scores) {
        return scores;
    }
    // Where what comes before it sits halfway between two of the sum's
    // floats, rounding to even reaches every other sum only: an earlier
    // earning test's score moved by a few units in its last place moves
    // that. One unit may not be enough: where the earlier score's units are
    // finer than the sum's before it (1.85 after 3.03), the sum before the
    // last rounds back to itself until the score has moved by two or four
    // (3.03 + 1.85 + 11.11 reached 15.989999999999998 or 15.990000000000002
    // but never 15.99 with one). The nearest earlier earning tests are tried
    // first, the smallest moves first.
    let earlier: Vec<usize> = (0..last)
        .rev()
        .filter(|&j| scores[j] > 0.0)
        .take(4)
        .collect();
    for j in earlier {
        let kept = scores[j];
        for units in 1..=NUDGE_UNITS {
            for up in [true, false] {
                scores[j] =
                    (0..units).fold(kept, |x, _| if up { x.next_up() } else { x.next_down() });
                if search(&mut scores) {
                    return scores;
                }
            }
        }
        scores[j] = kept;
    }
    scores[last] = own;
    scores
}

/// How many units in its last place an earlier earning test's score may be
/// moved by, at most: far fewer than would show at the hundredth.
const NUDGE_UNITS: u32 = 64;

/// Classroom's result for `submission`, small enough for `$GITHUB_OUTPUT`.
pub(crate) fn result(submission: &SubmissionReport) -> Result {
    for limit in [MESSAGE_LIMIT, 300, 0] {
        let result = result_with(submission, limit);
        if encode(&result).len() <= RESULT_LIMIT {
            return result;
        }
    }
    result_with(submission, 0)
}

/// The result as base64 of its JSON, on one line (no wrapping).
pub(crate) fn encode(result: &Result) -> String {
    let json = serde_json::to_string(result).expect("the result serializes");
    base64::engine::general_purpose::STANDARD.encode(json)
}

/// The line appended to `$GITHUB_OUTPUT`: the step's output `result`.
pub(crate) fn output_line(submission: &SubmissionReport) -> String {
    format!("result={}\n", encode(&result(submission)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::points::tests::submission;
    use serde_json::Value;

    fn decode(line: &str) -> Value {
        let b64 = line
            .strip_prefix("result=")
            .and_then(|l| l.strip_suffix('\n'))
            .expect("one `result=` line");
        assert!(!b64.contains('\n'), "base64 on one line");
        let json = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("valid base64");
        serde_json::from_slice(&json).expect("JSON inside")
    }

    #[test]
    fn the_result_decodes_to_the_reporters_fields_and_adds_up() {
        let s = submission(
            &[9, 10, 11, 13, 12, 9, 11, 19],
            &[9, 3, 11, 12, 0, 9, 11, 5],
        );
        let result = decode(&output_line(&s));
        let keys: Vec<&str> = result
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["max_score", "status", "tests", "version"]);
        assert_eq!(result["version"], 1);
        assert_eq!(result["max_score"], 100.0);
        assert_eq!(result["status"], "pass");
        let tests = result["tests"].as_array().unwrap();
        assert_eq!(tests.len(), s.tests.len());
        for t in tests {
            let mut fields: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
            fields.sort_unstable();
            assert_eq!(
                fields,
                [
                    "duration",
                    "filename",
                    "line_no",
                    "message",
                    "name",
                    "score",
                    "status",
                    "test_code"
                ]
            );
            assert!(["pass", "fail"].contains(&t["status"].as_str().unwrap()));
        }
        // The reporter's sum: `acc.totalPoints += score`, in order.
        let total = tests
            .iter()
            .fold(0.0, |acc, t| acc + t["score"].as_f64().unwrap());
        assert_eq!(total, s.score);
        assert!(
            tests
                .iter()
                .any(|t| t["status"] == "fail" && t["score"] == 0.0)
        );
    }

    #[test]
    fn the_sum_is_the_score_where_one_unit_earlier_cannot_reach_it() {
        // 3.03 + 1.85 + 11.11 in order: with the last score alone, or the
        // one before it moved by a single unit in its last place, the
        // reporter's sum is 15.989999999999998 or 15.990000000000002.
        let s = submission(&[11, 18, 3], &[1, 1, 1]);
        assert_eq!(s.score, 15.99);
        let tests = decode(&output_line(&s))["tests"]
            .as_array()
            .unwrap()
            .clone();
        let total = tests
            .iter()
            .fold(0.0, |acc, t| acc + t["score"].as_f64().unwrap());
        assert_eq!(total, 15.99);
        for t in &tests {
            let score = t["score"].as_f64().unwrap();
            assert!([0.0, 3.03, 1.85, 11.11].contains(&((score * 100.0).round() / 100.0)));
        }
    }

    #[test]
    fn a_submission_that_cannot_be_graded_is_an_error_with_the_reason() {
        let mut s = submission(&[2; 8], &[0; 8]);
        s.compile_errors = Some("error[E0308]: mismatched types\n --> alice.rs:3:5".into());
        s.score = 0.0;
        s.passed_gate = false;
        s.tests.clear();
        let result = decode(&output_line(&s));
        assert_eq!(result["status"], "error");
        assert_eq!(result["tests"][0]["status"], "error");
        assert_eq!(result["tests"][0]["score"], 0.0);
        assert!(
            result["tests"][0]["message"]
                .as_str()
                .unwrap()
                .contains("mismatched types")
        );
    }

    #[test]
    fn a_flood_of_messages_stays_within_the_outputs_limit() {
        let mut s = submission(&[12; 8], &[0; 8]);
        for t in &mut s.tests {
            t.outcome = crate::engine::outcome::TestOutcome::Failed {
                kind: crate::engine::outcome::FailureKind::Crashed,
                message: "x".repeat(16 * 1024),
            };
        }
        let line = output_line(&s);
        assert!(
            line.len() <= RESULT_LIMIT + "result=\n".len(),
            "{}",
            line.len()
        );
        assert_eq!(decode(&line)["tests"].as_array().unwrap().len(), 96);
    }
}
