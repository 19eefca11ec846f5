//! `compare`'s arguments checked into `CompareSettings`: every flag, the
//! configurations resolved against this machine's allocators, and the
//! baseline, before anything runs.

use super::parse::{parse_marks, resolve_command};
use super::{export, judge, rounds, service, variant};
use crate::cli::{Cli, Command, CompareArgs};
use allocscope_cluster::executor::EngineArgs;
use allocscope_core::usage_error::UsageError;
use allocscope_rounds::session::{Measuring, StartExtension};
use std::ffi::OsString;
use std::path::PathBuf;

/// Everything `compare` needs, checked.
#[derive(Debug)]
pub struct CompareSettings {
    pub configs: Vec<allocscope_core::model::Config>,
    /// Lines to show before running, e.g. skipped allocators.
    pub warnings: Vec<String>,
    /// The most measured rounds: N of `--runs N`, or `--max-runs` with auto.
    pub runs: u32,
    pub measuring: Measuring,
    pub baseline: String,
    pub name: Option<String>,
    pub db: PathBuf,
    pub program: PathBuf,
    pub command: Vec<OsString>,
    /// Each `--variant`'s configuration name and what it runs (`line_of`).
    pub variants: Vec<(String, variant::ProgramLine)>,
    /// `--server`: COMMAND is a service driven by a load.
    pub service: Option<service::ServiceSettings>,
    /// `--metrics`: where to serve the current values for Prometheus.
    pub metrics: Option<std::net::SocketAddr>,
    /// The exports and `--quiet`.
    pub output: export::OutputSettings,
    /// `--runs N|auto`, `--max-runs`, `--max-time`, `--metric`.
    pub rounds: rounds::RoundSettings,
    /// `--max-slowdown`, `--min-saving`, `--memory-metric`, `--perf-metric`.
    pub judge: allocscope_core::judging::JudgeSettings,
    /// `--perf-metric auto`: judge by the most-varying throughput figure
    /// the runs printed (`judge` holds wall time until it is found).
    pub auto_perf: bool,
    /// `--executor` and the engine's flags, checked.
    pub engine: EngineArgs,
}

impl CompareSettings {
    pub fn from_args(
        args: &CompareArgs,
        registry: &allocscope_core::alloc::Registry,
    ) -> Result<CompareSettings, UsageError> {
        let round_settings = rounds::parse_rounds(args.runs, &args.rounds)?;
        let runs = round_settings.schedule.max_rounds();
        let auto = matches!(round_settings.schedule, rounds::Schedule::Auto { .. });
        args.cluster.check(auto)?;
        let output = export::OutputSettings::parse(&args.export)?;
        let service = service::parse(&args.service)?;
        // Checked against the metric table the experiment will have, before
        // anything runs.
        let user_metrics: Vec<_> = round_settings.metrics.iter().map(|m| m.info()).collect();
        let table = allocscope_analyze::metric_table::of_parts(service.is_some(), &user_metrics);
        let (judge, auto_perf) = judging(&args.judge, &table)?;
        let marks = parse_marks(&args.mark)?;
        let program_name = args.command.first().ok_or(UsageError::NoCommand)?;
        let program = resolve_command(program_name)?;
        let (mut configs, warnings) = configs(&args.alloc, registry)?;
        let variants = add_variants(&args.variant, &mut configs)?;
        let baseline = baseline(args.baseline.as_deref(), &configs)?;
        Ok(CompareSettings {
            configs,
            warnings,
            runs,
            measuring: Measuring {
                warmup: args.warmup,
                interval: args.interval,
                timeout: args.timeout,
                memory_limit: args.memory_limit,
                cgroup: args.cgroup == crate::cli::CgroupMode::Auto,
                cpus: args.cpus,
                marks,
                heap: heap_options(args.heap),
                reclaim_at: args.reclaim_at.clone().unwrap_or_default(),
            },
            baseline,
            name: args.name.clone(),
            db: args.db.clone(),
            program,
            command: args.command.clone(),
            variants,
            metrics: args
                .metrics
                .as_deref()
                .map(|a| allocscope_record::prometheus::parse_address(a, args.metrics_public))
                .transpose()?,
            service,
            output,
            rounds: round_settings,
            judge,
            auto_perf,
            engine: args.cluster.clone(),
        })
    }

