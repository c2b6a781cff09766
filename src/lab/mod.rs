//! The lab as data: the worksheet, the mutants, the behavioural suite's
//! inventory, and the reference.

pub(crate) mod api;
pub mod course;
pub mod edition;
pub mod lang;
pub(crate) mod layout;
pub mod mutant;
pub(crate) mod observation;
pub(crate) mod predictions;
pub mod python;
pub mod reference;
pub(crate) mod schedule;
pub mod suite;
pub mod wheat;
pub mod worksheet;
