//! allocscope's pipeline: the allocators and the heap probe, one run and
//! its sampler, the store, the analysis and the reports. Data flows one way:
//! plan -> run -> store -> analyze -> report. The features (service load,
//! record, tune, cluster engines, scenarios) are crates that build on this
//! one; it names none of them.

pub mod alloc;
pub mod cgroup;
/// A stored experiment of three configurations, for tests.
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod host;
pub mod judging;
pub mod load;
pub mod model;
pub mod plan;
pub mod probe;
pub mod recorded;
pub mod rng;
pub mod run;
pub mod sample;
pub mod service_error;
pub mod shard_error;
pub mod store;
pub mod units;
pub mod usage_error;
pub mod user_metric;
