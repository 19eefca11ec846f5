//! Run extensions: what a flag adds to some runs, whose hooks the launch and
//! the main loop call for each of `Launch::extensions` (docs/ARCHITECTURE.md).

use crate::model::Sample;
use crate::sample::Sampler;

/// A step of the child between fork and exec: async-signal-safe calls
/// only, no allocation.
pub(crate) type ChildStep = Box<dyn Fn() -> std::io::Result<()> + Send + Sync>;

/// One extension of a run; a hook it does not implement does nothing.
pub trait RunExtension {
    /// Its step in the child between fork and exec, after the cgroup's.
    fn child_step(&self) -> Option<ChildStep> {
        None
    }

    /// Told each tick's sample, and the sampler (its ticks, its CPU time).
    fn on_sample(&self, _sample: &Sample, _sampler: &Sampler) {}
}
