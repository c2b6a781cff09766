//! The commands, each a front end over the engine.

pub mod check;
pub mod grade;
pub mod new;
pub mod predict;
pub mod verify;
pub mod worksheet;
