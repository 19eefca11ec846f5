//! The verdict names only allocators that ran. Each run records which
//! allocator served `malloc` (`RunRecord::served_by`); a configuration named
//! after a built-in allocator whose runs another allocator served (glibc
//! with `env.LD_PRELOAD` of jemalloc, or a file stored before allocscope
//! preloaded its glibc shim) is left out of the verdict with that reason,
//! and when every configuration ran one allocator the verdict says so
//! instead of judging. User libraries and `--variant` builds carry labels,
//! not allocator names: what served them is shown, never held against them.
//!
//! What served a configuration is what served most of its tree's memory
//! (`RunRecord::served_tree`, process by process: a wrapper script's
//! daemon that links jemalloc is served by jemalloc), else what served the
//! command. A configuration whose programs call an allocator's own API
//! that its preload did not replace (`mallocx` reaching jemalloc under
//! tcmalloc) is left out too: part of its heap stayed in that allocator.
//! Configurations one allocator served, some named after another, are
//! said to compare one allocator.

use super::judge::Judged;
use super::verdict_reasons::{Note, Reason};
use allocscope_core::model::{
    OwnApiUse, RunStatus, ServedTree, StoredConfig, StoredExperiment, Via,
};

/// The tree's view of the configuration's runs: its first ok run's that
/// recorded one (every run of a configuration starts the same programs the
/// same way), else any run's.
pub fn tree(config: &StoredConfig) -> Option<&ServedTree> {
    let recorded = || {
        config
            .runs
            .iter()
            .filter(|r| r.record.served_tree.is_some())
    };
    recorded()
        .find(|r| r.record.status == RunStatus::Ok)
        .or_else(|| recorded().next())
        .and_then(|r| r.record.served_tree.as_ref())
}

/// What served the configuration's runs: the allocator that served most of
/// the tree's memory, else what served the command (the first run that
/// recorded it).
pub fn served_by(config: &StoredConfig) -> Option<&str> {
    let main = tree(config)
        .and_then(ServedTree::main_part)
        .filter(|p| p.allocator != "unknown")
        // The tree's view reads each process's files and environment, not
        // its maps: that plain glibc served a configuration preloading
        // another allocator is left to the run's own check of the command's
        // maps (PostgreSQL started through runuser under preloaded jemalloc
        // read as 95% glibc in the tree's view, jemalloc in its maps).
        .filter(|p| !(p.via == Some(Via::Libc) && preloads_an_allocator(config)))
        .map(|p| p.allocator.as_str());
    main.or_else(|| {
        config
            .runs
            .iter()
            .find_map(|r| r.record.served_by.as_deref())
    })
}

/// Below this share of its tree's memory, the allocator a configuration
/// names did not serve it: another served nearly all of it (a wrapper's
/// daemon linking jemalloc under `glibc`). Above it, the named allocator
/// served a real part of the tree (PostgreSQL under preloaded jemalloc:
/// 44% of its PSS, the rest shared buffers and helpers' glibc) and the
/// configuration is judged as what it asked for.
pub(crate) const NAMED_SHARE_FLOOR: f64 = 0.10;

/// A configuration named after a built-in allocator other than glibc
/// (which `LD_PRELOAD` brings), not another build.
fn preloads_an_allocator(config: &StoredConfig) -> bool {
    config.config.command.is_none()
        && allocscope_core::alloc::known::builtin(&config.config.allocator)
            .is_some_and(|b| b.name != "glibc")
}

/// The allocator that served a configuration named after another one: the
/// one that served most of its tree while the named one served under
/// `NAMED_SHARE_FLOOR` of it (or, without the tree's view, the command).
pub fn mismatch(config: &StoredConfig) -> Option<&str> {
    let named = allocscope_core::alloc::known::builtin(&config.config.allocator)?;
    let named_share = tree(config).map(|t| {
        (t.parts.iter())
            .filter(|p| p.allocator == named.name)
            .map(|p| p.share)
            .sum::<f64>()
    });
    if named_share.is_some_and(|share| share >= NAMED_SHARE_FLOOR) {
        return None;
    }
    served_by(config).filter(|s| *s != named.name)
}

/// A configuration named after a built-in allocator whose tree calls
/// another allocator's own API, which its preload could not replace.
pub fn bypassed(config: &StoredConfig) -> Option<&OwnApiUse> {
    allocscope_core::alloc::known::builtin(&config.config.allocator)?;
    tree(config)?.own_api.iter().find(|u| u.reach != u.malloc)
}

/// Whether the verdict judges the configuration: one named after a
/// built-in allocator must have run it, and all of the tree's allocations
/// with it.
fn ran_its_own(config: &StoredConfig) -> bool {
    mismatch(config).is_none() && bypassed(config).is_none()
}

/// `judged` without the candidates whose runs another allocator served.
pub fn only_run(experiment: &StoredExperiment, judged: Vec<Judged>) -> Vec<Judged> {
    judged
        .into_iter()
        .filter(|j| experiment.configs.get(j.index).is_none_or(ran_its_own))
        .collect()
}

/// One note per configuration left out of the verdict, and why; then one
/// per allocator that served several configurations, some named after
/// another: their comparison is of one allocator.
pub fn left_out(experiment: &StoredExperiment) -> Vec<Note> {
    let mut notes: Vec<Note> = experiment
        .configs
        .iter()
        .filter_map(|c| {
            if let Some(other) = mismatch(c) {
                return Some(elsewhere(c, other));
            }
            bypassed(c).map(|u| Note::OwnApiBypass {
                config: c.config.name.clone(),
                program: u.program.clone(),
                caller: u.caller.clone(),
                api_of: u.api_of.clone(),
                reach: u.reach.clone(),
                malloc: u.malloc.clone(),
                symbols: u.symbols.clone(),
            })
        })
        .collect();
    let mut groups: Vec<(&str, Vec<String>, bool)> = Vec::new();
    for c in &experiment.configs {
        let Some(by) = served_by(c) else { continue };
        let odd = mismatch(c).is_some();
        match groups.iter_mut().find(|(s, _, _)| *s == by) {
            Some((_, names, any)) => {
                names.push(c.config.name.clone());
                *any |= odd;
            }
            None => groups.push((by, vec![c.config.name.clone()], odd)),
        }
    }
    notes.extend(
        groups
            .into_iter()
            .filter(|(_, names, odd)| *odd && names.len() > 1)
            .map(|(by, configs, _)| Note::SameServer {
                configs,
                served_by: by.to_string(),
            }),
    );
    notes
}

/// The note of a configuration another allocator served: with the tree's
/// share and the programs it served when the runs recorded them.
fn elsewhere(c: &StoredConfig, other: &str) -> Note {
    let part = tree(c).and_then(|t| t.parts.iter().find(|p| p.allocator == other));
    match part {
        Some(p) => Note::ServedElsewhere {
            config: c.config.name.clone(),
            requested: c.config.allocator.clone(),
            served_by: other.to_string(),
            share: p.share,
            programs: p.programs.clone(),
            via: p.via,
        },
        None => Note::LeftOut {
            config: c.config.name.clone(),
            allocator: c.config.allocator.clone(),
            served_by: other.to_string(),
        },
    }
}

/// Why the verdict is withheld: every configuration ran one allocator, some
/// of them named after another; or the baseline did not run its own.
pub(crate) fn withheld(experiment: &StoredExperiment, baseline: usize) -> Option<Reason> {
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
