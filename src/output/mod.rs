//! What fencelab prints for people: styles, widths, diffs, observations, the
//! printer and its progress lines, and the worksheet as Markdown.

pub(crate) mod debug_value;
pub(crate) mod diff;
pub mod github;
pub(crate) mod markup;
pub(crate) mod observation;
pub(crate) mod own_words;
pub(crate) mod paths;
pub mod printer;
pub mod progress;
pub(crate) mod report_file;
pub(crate) mod style;
pub(crate) mod ticker;
pub(crate) mod untrusted;
pub mod width;
pub mod worksheet;
