//! What a load run is asked to do: the target, where request paths come
//! from, how many connections and on which schedule, checked before it runs.

use super::replay::LogEntry;
use super::target::{PathTemplate, TargetError};
use std::net::SocketAddr;
use std::time::Duration;

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
        self.validate_schedule()?;
        if let Requests::Template { template, .. } = &self.requests {
            PathTemplate::parse(template)?;
        }
        Ok(())
    }

    /// Everything but compiling the template, which `runner` does once.
    pub(super) fn validate_schedule(&self) -> Result<(), PlanError> {
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
