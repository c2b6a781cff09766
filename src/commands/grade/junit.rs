//! `grade --junit FILE`: JUnit XML as GitLab and Jenkins read it. A
//! `testsuite` per submission and step, with the submission's score, the
//! gate and the budget (`--budget`) as its `properties`; a `testcase` per test (with classname and
//! time), a `failure` with a message for each test that did not pass and
//! what the test printed as its `system-out`; a submission that cannot be
//! graded is one testsuite `NAME: build` with the same properties (score 0,
//! gate not passed) and one testcase of class `NAME.build` with an `error`:
//! `compile` (type `compile`, the compiler's messages) when it does not
//! compile, `usable` (type `unusable`, why) when it cannot be used at all.

use std::fmt::Write as _;

use crate::commands::grade::{GradeReport, points};
use crate::output::markup::{self, Markup};

/// Escapes text for XML, dropping the characters XML 1.0 cannot hold (a
/// submission's output may contain any byte).
pub(crate) fn escape(text: &str) -> String {
    markup::escape(text, Markup::Xml)
}

/// The `<properties>` of a submission's testsuites: its score, the gate and
/// the step, as JUnit readers show them beside the tests.
fn properties(
    report: &GradeReport,
    submission: &crate::commands::grade::SubmissionReport,
    step: Option<&crate::commands::grade::StepScore>,
) -> String {
    let mut list = vec![
        ("submission", submission.name.clone()),
        ("file", submission.file.clone()),
        ("score", points::score_shown(submission).to_string()),
        ("max_score", "100".to_string()),
        ("min_score", report.min_score.to_string()),
        ("passed_gate", submission.passed_gate.to_string()),
    ];
    // The budget changes scores, so the report says which one graded.
    if let Some(budget) = report.budget_secs {
        list.push(("budget_secs", budget.to_string()));
    }
    if let Some(step) = step {
        list.push(("step", step.step.to_string()));
        list.push(("step_passed", format!("{}/{}", step.passed, step.total)));
    }
    let mut out = String::from("    <properties>\n");
    for (name, value) in list {
        let _ = writeln!(
            out,
            "      <property name=\"{name}\" value=\"{}\"/>",
            escape(&value)
        );
    }
    out.push_str("    </properties>\n");
    out
}

