//! `--metrics`: each tick's sample of a run (a run extension) or of a
//! recording made the current value of its series.

use allocscope_core::model::Sample;
use allocscope_core::run::RunExtension;
use allocscope_core::sample::Sampler;
use std::sync::{Arc, Mutex};

/// What one series of the exposition is currently at.
#[derive(Debug, Clone, Default)]
pub struct Current {
    pub recording: String,
    pub config: String,
    /// A soak instance's replica (`2` of `glibc#2`, the pid of one in
    /// place); `None` for a run or a recording.
    pub replica: Option<String>,
    pub sample: Option<Sample>,
    pub elapsed_s: f64,
    pub samples_total: u64,
    pub sampler_cpu_s: f64,
}

/// The values the server shows; the recording loop replaces them each tick.
pub type Shared = Arc<Mutex<Vec<Current>>>;

/// Publishes to `shared` as the series (`recording`, `config`), the only
/// one shown, since one run or recording is sampled at a time.
pub struct Publisher {
    shared: Shared,
    /// The series' labels.
    series: Current,
}

impl Publisher {
    pub fn new(shared: &Shared, recording: &str, config: &str) -> Publisher {
        let (recording, config) = (recording.to_string(), config.to_string());
        let series = Current {
            recording,
            config,
            ..Current::default()
        };
        let shared = Arc::clone(shared);
        Publisher { shared, series }
    }
}

impl RunExtension for Publisher {
    /// Makes `sample` the series' current value.
    fn on_sample(&self, sample: &Sample, sampler: &Sampler) {
        let current = Current {
            sample: Some(*sample),
            elapsed_s: sample.t_s,
            samples_total: sampler.ticks(),
            sampler_cpu_s: sampler.cpu_seconds(),
            ..self.series.clone()
        };
        if let Ok(mut values) = self.shared.lock() {
            *values = vec![current];
        }
    }
}
