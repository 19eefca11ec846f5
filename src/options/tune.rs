//! `tune`'s arguments checked into `TuneSettings`: `compare`'s settings,
//! built by `CompareSettings::from_args` (every flag checked as `compare`
//! checks it), whose configurations are the baseline and the candidates of
//! the allocators `-a` names (`tune::candidates`), each resolved against
//! this machine before anything runs; and the `compare` arguments a
//! cluster node runs for one phase (`node_arguments`).

use super::compare::{baseline, CompareSettings};
use crate::cli::{CompareArgs, TuneArgs};
use allocscope_cluster::executor::long_flags;
use allocscope_core::model::Config;
use allocscope_core::usage_error::UsageError;
use allocscope_tune::candidates::{allocators, candidates, parse_try, Candidate};
use allocscope_tune::error::TuneError;
use clap::Args;
use std::ffi::OsString;

/// Everything `tune` needs, checked.
#[derive(Debug)]
pub struct TuneSettings {
    /// Phase one as `compare` runs it: the baseline first, then every candidate.
    pub compare: CompareSettings,
    /// The candidates in `compare.configs` order (the baseline's included).
    pub candidates: Vec<Candidate>,
    /// `--no-combine` not given: race combinations in a phase two.
    pub combine: bool,
}

impl TuneSettings {
    pub fn from_args(
        args: &TuneArgs,
        registry: &allocscope_core::alloc::Registry,
    ) -> Result<TuneSettings, UsageError> {
        let c = &args.compare;
        if c.runs != crate::cli::Runs::Auto {
            return Err(TuneError::FixedRuns(c.runs.to_string()).into());
        }
        if !c.variant.is_empty() {
            return Err(TuneError::Variants.into());
        }
        let chosen = allocators(&c.alloc, &|name| registry.get(name).is_some())?;
        let tries = args
            .tries
            .iter()
            .map(|t| parse_try(t, &chosen))
            .collect::<Result<Vec<_>, _>>()?;
        let candidates = candidates(&chosen, &tries);
        let mut compare = CompareSettings::from_args(c, registry)?;
        compare.configs = resolve(&candidates, registry)?;
        compare.warnings = missing(&c.alloc, registry);
        // Without --baseline, the first: glibc's default, the host's own
        // allocator, when glibc is raced.
        compare.baseline = baseline(c.baseline.as_deref(), &compare.configs)?;
        Ok(TuneSettings {
            compare,
            candidates,
            combine: !args.no_combine,
        })
    }
}

/// Each candidate as a configuration of this machine.
pub fn resolve(
    candidates: &[Candidate],
    registry: &allocscope_core::alloc::Registry,
) -> Result<Vec<Config>, UsageError> {
    candidates
        .iter()
        .map(|c| registry.resolve(&c.spec()).map_err(UsageError::Alloc))
        .collect()
}

/// A line per built-in allocator left out because it is not installed
/// (only when `-a` named none).
fn missing(named: &[String], registry: &allocscope_core::alloc::Registry) -> Vec<String> {
    if !named.is_empty() {
        return Vec::new();
    }
    registry
        .missing()
        .iter()
        .map(|b| {
            format!(
                "skipping {}'s settings: not installed (apt install {})",
                b.name,
                b.package()
            )
        })
        .collect()
}

/// The `compare` arguments a cluster node runs for one phase of the race:
/// `-a` with each of the phase's configurations in order (the baseline
/// first unless `--baseline` names another, which is kept), so the node
/// resolves the same names in the same order, then tune's own arguments
/// `argv` less the engine flags, the flags only tune has (`--try`,
/// `--no-combine`) and its `-a`, which named allocators to search.
pub fn node_arguments(argv: &[OsString], configs: &[Config]) -> anyhow::Result<Vec<String>> {
    let compare = long_flags(&CompareArgs::augment_args(clap::Command::new("compare")));
    let mut dropped: Vec<(String, bool)> =
        long_flags(&TuneArgs::augment_args(clap::Command::new("tune")))
            .into_iter()
            .filter(|flag| !compare.contains(flag))
            .collect();
    dropped.extend([("-a".to_string(), true), ("--alloc".to_string(), true)]);
    let rest = allocscope_cluster::executor::node_arguments(argv, "tune", &dropped)?;
    Ok(configs
        .iter()
        .flat_map(|c| ["-a".to_string(), c.name.clone()])
        .chain(rest)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_runs_the_phases_configurations_with_the_measurement_flags_only() {
        let argv: Vec<OsString> = [
            "allocscope",
            "tune",
            "--executor",
            "slurm",
            "--slurm-arg=--time=5",
            "-a",
            "glibc",
            "--try",
            "arena_max=3",
            "--no-combine",
            "--max-runs",
            "3",
            "--interval",
            "50ms",
            "--",
            "prog",
            "--try",
            "x",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let registry = allocscope_core::alloc::Registry::discover();
        let configs: Vec<Config> = ["glibc", "glibc:arena_max=3"]
            .iter()
            .filter_map(|spec| registry.resolve(spec).ok())
            .collect();
        assert_eq!(configs.len(), 2, "glibc resolves on every Linux");
        let words = node_arguments(&argv, &configs).expect("utf-8");
        assert_eq!(
            words,
            [
                "-a",
                "glibc",
                "-a",
                "glibc:arena_max=3",
                "--max-runs",
                "3",
                "--interval",
                "50ms",
                "--",
                "prog",
                "--try",
                "x"
            ]
        );
    }

    #[test]
    fn a_node_resolves_a_phases_configurations_to_the_same_names_in_order() {
        let registry = allocscope_core::alloc::Registry::discover();
        // Phase two's combinations hold commas; the baseline comes first.
        let specs = [
            "glibc",
            "glibc:arena_max=1,mmap_threshold=64k",
            "glibc:trim=250ms",
        ];
        let configs: Vec<Config> = specs
            .iter()
            .filter_map(|spec| registry.resolve(spec).ok())
            .collect();
        assert_eq!(configs.len(), 3, "glibc resolves on every Linux");
        let argv: Vec<OsString> = ["allocscope", "tune", "-a", "glibc", "--", "/bin/true"]
            .iter()
            .map(OsString::from)
            .collect();
        let words = node_arguments(&argv, &configs).expect("utf-8");
        let plan = std::path::Path::new("plan.json");
        let node = super::super::cell::plan_settings(plan, &words, &registry).expect("accepted");
        let names: Vec<&str> = node.configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, specs);
        assert_eq!(node.baseline, "glibc");
    }
}