    /// What the session running this experiment's rounds here is given.
    pub fn session(&self) -> allocscope_rounds::session::SessionSettings<'_> {
        allocscope_rounds::session::SessionSettings {
            name: self.name.clone(),
            command: self
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            program: &self.program,
            configs: &self.configs,
            lines: self.configs.iter().map(|c| self.line_of(c)).collect(),
            baseline: self.baseline.clone(),
            runs: self.runs,
            schedule: self.rounds.schedule,
            measuring: &self.measuring,
            service: self.service.as_ref(),
            user_metrics: &self.rounds.metrics,
            extensions: (self.metrics.iter())
                .map(|&at| -> StartExtension {
                    Box::new(move || allocscope_record::prometheus::serve_runs(at))
                })
                .collect(),
        }
    }

    /// What `config` runs: a `--variant`'s own command line, else the
    /// command after `--`.
    pub fn line_of(&self, config: &allocscope_core::model::Config) -> variant::ProgramLine {
        let own = config.command.as_ref().and_then(|_| {
            self.variants
                .iter()
                .find(|(name, _)| *name == config.name)
                .map(|(_, line)| line.clone())
        });
        own.unwrap_or_else(|| variant::ProgramLine {
            program: self.program.clone(),
            args: self.command[1..].to_vec(),
        })
    }
}

/// The `-a` configurations resolved against this machine's allocators (the
/// defaults without any), with the warnings about the defaults left out.
pub(super) fn configs(
    specs: &[String],
    registry: &allocscope_core::alloc::Registry,
) -> Result<(Vec<allocscope_core::model::Config>, Vec<String>), UsageError> {
    let (configs, warnings) = if specs.is_empty() {
        registry.default_configs()
    } else {
        let mut configs: Vec<allocscope_core::model::Config> = Vec::new();
        for spec in specs {
            let config = registry.resolve(spec).map_err(UsageError::Alloc)?;
            if configs.iter().any(|c| c.name == config.name) {
                return Err(UsageError::DuplicateConfig(config.name));
            }
            configs.push(config);
        }
        (configs, Vec::new())
    };
    if configs.is_empty() {
        return Err(UsageError::NoConfigs {
            packages: allocscope_core::alloc::known::packages_to_install(),
        });
    }
    Ok((configs, warnings))
}

/// Each `--variant` appended to `configs` as a configuration, with what it
/// runs.
fn add_variants(
    specs: &[String],
    configs: &mut Vec<allocscope_core::model::Config>,
) -> Result<Vec<(String, variant::ProgramLine)>, UsageError> {
    let mut variants = Vec::new();
    for spec in specs {
        let (config, line) = variant::parse(spec)?;
        if configs.iter().any(|c| c.name == config.name) {
            return Err(UsageError::DuplicateConfig(config.name));
        }
        variants.push((config.name.clone(), line));
        configs.push(config);
    }
    Ok(variants)
}

/// The judging flags checked against `table`, and whether `--perf-metric
/// auto` asks for a figure found in the runs' output once they are over
/// (commands/throughput.rs): wall time until then.
fn judging(
    args: &crate::cli::JudgeArgs,
    table: &[allocscope_analyze::metric_table::MetricDef],
) -> Result<(allocscope_core::judging::JudgeSettings, bool), UsageError> {
    let auto_perf = args.perf_metric.as_deref().map(str::trim) == Some("auto");
    let mut args = args.clone();
    if auto_perf {
        args.perf_metric = None;
    }
    Ok((judge::JudgeFlags::parse(&args)?.settle(table)?, auto_perf))
}

/// `--heap[=MODE]` as the probe's options: on by default, auto and required
/// when asked for without a mode, None for `--heap=off`.
fn heap_options(mode: Option<crate::cli::HeapMode>) -> Option<allocscope_core::probe::HeapOptions> {
    use crate::cli::HeapMode;
    use allocscope_core::probe::{HeapOptions, HeapRequest};
    let (request, required) = match mode {
        None | Some(HeapMode::Optional) => return Some(HeapOptions::DEFAULT),
        Some(HeapMode::Off) => return None,
        Some(HeapMode::Auto) => (HeapRequest::Auto, true),
        Some(HeapMode::Stats) => (HeapRequest::Stats, true),
        Some(HeapMode::Count) => (HeapRequest::Count, true),
    };
    Some(HeapOptions { request, required })
}

/// `--baseline`, one of the configurations; the first without it.
pub(super) fn baseline(
    given: Option<&str>,
    configs: &[allocscope_core::model::Config],
) -> Result<String, UsageError> {
    match given {
        None => Ok(configs.first().map(|c| c.name.clone()).unwrap_or_default()),
        Some(given) if configs.iter().any(|c| c.name == given) => Ok(given.to_string()),
        Some(given) => Err(UsageError::UnknownBaseline {
            given: given.to_string(),
            known: configs
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// `compare`'s arguments given as words (those after `allocscope compare`:
/// a cluster plan's, the demo's), parsed as the command line would be.
pub(super) fn compare_args(
    words: impl IntoIterator<Item = OsString>,
) -> Result<CompareArgs, clap::Error> {
    use clap::Parser;
    let line = ["allocscope", "compare"]
        .map(OsString::from)
        .into_iter()
        .chain(words);
    match Cli::try_parse_from(line)?.command {
        Command::Compare(args) => Ok(*args),
        _ => Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand)),
    }
}
