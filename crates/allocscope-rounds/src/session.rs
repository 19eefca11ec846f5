//! One experiment being run here: everything fixed before the first run (the
//! experiment row, the log directory, the probe plans, the program's
//! allocator facts), then one planned run at a time, executed, given its
//! user metrics, reported on the progress line (a failed run's last stderr
//! lines once per distinct text) and stored at once.

use super::logs::{log_directory, slug};
use super::progress::Progress;
use super::run_line::{run_line, Place};
use super::Schedule;
use allocscope_analyze::metrics::run_metrics;
use allocscope_core::alloc::elf::{inspect_program, preload_ignored_reason};
use allocscope_core::model::{Config, ExperimentInfo, ProgramLine};
use allocscope_core::plan::PlannedRun;
use allocscope_core::run::{self, Interrupt, Launch, Outcome, ReclaimAt, ServiceSettings};
use allocscope_core::store::Store;
use allocscope_core::user_metric::UserMetric;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What every run of one experiment is given, as plain data (the binary
/// builds it from its checked settings).
pub struct SessionSettings<'s> {
    pub name: Option<String>,
    /// The experiment's command line; its program, found on PATH.
    pub command: Vec<String>,
    pub program: &'s Path,
    pub configs: &'s [Config],
    /// What each configuration runs (a `--variant` its own build).
    pub lines: Vec<ProgramLine>,
    pub baseline: String,
    /// The most measured rounds, as stored with the experiment.
    pub runs: u32,
    pub schedule: Schedule,
    pub measuring: &'s Measuring,
    pub service: Option<&'s ServiceSettings>,
    /// `--metric`: what each run's output is searched for.
    pub user_metrics: &'s [UserMetric],
    /// What features add to every run (`compare --metrics`' publisher),
    /// each started as the session starts.
    pub extensions: Vec<StartExtension>,
}

/// How each run is measured: the same for every run of an experiment, as
/// `compare` checked it.
#[derive(Debug, Clone)]
pub struct Measuring {
    pub warmup: u32,
    pub interval: Duration,
    pub timeout: Option<Duration>,
    /// `--memory-limit` in bytes.
    pub memory_limit: Option<u64>,
    /// `--cgroup auto` (the default): each run in a memory cgroup of its
    /// own where the machine allows one; false for `--cgroup off`.
    pub cgroup: bool,
    /// `--cpus N`: measure as on a host of N CPUs.
    pub cpus: Option<u32>,
    /// The built-in marker pattern `allocscope:mark LABEL` first, then each
    /// `--mark`.
    pub marks: Vec<regex::Regex>,
    /// The heap probe: on by default (`HeapOptions::DEFAULT`), None for
    /// `--heap=off`.
    pub heap: Option<allocscope_core::probe::HeapOptions>,
    /// `--reclaim-at`: when the reclaim test runs (it needs the heap probe).
    pub reclaim_at: ReclaimAt,
}

/// A feature's extension of each run, made from the experiment's label and
/// the configuration's name.
pub type PerRun = Box<dyn Fn(&str, &str) -> Box<dyn run::RunExtension>>;
/// Starts a feature's extension (binds its port, say); called as the
/// session starts, so a failure stops it before any run.
pub type StartExtension = Box<dyn Fn() -> anyhow::Result<PerRun>>;

/// What running one planned run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Done,
    /// Ctrl-C or SIGTERM: no further run starts.
    Interrupted,
}

/// What the program itself says about allocators, found once.
#[derive(Clone)]
struct ProgramFacts {
    /// Why LD_PRELOAD cannot work for it (static, setuid), if so.
    preload_ignored: Option<String>,
    /// Go, or a program defining its own `malloc`.
    own_allocator: bool,
    /// Allocator libraries it links itself.
    linked: Vec<String>,
}

