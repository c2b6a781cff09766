//! `grade --csv FILE`: a gradebook that spreadsheets and LMS imports read
//! (RFC 4180, written with the `csv` crate): a header, then one row per
//! submission with its total, whether it reached the gate, each step's
//! points (out of its weight's share of 100, adding up exactly to the total, and written
//! from hundredths, so never `-0.00`: see `points`), tests passed, and for a
//! submission that could not be graded the reason (the first line of the
//! compiler's messages).

use crate::commands::grade::{GradeReport, points};
use crate::lab::worksheet::SLUGS;

/// The header row.
pub(crate) fn header() -> Vec<String> {
    let mut columns: Vec<String> = ["submission", "file", "score", "passed_gate"]
        .map(String::from)
        .to_vec();
    columns.extend(
        SLUGS
            .iter()
            .enumerate()
            .map(|(i, slug)| format!("step{}_{slug}", i + 1)),
    );
    columns.extend(["tests_passed", "tests_total", "reason"].map(String::from));
    columns
}

/// The gradebook for `report`.
pub(crate) fn render(report: &GradeReport) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header()).expect("writing to memory");
    for s in &report.submissions {
        let points = points::of(s, 100.0);
        let mut row = vec![
            s.name.clone(),
            s.file.clone(),
            points.score.to_string(),
            s.passed_gate.to_string(),
        ];
        for step in 1..=SLUGS.len() as u32 {
            row.push(points.step(step).earned.to_string());
        }
        let passed = s.tests.iter().filter(|t| t.outcome.passed()).count();
        row.push(passed.to_string());
        row.push(
            s.steps
                .iter()
                .map(|st| st.total)
                .sum::<usize>()
                .max(s.tests.len())
                .to_string(),
        );
        row.push(
            s.not_graded()
                .and_then(|e| e.lines().find(|l| !l.trim().is_empty()))
                .unwrap_or("")
                .to_string(),
        );
        writer.write_record(&row).expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("writing to memory")).expect("UTF-8 in, UTF-8 out")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::grade::GradeReport;
    use crate::commands::grade::points::tests::submission;

    fn report() -> GradeReport {
        let mut bob = submission(
            &[9, 10, 11, 13, 12, 9, 11, 19],
            &[9, 3, 11, 12, 0, 9, 11, 5],
        );
        bob.name = "bob, \"the builder\".rs".into();
        let mut carol = submission(&[2; 8], &[0; 8]);
        carol.name = "carol.rs".into();
        carol.compile_errors = Some("error[E0308]: mismatched types\n --> carol.rs:3:5".into());
        carol.score = 0.0;
        carol.passed_gate = false;
        carol.tests.clear();
        let submissions = vec![
            submission(
                &[9, 10, 11, 13, 12, 9, 11, 19],
                &[9, 10, 11, 13, 12, 9, 11, 19],
            ),
            bob,
            carol,
        ];
        GradeReport::of_test(submissions, 0.0)
    }

    #[test]
    fn the_gradebook_reads_back_with_a_csv_parser_and_adds_up() {
        let report = report();
        let text = render(&report);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            header()
        );
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), report.submissions.len());
        for (row, s) in rows.iter().zip(&report.submissions) {
            assert_eq!(row.len(), header().len());
            assert_eq!(&row[0], s.name, "names with commas and quotes survive");
            let score: f64 = row[2].parse().unwrap();
            assert_eq!(score, s.score);
            // The steps' points add up to the total, to the hundredth.
            let cents: i64 = (4..12)
                .map(|i| (row[i].parse::<f64>().unwrap() * 100.0).round() as i64)
                .sum();
            assert_eq!(cents, (score * 100.0).round() as i64, "{row:?}");
        }
        assert_eq!(&rows[0][2], "100.00");
        // Carol, who does not compile, has 0.00 in every step, not -0.00.
        assert!(!text.contains("-0"), "{text}");
        assert_eq!(rows[2].iter().skip(2).take(10).collect::<Vec<_>>(), {
            let mut zero = vec!["0.00", "false"];
            zero.extend(["0.00"; 8]);
            zero
        });
        assert_eq!(&rows[2][3], "false");
        assert_eq!(&rows[2][14], "error[E0308]: mismatched types");
    }
}
