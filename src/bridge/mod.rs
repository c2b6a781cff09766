//! The bridge between the judge and an implementation: the suite runs in a
//! process of fencelab's (trusted), the implementation in a process of its own
//! (untrusted), and every call of the contract's API crosses over a Unix socket.
//!
//! The implementation can then only decide the answers to its own calls: it
//! cannot end the test, print a verdict, or make the judge exit with success.
//! A crash, an `exit(0)` or a hang in it is seen by the judge as exactly that.
//!
//! These modules are compiled into fencelab (for its own tests) and also copied
//! verbatim into the scratch crates the engine builds, which is why they refer
//! to each other only through `super::`.

pub(crate) mod capture;
pub(crate) mod child;
pub(crate) mod client;
mod fds;
mod forking;
pub(crate) mod held;
pub mod judge_zygote;
pub mod protocol;
pub mod proxy;
pub mod said;
pub use cage as sandbox;
pub mod server;
pub(crate) mod start;
pub(crate) mod zygote;

/// `dispatch.rs` compiled against the reference, as the engine compiles it
/// against every implementation.
#[cfg(test)]
mod hosted_reference {
    pub(crate) use crate::lease::*;

    pub(crate) mod dispatch {
        use crate::bridge;
        include!("dispatch.rs");
    }
}

#[cfg(test)]
mod tests;
