//! What cargo rejects is rejected: a learner's file is judged exactly as
//! written, though fencelab appends its own items to it.

use super::{fixture, judge_against, lab, some_judges};

/// A stray attribute at the end of the file: cargo says "expected item
/// after attributes". fencelab's appended test would otherwise take it, and
/// the file would be judged.
#[test]
fn a_test_file_ending_in_a_stray_attribute_does_not_compile() {
    let judges = some_judges(
        |wheat| wheat == "returning",
        |mutant, _| mutant == "claim-returns-the-old-fence",
    );
    for stray in [
        "#[test]\n",
        "#[allow(unused)]",
        "/// A doc comment with no item.\n",
    ] {
        let dir = lab(&format!("{}\n{stray}", fixture("happy_path.rs")), &[]);
        let report = judge_against(dir.path(), None, &judges);
        let errors = report.compile_errors.unwrap_or_else(|| {
            panic!("{stray:?} is judged: {:?}", report.tests);
        });
        assert!(
            errors.contains("expected item after")
                && errors.contains("tests/mine/main.rs")
                && !errors.contains("fencelab"),
            "{errors}"
        );
        assert!(report.tests.is_empty() && !report.valid);
    }
}
