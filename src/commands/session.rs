//! One experiment being run: everything fixed before the first run (the
//! experiment row, the log directory, the probe plans, the program's
//! allocator facts), then one planned run at a time, executed, given its
//! user metrics, reported on the progress line and stored at once.

use super::compare::{log_directory, service_progress, slug, Matrix};
use super::progress::Progress;
use crate::alloc::elf::{inspect_program, preload_ignored_reason};
use crate::analyze::metrics::run_metrics;
use crate::model::{ExperimentInfo, RunStatus, StoredExperiment};
use crate::options::CompareSettings;
use crate::plan::PlannedRun;
use crate::run::{self, Interrupt, Launch, Outcome};
use crate::store::Store;
use crate::units::{format_bytes, format_seconds};
use std::path::PathBuf;

/// What running one planned run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Done,
    /// Ctrl-C or SIGTERM: no further run starts.
    Interrupted,
}

pub(crate) struct Session<'s> {
    settings: &'s CompareSettings,
    store: &'s mut Store,
    interrupt: Interrupt,
    metrics: Option<crate::metrics::Shared>,
    experiment_label: String,
    experiment_id: i64,
    config_ids: Vec<i64>,
    log_dir: PathBuf,
    probes: Vec<Option<crate::probe::ProbeLaunch>>,
    preload_ignored: Option<String>,
    own_allocator: bool,
    linked: Vec<String>,
    progress: Progress,
    step: usize,
    total: usize,
    stored: usize,
    all_ok: bool,
}

