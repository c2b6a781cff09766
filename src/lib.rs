//! fencelab: a hands-on lab about leases and fencing tokens, and the engine that
//! runs it.
//!
//! [`lease`] is the lab's subject (the reference implementation of the contract);
//! everything else is the tool that judges implementations of it.

pub mod bridge;
pub mod builder;
pub mod cargo;
pub mod check;
pub mod cli;
pub mod diff;
pub mod error;
pub mod grade;
pub mod gradescope;
pub mod junit;
pub mod lease;
pub mod mutant;
pub mod outcome;
pub mod predict;
pub mod printer;
pub mod process;
pub mod runner;
pub mod scratch;
pub mod starter;
pub mod style;
pub mod suite;
pub mod verify;
pub mod worksheet;
pub mod worksheet_md;