/// What a test printed before it failed (the judge's capture of stdout and
/// stderr, which precedes the panic in its message).
fn printed(message: &str) -> String {
    message
        .lines()
        .take_while(|l| !l.starts_with("panicked at "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The report as JUnit XML (element order as in Jenkins' junit-10.xsd:
/// properties, testcases; in a testcase error, failure, system-out).
pub(crate) fn render(report: &GradeReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let tests: usize = report
        .submissions
        .iter()
        .map(|s| s.tests.len().max(1))
        .sum();
    let failures: usize = report
        .submissions
        .iter()
        .filter(|s| s.not_graded().is_none())
        .map(|s| s.tests.iter().filter(|t| !t.outcome.passed()).count())
        .sum();
    let errors = report
        .submissions
        .iter()
        .filter(|s| s.not_graded().is_some())
        .count();
    // Summed from +0.0: an empty `sum()` of floats is -0.0, shown `-0.000`.
    let time = report
        .submissions
        .iter()
        .flat_map(|s| &s.tests)
        .fold(0.0, |acc, t| acc + t.secs);
    let _ = writeln!(
        out,
        "<testsuites name=\"fencelab grade\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{time:.3}\">"
    );
    for submission in &report.submissions {
        let name = escape(&submission.name);
        // Not graded: one `build` testcase with an `error` (`compile` when it
        // does not compile, `usable` when it cannot be used at all).
        let not_graded = match (&submission.unusable, &submission.compile_errors) {
            (Some(reason), _) => Some((
                "usable",
                "unusable",
                format!(
                    "the submission cannot be graded: {}",
                    reason.lines().next().unwrap_or("")
                ),
                reason,
            )),
            (None, Some(errors)) => Some((
                "compile",
                "compile",
                "the submission cannot be graded".to_string(),
                errors,
            )),
            (None, None) => None,
        };
        if let Some((case, kind, message, text)) = not_graded {
            let _ = writeln!(
                out,
                "  <testsuite name=\"{name}: build\" tests=\"1\" failures=\"0\" errors=\"1\" time=\"0\">\n{}    \
                 <testcase classname=\"{name}.build\" name=\"{case}\" time=\"0\">\n      \
                 <error message=\"{}\" type=\"{kind}\">{}</error>\n    \
                 </testcase>\n  </testsuite>",
                properties(report, submission, None),
                escape(&message),
                escape(text)
            );
            continue;
        }
        for step in &submission.steps {
            let tests: Vec<_> = submission
                .tests
                .iter()
                .filter(|t| t.step == step.step)
                .collect();
            let failures = tests.iter().filter(|t| !t.outcome.passed()).count();
            let time = tests.iter().fold(0.0, |acc, t| acc + t.secs);
            let _ = writeln!(
                out,
                "  <testsuite name=\"{name}: step {} {}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{time:.3}\">",
                step.step,
                step.slug,
                tests.len()
            );
            out.push_str(&properties(report, submission, Some(step)));
            for test in tests {
                let short = test.test.split("::").nth(1).unwrap_or(&test.test);
                let _ = write!(
                    out,
                    "    <testcase classname=\"{name}.step{}\" name=\"{}\" time=\"{:.3}\"",
                    test.step,
                    escape(short),
                    test.secs
                );
                match submission.message(test) {
                    None => out.push_str("/>\n"),
                    Some(message) => {
                        let first = message
                            .lines()
                            .find(|l| !l.starts_with("panicked at") && !l.trim().is_empty())
                            .unwrap_or("failed");
                        let _ = write!(
                            out,
                            ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                            escape(first),
                            test.outcome.label(),
                            escape(&message)
                        );
                        // What it printed, read from the suite's own words
                        // (before the panic), whatever the failure reads as.
                        let printed = printed(&test.outcome.message().unwrap_or_default());
                        if !printed.trim().is_empty() {
                            let _ = writeln!(
                                out,
                                "      <system-out>{}</system-out>",
                                escape(&printed)
                            );
                        }
                        out.push_str("    </testcase>\n");
                    }
                }
            }
            out.push_str("  </testsuite>\n");
        }
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::GradeReport;
    use crate::commands::grade::points::tests::submission;

    #[test]
    fn junit_parses_with_properties_system_out_and_build_errors_in_xsd_order() {
        let mut bob = submission(&[2; 8], &[2, 2, 2, 1, 2, 2, 2, 2]);
        bob.name = "bob.rs".into();
        if let crate::engine::outcome::TestOutcome::Failed { message, .. } =
            &mut bob.tests[7].outcome
        {
            *message = format!("debug: <claimed> & more\n{message}");
        }
        let mut carol = submission(&[2; 8], &[0; 8]);
        carol.name = "carol.rs".into();
        carol.compile_errors = Some("error[E0308]: mismatched types".into());
        carol.tests.clear();
        carol.passed_gate = false;
        let mut dave = submission(&[2; 8], &[0; 8]);
        dave.name = "dave.rs".into();
        dave.unusable = Some("dave.rs does not have the contract's API\nnext: start from".into());
        dave.tests.clear();
        dave.score = 0.0;
        dave.passed_gate = false;
        let submissions = vec![bob, carol, dave];
        let report = GradeReport::of_test(submissions, 90.0);
        let xml = render(&report);
        let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.attribute("errors"), Some("2"), "carol's and dave's");
        assert_eq!(root.attribute("failures"), Some("1"), "bob's");
        assert_eq!(root.attribute("tests"), Some("18"));
        let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
        assert_eq!(
            suites.len(),
            10,
            "8 steps of bob, carol's build, dave's build"
        );
        for suite in &suites {
            let children: Vec<&str> = suite
                .children()
                .filter(|n| n.is_element())
                .map(|n| n.tag_name().name())
                .collect();
            assert_eq!(children[0], "properties", "properties first (junit-10.xsd)");
            assert!(children[1..].iter().all(|c| *c == "testcase"));
            let props: Vec<(&str, &str)> = suite
                .children()
                .find(|n| n.has_tag_name("properties"))
                .unwrap()
                .children()
                .filter(|n| n.has_tag_name("property"))
                .map(|p| (p.attribute("name").unwrap(), p.attribute("value").unwrap()))
                .collect();
            assert!(props.contains(&("max_score", "100")));
            assert!(props.iter().any(|(n, _)| *n == "score"));
            for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
                let order: Vec<&str> = case
                    .children()
                    .filter(|n| n.is_element())
                    .map(|n| n.tag_name().name())
                    .collect();
                let rank = |t: &str| {
                    ["skipped", "error", "failure", "system-out", "system-err"]
                        .iter()
                        .position(|x| *x == t)
                        .unwrap_or_else(|| panic!("{t} is not a testcase child"))
                };
                assert!(
                    order.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
                    "{order:?}"
                );
            }
        }
        let failing = suites[3]
            .descendants()
            .find(|n| n.has_tag_name("failure"))
            .unwrap()
            .parent()
            .unwrap();
        let out = failing
            .children()
            .find(|n| n.has_tag_name("system-out"))
            .unwrap();
        assert_eq!(out.text(), Some("debug: <claimed> & more"));
        let build = suites[8]
            .descendants()
            .find(|n| n.has_tag_name("error"))
            .unwrap();
        assert_eq!(build.text(), Some("error[E0308]: mismatched types"));
        // As the README says: a submission that cannot be graded is one
        // `build` testcase with an `error`, and its score and gate are there.
        for (suite, case, kind) in [
            (suites[8], "compile", "compile"),
            (suites[9], "usable", "unusable"),
        ] {
            let who = if case == "compile" {
                "carol.rs"
            } else {
                "dave.rs"
            };
            assert_eq!(
                suite.attribute("name"),
                Some(format!("{who}: build").as_str())
            );
            assert_eq!(suite.attribute("errors"), Some("1"));
            assert_eq!(suite.attribute("failures"), Some("0"));
            let testcase = suite
                .children()
                .find(|n| n.has_tag_name("testcase"))
                .unwrap();
            assert_eq!(
                testcase.attribute("classname"),
                Some(format!("{who}.build").as_str())
            );
            assert_eq!(testcase.attribute("name"), Some(case));
            let error = testcase
                .children()
                .find(|n| n.has_tag_name("error"))
                .unwrap();
            assert_eq!(error.attribute("type"), Some(kind));
            assert!(testcase.children().all(|n| !n.has_tag_name("failure")));
            let props: Vec<(&str, &str)> = suite
                .descendants()
                .filter(|n| n.has_tag_name("property"))
                .map(|p| (p.attribute("name").unwrap(), p.attribute("value").unwrap()))
                .collect();
            assert!(props.contains(&("score", "0.00")), "{props:?}");
            assert!(props.contains(&("passed_gate", "false")), "{props:?}");
        }
        let error = suites[9]
            .descendants()
            .find(|n| n.has_tag_name("error"))
            .unwrap();
        assert_eq!(
            error.attribute("message"),
            Some("the submission cannot be graded: dave.rs does not have the contract's API")
        );
        assert!(error.text().unwrap().contains("next: start from"));
    }

    #[test]
    fn no_time_or_score_is_minus_zero() {
        // Nothing but unusable submissions: no test ran, no time was taken.
        let mut dave = submission(&[2; 8], &[0; 8]);
        dave.unusable = Some("no API".into());
        dave.tests.clear();
        dave.score = -0.0;
        let submissions = vec![dave];
        let report = GradeReport::of_test(submissions, 0.0);
        let xml = render(&report);
        assert!(!xml.contains("\"-0"), "{xml}");
        assert!(xml.contains("time=\"0.000\""), "{xml}");
    }

    #[test]
    fn escaping_covers_markup_and_drops_what_xml_cannot_hold() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(
            escape("x\u{0}y\u{1b}[31m\tz\n"),
            "x\u{fffd}y\u{fffd}[31m\tz\n"
        );
    }
}