impl<'s> Session<'s> {
    /// Creates the experiment (with `environment`) and says what will run;
    /// `total` is the most runs the plan can take, for the progress line.
    pub(crate) fn start(
        settings: &'s CompareSettings,
        quiet: bool,
        store: &'s mut Store,
        started_at: String,
        environment: &[(&str, String)],
        total: usize,
    ) -> anyhow::Result<Session<'s>> {
        let metrics = settings
            .metrics
            .map(super::compare::serve_metrics)
            .transpose()?;
        let interrupt = Interrupt::install()?;
        run::become_subreaper()?;
        let program_info = inspect_program(&settings.program);
        let preload_ignored = program_info.as_ref().and_then(preload_ignored_reason);
        let own_allocator = program_info
            .as_ref()
            .is_some_and(|info| info.is_go || info.defines_malloc);
        let linked = program_info
            .map(|info| info.linked_allocators)
            .unwrap_or_default();
        if let Some(reason) = &preload_ignored {
            eprintln!("warning: {reason}; its runs will be reported as not_loaded");
        }
        for name in &linked {
            eprintln!(
                "note: {} links {name} itself: configurations without a preloaded allocator \
                 measure {name}, not glibc malloc; a preloaded allocator takes over malloc",
                settings.program.display()
            );
        }
        let info = ExperimentInfo {
            name: settings.name.clone(),
            command: settings
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            started_at,
            host: crate::host::capture(),
            runs_per_config: settings.runs,
            warmup: settings.warmup,
            interval_ms: settings.interval.as_millis() as u64,
            baseline: settings.baseline.clone(),
            marks: settings
                .marks
                .iter()
                .skip(1)
                .map(|r| r.as_str().to_string())
                .collect(),
            service: settings.service.as_ref().map(|s| s.info.clone()),
            user_metrics: settings.rounds.metrics.iter().map(|m| m.info()).collect(),
        };
        let (experiment_id, config_ids) = store.begin_experiment(&info, &settings.configs)?;
        for (key, value) in environment {
            store.set_environment(experiment_id, key, value)?;
        }
        let log_dir = log_directory(store.path(), experiment_id)?;
        let experiment_label = settings
            .name
            .clone()
            .unwrap_or_else(|| format!("experiment-{experiment_id}"));
        let progress = Progress::new(quiet, total);
        let rounds = match settings.rounds.schedule {
            crate::options::rounds::Schedule::Fixed(n) => format!("{n} runs"),
            crate::options::rounds::Schedule::Auto { max_runs } => {
                let level = 100.0 * (1.0 - crate::analyze::decide::sequential_alpha(max_runs));
                format!(
                    "up to {max_runs} runs (auto: a side settles when its {level:.1}% interval, \
                     stricter than 95% because every round is a look, clears its threshold)"
                )
            }
        };
        progress.say(&format!(
            "allocscope: experiment {experiment_id}: {} configurations x {rounds}{} of {}",
            settings.configs.len(),
            if settings.warmup > 0 {
                format!(" (+{} warm-up)", settings.warmup)
            } else {
                String::new()
            },
            info.command.join(" ")
        ));
        let probes = settings
            .configs
            .iter()
            .map(|c| crate::probe::plan(c, settings.heap))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Session {
            settings,
            store,
            interrupt,
            metrics,
            experiment_label,
            experiment_id,
            config_ids,
            log_dir,
            probes,
            preload_ignored,
            own_allocator,
            linked,
            progress,
            step: 0,
            total,
            stored: 0,
            all_ok: true,
        })
    }

    /// A line for the log (not with `--quiet`).
    pub(crate) fn say(&self, line: &str) {
        self.progress.say(line);
    }

    /// The experiment as stored so far.
    pub(crate) fn load(&self) -> anyhow::Result<StoredExperiment> {
        self.store.load_experiment(Some(self.experiment_id))
    }

    /// Executes one planned run and stores it (warm-ups are not stored).
    pub(crate) fn run(&mut self, planned: &PlannedRun) -> anyhow::Result<Step> {
        let settings = self.settings;
        let config = &settings.configs[planned.config];
        let kind = if planned.warmup { "warmup" } else { "run" };
        self.progress.starting(
            self.step,
            &format!("{} {kind} {}", config.name, planned.repetition),
        );
        let stem = format!(
            "{:02}-{}-{kind}{}",
            planned.config + 1,
            slug(&config.name),
            planned.repetition
        );
        let publish = self
            .metrics
            .as_ref()
            .map(|m| crate::metrics::publisher(m, &self.experiment_label, &config.name));
        let launch = Launch {
            program: &settings.program,
            args: &settings.command[1..],
            config,
            index: planned.repetition,
            stdout_path: self.log_dir.join(format!("{stem}.stdout")),
            stderr_path: self.log_dir.join(format!("{stem}.stderr")),
            interval: settings.interval,
            timeout: settings.timeout,
            preload_ignored: self.preload_ignored.clone(),
            own_allocator: self.own_allocator,
            linked_allocators: self.linked.clone(),
            marks: &settings.marks,
            memory_limit: settings.memory_limit,
            probe: self.probes[planned.config].as_ref(),
            service: settings.service.as_ref(),
            on_sample: publish.as_ref().map(|p| p as run::OnSample),
        };
        let mut record = match run::execute(&launch, &self.interrupt)? {
            Outcome::Interrupted => return Ok(Step::Interrupted),
            Outcome::Finished(record) => record,
        };
        run::extract_user_metrics(&mut record, &settings.rounds.metrics);
        let metrics = run_metrics(&record);
        self.step += 1;
        self.progress.say(&format!(
            "[{}/{}] {:<24} {kind} {}: {:<10} {:>9}  peak RSS {}{}{}{}",
            self.step,
            self.total,
            config.name,
            planned.repetition,
            record.status.as_str(),
            format_seconds(record.wall_s),
            format_bytes(metrics.peak_rss_bytes as f64),
            record
                .service
                .as_ref()
                .map(service_progress)
                .unwrap_or_default(),
            record
                .user_metrics
                .iter()
                .map(|(name, value)| format!(", {name} {value}"))
                .collect::<String>(),
            record
                .message
                .as_ref()
                .map(|m| format!("  ({m})"))
                .unwrap_or_default()
        ));
        if planned.warmup {
            return Ok(Step::Done);
        }
        self.all_ok &= record.status == RunStatus::Ok;
        if let Err(error) = self.store.add_run(self.config_ids[planned.config], &record) {
            self.progress.finish();
            return Err(error.context(format!(
                "run {} of '{}' could not be stored in '{}' (disk full or over a file-size \
                 limit?); the {} runs stored before it are kept: allocscope report --db {}",
                planned.repetition,
                config.name,
                self.store.path().display(),
                self.stored,
                self.store.path().display()
            )));
        }
        self.stored += 1;
        Ok(Step::Done)
    }

    /// Marks the experiment complete or interrupted.
    pub(crate) fn finish(self, interrupted: bool) -> anyhow::Result<Matrix> {
        self.progress.finish();
        self.store.finish_experiment(
            self.experiment_id,
            if interrupted {
                "interrupted"
            } else {
                "complete"
            },
        )?;
        Ok(Matrix {
            experiment_id: self.experiment_id,
            all_ok: self.all_ok,
            interrupted: interrupted.then(|| self.interrupt.exit_code()),
        })
    }
}
