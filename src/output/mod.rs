//! What fencelab prints for people: styles, diffs, the printer.

pub(crate) mod diff;
pub mod github;
pub mod paths;
pub mod printer;
pub mod style;
