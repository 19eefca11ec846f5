//! allocscope: run a program under several memory allocators and tunings,
//! sample its process tree, store the runs and say which configuration to use.
//! This crate is the command line (`cli`, `options`, `commands`) and the
//! exports; it names the crate each part comes from: the pipeline is
//! `allocscope_core`, each feature its own crate.

pub mod cli;
pub mod commands;
pub mod exports;
pub mod options;
