//! `soak`'s arguments checked before anything is stored: each `--pid
//! LABEL=PID` a running process allocscope may read (as `record --pid`
//! checks it), mapping the allocator its label names; how often, for how
//! long, and whether to stop once every configuration has settled.

use super::record::check_pid;
use crate::cli::{SoakArgs, Until};
use crate::sample::maps::mapped_paths_whole;
use crate::soak::error::SoakError;
use crate::soak::label;
use crate::soak::watch::Attached;
use crate::usage_error::UsageError;
use std::path::PathBuf;
use std::time::Duration;

pub struct SoakSettings {
    pub instances: Vec<Attached>,
    pub interval: Duration,
    pub duration: Option<Duration>,
    pub until_settled: bool,
    pub quiet: bool,
    pub db: PathBuf,
}

impl SoakSettings {
    pub fn from_args(args: &SoakArgs) -> Result<SoakSettings, UsageError> {
        let mut instances: Vec<Attached> = Vec::with_capacity(args.pids.len());
        for given in &args.pids {
            let attached = attach(given)?;
            if let Some(twice) = instances.iter().find(|a| a.pid == attached.pid) {
                return Err(SoakError::PidTwice {
                    given: given.clone(),
                    pid: twice.pid,
                    label: twice.label.clone(),
                }
                .into());
            }
            instances.push(attached);
        }
        Ok(SoakSettings {
            instances,
            interval: args.interval,
            duration: args.duration,
            until_settled: args.until == Until::Settled,
            quiet: args.quiet,
            db: args.db.clone(),
        })
    }
}

/// One `--pid LABEL=PID`: well formed, a readable process, and mapping the
/// allocator its label names.
fn attach(given: &str) -> Result<Attached, UsageError> {
    let malformed = || UsageError::from(SoakError::NotLabelPid(given.to_string()));
    let (label, pid) = given.rsplit_once('=').ok_or_else(malformed)?;
    let pid = match pid.trim().parse::<i32>() {
        Ok(pid) if pid > 0 && !label.is_empty() => pid,
        _ => return Err(malformed()),
    };
    let (pid, start_ticks) = check_pid(pid).map_err(|problem| SoakError::Unreadable {
        given: given.to_string(),
        problem: Box::new(problem),
    })?;
    let mapped = mapped_paths_whole(pid).map_or_else(Vec::new, |(paths, _)| paths);
    label::check(label, pid, &mapped)?;
    Ok(Attached {
        label: label.to_string(),
        pid,
        start_ticks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pid_is_label_equals_pid_and_names_what_our_parent_maps() {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        for bad in ["4243", "=4243", "jemalloc=", "jemalloc=x", "glibc=-3"] {
            let message = attach(bad).map(|_| ()).expect_err(bad).to_string();
            assert!(message.contains("is not LABEL=PID"), "{message}");
        }
        let missing = attach(&format!("glibc={}", i32::MAX)).map(|_| ());
        let missing = missing.expect_err("no such pid").to_string();
        assert!(missing.contains("does not exist"), "{missing}");
        // Our parent (cargo's test runner) maps no allocator library.
        let attached = attach(&format!("glibc:arena_max=2={parent}")).expect("glibc");
        assert_eq!(
            (attached.label.as_str(), attached.pid),
            ("glibc:arena_max=2", parent)
        );
        let refused = attach(&format!("mimalloc={parent}"))
            .map(|_| ())
            .expect_err("mimalloc");
        assert!(
            refused
                .to_string()
                .ends_with(&format!("label it glibc={parent}")),
            "{refused}"
        );
    }
}
