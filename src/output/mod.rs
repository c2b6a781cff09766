//! What fencelab prints for people: styles, widths, diffs, observations, the
//! printer and its progress lines, and the worksheet as Markdown.

pub(crate) mod debug_value;
pub(crate) mod diff;
pub mod github;
pub mod markup;
pub mod observation;
pub mod paths;
pub mod printer;
pub mod progress;
pub mod report_file;
pub mod style;
pub(crate) mod ticker;
pub mod width;
pub mod worksheet;
