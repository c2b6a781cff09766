//! A Python submission whose module cannot be imported is one reason and
//! exit 3, as a Rust compile error: never a crash in each of its tests.

use serde_json::Value;

use crate::common::root;

/// The Python reference with `line` added at its end.
fn reference_with(dir: &std::path::Path, name: &str, line: &str) -> String {
    let source = std::fs::read_to_string(root().join(fencelab::lab::python::FILE)).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("{source}\n{line}\n")).unwrap();
    path.display().to_string()
}

#[test]
fn a_module_that_cannot_be_imported_is_one_reason_and_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let missing = reference_with(dir.path(), "hank.py", "import numpy_is_not_installed");
    let raises = reference_with(dir.path(), "raises.py", "raise RuntimeError('at the top')");
    let good = reference_with(dir.path(), "good.py", "");
    let json = dir.path().join("g.json");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["grade", &missing, &good, &raises, "--json"])
        .arg(&json)
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    // Said once each, in the terminal.
    assert_eq!(stdout.matches("ModuleNotFoundError").count(), 1, "{stdout}");
    assert_eq!(
        stdout.matches("RuntimeError: at the top").count(),
        1,
        "{stdout}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let subs = report["submissions"].as_array().unwrap();
    assert_eq!(subs[1]["score"], 100.0, "{}", subs[1]);
    for (s, why) in [
        (&subs[0], "No module named 'numpy_is_not_installed'"),
        (&subs[2], "RuntimeError: at the top"),
    ] {
        assert_eq!(s["score"], 0.0, "{s}");
        let said = s["compile_errors"].as_str().unwrap_or_default();
        assert!(said.starts_with("Traceback") && said.contains(why), "{s}");
        // The learner's own file and line, nothing of fencelab's.
        let end = std::fs::read_to_string(root().join(fencelab::lab::python::FILE))
            .unwrap()
            .lines()
            .count()
            + 2;
        assert!(said.contains(&format!(".py\", line {end}")), "{s}");
        assert!(!said.contains("fencelab_server"), "{s}");
    }
}
