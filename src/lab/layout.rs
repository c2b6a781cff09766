//! The lab crate's layout, as `fencelab new` writes it and judging a
//! learner's own tests reads it: where those tests live, and the helpers
//! every lab crate's tests get (`mine_helpers.rs` beside this file, the
//! template's `tests/mine/helpers.rs`, compiled in).

/// Where a learner's own tests live in a lab crate.
pub(crate) const MINE: &str = "tests/mine/main.rs";

/// The directory of a learner's own tests: everything in it belongs to them
/// (a test target of its own, `mine`; its modules sit beside `main.rs`).
pub(crate) const MINE_DIR: &str = "tests/mine";

/// The helpers of a lab crate's own tests (`tests/mine/helpers.rs`).
pub(crate) const MINE_HELPERS: &str = include_str!("mine_helpers.rs");
