//! The `allocscope/1` JSON document: experiment, host, every configuration
//! with its runs (and their markers) and summary (with the memory at each
//! marker label), warnings, the verdict, and optionally each run's sample
//! timeline.
//! Key names are a public interface: add keys, never rename them.

use super::reporter::Reporter;
use super::verdict_json::VerdictOut;
use allocscope_analyze::figures::MarkerStat;
use allocscope_analyze::heap::HeapSummary;
use allocscope_analyze::limit::LimitNeed;
use allocscope_analyze::markers::MarkerSummary;
use allocscope_analyze::metric_table::{MetricDef, Unit};
use allocscope_analyze::metrics;
use allocscope_analyze::service::LatencySummary;
use allocscope_analyze::types::{Analysis, Estimate, Ratio};
use allocscope_core::model::{
    Breakdown, CgroupSample, Host, Latency, Sample, ServiceInfo, ServiceRecord, StoredRun,
    UserMetricInfo,
};
use anyhow::{Context, Result};
use serde::{Serialize, Serializer};

pub(crate) const SCHEMA: &str = "allocscope/1";

#[derive(Debug, Clone, Copy, Default)]
pub struct JsonReporter {
    /// Adds each run's samples as `timeline`.
    pub include_samples: bool,
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    experiment: Experiment<'a>,
    configs: Vec<ConfigOut<'a>>,
    /// E.g. a `--mark` that never matched.
    warnings: &'a [String],
    /// `config`, `reason`, `deploy` {`shell`, `systemd`, `dockerfile`,
    /// `kubernetes`} (null unless a configuration is recommended), plus
    /// `outcome`, `explanation`, `memory_metric`, `max_slowdown_pct`.
    verdict: VerdictOut<'a>,
    /// `allocscope tune`'s race (phases, dropped candidates, Pareto front);
    /// absent for any other experiment.
    #[serde(skip_serializing_if = "Option::is_none")]
    tune: Option<&'a serde_json::Value>,
}

#[derive(Serialize)]
struct Experiment<'a> {
    id: i64,
    command: &'a [String],
    name: Option<&'a str>,
    started_at: &'a str,
    finished_at: Option<&'a str>,
    status: &'a str,
    baseline: &'a str,
    runs_per_config: u32,
    warmup: u32,
    interval_ms: u64,
    /// The `--mark` patterns (the built-in `allocscope:mark` is not listed).
    marks: &'a [String],
    host: &'a Host,
    /// `compare --server`: `ready`, `load`, `settle_s`, `grace_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<&'a ServiceInfo>,
    /// The `--metric`s: `name`, `pattern`, `higher_is_better`; each is a
    /// summary key `user.NAME`. Absent without `--metric`.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    user_metrics: &'a [UserMetricInfo],
}

#[derive(Serialize)]
struct ConfigOut<'a> {
    name: &'a str,
    allocator: &'a str,
    library: Option<String>,
    version: Option<&'a str>,
    /// Which allocator served its runs' `malloc`, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    served_by: Option<&'a str>,
    #[serde(serialize_with = "env_object")]
    env: &'a [(String, String)],
    /// A `--variant`'s command line (the experiment's `command` otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a [String]>,
    runs: Vec<RunOut<'a>>,
    summary: SummaryOut<'a>,
    /// The memory limit this configuration needs: its highest peak over
    /// its ok runs plus the headroom, a whole number of MiB; null without
    /// an ok run.
    memory_limit_needed_bytes: Option<u64>,
    /// What it was computed from: `bytes`, `peak_bytes`, `basis` (the
    /// metric of the peak: `peak_working_set_bytes`, `peak_cgroup_bytes`,
    /// `peak_pss_bytes`, `peak_rss_bytes`), `headroom_pct`, `runs`.
    memory_limit: Option<&'a LimitNeed>,
}

