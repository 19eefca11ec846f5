//! What a flag adds to some runs, beside what every run measures: a run
//! extension. `Launch::extensions` lists a run's; the launch and the main
//! loop call their hooks, and the core names none of them
//! (docs/ARCHITECTURE.md, "How to add a run extension").

use crate::model::Sample;
use crate::sample::Sampler;

/// One extension of a run; a hook it does not implement does nothing.
pub trait RunExtension {
    /// Told each tick's sample, with the sampler for its tick count and CPU
    /// time.
    fn on_sample(&self, _sample: &Sample, _sampler: &Sampler) {}
}
