//! The lab as data: the worksheet, the mutants, the behavioural suite's
//! inventory, and the reference.

pub mod mutant;
pub mod suite;
pub mod worksheet;