#[derive(Serialize)]
struct RunOut<'a> {
    index: u32,
    status: &'static str,
    exit_code: Option<i32>,
    signal: Option<i32>,
    /// The run's figure of each metric-table row but the `--metric`s
    /// (`user_metrics` has those), keyed by id, null where it had none.
    #[serde(flatten)]
    figures: Keyed<'a, RunFigure>,
    user_s: f64,
    sys_s: f64,
    max_hwm_bytes: u64,
    minor_faults: u64,
    major_faults: u64,
    /// How many samples were taken.
    samples: usize,
    stdout_path: String,
    stderr_path: String,
    message: Option<&'a str>,
    /// The last lines of the program's stderr, for a run not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr_tail: Option<&'a str>,
    linked_allocators: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    served_by: Option<&'a str>,
    /// Which allocator served the tree's memory, process by process.
    #[serde(skip_serializing_if = "Option::is_none")]
    served_tree: Option<&'a allocscope_core::model::ServedTree>,
    sampler_cpu_s: f64,
    /// CPU seconds the machine ran beside the run, outside allocscope and
    /// its tree; null where it was not measured (a file from before).
    foreign_cpu_s: Option<f64>,
    /// Seconds some task waited for a CPU during the run (PSI), absent
    /// without PSI.
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_pressure_s: Option<f64>,
    /// Foreign CPU above `analyze::disturbed`'s rule: left out of the
    /// performance ratio.
    disturbed: bool,
    started_at: &'a str,
    /// Heap probe figures, present only when the run loaded the probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    probe_mode: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probe_cpu_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_live_heap_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_live_heap_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_overhead_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arenas_max: Option<u32>,
    /// Where the run's RSS went (`live_heap_bytes`, `allocator_free_bytes`,
    /// `allocator_metadata_bytes`, `huge_pages_bytes`, `lazy_free_bytes`,
    /// `other_anon_bytes`, `file_bytes`, `shmem_bytes`) at its
    /// time-weighted `mean` and at its `peak`; absent when no tick had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    breakdown: Option<BreakdownOut>,
    /// The reclaim test (`t_s`, `trigger`, `rss_before_bytes`,
    /// `rss_after_bytes`, `processes`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    reclaim: Option<&'a allocscope_core::model::Reclaim>,
    /// The cgroup rows of `figures` under the names they had before they
    /// took the summary's (`peak_cgroup_bytes` was `cgroup_peak_bytes`,
    /// ...), absent without a cgroup: kept for one version, then dropped
    /// (docs/usage.md, "JSON"); then the kernel's own peak, and
    /// `memory.stat`'s parts.
    #[serde(skip_serializing_if = "Option::is_none")]
    cgroup_peak_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cgroup_mean_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    working_set_peak_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    working_set_mean_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cgroup_peak_kernel_bytes: Option<u64>,
    /// `charge_bytes`, `working_set_bytes`, `anon_bytes`, `file_bytes`,
    /// `shmem_bytes`, `kernel_bytes`, `huge_pages_bytes`: each
    /// time-weighted (`mean`) and at the tick of the peak charge (`peak`).
    #[serde(skip_serializing_if = "Option::is_none")]
    cgroup: Option<CgroupOut>,
    /// The run's `--metric` values by name (a metric that matched nothing
    /// is absent); only in experiments with `--metric`.
    #[serde(skip_serializing_if = "Option::is_none")]
    user_metrics: Option<&'a std::collections::BTreeMap<String, f64>>,
    markers: Vec<MarkerOut<'a>>,
    /// A service run's latency (`p50_ms` ... `max_ms`, `requests`,
    /// `errors`, `throughput_rps`), from allocscope's load generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    latency: Option<&'a Latency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<ServiceRunOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeline: Option<&'a [Sample]>,
}

#[derive(Serialize)]
struct CgroupOut {
    mean: CgroupSample,
    peak: CgroupSample,
}

#[derive(Serialize)]
struct BreakdownOut {
    mean: Breakdown,
    peak: Breakdown,
    /// The most processes on one tick whose allocator gave no figures (all
    /// their anonymous memory is in `other_anon_bytes`).
    heapless_processes: u32,
    /// The share of the run's ticks with heap figures that the breakdown
    /// covers: the probe's readings were stale on the others (the
    /// allocator's locks kept it from reading), which have no breakdown.
    coverage: f64,
}

