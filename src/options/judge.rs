//! The judging flags (`--max-slowdown`, `--min-saving`, `--memory-metric`,
//! `--perf-metric`), checked once: the thresholds as soon as they are read
//! (from the command line, or from what `compare` stored with an experiment
//! for `report`, through the same parsers), the metric words against the
//! experiment's metric table (`analyze::metric_table`), whose rows they
//! name. `compare` checks them against the table it will have before it
//! runs anything; `report` against the stored experiment's, after its own
//! flags have overridden the stored ones (`JudgeFlags::or`).

use crate::cli::JudgeArgs;
use allocscope_analyze::metric_table::{self, MetricDef, TREE_WORDS};
use allocscope_core::judging::{
    JudgeSettings, MemoryChoice, DEFAULT_LIMIT_HEADROOM_PCT, DEFAULT_MAX_SLOWDOWN_PCT,
    DEFAULT_MIN_SAVING_PCT, LIMIT_HEADROOM_KEY, MAX_SLOWDOWN_KEY, MEMORY_METRIC_KEY,
    MIN_SAVING_KEY, PERF_METRIC_KEY,
};
use allocscope_core::usage_error::UsageError;

/// The judging flags as given: thresholds checked, metric words kept until
/// the metric table is known; `None` where a flag was not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeFlags {
    pub max_slowdown_pct: Option<f64>,
    pub min_saving_pct: Option<f64>,
    pub memory_metric: Option<String>,
    pub perf_metric: Option<String>,
    pub limit_headroom_pct: Option<f64>,
}

pub use crate::cli::values::{parse_limit_headroom, parse_max_slowdown, parse_min_saving};

impl JudgeFlags {
    /// The flags of the command line.
    pub fn parse(args: &JudgeArgs) -> Result<JudgeFlags, UsageError> {
        let word = |w: &Option<String>| w.as_deref().map(|w| w.trim().to_string());
        Ok(JudgeFlags {
            max_slowdown_pct: args.max_slowdown,
            min_saving_pct: args.min_saving,
            memory_metric: word(&args.memory_metric),
            perf_metric: word(&args.perf_metric),
            limit_headroom_pct: args.limit_headroom,
        })
    }

    /// What `compare` stored with an experiment (`JudgeSettings::to_environment`).
    pub fn stored(environment: &[(String, Option<String>)]) -> Result<JudgeFlags, UsageError> {
        let value = |wanted: &str| {
            environment
                .iter()
                .filter(|(key, _)| key == wanted)
                .find_map(|(_, v)| v.clone())
        };
        Ok(JudgeFlags {
            max_slowdown_pct: value(MAX_SLOWDOWN_KEY)
                .map(|v| parse_max_slowdown(&v))
                .transpose()?,
            min_saving_pct: value(MIN_SAVING_KEY)
                .map(|v| parse_min_saving(&v))
                .transpose()?,
            memory_metric: value(MEMORY_METRIC_KEY),
            perf_metric: value(PERF_METRIC_KEY),
            limit_headroom_pct: value(LIMIT_HEADROOM_KEY)
                .map(|v| parse_limit_headroom(&v))
                .transpose()?,
        })
    }

    /// These flags, and `stored`'s where one was not given.
    pub fn or(self, stored: JudgeFlags) -> JudgeFlags {
        JudgeFlags {
            max_slowdown_pct: self.max_slowdown_pct.or(stored.max_slowdown_pct),
            min_saving_pct: self.min_saving_pct.or(stored.min_saving_pct),
            memory_metric: self.memory_metric.or(stored.memory_metric),
            perf_metric: self.perf_metric.or(stored.perf_metric),
            limit_headroom_pct: self.limit_headroom_pct.or(stored.limit_headroom_pct),
        }
    }

    /// The settings, with the defaults where a flag was not given and each
    /// metric word resolved to a row of `table`, the experiment's metric
    /// table.
    pub fn settle(&self, table: &[MetricDef]) -> Result<JudgeSettings, UsageError> {
        Ok(JudgeSettings {
            max_slowdown_pct: self.max_slowdown_pct.unwrap_or(DEFAULT_MAX_SLOWDOWN_PCT),
            min_saving_pct: self.min_saving_pct.unwrap_or(DEFAULT_MIN_SAVING_PCT),
            memory_metric: self
                .memory_metric
                .as_deref()
                .map(|w| memory_choice(table, w))
                .transpose()?,
            perf_metric: self
                .perf_metric
                .as_deref()
                .map(|w| perf_choice(table, w))
                .transpose()?,
            limit_headroom_pct: self
                .limit_headroom_pct
                .unwrap_or(DEFAULT_LIMIT_HEADROOM_PCT),
            ..JudgeSettings::default()
        })
    }
}

/// A `--memory-metric` word: a tree word whose RSS row the table has, or
/// a memory row by name or id.
fn memory_choice(table: &[MetricDef], word: &str) -> Result<MemoryChoice, UsageError> {
    if let Some(tree) = metric_table::tree_word(word) {
        return match metric_table::find(table, tree.rss) {
            Some(_) => Ok(MemoryChoice::Tree(word.to_string())),
            None => Err(UsageError::MemoryMetricNoService(word.to_string())),
        };
    }
    match metric_table::named(table, word).filter(|row| row.is_memory()) {
        Some(row) => Ok(MemoryChoice::Row(row.id.clone())),
        None => {
            let trees: Vec<&'static str> = TREE_WORDS.iter().map(|t| t.word).collect();
            let (last, first) = trees.split_last().unwrap_or((&"", &[]));
            Err(UsageError::MemoryMetricUnknown {
                word: word.to_string(),
                trees: first.to_vec(),
                last_tree: last,
                rows: table
                    .iter()
                    .filter(|r| r.is_memory())
                    .map(|r| r.name().to_string())
                    .collect(),
            })
        }
    }
}

/// A `--perf-metric` word: a row other than memory, by name or id; the id.
fn perf_choice(table: &[MetricDef], word: &str) -> Result<String, UsageError> {
    if let Some(row) = metric_table::named(table, word).filter(|row| !row.is_memory()) {
        return Ok(row.id.clone());
    }
    let (user, built_in): (Vec<&MetricDef>, Vec<&MetricDef>) = table
        .iter()
        .filter(|r| !r.is_memory())
        .partition(|r| r.is_user());
    let names = |rows: Vec<&MetricDef>| -> Vec<String> {
        rows.iter().map(|r| r.name().to_string()).collect()
    };
    let (word, built_in) = (word.to_string(), names(built_in));
    Err(if user.is_empty() {
        UsageError::PerfMetricUndefined { word, built_in }
    } else {
        let user = names(user);
        UsageError::PerfMetricUnknown {
            word,
            built_in,
            user,
        }
    })
}

#[cfg(test)]
mod tests;
