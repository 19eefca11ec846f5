//! One function per subcommand, each wiring the pipeline stages together.

pub mod allocators;
pub mod cell;
pub mod compare;
mod cpus;
pub mod demo;
pub mod exports;
mod judge;
pub mod listing;
mod local;
mod logs;
pub mod merge;
pub mod progress;
pub mod record;
pub mod recordings;
pub mod report;
mod rounds;
mod run_line;
mod serving;
mod session;
pub mod soak;
mod throughput;
pub mod tune;
mod tune_perf;
