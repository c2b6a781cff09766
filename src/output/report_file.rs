//! Reports written to files (`--json`, `--junit`, `--stryker`, `--html`,
//! `--csv`, Gradescope's and PrairieLearn's results): one way to write them,
//! and one JSON layout (pretty, ending in a newline).

use std::path::Path;

use serde::Serialize;

use crate::error::Error;

/// Writes `text` to `path`; a failure says what was being done (`doing`,
/// e.g. "write the JSON report to") and where.
pub(crate) fn write(path: &Path, text: &str, doing: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::io(doing, path, e))
}

/// A report as every JSON file holds it: pretty, ending in a newline.
pub(crate) fn json<T: Serialize + ?Sized>(report: &T) -> String {
    serde_json::to_string_pretty(report).expect("the report serializes") + "\n"
}