impl ProgramFacts {
    /// What `program`'s ELF file says.
    fn of(program: &Path) -> ProgramFacts {
        let info = inspect_program(program);
        ProgramFacts {
            preload_ignored: info.as_ref().and_then(preload_ignored_reason),
            own_allocator: info
                .as_ref()
                .is_some_and(|info| info.is_go || info.defines_malloc),
            linked: info.map(|info| info.linked_allocators).unwrap_or_default(),
        }
    }

    /// One per configuration (a `--variant` runs its own program), with a
    /// warning about what the experiment's program's runs will show.
    fn inspect(settings: &SessionSettings<'_>, lines: &[ProgramLine]) -> Vec<ProgramFacts> {
        let main = ProgramFacts::of(settings.program);
        if let Some(reason) = &main.preload_ignored {
            eprintln!("warning: {reason}; its runs will be reported as not_loaded");
        }
        if let Some(name) = super::serving::linked_allocator(settings.program) {
            eprintln!(
                "note: {} links {name} itself: configurations without a preloaded allocator \
                 preload allocscope's glibc shim, so that glibc serves malloc; a preloaded \
                 allocator takes over malloc",
                settings.program.display()
            );
        }
        settings
            .configs
            .iter()
            .zip(lines)
            .map(|(config, line)| match config.command {
                Some(_) => ProgramFacts::of(&line.program),
                None => main.clone(),
            })
            .collect()
    }
}

pub(crate) struct Session<'s> {
    settings: &'s SessionSettings<'s>,
    interrupt: &'s Interrupt,
    extensions: Vec<PerRun>,
    experiment_label: String,
    experiment_id: i64,
    config_ids: Vec<i64>,
    log_dir: PathBuf,
    probes: Vec<Option<allocscope_core::probe::ProbeLaunch>>,
    /// Where each run's memory cgroup goes; `None` with `--cgroup off` or
    /// where none can be made.
    cgroup: Option<allocscope_core::cgroup::Parent>,
    serving: Vec<super::serving::Serving>,
    /// What each configuration's program says about allocators.
    programs: Vec<ProgramFacts>,
    /// `--cpus`: the configurations as launched, and the CPUs to pin to.
    cpus: super::cpus::CpuSetup,
    progress: Progress,
    step: usize,
    total: usize,
    stored: usize,
    /// The stderr tails of failed runs already shown: each is said once.
    said_tails: std::collections::HashSet<String>,
}

