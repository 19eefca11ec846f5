//! The SQLite store: one file holding experiments, their host environment,
//! configurations, runs, samples and markers. Each finished run is committed in its own
//! transaction, so a crash in run 37 keeps runs 1-36. Only this module speaks
//! SQL; everything else exchanges the plain records of `crate::model`.
//!
//! `open.rs` holds the `Store` handle; `write.rs` writes experiments and
//! runs as they happen, `load.rs` reads them back (`markers.rs` a run's markers), `recordings.rs` keeps
//! long recordings (`append.rs` the cadence their samples are appended at), `shard.rs` what the cluster merge asks of a file;
//! `schema.rs` versions and migrations, `sample_rows.rs` the sample
//! columns, `convert.rs` integers between the model and SQLite, `full.rs` whether a
//! failed write means the store cannot grow. This file
//! only declares and re-exports, and no file imports it: imports between
//! the files go one way.

mod append;
mod convert;
mod full;
mod load;
mod markers;
mod open;
mod recordings;
#[cfg(test)]
mod recordings_tests;
mod sample_rows;
mod schema;
mod shard;
mod soaks;
#[cfg(test)]
mod tests;
mod write;

pub use append::{commit_together, Appender};
pub use full::is_full;
pub use load::ExperimentListing;
pub use open::Store;
pub use recordings::{Ending, NewRecording};
pub use schema::SCHEMA_VERSION;
pub use shard::schema_version_of;
pub use soaks::Reading;
