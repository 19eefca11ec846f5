//! allocscope: run a program under several memory allocators and tunings,
//! sample its process tree, store the runs and say which configuration to use.
//! This crate is the command line (`cli`, `options`, `commands`) and the
//! features not yet in crates of their own; the pipeline is
//! `allocscope_core`, re-exported here whole.

pub use allocscope_cluster as cluster;
pub use allocscope_core::*;
pub use allocscope_record as record;
pub use allocscope_record::prometheus;
pub use allocscope_scenarios as workload;
pub use allocscope_soak as soak;
pub use allocscope_tune as tune;

pub mod cli;
pub mod commands;
pub mod exports;
pub mod options;
