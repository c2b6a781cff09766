//! The behavioural suite: the judge of any implementation of the lease-and-fence
//! contract, one module per step of the worksheet.
//!
//! It reaches the implementation only through `lease` below, so any file with the
//! API of `src/lease.rs` can stand in for it: fencelab builds the same step
//! modules against learners' code, mutants and submissions, with only this root
//! file replaced. Every test uses a database of its own and asserts what can be
//! observed: a return value, an error variant, or the rows read back through a
//! separate connection.

use fencelab::lease;

#[path = "behaviour/support.rs"]
mod support;

#[path = "behaviour/random.rs"]
mod random;

#[path = "behaviour/step1.rs"]
mod step1;
#[path = "behaviour/step2.rs"]
mod step2;
#[path = "behaviour/step3.rs"]
mod step3;
#[path = "behaviour/step4.rs"]
mod step4;
#[path = "behaviour/step5.rs"]
mod step5;
#[path = "behaviour/step6.rs"]
mod step6;
#[path = "behaviour/step7.rs"]
mod step7;
#[path = "behaviour/step8.rs"]
mod step8;
