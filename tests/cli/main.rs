//! fencelab as its users run it: the commands and the engine behind them, on
//! fixture submissions, mutants, lab crates and learners' tests. One test
//! binary with a module per area (as insta's `tests/functional/main.rs`), so
//! that the crate is linked once and the areas share the helpers of
//! `tests/common/`.
//!
//! `cargo test` runs the quick checks; the slowest, most complete ones are
//! `#[ignore = "slow: .ci/run step 2"]` and run by `.ci/run`'s second step
//! (`cargo test -- --ignored`), each beside a quick check of the same
//! guarantee that runs here.

#[path = "../common/mod.rs"]
mod common;

mod batch;
mod cache;
mod class;
mod examples;
mod grade;
mod instructor_content;
mod interrupt;
mod learner;
mod learner_tests;
mod predictions;
mod python;
mod python_import;
mod python_lab;
mod python_mine;
mod random_calls;
mod same_score;
mod shards;
mod stored_batches;
mod verify_outcomes;
mod watch;
