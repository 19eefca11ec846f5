//! `tune`'s arguments checked into `TuneSettings`: `compare`'s settings,
//! built by `CompareSettings::from_args` (every flag checked as `compare`
//! checks it), whose configurations are the baseline and the candidates of
//! the allocators `-a` names (`tune::candidates`), each resolved against
//! this machine before anything runs.

use super::compare::CompareSettings;
use crate::cli::TuneArgs;
use crate::cluster::executor::Executor;
use crate::model::Config;
use crate::tune::candidates::{allocators, candidates, parse_try, Candidate};
use crate::usage_error::UsageError;

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

fn tune_error(message: String) -> UsageError {
    UsageError::Tune(message)
}

impl TuneSettings {
    pub fn from_args(
        args: &TuneArgs,
        registry: &crate::alloc::Registry,
    ) -> Result<TuneSettings, UsageError> {
        let c = &args.compare;
        if !c.runs.trim().eq_ignore_ascii_case("auto") {
            return Err(tune_error(format!(
                "tune races its candidates round by round and takes no --runs '{}'; bound it \
                 with --max-runs N (rounds per phase) or --max-time DUR",
                c.runs
            )));
        }
        if c.cluster.executor != Executor::Local {
            return Err(tune_error(
                "tune runs its rounds here: its candidates are dropped between rounds, which \
                 an engine that submits every round at once cannot do; leave out --executor"
                    .into(),
            ));
        }
        if !c.variant.is_empty() {
            return Err(tune_error(
                "tune races an allocator's settings on one build; compare builds with \
                 allocscope compare --variant LABEL=COMMAND"
                    .into(),
            ));
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
    registry: &crate::alloc::Registry,
) -> Result<Vec<Config>, UsageError> {
    candidates
        .iter()
        .map(|c| {
            registry
                .resolve(&c.spec())
                .map_err(|e| UsageError::Alloc(e.to_string()))
        })
        .collect()
}

/// A line per built-in allocator left out because it is not installed
/// (only when `-a` named none).
fn missing(named: &[String], registry: &crate::alloc::Registry) -> Vec<String> {
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

/// `--baseline`, one of the candidates; without it the first (glibc's
/// default, the host's own allocator, when glibc is raced).
fn baseline(given: Option<&str>, configs: &[Config]) -> Result<String, UsageError> {
    let names: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
    match given {
        None => Ok(names.first().map(|n| n.to_string()).unwrap_or_default()),
        Some(g) if names.contains(&g) => Ok(g.to_string()),
        Some(g) => Err(UsageError::UnknownBaseline {
            given: g.to_string(),
            known: names.join(", "),
        }),
    }
}
