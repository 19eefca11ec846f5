//! What a load run measured: requests, errors by kind, throughput, latency
//! percentiles, the generator's own CPU, and warnings.

use serde::{Deserialize, Serialize};

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

    pub(super) fn add(&mut self, other: &ErrorCounts) {
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
