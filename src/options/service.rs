//! `compare --server`: the service flags checked and turned into what a run
//! needs: how to tell the server is ready, which load to drive, how long to
//! settle and how to stop it. A mistake is a `UsageError` naming the flag
//! and the fix, reported before anything starts.

use super::ready::{readiness, refuse_ports_in_use, resolve, target};
use crate::cli::{Pace, ServiceArgs};
use allocscope_core::load::{self, Target};
use allocscope_core::model::ServiceInfo;
pub use allocscope_core::run::{LoadSpec, Readiness, ServiceSettings};
use allocscope_core::service_error::ServiceError;
use allocscope_core::usage_error::UsageError;
use std::net::SocketAddr;
use std::sync::Arc;

/// The flags that only mean something with `--server`.
fn service_flags_given(args: &ServiceArgs) -> Option<&'static str> {
    [
        (args.load.is_some(), "--load"),
        (args.http.is_some(), "--http"),
        (args.replay.is_some(), "--replay"),
        (args.target.is_some(), "--target"),
        (args.rate.is_some(), "--rate"),
        (args.ready.is_some(), "--ready"),
        (args.ready_log.is_some(), "--ready-log"),
    ]
    .into_iter()
    .find(|(given, _)| *given)
    .map(|(_, flag)| flag)
}

/// Checks the service flags; `None` when `--server` was not given.
pub fn parse(args: &ServiceArgs) -> Result<Option<ServiceSettings>, UsageError> {
    if !args.server {
        return match service_flags_given(args) {
            Some(flag) => Err(ServiceError::WithoutServer(flag).into()),
            None => Ok(None),
        };
    }
    if args.load.is_none() && args.http.is_none() && args.replay.is_none() {
        return Err(ServiceError::NoLoad.into());
    }
    let chosen = match (&args.load, &args.http, &args.replay) {
        (Some(command), None, None) => command_load(command)?,
        (None, Some(url), None) => http_load(args, url)?,
        (None, None, Some(file)) => replay_load(args, file)?,
        _ => return Err(ServiceError::LoadsTogether.into()),
    };
    let (ready, ready_text) = readiness(
        args.ready.as_deref(),
        args.ready_log.as_deref(),
        chosen.target.as_ref(),
    )?;
    refuse_ports_in_use(&ready, generator_address(&chosen.load))?;
    let info = ServiceInfo {
        ready: ready_text,
        load: chosen.text,
        settle_s: args.settle.as_secs_f64(),
        grace_s: args.grace.as_secs_f64(),
    };
    Ok(Some(ServiceSettings {
        ready,
        ready_timeout: args.ready_timeout,
        load: chosen.load,
        settle: args.settle,
        grace: args.grace,
        rejected_lines: chosen.rejected_lines,
        info,
    }))
}

/// The load of a service run, described, with the address a readiness
/// check defaults to and the replay lines that were rejected.
struct ChosenLoad {
    load: LoadSpec,
    text: String,
    target: Option<Target>,
    rejected_lines: u64,
}

fn command_load(command: &str) -> Result<ChosenLoad, UsageError> {
    if command.trim().is_empty() {
        return Err(ServiceError::EmptyLoad.into());
    }
    Ok(ChosenLoad {
        load: LoadSpec::Command(command.to_string()),
        text: format!("command: {command}"),
        target: None,
        rejected_lines: 0,
    })
}

/// `--http`'s generator: `--requests` from the URL's template over
/// `--concurrency` connections, at `--rate` or as fast as they go.
fn http_load(args: &ServiceArgs, url: &str) -> Result<ChosenLoad, UsageError> {
    let target = target("--http", url)?;
    let (requests, concurrency) = (args.requests, args.concurrency);
    let (schedule, rate_text) = match args.rate {
        Some(rate) => (load::Schedule::Rate(rate), format!(" at {rate}/s")),
        None => (load::Schedule::AsFastAsPossible, String::new()),
    };
    let plan = load::Plan {
        target_addr: resolve("--http", &target)?,
        host_header: target.host_header(),
        requests: load::Requests::Template {
            template: target.path_template.clone(),
            count: u64::from(requests),
        },
        concurrency,
        schedule,
        request_timeout: args.request_timeout,
        seed: 1,
    };
    plan.validate().map_err(|reason| ServiceError::HttpPlan {
        url: url.to_string(),
        reason,
    })?;
    Ok(ChosenLoad {
        load: LoadSpec::Generator(Arc::new(plan)),
        text: format!("{url}: {requests} requests, {concurrency} connections{rate_text}"),
        target: Some(target),
        rejected_lines: 0,
    })
}

fn replay_load(args: &ServiceArgs, file: &std::path::Path) -> Result<ChosenLoad, UsageError> {
    let (concurrency, request_timeout) = (args.concurrency, args.request_timeout);
    let url = args
        .target
        .as_ref()
        .ok_or(ServiceError::ReplayWithoutTarget)?;
    let target = target("--target", url)?;
    let text = std::fs::read(file).map_err(|e| ServiceError::ReplayUnreadable {
        file: file.into(),
        reason: e.to_string(),
    })?;
    let log = load::parse_log(&String::from_utf8_lossy(&text));
    if log.entries.is_empty() {
        return Err(ServiceError::ReplayEmpty {
            file: file.into(),
            rejected: log.rejected.count,
            example: log.rejected.example,
        }
        .into());
    }
    let (schedule, pace_text) = match args.pace {
        Pace::Max => (
            load::Schedule::AsFastAsPossible,
            "as fast as the connections go".to_string(),
        ),
        Pace::Original => {
            let speed = args.speed;
            (
                load::Schedule::Paced(speed),
                format!("at the log's pace x{speed}"),
            )
        }
    };
    let lines = log.entries.len();
    let rejected_lines = log.rejected.count;
    let plan = load::Plan {
        target_addr: resolve("--target", &target)?,
        host_header: target.host_header(),
        requests: load::Requests::Replay(log.entries),
        concurrency,
        schedule,
        request_timeout,
        seed: 1,
    };
    plan.validate().map_err(|reason| ServiceError::ReplayPlan {
        file: file.into(),
        reason,
    })?;
    Ok(ChosenLoad {
        load: LoadSpec::Generator(Arc::new(plan)),
        text: format!(
            "replay of {} ({lines} lines, {rejected_lines} rejected) against {url}, \
             {concurrency} connections, {pace_text}",
            file.display()
        ),
        target: Some(target),
        rejected_lines,
    })
}

/// Where the built-in generator sends its requests (a `--load` command's
/// address is its own business).
fn generator_address(load: &LoadSpec) -> Option<SocketAddr> {
    match load {
        LoadSpec::Generator(plan) => Some(plan.target_addr),
        LoadSpec::Command(_) => None,
    }
}
