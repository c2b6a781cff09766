//! The invariants of the module header, one function (and file) each. Each
//! returns the violations it finds (empty when the invariant holds) and adds
//! to the stats what it exercised.

mod claims;
mod completes;
mod fences;
mod final_rows;
mod order;
mod own_leases;
mod structure;

use super::leases::History;
use super::{Run, Stats};

/// One invariant: its violations, given the run and what is derived from it.
type Invariant = fn(&Run, &History<'_>, &mut Stats) -> Vec<String>;

/// The invariants, in the order of the module header.
pub(super) const ALL: [Invariant; 7] = [
    structure::structure,
    fences::fences,
    order::order,
    completes::completes,
    own_leases::own_leases,
    claims::claims,
    final_rows::final_rows,
];
