//! `--ready` and `--ready-log` checked: how a run decides that the server is
//! up, and the check that nothing else answers on its address before it starts.

use allocscope_core::load::Target;
use allocscope_core::run::Readiness;
use allocscope_core::service_error::ServiceError;
use allocscope_core::usage_error::UsageError;
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
            return Err(ServiceError::ReadyAndLog.into());
        }
        let regex = regex::Regex::new(pattern).map_err(|e| ServiceError::ReadyLogRegex {
            pattern: pattern.to_string(),
            reason: super::parse::regex_reason(&e),
        })?;
        return Ok((Readiness::Log(regex), format!("log:{pattern}")));
    }
    match ready {
        Some(check) if check.starts_with("tcp:") => {
            let addr = check["tcp:".len()..].to_string();
            let resolved = std::net::ToSocketAddrs::to_socket_addrs(&addr)
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| ServiceError::ReadyAddress(check.to_string()))?;
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
        Some(other) => Err(ServiceError::ReadyNotACheck(other.to_string()).into()),
        None => match load_target {
            Some(target) => {
                let addr = resolve("--ready", target)?;
                Ok((Readiness::Tcp(addr), format!("tcp:{addr}")))
            }
            None => Err(ServiceError::ReadyNeeded.into()),
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
            return Err(ServiceError::PortInUse(addr).into());
        }
    }
    Ok(())
}

pub(super) fn target(flag: &str, url: &str) -> Result<Target, UsageError> {
    Target::parse(url).map_err(|reason| {
        ServiceError::BadUrl {
            flag: flag.to_string(),
            url: url.to_string(),
            reason,
        }
        .into()
    })
}

pub(super) fn resolve(flag: &str, target: &Target) -> Result<SocketAddr, UsageError> {
    target.addr().map_err(|e| {
        ServiceError::Unresolvable {
            flag: flag.to_string(),
            host: target.host.clone(),
            reason: e.to_string(),
        }
        .into()
    })
}
