//! The cage untrusted code runs in, set up between fork and exec so that it
//! holds before any untrusted code runs, constructors included. The parent
//! prepares everything (`Cage`); between fork and exec only system calls run.
//!
//! One module per layer, applied in order by `contain`: the memory cgroup,
//! the limits, the namespaces and the new root (the init and its watcher),
//! then Landlock. Each holds where the kernel allows it (`Layers::probe`);
//! README.md says what each enforces and costs.
//!
//! Invariants: where the cage has a PID namespace, nothing the program starts
//! outlives it (`init`). The watcher ends as the program did, so every verdict
//! reads the program's own end. Nothing untrusted ever runs in memory shared
//! with the caller's (`init::start_cloned`, `forked::start_forked`).

mod cage;
mod contain;
mod descriptors;
mod forked;
mod init;
mod inspect;
mod landlock;
mod last;
mod layers;
mod limits;
mod memory;
mod mounts;
mod namespaces;
mod net;
mod place;
pub mod proc;
mod space;
pub mod sys;
#[cfg(test)]
mod testing;

pub use cage::{Cage, Exec, Plan};
pub use contain::enter;
pub use descriptors::{borrowed, close, close_all_but, duplicate_at};
pub use init::Stacks;
pub use inspect::{kill_cage, others_in_cage};
pub use last::LISTENER_FD;
pub use layers::{Layers, Need, REQUIRE_CAGE_ENV};
pub use memory::{MEMORY, MEMORY_ENV, Memory};
pub use net::Net;
pub use space::{Join, SPACE, Space, join};
