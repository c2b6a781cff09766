//! What fencelab prints for people: styles, diffs, the printer.

pub mod diff;
pub mod paths;
pub mod printer;
pub mod style;
