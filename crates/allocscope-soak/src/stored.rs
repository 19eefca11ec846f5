//! A soak read back from the store for `allocscope report --soak ID`: its
//! arguments, and each instance's recording with the raw samples it keeps,
//! into the series, summaries and verdict the soak itself judged by.
//!
//! A recording keeps raw samples for its last hour only (older ones are
//! rolled up into buckets of RSS and PSS, without the cgroup's working set,
//! the live heap or the allocator's free memory), so a soak longer than an
//! hour is re-judged on its last hour; `SoakRecord::raw_from_s` says from
//! when. A restarted instance (`--restart`, `--resume`) is judged from its
//! last restart on, as the soak judged it.

use crate::config::by_label;
use crate::instance::InstanceSummary;
use crate::verdict::{verdict, Verdict};
use crate::watched::Series;
use allocscope_core::model::Sample;
use allocscope_core::recorded::RecordingInfo;
use allocscope_core::store::Store;
use anyhow::bail;

/// One instance: its recording and the raw samples it keeps.
pub struct StoredInstance {
    pub info: RecordingInfo,
    pub samples: Vec<Sample>,
    /// The series the statistics read, from those samples.
    pub series: Series,
    /// Its last restart's `t_s`: the statistics read what came after.
    pub restart_s: Option<f64>,
    /// Every restart (and resume): its `t_s` and why, in time order.
    pub restarts: Vec<(f64, String)>,
}

impl StoredInstance {
    /// Its configuration: the recording's, the label of `--pid LABEL=PID`.
    pub fn label(&self) -> &str {
        &self.info.config
    }

    /// Its name without the `soak ` the recording's carries: `glibc#2`.
    pub fn name(&self) -> &str {
        self.info.name.trim_start_matches("soak ")
    }

    pub fn summary(&self) -> Option<InstanceSummary> {
        self.series.summary(self.restart_s)
    }
}

pub struct SoakRecord {
    pub id: i64,
    /// allocscope's arguments, `soak` first.
    pub arguments: Vec<String>,
    pub instances: Vec<StoredInstance>,
    /// The longest instance's time from its start to its last sample.
    pub elapsed_s: f64,
}

impl SoakRecord {
    /// The earliest raw sample kept, when older ones were rolled up (the
    /// statistics start there); `None` when every sample is kept.
    pub fn raw_from_s(&self) -> Option<f64> {
        let first = (self.instances.iter())
            .filter_map(|i| i.samples.first().map(|s| s.t_s))
            .fold(f64::INFINITY, f64::max);
        (first.is_finite() && first > 2.0 * self.interval_s()).then_some(first)
    }

    fn interval_s(&self) -> f64 {
        (self.instances.iter())
            .map(|i| i.info.interval_ms as f64 / 1000.0)
            .fold(0.0, f64::max)
    }

    /// The instances' names and summaries grouped by configuration, in the
    /// order given; an instance with too few samples is left out.
    pub fn named_groups(&self) -> Vec<(String, Vec<(String, InstanceSummary)>)> {
        let instances = (self.instances.iter()).map(|i| {
            (
                i.label(),
                i.summary().map(|s| (i.name().to_string(), s)),
                false,
            )
        });
        by_label(instances).unwrap_or_default()
    }

    /// The verdict; `None` with too few samples for one.
    pub fn verdict(&self) -> Option<Verdict> {
        let groups: Vec<(String, Vec<InstanceSummary>)> = (self.named_groups().into_iter())
            .map(|(label, members)| (label, members.into_iter().map(|m| m.1).collect()))
            .collect();
        verdict(&groups, self.elapsed_s)
    }
}

/// Soak `id` from `store`.
pub fn load(store: &Store, id: i64) -> anyhow::Result<SoakRecord> {
    let Some(soak) = store.soak(id)? else {
        bail!("no soak {id} in this store; a soak's id is in the last line it prints (`stored as soak N`)");
    };
    let mut instances = Vec::new();
    for info in store.soak_recordings(id)? {
        let samples = store.raw_samples(info.id)?;
        let restarts = store.recording_restarts(info.id)?;
        let restart_s = restarts.last().map(|(t_s, _)| *t_s);
        let mut series = Series::default();
        for sample in &samples {
            series.push(sample, info.command.is_none());
        }
        for reading in store.recording_readings(info.id)? {
            crate::load_figures::push(&mut series.load, &reading);
        }
        instances.push(StoredInstance {
            info,
            samples,
            series,
            restart_s,
            restarts,
        });
    }
    let elapsed_s = (instances.iter()).fold(0.0, |m, i| i.info.elapsed_s.max(m));
    Ok(SoakRecord {
        id,
        arguments: soak.arguments,
        instances,
        elapsed_s,
    })
}
