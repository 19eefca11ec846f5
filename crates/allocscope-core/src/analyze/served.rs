//! The verdict names only allocators that ran. Each run records which
//! allocator served `malloc` (`RunRecord::served_by`); a configuration named
//! after a built-in allocator whose runs another allocator served (glibc
//! with `env.LD_PRELOAD` of jemalloc, or a file stored before allocscope
//! preloaded its glibc shim) is left out of the verdict with that reason,
//! and when every configuration ran one allocator the verdict says so
//! instead of judging. User libraries and `--variant` builds carry labels,
//! not allocator names: what served them is shown, never held against them.

use super::judge::Judged;
use super::verdict_reasons::{Note, Reason};
use crate::model::{StoredConfig, StoredExperiment};

/// What served the configuration's runs (the first run that recorded it).
pub fn served_by(config: &StoredConfig) -> Option<&str> {
    config
        .runs
        .iter()
        .find_map(|r| r.record.served_by.as_deref())
}

/// The allocator that served a configuration named after another one.
pub fn mismatch(config: &StoredConfig) -> Option<&str> {
    let named = crate::alloc::known::builtin(&config.config.allocator)?;
    served_by(config).filter(|s| *s != named.name)
}

/// `judged` without the candidates whose runs another allocator served.
pub fn only_run(experiment: &StoredExperiment, judged: Vec<Judged>) -> Vec<Judged> {
    judged
        .into_iter()
        .filter(|j| {
            experiment
                .configs
                .get(j.index)
                .is_none_or(|c| mismatch(c).is_none())
        })
        .collect()
}

/// One note per configuration left out of the verdict, and why.
pub fn left_out(experiment: &StoredExperiment) -> Vec<Note> {
    experiment
        .configs
        .iter()
        .filter_map(|c| {
            mismatch(c).map(|other| Note::LeftOut {
                config: c.config.name.clone(),
                allocator: c.config.allocator.clone(),
                served_by: other.to_string(),
            })
        })
        .collect()
}

/// Why the verdict is withheld: every configuration ran one allocator, some
/// of them named after another; or the baseline did not run its own.
pub fn withheld(experiment: &StoredExperiment, baseline: usize) -> Option<Reason> {
    let configs = &experiment.configs;
    let served: Vec<Option<&str>> = configs.iter().map(served_by).collect();
    let any_mismatch = configs.iter().any(|c| mismatch(c).is_some());
    if let Some(one) = served.first().copied().flatten() {
        if any_mismatch && served.iter().all(|s| *s == Some(one)) {
            let allocator = one.to_string();
            return Some(Reason::OneAllocator { allocator });
        }
    }
    let base = configs.get(baseline)?;
    let other = mismatch(base)?;
    Some(Reason::BaselineNotRun {
        baseline: base.config.name.clone(),
        allocator: base.config.allocator.clone(),
        served_by: other.to_string(),
    })
}

#[cfg(test)]
mod tests;
