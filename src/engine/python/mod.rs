//! Python implementations: how the engine hosts a `.py` file of the contract.
//!
//! A Python implementation is not built by cargo. Its server is the program
//! `python/fencelab_server.py` (standard library only, compiled into
//! fencelab), written into the scratch workspace beside the modules it hosts.
//! The judge starts and cages it as it does a Rust server (`bridge::client`).
//! The cage then also reads the interpreter's directories and the one module it
//! serves, nothing else (`bridge::client::python_reads`).
//!
//! "Building" is compiling every source with Python's own `compile()`. One that
//! does not compile is unviable, with Python's message and line. Where the cage
//! has a PID namespace, a trial's server is forked, not started afresh
//! (`zygotes`). What does not change between commands is asked once, as cargo
//! builds a crate once: a warm `check` starts no interpreter before its trials.

// A server's directory is `pyserver-<hash>/`: the script, `hosted.json`,
// `impls/<key>/lease.py`, and `reads`, the interpreter's directories. Python's
// compile answers are kept by interpreter and sources. A server directory's
// `--identify` is asked once: its directory is named by its contents.
mod host;
mod imports;
// `python3` on `PATH` (or `FENCELAB_PYTHON`), 3.10 or newer, found once per
// process; without it a Python run stops with one line saying what to
// install. The probe's answer (`probe_cache`) is kept only for an interpreter
// found, and only while nothing that chose it has changed.
mod interpreter;
mod judge;
#[cfg(test)]
mod tests;
mod wire;
// One forking server per implementation (python/fencelab_forking.py): the
// contract's standard library imported, the implementation not. Each judge
// has it fork a child that enters the trial's cage with the bridge's own
// code, then imports the implementation. `bridge::zygote` says how, and why
// it keeps every guarantee of a server started afresh. The servers the
// runner starts itself, for fencelab's own implementations a learner's tests
// are judged against, are forked too, at the runner's own request. That needs
// the bridge's cdylib built (`Forking::library`).
mod zygotes;

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

use super::builder::{Host, Hosting, Implementation};
use super::policy::{Launch, Servers};
use super::process::{self, Limits, cage_error};
use super::scratch::{CrateDir, Pin, Scratch, hash_of};
use crate::bridge::sandbox::Cage;
use crate::error::Error;
use crate::lab::suite::{SuiteFiles, SuiteTest};

pub(crate) use wire::server;
/// The file name the judge recognises a Python server by.
pub(crate) const SERVER_FILE: &str = crate::bridge::protocol::PYTHON_SERVER;
/// The forking server, as shipped (`Zygotes`), written beside the server.
pub(crate) const FORKING: &str = include_str!("../../../python/fencelab_forking.py");
/// Its file name.
pub(crate) const FORKING_FILE: &str = "fencelab_forking.py";
/// The environment variable naming the interpreter to use instead of `python3`.
pub(crate) const PYTHON_ENV: &str = "FENCELAB_PYTHON";
/// The oldest Python the lab's contract is written for.
pub(crate) const OLDEST: (u32, u32) = (3, 10);

pub(crate) use host::*;
pub(crate) use interpreter::*;
pub(crate) use judge::*;
pub(crate) use zygotes::*;
