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
pub(crate) mod replay;
mod report;
mod runner;
pub(crate) mod target;
#[cfg(test)]
mod test_server;

pub use http::Method;
pub(crate) use plan::PlanError;
pub use plan::{Plan, Requests, Schedule};
pub use replay::parse_log;
pub use report::{LoadReport, Percentiles};
pub use runner::run;
pub use target::Target;
pub(crate) use target::TargetError;
