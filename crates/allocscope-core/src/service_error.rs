//! The user's mistakes in the `--server` flags (the load, the readiness
//! check, the addresses), each message naming the fix; `UsageError::Service`
//! wraps them.

use crate::load::{PlanError, TargetError};
use std::net::SocketAddr;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ServiceError {
    #[error("{0} drives a server; add --server (allocscope compare --server {0} ... -- SERVER)")]
    WithoutServer(&'static str),
    #[error("--server needs a load: --load 'COMMAND', --http URL or --replay FILE --target URL")]
    NoLoad,
    #[error("--load, --http and --replay are alternatives; give exactly one")]
    LoadsTogether,
    #[error("--load is empty; give the client's command line, e.g. --load 'wrk -d10s http://127.0.0.1:8080/'")]
    EmptyLoad,
    #[error("--http '{url}': {reason}")]
    HttpPlan { url: String, reason: PlanError },
    #[error("--replay needs --target URL, the server to send the lines to, e.g. --target http://127.0.0.1:8080")]
    ReplayWithoutTarget,
    #[error("--replay '{}' cannot be read: {reason}; give an access log file", .file.display())]
    ReplayUnreadable { file: PathBuf, reason: String },
    #[error(
        "--replay '{}' has no line to replay: {rejected} rejected{}; give a Common or Combined Log Format file with GET or HEAD requests",
        .file.display(),
        .example.as_ref().map(|e| format!(", e.g. `{e}`")).unwrap_or_default()
    )]
    ReplayEmpty {
        file: PathBuf,
        rejected: u64,
        /// A rejected line, shown.
        example: Option<String>,
    },
    #[error("--replay '{}': {reason}", .file.display())]
    ReplayPlan { file: PathBuf, reason: PlanError },
    #[error("--ready and --ready-log are alternatives; give one")]
    ReadyAndLog,
    #[error("--ready-log '{pattern}' is not a valid regex: {reason}; escape special characters with a backslash")]
    ReadyLogRegex { pattern: String, reason: String },
    #[error(
        "--ready '{0}' is not a reachable address; use tcp:HOST:PORT, e.g. tcp:127.0.0.1:8080"
    )]
    ReadyAddress(String),
    #[error("--ready '{0}' is not a check; use tcp:HOST:PORT or http://HOST:PORT/PATH, or --ready-log REGEX")]
    ReadyNotACheck(String),
    #[error("--load needs a readiness check: --ready tcp:HOST:PORT, --ready http://... or --ready-log REGEX")]
    ReadyNeeded,
    #[error(
        "port {} on {} is already in use by another process; stop it, or start the server on a free port and point --ready/--http/--target at it",
        .0.port(),
        .0.ip()
    )]
    PortInUse(SocketAddr),
    #[error("{flag} '{url}': {reason}")]
    BadUrl {
        flag: String,
        url: String,
        reason: TargetError,
    },
    #[error(
        "{flag}: host '{host}' cannot be resolved ({reason}); use an IP address such as 127.0.0.1"
    )]
    Unresolvable {
        flag: String,
        host: String,
        reason: String,
    },
    #[error("{flag} {text} must be longer than 0, e.g. {flag} 10s")]
    ZeroDuration { flag: String, text: String },
    #[error("--concurrency {0} is too high; use at most 4096 connections")]
    Concurrency(u32),
    #[error("--rate '{0}' is not a rate; give requests per second, e.g. --rate 500/s")]
    Rate(String),
    #[error("--speed '{0}' is not a speed factor; give a number above 0, e.g. --speed 2")]
    Speed(String),
}