impl<'s> Session<'s> {
    /// Creates the experiment in `store` (with `environment`) and says what
    /// will run; `total` is the most runs the plan can take, for the
    /// progress line.
    pub(crate) fn start(
        settings: &'s SessionSettings<'s>,
        quiet: bool,
        interrupt: &'s Interrupt,
        store: &mut Store,
        started_at: String,
        environment: &[(&str, String)],
        total: usize,
    ) -> anyhow::Result<Session<'s>> {
        let extensions = (settings.extensions.iter())
            .map(|start| start())
            .collect::<anyhow::Result<Vec<_>>>()?;
        run::become_subreaper()?;
        let programs = ProgramFacts::inspect(settings, &settings.lines);
        let (cgroup, run_cgroup) = run_cgroup(settings.measuring.cgroup);
        let mut info = experiment_info(settings, started_at);
        info.host.run_cgroup = Some(run_cgroup);
        info.host.run_memory_limit_bytes = settings.measuring.memory_limit;
        let cpus = super::cpus::setup(settings.configs, settings.measuring.cpus)?;
        info.host.cpus_emulated = cpus.emulation.clone();
        let (experiment_id, config_ids) = store.begin_experiment(&info, settings.configs)?;
        for (key, value) in environment {
            store.set_environment(experiment_id, key, value)?;
        }
        let log_dir = log_directory(store.path(), experiment_id)?;
        let progress = Progress::new(quiet, total);
        progress.say(&plan_line(settings, experiment_id, &info.command));
        if let Some(e) = &info.host.cpus_emulated {
            let line = allocscope_report::cpus_line::cpus_line(e, info.host.cpus);
            progress.say(&format!("allocscope: --cpus {}: {line}", e.cpus));
        }
        let probes = settings
            .configs
            .iter()
            .map(|c| allocscope_core::probe::plan(c, settings.measuring.heap))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let serving = super::serving::plan(&settings.lines, settings.configs)?;
        Ok(Session {
            settings,
            interrupt,
            extensions,
            experiment_label: settings
                .name
                .clone()
                .unwrap_or_else(|| format!("experiment-{experiment_id}")),
            experiment_id,
            config_ids,
            log_dir,
            probes,
            cgroup,
            serving,
            programs,
            cpus,
            progress,
            step: 0,
            total,
            stored: 0,
            said_tails: Default::default(),
        })
    }

    /// A line for the log (not with `--quiet`).
    pub(crate) fn say(&self, line: &str) {
        self.progress.say(line);
    }

    /// Where the rounds stand (not with `--quiet`).
    pub(crate) fn round(&self, line: &str) {
        self.progress.round(line);
    }

    pub(crate) fn experiment_id(&self) -> i64 {
        self.experiment_id
    }

    /// Executes one planned run and stores it in `store` (warm-ups are not
    /// stored).
    pub(crate) fn run(&mut self, store: &mut Store, planned: &PlannedRun) -> anyhow::Result<Step> {
        let config = &self.settings.configs[planned.config];
        let kind = if planned.warmup { "warmup" } else { "run" };
        self.progress.starting(
            self.step,
            &format!("{} {kind} {}", config.name, planned.repetition),
        );
        let mut record = match self.execute(planned, kind)? {
            Outcome::Interrupted => return Ok(Step::Interrupted),
            Outcome::Finished(record) => record,
        };
        run::extract_user_metrics(&mut record, self.settings.user_metrics);
        self.step += 1;
        let place = Place {
            step: self.step,
            total: self.total,
            config: &config.name,
            kind,
            repetition: planned.repetition,
        };
        let peak = run_metrics(&record).peak_rss_bytes;
        self.progress.ran(&run_line(&place, &record, peak));
        // Why a run failed, in the program's words, once per distinct tail
        // (a configuration failing every round would repeat it each time).
        if let Some(tail) = &record.stderr_tail {
            if self.said_tails.insert(tail.clone()) {
                self.progress.say(&format!(
                    "allocscope: {} {kind} {} {}, its stderr ended: {tail}",
                    config.name,
                    planned.repetition,
                    record.status.as_str()
                ));
            }
        }
        if planned.warmup {
            return Ok(Step::Done);
        }
        let stored = match store.store_run(self.config_ids[planned.config], &record) {
            Ok(stored) => stored,
            Err(error) => {
                // "Disk full" only when SQLite said so (`store::is_full`);
                // any other failure is shown in its own words.
                let why = if allocscope_core::store::is_full(&error) {
                    " (disk full or over a file-size limit)"
                } else {
                    ""
                };
                return Err(error.context(format!(
                    "run {} of '{}' could not be stored in '{}'{why}; the {} runs stored before \
                     it are kept: allocscope report --db {}",
                    planned.repetition,
                    config.name,
                    store.path().display(),
                    self.stored,
                    store.path().display()
                )));
            }
        };
        // A figure too large to store is kept as unknown: the run keeps
        // its status, its message says which, and so does the log.
        if let Some(note) = stored.note {
            self.progress.say(&format!(
                "allocscope: {} run {}: {note}",
                config.name, planned.repetition
            ));
        }
        self.stored += 1;
        Ok(Step::Done)
    }

    /// Launches one planned run and waits for its end.
    fn execute(&self, planned: &PlannedRun, kind: &str) -> anyhow::Result<Outcome> {
        let settings = self.settings;
        // With `--cpus`, its CPU-derived settings; the stored one has none.
        let config = &self.cpus.launch_configs[planned.config];
        let program = &self.programs[planned.config];
        let stem = format!(
            "{:02}-{}-{kind}{}",
            planned.config + 1,
            slug(&config.name),
            planned.repetition
        );
        let added: Vec<Box<dyn run::RunExtension>> = (self.extensions.iter())
            .map(|per_run| per_run(&self.experiment_label, &config.name))
            .collect();
        let launch = Launch {
            program: &settings.lines[planned.config].program,
            args: &settings.lines[planned.config].args,
            config,
            index: planned.repetition,
            stdout_path: self.log_dir.join(format!("{stem}.stdout")),
            stderr_path: self.log_dir.join(format!("{stem}.stderr")),
            interval: settings.measuring.interval,
            timeout: settings.measuring.timeout,
            preload_ignored: program.preload_ignored.clone(),
            own_allocator: program.own_allocator,
            linked_allocators: program.linked.clone(),
            glibc_shim: self.serving[planned.config].glibc_shim.as_deref(),
            served_by: self.serving[planned.config].served_by.clone(),
            marks: &settings.measuring.marks,
            memory_limit: settings.measuring.memory_limit,
            cgroup: self.cgroup.as_ref(),
            probe: self.probes[planned.config].as_ref(),
            service: settings.service,
            reclaim: settings.measuring.reclaim_at.clone(),
            extensions: (added.iter().map(|e| e.as_ref()))
                .chain(self.cpus.pin.as_ref().map(|p| p as &dyn run::RunExtension))
                .collect(),
        };
        run::execute(&launch, self.interrupt)
    }
}

