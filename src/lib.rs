//! fencelab: a hands-on lab about leases and fencing tokens, and the engine that
//! runs it.
//!
//! [`lease`] is the lab's subject (the reference implementation of the contract);
//! everything else is the tool that judges implementations of it.

pub mod bridge;
pub mod cli;
pub mod commands;
pub mod engine;
pub(crate) mod error;
pub mod exit;
pub mod judging;
pub mod lab;
pub mod lease;
pub mod output;
