//! `--ready` and `--ready-log` checked: how a run decides that the server is
//! up, and the check that nothing else answers on its address before it starts.

use crate::load::Target;
use crate::run::Readiness;
use crate::usage_error::UsageError;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// `--ready-log`, else `--ready`, else the load's own address over TCP.
pub(super) fn readiness(
    ready: Option<&str>,
    ready_log: Option<&str>,
    load_target: Option<&Target>,
) -> Result<(Readiness, String), UsageError> {
    if let Some(pattern) = ready_log {
        if ready.is_some() {
            return Err(service(
                "--ready and --ready-log are alternatives; give one".into(),
            ));
        }
        let regex = regex::Regex::new(pattern).map_err(|e| {
            service(format!(
                "--ready-log '{pattern}' is not a valid regex: {}; escape special characters with a backslash",
                e.to_string().lines().last().unwrap_or_default().trim_start_matches("error: ")
            ))
        })?;
        return Ok((Readiness::Log(regex), format!("log:{pattern}")));
    }
    match ready {
        Some(check) if check.starts_with("tcp:") => {
            let addr = check["tcp:".len()..].to_string();
            let resolved = std::net::ToSocketAddrs::to_socket_addrs(&addr)
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| {
                    service(format!(
                        "--ready '{check}' is not a reachable address; use tcp:HOST:PORT, e.g. tcp:127.0.0.1:8080"
                    ))
                })?;
            Ok((Readiness::Tcp(resolved), check.to_string()))
        }
        Some(check) if check.starts_with("http://") => {
            let target = target("--ready", check)?;
            Ok((
                Readiness::Http {
                    addr: resolve("--ready", &target)?,
                    host_header: target.host_header(),
                    path: target.path_template.clone(),
                },
                check.to_string(),
            ))
        }
        Some(other) => Err(service(format!(
            "--ready '{other}' is not a check; use tcp:HOST:PORT or http://HOST:PORT/PATH, or --ready-log REGEX"
        ))),
        None => match load_target {
            Some(target) => {
                let addr = resolve("--ready", target)?;
                Ok((Readiness::Tcp(addr), format!("tcp:{addr}")))
            }
            None => Err(service(
                "--load needs a readiness check: --ready tcp:HOST:PORT, --ready http://... or --ready-log REGEX".into(),
            )),
        },
    }
}

/// The server has not started yet, so anything already answering on its
/// address is another process: the runs would measure that one instead.
/// `load_address` is where the built-in generator sends its requests.
pub(super) fn refuse_ports_in_use(
    ready: &Readiness,
    load_address: Option<SocketAddr>,
) -> Result<(), UsageError> {
    let mut addrs = Vec::new();
    match ready {
        Readiness::Tcp(addr) | Readiness::Http { addr, .. } => addrs.push(*addr),
        Readiness::Log(_) => {}
    }
    addrs.extend(load_address);
    addrs.dedup();
    for addr in addrs {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok() {
            return Err(service(format!(
                "port {} on {} is already in use by another process; stop it, or start the \
                 server on a free port and point --ready/--http/--target at it",
                addr.port(),
                addr.ip()
            )));
        }
    }
    Ok(())
}

fn service(message: String) -> UsageError {
    UsageError::Service(message)
}

pub(super) fn target(flag: &str, url: &str) -> Result<Target, UsageError> {
    Target::parse(url).map_err(|e| service(format!("{flag} '{url}': {e}")))
}

pub(super) fn resolve(flag: &str, target: &Target) -> Result<SocketAddr, UsageError> {
    target.addr().map_err(|e| {
        service(format!(
            "{flag}: host '{}' cannot be resolved ({e}); use an IP address such as 127.0.0.1",
            target.host
        ))
    })
}