/// Where runs' memory cgroups go (none with `--cgroup off`, or where the
/// machine allows none: then a one-line note says why and how to get one),
/// and that in a word for the host record (`v1`, `v2`, `off`, `none: WHY`).
fn run_cgroup(wanted: bool) -> (Option<allocscope_core::cgroup::Parent>, String) {
    if !wanted {
        return (None, "off".into());
    }
    match allocscope_core::cgroup::find() {
        Ok(parent) => {
            let version = parent.version.as_str().to_string();
            (Some(parent), version)
        }
        Err(unavailable) => {
            eprintln!("{}", unavailable.note());
            (None, format!("none: {}", unavailable.reason))
        }
    }
}

/// The experiment as the store keeps it.
fn experiment_info(settings: &SessionSettings<'_>, started_at: String) -> ExperimentInfo {
    ExperimentInfo {
        name: settings.name.clone(),
        command: settings.command.clone(),
        started_at,
        host: allocscope_core::host::capture(),
        runs_per_config: settings.runs,
        warmup: settings.measuring.warmup,
        interval_ms: settings.measuring.interval.as_millis() as u64,
        baseline: settings.baseline.clone(),
        marks: settings
            .measuring
            .marks
            .iter()
            .skip(1)
            .map(|r| r.as_str().to_string())
            .collect(),
        service: settings.service.map(|s| s.info.clone()),
        user_metrics: settings.user_metrics.iter().map(|m| m.info()).collect(),
    }
}

/// `allocscope: experiment 3: 5 configurations x up to 20 runs (auto: ...) of CMD`.
fn plan_line(settings: &SessionSettings<'_>, experiment_id: i64, command: &[String]) -> String {
    let rounds = match settings.schedule {
        Schedule::Fixed(n) => format!("{n} runs"),
        Schedule::Auto { max_runs } => {
            let level = 100.0 * (1.0 - allocscope_analyze::decide::sequential_alpha(max_runs));
            format!(
                "up to {max_runs} runs (auto: a side settles when its {level:.1}% interval, \
                 stricter than 95% because every round is a look, clears its threshold)"
            )
        }
    };
    format!(
        "allocscope: experiment {experiment_id}: {} configurations x {rounds}{} of {}",
        settings.configs.len(),
        if settings.measuring.warmup > 0 {
            format!(" (+{} warm-up)", settings.measuring.warmup)
        } else {
            String::new()
        },
        command.join(" ")
    )
}
