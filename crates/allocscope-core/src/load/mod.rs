//! allocscope's own HTTP load generator: drives a server workload with
//! keep-alive HTTP/1.1 requests from a URL template or a replayed access log,
//! closed loop (as fast as possible) or open loop (at a fixed rate or the
//! log's own pace), and measures throughput, latency percentiles (HDR
//! histogram, corrected for coordinated omission), errors by kind and its
//! own CPU use, so a saturated generator is reported rather than blamed on
//! the server.
//!
//! `plan` holds what a run is asked to do, `report` what it measured;
//! `target` parses URLs and path templates, `replay` access logs, `http`
//! speaks to one connection and `runner` schedules the workers and merges
//! what they measured.

mod http;
mod plan;
pub mod replay;
mod report;
mod runner;
pub mod target;
#[cfg(test)]
mod test_server;

pub use http::Method;
pub use plan::{Plan, PlanError, Requests, Schedule};
pub use replay::{parse_log, LogEntry, Rejected, ReplayLog};
pub use report::{ErrorCounts, LoadReport, Percentiles};
pub use runner::run;
pub use target::{PathTemplate, Target, TargetError};
