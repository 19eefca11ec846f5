//! How a comparison is judged (`--max-slowdown`, `--min-saving`,
//! `--memory-metric`, `--perf-metric`): plain settings that `options` checks
//! and `analyze` (the verdict, the adaptive judge) reads, so neither depends
//! on the other. Each setting is held here once, with its default. The
//! metrics are rows of the experiment's metric table
//! (`analyze::metric_table`), held by id. Which way a `--metric` is better
//! (`--higher-is-better`) is the experiment's own, stored with it
//! (`ExperimentInfo::user_metrics`).

/// The default `--max-slowdown`, in percent.
pub const DEFAULT_MAX_SLOWDOWN_PCT: f64 = 5.0;

/// The default `--min-saving`, in percent.
pub const DEFAULT_MIN_SAVING_PCT: f64 = 3.0;

/// The default `--limit-headroom`, in percent: the memory limit a
/// configuration needs is its highest peak plus this much, rounded up to a
/// whole MiB (`analyze::limit`). 20% covers the run-to-run spread of a
/// peak seen here (a few percent) and the inputs a production day brings
/// that a benchmark does not, while keeping the limit close enough to the
/// peak that a leak still meets it.
pub const DEFAULT_LIMIT_HEADROOM_PCT: f64 = 20.0;

/// The two-sided error level a fixed schedule settles sides at.
pub const DEFAULT_DECISION_ALPHA: f64 = 0.05;

/// What `--memory-metric` chose: a row of the metric table, or a word whose
/// row depends on the tree measured (`peak`: peak RSS, or peak PSS for a
/// tree of several processes; `analyze::metric_table::TREE_WORDS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryChoice {
    /// The row with this id.
    Row(String),
    /// The tree word.
    Tree(String),
}

impl MemoryChoice {
    /// What the store keeps: the row's id, or the tree word.
    pub fn stored(&self) -> &str {
        match self {
            MemoryChoice::Row(id) | MemoryChoice::Tree(id) => id,
        }
    }
}

/// The experiment's environment keys under which `compare` keeps the
/// metrics it was told to judge by, so that `report` judges a stored
/// experiment the same way unless told otherwise.
pub const MEMORY_METRIC_KEY: &str = "judge.memory_metric";
pub const PERF_METRIC_KEY: &str = "judge.perf_metric";
pub const MIN_SAVING_KEY: &str = "judge.min_saving_pct";
pub const MAX_SLOWDOWN_KEY: &str = "judge.max_slowdown_pct";
pub const LIMIT_HEADROOM_KEY: &str = "judge.limit_headroom_pct";

/// The prefix of the environment key, one per candidate, under which
/// `--runs auto` records that it stopped the candidate as unresolvable
/// (`analyze::decide::unresolvable`); the value is the round it stopped after.
pub const UNRESOLVABLE_KEY_PREFIX: &str = "judge.unresolvable.";

/// The candidates `--runs auto` stopped as unresolvable, by name, from an
/// experiment's environment entries.
pub fn unresolvable_of(environment: &[(String, Option<String>)]) -> Vec<String> {
    environment
        .iter()
        .filter_map(|(key, _)| key.strip_prefix(UNRESOLVABLE_KEY_PREFIX))
        .map(str::to_string)
        .collect()
}

/// True for one of the keys above (a cluster's shard carries them to the
/// experiment its merge creates).
pub fn is_judging_key(key: &str) -> bool {
    [
        MEMORY_METRIC_KEY,
        PERF_METRIC_KEY,
        MIN_SAVING_KEY,
        MAX_SLOWDOWN_KEY,
        LIMIT_HEADROOM_KEY,
    ]
    .contains(&key)
}

/// How a comparison is judged; `None` metrics leave the choice to the kind
/// of experiment (`analyze::choice`).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeSettings {
    pub max_slowdown_pct: f64,
    pub min_saving_pct: f64,
    pub memory_metric: Option<MemoryChoice>,
    /// The id of the metric-table row `--perf-metric` named.
    pub perf_metric: Option<String>,
    /// The two-sided error level the decision settles sides at:
    /// `DEFAULT_DECISION_ALPHA`, or the stricter per-look level `--runs auto`
    /// uses while it decides whether to run another round
    /// (`analyze::decide::sequential_alpha`).
    pub decision_alpha: f64,
    /// `--limit-headroom`: what the memory limit each configuration needs
    /// adds to its peak, in percent.
    pub limit_headroom_pct: f64,
    /// Configurations a race settled out before its end (`allocscope
    /// tune`): never recommended. Empty for `compare`.
    pub ruled_out: RuledOut,
    /// Candidates `--runs auto` stopped as unresolvable (`unresolvable_of`):
    /// one still open is said to differ by no more than the experiment can
    /// resolve.
    pub unresolvable: Vec<String>,
}

impl JudgeSettings {
    /// The environment entries that record how `compare` judged: the
    /// metric choices made on the command line, and the thresholds.
    pub fn to_environment(&self) -> Vec<(&'static str, String)> {
        let memory = self
            .memory_metric
            .as_ref()
            .map(|m| (MEMORY_METRIC_KEY, m.stored().to_string()));
        let perf = self.perf_metric.clone().map(|p| (PERF_METRIC_KEY, p));
        let thresholds = [
            (MIN_SAVING_KEY, self.min_saving_pct.to_string()),
            (MAX_SLOWDOWN_KEY, self.max_slowdown_pct.to_string()),
            (LIMIT_HEADROOM_KEY, self.limit_headroom_pct.to_string()),
        ];
        memory.into_iter().chain(perf).chain(thresholds).collect()
    }
}

/// Configurations a race settled out before its end, each with when
/// (`after round 2`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuledOut(pub Vec<(String, String)>);

impl RuledOut {
    /// When the configuration named `config` was ruled out, if it was.
    pub fn when(&self, config: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(name, _)| name == config)
            .map(|(_, when)| when.as_str())
    }
}

impl Default for JudgeSettings {
    fn default() -> JudgeSettings {
        JudgeSettings {
            max_slowdown_pct: DEFAULT_MAX_SLOWDOWN_PCT,
            min_saving_pct: DEFAULT_MIN_SAVING_PCT,
            memory_metric: None,
            perf_metric: None,
            decision_alpha: DEFAULT_DECISION_ALPHA,
            limit_headroom_pct: DEFAULT_LIMIT_HEADROOM_PCT,
            ruled_out: RuledOut::default(),
            unresolvable: Vec::new(),
        }
    }
}
