//! Validated settings: everything the user typed, checked and converted
//! before anything runs. Errors here are user mistakes (exit 2) whose message
//! says how to fix them.

pub mod cell;
mod compare;
pub mod demo;
pub mod export;
pub mod judge;
pub mod parse;
mod ready;
pub mod record;
pub mod report;
pub mod rounds;
pub mod service;
pub mod soak;
pub mod tune;
pub mod variant;

pub use compare::CompareSettings;