/// A service run's phases (seconds since the server started) and notes.
#[derive(Serialize)]
struct ServiceRunOut<'a> {
    ready_s: Option<f64>,
    load_start_s: Option<f64>,
    load_end_s: Option<f64>,
    load_s: Option<f64>,
    stop_s: Option<f64>,
    rss_end_load_bytes: Option<u64>,
    rss_end_settle_bytes: Option<u64>,
    pss_end_load_bytes: Option<u64>,
    pss_end_settle_bytes: Option<u64>,
    errors_by_kind: &'a std::collections::BTreeMap<String, u64>,
    generator_cpu_s: Option<f64>,
    load_exit: Option<&'a str>,
    load_stdout_path: Option<String>,
    load_stderr_path: Option<String>,
    rejected_lines: u64,
    warnings: &'a [String],
    stopped_by: Option<&'a str>,
}

fn service_run_out(s: &ServiceRecord) -> ServiceRunOut<'_> {
    let path =
        |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
    ServiceRunOut {
        ready_s: s.ready_s,
        load_start_s: s.load_start_s,
        load_end_s: s.load_end_s,
        load_s: s.load_duration_s(),
        stop_s: s.stop_s,
        rss_end_load_bytes: s.rss_end_load_bytes,
        rss_end_settle_bytes: s.rss_end_settle_bytes,
        pss_end_load_bytes: s.pss_end_load_bytes,
        pss_end_settle_bytes: s.pss_end_settle_bytes,
        errors_by_kind: &s.errors_by_kind,
        generator_cpu_s: s.generator_cpu_s,
        load_exit: s.load_exit.as_deref(),
        load_stdout_path: path(&s.load_stdout_path),
        load_stderr_path: path(&s.load_stderr_path),
        rejected_lines: s.rejected_lines,
        warnings: &s.warnings,
        stopped_by: s.stopped_by.as_deref(),
    }
}

#[derive(Serialize)]
struct MarkerOut<'a> {
    label: &'a str,
    t_s: f64,
    rss_bytes: u64,
    pss_bytes: Option<u64>,
    vsz_bytes: u64,
}

/// A marker label's `runs`, `rss_bytes_median`, `pss_bytes_median`.
#[derive(Serialize)]
struct MarkerSummaryOut<'a> {
    label: &'a str,
    #[serde(flatten)]
    stat: &'a MarkerStat,
}

/// A run's figure of a metric-table row; bytes as whole numbers.
struct RunFigure(Option<f64>, bool);

impl Serialize for RunFigure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            RunFigure(Some(bytes), true) => s.serialize_u64(bytes as u64),
            RunFigure(value, _) => value.serialize(s),
        }
    }
}

/// `id: value` pairs serialised as an object in their order (the metric
/// table's), so the keys stay where they always were.
struct Keyed<'a, T>(Vec<(&'a str, T)>);

impl<T: Serialize> Serialize for Keyed<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

#[derive(Serialize)]
struct SummaryOut<'a> {
    ok_runs: usize,
    total_runs: usize,
    /// One estimate per metric-table row, keyed by id.
    #[serde(flatten)]
    estimates: Keyed<'a, Option<Estimate>>,
    /// Ratios to the baseline, one per metric-table row that has a ratio
    /// (a service's `p50_ms`, `p95_ms`, `rss_end_load_bytes`,
    /// `pss_end_load_bytes` and `load_s` among them), keyed by id.
    ratio: Keyed<'a, Option<Ratio>>,
    markers: Vec<MarkerSummaryOut<'a>>,
    /// The heap probe's medians, only when the experiment measured the heap.
    #[serde(skip_serializing_if = "Option::is_none")]
    heap: Option<&'a HeapSummary>,
    /// Service experiments: each latency key with `median`, `ci_low`,
    /// `ci_high` (null when no run measured latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    latency: Option<Option<LatencySummary>>,
    /// Service experiments: `load_s`, `rss_end_load_bytes`,
    /// `rss_end_settle_bytes` estimates.
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<ServiceSummaryOut>,
}

