//! The engine: builds implementations against a suite and runs every test of
//! every implementation in isolated processes.

pub mod builder;
pub mod cargo;
pub mod outcome;
pub mod process;
pub mod runner;
pub mod scratch;
