//! The `--metrics` publisher: each tick's sample of a run (`compare
//! --metrics`, a run extension) or of a recording (`record --metrics`)
//! made the current value of its series.

use super::{Current, Shared};
use allocscope_core::model::Sample;
use allocscope_core::run::RunExtension;
use allocscope_core::sample::Sampler;
use std::sync::Arc;

/// Publishes to `shared` as the series (`recording`, `config`), the only
/// one shown, since one run or recording is sampled at a time.
pub struct Publisher {
    shared: Shared,
    recording: String,
    config: String,
}

impl Publisher {
    pub fn new(shared: &Shared, recording: &str, config: &str) -> Publisher {
        Publisher {
            shared: Arc::clone(shared),
            recording: recording.to_string(),
            config: config.to_string(),
        }
    }

    /// Makes `sample` the series' current value.
    pub fn publish(&self, sample: &Sample, sampler: &Sampler) {
        let current = Current {
            recording: self.recording.clone(),
            config: self.config.clone(),
            sample: Some(*sample),
            elapsed_s: sample.t_s,
            samples_total: sampler.ticks(),
            sampler_cpu_s: sampler.cpu_seconds(),
        };
        if let Ok(mut values) = self.shared.lock() {
            *values = vec![current];
        }
    }
}

impl RunExtension for Publisher {
    fn on_sample(&self, sample: &Sample, sampler: &Sampler) {
        self.publish(sample, sampler);
    }
}