/// The service's estimates, as they were before they became rows of the
/// metric table (`summary.load_s` ... hold them too).
#[derive(Serialize)]
struct ServiceSummaryOut {
    load_s: Option<Estimate>,
    rss_end_load_bytes: Option<Estimate>,
    rss_end_settle_bytes: Option<Estimate>,
    pss_end_load_bytes: Option<Estimate>,
    pss_end_settle_bytes: Option<Estimate>,
    errors: u64,
    requests: u64,
}

/// The environment as a JSON object, keeping the order it is applied in.
fn env_object<S: Serializer>(env: &&[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(env.iter().map(|(k, v)| (k, v)))
}

/// Run `run` of an experiment whose metric table is `table`: with
/// `--metric`s, each run lists its values (possibly none).
fn run_out<'a>(
    run: &'a StoredRun,
    table: &'a [MetricDef],
    disturbed: Option<allocscope_analyze::disturbed::Rule>,
    include_samples: bool,
) -> RunOut<'a> {
    let (r, m) = (&run.record, metrics::of(run));
    let rows = table.iter().filter(|row| !row.is_user());
    let figure = |row: &MetricDef| RunFigure((row.extract)(run), row.unit == Unit::Bytes);
    RunOut {
        index: r.index,
        status: r.status.as_str(),
        exit_code: r.exit_code,
        signal: r.signal,
        figures: Keyed(rows.map(|row| (row.id.as_str(), figure(row))).collect()),
        user_s: r.user_s,
        sys_s: r.sys_s,
        max_hwm_bytes: r.max_hwm_bytes,
        minor_faults: r.minor_faults,
        major_faults: r.major_faults,
        samples: r.samples.len(),
        stdout_path: r.stdout_path.to_string_lossy().into_owned(),
        stderr_path: r.stderr_path.to_string_lossy().into_owned(),
        message: r.message.as_deref(),
        stderr_tail: r.stderr_tail.as_deref(),
        linked_allocators: &r.linked_allocators,
        served_by: r.served_by.as_deref(),
        served_tree: r.served_tree.as_ref(),
        sampler_cpu_s: r.sampler_cpu_s,
        foreign_cpu_s: r.foreign_cpu_s,
        cpu_pressure_s: r.cpu_pressure_s,
        disturbed: disturbed.is_some_and(|rule| rule.is_disturbed(r)),
        started_at: &r.started_at,
        probe_mode: r.probe_mode.as_deref(),
        probe_cpu_s: r.probe_cpu_s,
        peak_live_heap_bytes: m.peak_live_heap_bytes,
        mean_live_heap_bytes: m.mean_live_heap_bytes,
        mean_overhead_ratio: m.mean_overhead_ratio,
        arenas_max: m.arenas_max,
        breakdown: (m.breakdown_mean.zip(m.breakdown_peak)).map(|(mean, peak)| BreakdownOut {
            mean,
            peak,
            heapless_processes: m.heapless_processes_max.unwrap_or(0),
            coverage: m.breakdown_coverage.unwrap_or(1.0),
        }),
        reclaim: r.reclaim.as_ref(),
        cgroup_peak_bytes: m.cgroup_peak_bytes,
        cgroup_mean_bytes: m.cgroup_mean_bytes,
        working_set_peak_bytes: m.working_set_peak_bytes,
        working_set_mean_bytes: m.working_set_mean_bytes,
        cgroup_peak_kernel_bytes: r.cgroup_peak_kernel_bytes,
        cgroup: (metrics::cgroup_mean(r).zip(metrics::cgroup_at_peak(r)))
            .map(|(mean, peak)| CgroupOut { mean, peak }),
        user_metrics: table
            .iter()
            .any(MetricDef::is_user)
            .then_some(&r.user_metrics),
        markers: r
            .markers
            .iter()
            .map(|m| MarkerOut {
                label: &m.label,
                t_s: m.t_s,
                rss_bytes: m.rss_bytes,
                pss_bytes: m.pss_bytes,
                vsz_bytes: m.vsz_bytes,
            })
            .collect(),
        latency: r.service.as_ref().and_then(|s| s.latency.as_ref()),
        service: r.service.as_ref().map(service_run_out),
        timeline: include_samples.then_some(r.samples.as_slice()),
    }
}

