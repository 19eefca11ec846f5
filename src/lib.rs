//! allocscope: run a program under several memory allocators and tunings,
//! sample its process tree, store the runs and say which configuration to use.
//! This crate is the command line (`cli`, `options`, `commands`) and the
//! features not yet in crates of their own; the pipeline is
//! `allocscope_core`, re-exported here whole.

pub use allocscope_core::*;

pub mod cli;
pub mod cluster;
pub mod commands;
pub mod metrics;
pub mod options;
pub mod record;
pub mod tune;
pub mod workload;
