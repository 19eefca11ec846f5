//! (being written)
pub mod types;
