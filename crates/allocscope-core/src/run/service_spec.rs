//! What a service run is given: how it decides the server is up, what
//! drives it once it is, and how long each phase lasts (`--server`; the
//! flags are parsed by `options::service`, the phases run in `service.rs`).

use crate::load;
use crate::model::ServiceInfo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How a run decides that the server is up.
#[derive(Debug, Clone)]
pub enum Readiness {
    /// It accepts a TCP connection.
    Tcp(SocketAddr),
    /// A GET of `path` answers 2xx.
    Http {
        addr: SocketAddr,
        host_header: String,
        path: String,
    },
    /// A line of its stdout or stderr matches.
    Log(regex::Regex),
}

/// What drives the server once it is ready.
#[derive(Debug, Clone)]
pub enum LoadSpec {
    /// The user's own client, run with `sh -c`.
    Command(String),
    /// allocscope's generator (`--http` or `--replay`).
    Generator(Arc<load::Plan>),
}

/// A service run's settings.
#[derive(Debug, Clone)]
pub struct ServiceSettings {
    pub ready: Readiness,
    pub ready_timeout: Duration,
    pub load: LoadSpec,
    pub settle: Duration,
    pub grace: Duration,
    /// Lines that could not be replayed, counted once when the log was read.
    pub rejected_lines: u64,
    /// The settings in words, for the store and the reports.
    pub info: ServiceInfo,
}
