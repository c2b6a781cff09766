//! The lab as data: the worksheet, the mutants, the behavioural suite's
//! inventory, and the reference.

pub mod api;
pub mod lang;
pub mod mutant;
pub mod observation;
pub mod reference;
pub mod suite;
pub mod worksheet;
