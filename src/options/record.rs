//! `record`'s arguments checked before anything is stored: what to record
//! (a running process, or a command started under one configuration), how
//! often, for how long, and where to serve its values for Prometheus.

use super::{parse_interval, parse_timeout, resolve_command};
use crate::cli::RecordArgs;
use crate::record::{attach, Target};
use crate::usage_error::UsageError;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct RecordSettings {
    pub target: Target,
    /// `--name`; the command names a recording without one.
    pub name: Option<String>,
    pub interval: Duration,
    /// `--duration`: stop after this long.
    pub duration: Option<Duration>,
    /// `--metrics`, checked (not yet bound).
    pub metrics: Option<SocketAddr>,
    pub quiet: bool,
    pub db: PathBuf,
}

impl RecordSettings {
    pub fn from_args(args: &RecordArgs) -> Result<RecordSettings, UsageError> {
        let interval = parse_interval(&args.interval)?;
        let duration = args
            .duration
            .as_deref()
            .map(|d| parse_timeout(d).map_err(|_| duration_error(d)))
            .transpose()?;
        let target = match (&args.pid, args.command.first()) {
            (Some(pid), _) => {
                let (pid, start_ticks) = attach::check(pid)?;
                Target::Attach { pid, start_ticks }
            }
            (None, Some(program)) => {
                let program = resolve_command(program)?;
                let spec = args.alloc.as_deref().unwrap_or("glibc");
                let config = crate::alloc::Registry::discover()
                    .resolve(spec)
                    .map_err(|e| UsageError::Alloc(e.to_string()))?;
                Target::Launch {
                    program,
                    args: args.command[1..].to_vec(),
                    config,
                    logs_dir: logs_directory(&args.db),
                }
            }
            (None, None) => {
                return Err(UsageError::Record(
                    "nothing to record; give --pid PID, or a command after `--` \
                     (e.g. allocscope record -a glibc -- ./server)"
                        .into(),
                ))
            }
        };
        let metrics = args
            .metrics
            .as_deref()
            .map(|text| crate::metrics::parse_address(text, args.metrics_public))
            .transpose()?;
        Ok(RecordSettings {
            target,
            name: args.name.clone(),
            interval,
            duration,
            metrics,
            quiet: args.quiet,
            db: args.db.clone(),
        })
    }
}

fn duration_error(text: &str) -> UsageError {
    UsageError::Record(format!(
        "--duration '{text}' is not a duration of at least 10ms; use e.g. 30s, 2h or 7d"
    ))
}

/// The command's stdout and stderr go beside the store, like `compare`'s.
fn logs_directory(db: &Path) -> PathBuf {
    let parent = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    parent.join("allocscope-logs").join("recordings")
}
