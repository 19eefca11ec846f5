//! allocscope: run a program under several memory allocators and tunings,
//! sample its process tree, store the runs and say which configuration to use.
//! Data flows one way: cli -> options -> plan -> run -> store -> analyze -> report.

pub mod alloc;
pub mod analyze;
pub mod cgroup;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod host;
pub mod judging;
pub mod load;
pub mod metrics;
pub mod model;
pub mod options;
pub mod plan;
pub mod probe;
pub mod record;
pub mod recorded;
pub mod report;
pub mod rng;
pub mod run;
pub mod sample;
pub mod store;
pub mod tune;
pub mod units;
pub mod usage_error;
pub mod user_metric;
pub mod workload;
