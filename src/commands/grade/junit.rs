//! `grade --junit FILE`: JUnit XML as GitLab and Jenkins read it. A
//! `testsuite` per submission and step, a `testcase` per test (with classname
//! and time), a `failure` with a message for each test that did not pass; a
//! submission that does not compile is one failing `build` testcase, and one
//! that cannot be graded at all one failing `submission` testcase with why.

use std::fmt::Write as _;

use crate::commands::grade::GradeReport;

/// Escapes text for XML, dropping the characters XML 1.0 cannot hold (a
/// submission's output may contain any byte).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The report as JUnit XML.
pub fn render(report: &GradeReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let tests: usize = report
        .submissions
        .iter()
        .map(|s| s.tests.len().max(1))
        .sum();
    let failures: usize = report
        .submissions
        .iter()
        .map(|s| {
            if s.compile_errors.is_some() || s.unusable.is_some() {
                1
            } else {
                s.tests.iter().filter(|t| !t.outcome.passed()).count()
            }
        })
        .sum();
    let time: f64 = report
        .submissions
        .iter()
        .flat_map(|s| &s.tests)
        .map(|t| t.secs)
        .sum();
    let _ = writeln!(
        out,
        "<testsuites name=\"fencelab grade\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"{time:.3}\">"
    );
    for submission in &report.submissions {
        let name = escape(&submission.name);
        if let Some(reason) = &submission.unusable {
            let first = reason.lines().next().unwrap_or("cannot be graded");
            let _ = writeln!(
                out,
                "  <testsuite name=\"{name}: submission\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0\">\n    \
                 <testcase classname=\"{name}.submission\" name=\"usable\" time=\"0\">\n      \
                 <failure message=\"the submission cannot be graded: {}\" type=\"unusable\">{}</failure>\n    \
                 </testcase>\n  </testsuite>",
                escape(first),
                escape(reason)
            );
            continue;
        }
        if let Some(errors) = &submission.compile_errors {
            let _ = writeln!(
                out,
                "  <testsuite name=\"{name}: build\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0\">\n    \
                 <testcase classname=\"{name}.build\" name=\"compile\" time=\"0\">\n      \
                 <failure message=\"the submission does not compile\" type=\"compile\">{}</failure>\n    \
                 </testcase>\n  </testsuite>",
                escape(errors)
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
            let time: f64 = tests.iter().map(|t| t.secs).sum();
            let _ = writeln!(
                out,
                "  <testsuite name=\"{name}: step {} {}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{time:.3}\">",
                step.step,
                step.slug,
                tests.len()
            );
            for test in tests {
                let short = test.test.split("::").nth(1).unwrap_or(&test.test);
                let _ = write!(
                    out,
                    "    <testcase classname=\"{name}.step{}\" name=\"{}\" time=\"{:.3}\"",
                    test.step,
                    escape(short),
                    test.secs
                );
                match test.outcome.message() {
                    None => out.push_str("/>\n"),
                    Some(message) => {
                        let first = message
                            .lines()
                            .find(|l| !l.starts_with("panicked at"))
                            .unwrap_or("failed");
                        let _ = write!(
                            out,
                            ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                            escape(first),
                            test.outcome.label(),
                            escape(&message)
                        );
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
    use super::escape;

    #[test]
    fn escaping_covers_markup_and_drops_what_xml_cannot_hold() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(
            escape("x\u{0}y\u{1b}[31m\tz\n"),
            "x\u{fffd}y\u{fffd}[31m\tz\n"
        );
    }
}
