//! One function per subcommand, each wiring the pipeline stages together.

pub mod allocators;
pub mod cell;
pub mod compare;
pub mod demo;
pub mod listing;
pub mod merge;
pub mod record;
pub mod report;
pub mod soak;
mod soak_jobs;
pub mod soak_report;
pub mod tune;