/// The configuration at `position`'s cell of each marker row.
fn marker_summary(markers: &MarkerSummary, position: usize) -> Vec<MarkerSummaryOut<'_>> {
    (0..markers.len())
        .filter_map(|row| {
            let stat = markers.cells(row).get(position)?;
            let label = markers.label(row);
            Some(MarkerSummaryOut { label, stat })
        })
        .collect()
}

/// Configuration `i` with its runs, its summary and the limit it needs.
fn config_out(analysis: &Analysis, i: usize, include: bool) -> ConfigOut<'_> {
    let (c, s, table) = (
        &analysis.experiment.configs[i],
        &analysis.summaries[i],
        &analysis.metrics,
    );
    let service = analysis.service.get(i);
    let memory_limit = analysis.limits.get(i).and_then(Option::as_ref);
    let disturbed = allocscope_analyze::disturbed::Rule::of(&analysis.experiment);
    ConfigOut {
        name: &c.config.name,
        allocator: &c.config.allocator,
        library: c
            .config
            .library
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
        version: c.config.version.as_deref(),
        served_by: allocscope_analyze::served::served_by(c),
        env: &c.config.env,
        command: c.config.command.as_deref(),
        runs: c
            .runs
            .iter()
            .map(|r| run_out(r, table, disturbed, include))
            .collect(),
        summary: SummaryOut {
            ok_runs: s.ok_runs,
            total_runs: s.total_runs,
            estimates: Keyed(
                s.metrics
                    .iter()
                    .map(|(id, m)| (id.as_str(), m.estimate))
                    .collect(),
            ),
            ratio: Keyed(
                table
                    .iter()
                    .zip(&s.metrics)
                    .filter(|(def, _)| def.ratio)
                    .map(|(_, (id, m))| (id.as_str(), m.ratio))
                    .collect(),
            ),
            markers: marker_summary(&analysis.markers, i),
            heap: analysis.heap.get(i),
            latency: service.map(|svc| svc.latency),
            service: service.map(|svc| ServiceSummaryOut {
                load_s: s.estimate("load_s"),
                rss_end_load_bytes: s.estimate("rss_end_load_bytes"),
                rss_end_settle_bytes: svc.rss_end_settle_bytes,
                pss_end_load_bytes: s.estimate("pss_end_load_bytes"),
                pss_end_settle_bytes: svc.pss_end_settle_bytes,
                errors: svc.errors,
                requests: svc.requests,
            }),
        },
        memory_limit_needed_bytes: memory_limit.map(|l| l.bytes),
        memory_limit,
    }
}

impl Reporter for JsonReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let e = &analysis.experiment;
        let baseline = e
            .configs
            .get(analysis.baseline)
            .map(|c| c.config.name.as_str())
            .unwrap_or(e.info.baseline.as_str());
        let doc = Document {
            schema: SCHEMA,
            experiment: Experiment {
                id: e.id,
                command: &e.info.command,
                name: e.info.name.as_deref(),
                started_at: &e.info.started_at,
                finished_at: e.finished_at.as_deref(),
                status: &e.status,
                baseline,
                runs_per_config: e.info.runs_per_config,
                warmup: e.info.warmup,
                interval_ms: e.info.interval_ms,
                marks: &e.info.marks,
                host: &e.info.host,
                service: e.info.service.as_ref(),
                user_metrics: &e.info.user_metrics,
            },
            configs: (0..e.configs.len())
                .map(|i| config_out(analysis, i, self.include_samples))
                .collect(),
            warnings: &analysis.warnings,
            verdict: VerdictOut::of(&analysis.verdict),
            tune: analysis.tune.as_ref(),
        };
        let mut bytes = serde_json::to_vec_pretty(&doc).context("encoding the JSON report")?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
