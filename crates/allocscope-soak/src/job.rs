//! A soak instance run as a cluster job (`soak --executor slurm`): its node
//! soaks it into a shard store and sends beside the shard what the
//! statistics and the report read of it (its whole series, how it ended,
//! its restarts), which the store keeps only rolled up after an hour; the
//! soak rebuilds the instance from that once its recording is merged.
//!
//! Under `--until settled` the node also sends the instance so far, at each
//! look, and the soak looks at them all as a soak run here looks at its
//! instances; once every configuration has settled it leaves a file in the
//! plan's folder, and each node ends its instance at its next look.

use crate::watched::{Series, Source, Watched};
use allocscope_core::model::{RunStatus, Sample};
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::store::{Appender, Ending};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where a node sends its instance so far: beside its shard.
pub fn so_far_path(shard: &Path) -> PathBuf {
    shard.with_extension("so-far.json")
}

/// The file the soak leaves in the plan's folder once every configuration
/// has settled, holding its decision.
pub fn settled_path(plan_dir: &Path) -> PathBuf {
    plan_dir.join("soak-settled")
}

/// Whether a node should send its instance so far at `elapsed_s`, last
/// sent at `last_s`: at every look for the first 500 s, then every 1% of
/// the elapsed time, so that a day's soak does not rewrite its whole series
/// on the shared file system every few seconds.
pub fn sends_now(elapsed_s: f64, last_s: f64) -> bool {
    elapsed_s - last_s >= (elapsed_s / 100.0).max(crate::watch::SETTLED_LOOK_EVERY.as_secs_f64())
}

/// One instance as its node sends it.
#[derive(Serialize, Deserialize)]
pub struct Sent {
    pub label: String,
    pub name: String,
    /// Its configuration's index in the soak's.
    pub flavour: usize,
    pub series: Series,
    pub restart_s: Option<f64>,
    pub last: Option<Sample>,
    /// How it ended, when it did before the soak.
    pub ended: Option<SentEnding>,
    pub restarts: Vec<String>,
    pub pid: i32,
    pub sampler_cpu_s: f64,
    pub started_unix: f64,
    /// How long the node soaked it.
    pub elapsed_s: f64,
}

/// A store `Ending`, its status as text.
#[derive(Serialize, Deserialize)]
pub struct SentEnding {
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub message: Option<String>,
}

impl Sent {
    /// Instance `w` of configuration `flavour`, soaked for `elapsed_s`.
    pub fn new(w: &Watched, flavour: usize, elapsed_s: f64) -> Sent {
        Sent {
            pid: w.pid().unwrap_or_default(),
            sampler_cpu_s: w.sampler_cpu_s(),
            label: w.label.clone(),
            name: w.name.clone(),
            flavour,
            series: w.series.clone(),
            restart_s: w.restart_s,
            last: w.last,
            ended: (w.ended.clone()).map(|e| SentEnding {
                status: e.status.to_string(),
                exit_code: e.exit_code,
                signal: e.signal,
                message: e.message,
            }),
            restarts: w.restarts.clone(),
            started_unix: w.started_unix,
            elapsed_s,
        }
    }

    /// The instance again, its recording merged as `recording_id`; its
    /// appender and sampling loop are never ticked.
    pub fn received(self, recording_id: i64) -> Watched {
        Watched {
            label: self.label,
            name: self.name,
            source: Source::Launched {
                flavour: self.flavour,
                running: None,
            },
            appender: Appender::new(recording_id, Duration::ZERO, Instant::now()),
            series: self.series,
            restart_s: self.restart_s,
            last: self.last,
            ended: (self.ended).map(|e| Ending {
                status: status_word(&e.status),
                exit_code: e.exit_code,
                signal: e.signal,
                message: e.message,
            }),
            restarts: self.restarts,
            split: None,
            // Its node's loop, gone: only its pid and sampler CPU remain.
            sampling: SamplingLoop::new(self.pid, Duration::ZERO),
            earlier_cpu_s: self.sampler_cpu_s,
            started_unix: self.started_unix,
        }
    }
}

/// A recording's status as the store's words: those `watched.rs` ends an
/// instance with.
fn status_word(status: &str) -> &'static str {
    match RunStatus::parse(status) {
        Some(known) => known.as_str(),
        None if status == "exited" => "exited",
        None => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::status_word;

    #[test]
    fn an_instances_ending_keeps_its_word() {
        for word in ["exited", "failed", "crashed", "oom", "timeout"] {
            assert_eq!(status_word(word), word);
        }
        assert_eq!(status_word("gone"), "failed");
    }
}
