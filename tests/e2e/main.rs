//! End-to-end tests: the real binary, real allocators, real /proc, a real
//! SQLite file, on the small C workloads in tests/programs/.

mod adaptive;
mod bad_input;
mod breakdown;
mod browser;
mod cgroup;
mod cluster;
mod cluster_adaptive;
mod cluster_files;
mod common;
mod compare;
mod cpus;
mod fixed_duration;
mod heap;
mod impossible_figures;
mod lifecycle;
mod limits;
mod markers;
mod postgres;
mod reclaim;
mod record;
mod record_metrics;
mod reliability;
mod reports;
mod scenario_server;
mod scenarios;
mod services;
mod shim;
mod slurm_cluster;
mod store;
mod structure;
mod thp;
mod tree;
mod tune;
mod user_metrics;
mod variant;
