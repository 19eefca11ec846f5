//! allocscope's own HTTP load generator: drives a server workload with
//! keep-alive HTTP/1.1 requests from a URL template or a replayed access log,
//! closed loop (as fast as possible) or open loop (at a fixed rate or the
//! log's own pace), and measures throughput, latency percentiles (HDR
//! histogram, corrected for coordinated omission), errors by kind and its
//! own CPU use, so a saturated generator is reported rather than blamed on
//! the server.
//!
//! This file owns the plan and report types; `target` parses URLs and path
//! templates, `replay` access logs, `http` speaks to one connection and
//! `runner` schedules the workers and merges what they measured.

mod http;
pub mod replay;
mod runner;
pub mod target;
#[cfg(test)]
mod test_server;

pub use replay::{parse_log, LogEntry, Rejected, ReplayLog};
pub use runner::run;
pub use target::{PathTemplate, Target, TargetError};

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
        }
    }
}

/// When each request is sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// Closed loop: each connection sends its next request as soon as the
    /// previous response has arrived.
    AsFastAsPossible,
    /// Open loop: request `i` is due at `i / rate` seconds, requests per
    /// second, whether or not earlier ones have been answered.
    Rate(f64),
    /// Open loop over a replay: each entry is due at its log offset divided
    /// by this speed factor (2.0 replays twice as fast as logged).
    Paced(f64),
}

#[derive(Debug, Clone)]
pub enum Requests {
    /// `count` GETs to paths rendered from a template (see [`PathTemplate`]).
    Template { template: String, count: u64 },
    /// The entries of a parsed access log, in log order.
    Replay(Vec<LogEntry>),
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub target_addr: SocketAddr,
    pub host_header: String,
    pub requests: Requests,
    /// Worker threads, each with its own keep-alive connection.
    pub concurrency: u32,
    pub schedule: Schedule,
    /// Read and write timeout of one request, and the connect timeout.
    pub request_timeout: Duration,
    /// Seeds `{rand:MAX}` in the template.
    pub seed: u64,
}

/// A plan that cannot run; each message says how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("concurrency is 0: use at least 1 connection")]
    NoConcurrency,
    #[error("rate {0}/s is not a positive number of requests per second")]
    Rate(f64),
    #[error("replay speed {0} is not a positive factor (1 replays at the logged pace)")]
    Speed(f64),
    #[error("a paced schedule replays a log's timing: give a replay log, or use a rate")]
    PacedWithoutLog,
    #[error("request timeout is 0: give it a positive duration")]
    Timeout,
    #[error(transparent)]
    Template(#[from] TargetError),
}

impl Plan {
    /// Checks what `run` would otherwise report as a warning and an empty
    /// report; callers validating user input should call it first.
    pub fn validate(&self) -> Result<(), PlanError> {
        runner::validate(self)
    }

    /// Everything but compiling the template, which `runner` does once.
    fn validate_schedule(&self) -> Result<(), PlanError> {
        if self.concurrency == 0 {
            return Err(PlanError::NoConcurrency);
        }
        if self.request_timeout.is_zero() {
            return Err(PlanError::Timeout);
        }
        match self.schedule {
            Schedule::AsFastAsPossible => {}
            Schedule::Rate(r) if !(r.is_finite() && r > 0.0) => return Err(PlanError::Rate(r)),
            Schedule::Rate(_) => {}
            Schedule::Paced(s) if !(s.is_finite() && s > 0.0) => return Err(PlanError::Speed(s)),
            Schedule::Paced(_) => {
                if matches!(self.requests, Requests::Template { .. }) {
                    return Err(PlanError::PacedWithoutLog);
                }
            }
        }
        Ok(())
    }
}

/// Failed requests by kind. A request fails once, under one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// A complete response with a status outside 2xx.
    pub status: u64,
    /// The connection was reset or closed before the response was complete.
    pub reset: u64,
    /// No progress within the request timeout.
    pub timeout: u64,
    /// The connection could not be opened.
    pub connect: u64,
    /// The response was not valid HTTP/1.x.
    pub protocol: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.status + self.reset + self.timeout + self.connect + self.protocol
    }

    fn add(&mut self, other: &ErrorCounts) {
        self.status += other.status;
        self.reset += other.reset;
        self.timeout += other.timeout;
        self.connect += other.connect;
        self.protocol += other.protocol;
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

/// What one load run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Requests finished: responses received plus errors. Requests cut
    /// short by the stop flag are not counted.
    pub requests: u64,
    pub errors: u64,
    pub errors_by_kind: ErrorCounts,
    /// From the start of the run until the last worker finished.
    pub duration_s: f64,
    pub throughput_rps: f64,
    /// Over every complete response (non-2xx included), from the time the
    /// request was due (open loop) or sent (closed loop); `None` without
    /// any response.
    pub latency: Option<Percentiles>,
    /// CPU time of the generator's worker threads, summed.
    pub generator_cpu_s: f64,
    /// One plain-English line each: a saturated generator, a rate not
    /// reached, a plan that could not run.
    pub warnings: Vec<String>,
}
