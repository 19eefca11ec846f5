//! The round schedule (`--runs N|auto`, `--max-runs`, `--max-time`), the
//! user's own metrics (`--metric`, `--higher-is-better`) and the judging
//! settings shared by `compare` and `report` (`--min-saving`,
//! `--memory-metric`, `--perf-metric`, with `--max-slowdown`), checked.

use super::parse::{parse_count, parse_timeout};
use crate::cli::{JudgeArgs, RoundArgs};
use crate::usage_error::UsageError;
use crate::user_metric::{parse_spec, UserMetric};
use std::time::Duration;

/// How many rounds `compare` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// `--runs N`: exactly N rounds.
    Fixed(u32),
    /// `--runs auto`: until the judge says stop, at most `max_runs` rounds.
    Auto { max_runs: u32 },
}

impl Schedule {
    /// The most rounds this schedule can run.
    pub fn max_rounds(self) -> u32 {
        match self {
            Schedule::Fixed(n) | Schedule::Auto { max_runs: n } => n,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RoundSettings {
    pub schedule: Schedule,
    /// `--max-time`: no round starts after it.
    pub max_time: Option<Duration>,
    /// `--metric`, in the order given.
    pub metrics: Vec<UserMetric>,
}

pub use crate::judging::{JudgeSettings, MemoryMetric, PerfMetric, DEFAULT_MIN_SAVING_PCT};

fn rounds_error(message: String) -> UsageError {
    UsageError::Rounds(message)
}

/// `--runs N|auto`, `--max-runs N` (>= 2), `--max-time DUR`, `--metric`,
/// `--higher-is-better` (each naming a `--metric`).
pub fn parse_rounds(runs: &str, args: &RoundArgs) -> Result<RoundSettings, UsageError> {
    let max_runs = parse_count("--max-runs", &args.max_runs, 2)?;
    let schedule = if runs.trim().eq_ignore_ascii_case("auto") {
        Schedule::Auto { max_runs }
    } else {
        Schedule::Fixed(parse_count("--runs", runs, 1).map_err(|_| {
            rounds_error(format!(
                "--runs '{runs}' is neither a count nor auto; use a whole number 1 or more \
                 (e.g. --runs 5) or --runs auto"
            ))
        })?)
    };
    let max_time = args.max_time.as_deref().map(parse_timeout).transpose()?;
    let mut metrics: Vec<UserMetric> = Vec::new();
    for spec in &args.metric {
        let (name, pattern) = parse_spec(spec).map_err(rounds_error)?;
        if metrics.iter().any(|m| m.name == name) {
            return Err(rounds_error(format!(
                "--metric '{name}' is given twice; give each metric a name of its own"
            )));
        }
        metrics.push(UserMetric {
            name,
            pattern,
            higher_is_better: false,
        });
    }
    for name in &args.higher_is_better {
        let metric = metrics
            .iter_mut()
            .find(|m| &m.name == name)
            .ok_or_else(|| {
                rounds_error(format!(
                    "--higher-is-better '{name}' names no --metric; define it first, e.g. \
                     --metric '{name}=([0-9.]+) ops/sec' --higher-is-better {name}"
                ))
            })?;
        metric.higher_is_better = true;
    }
    Ok(RoundSettings {
        schedule,
        max_time,
        metrics,
    })
}

/// `--min-saving`, `--memory-metric`, `--perf-metric`; `user_metrics` are
/// the names `--perf-metric NAME` may take besides the built-ins.
pub fn parse_judge(
    args: &JudgeArgs,
    max_slowdown_pct: f64,
    user_metrics: &[String],
) -> Result<JudgeSettings, UsageError> {
    let text = args.min_saving.as_deref().unwrap_or("3").trim();
    let min_saving_pct = match text.trim_end_matches('%').trim().parse::<f64>() {
        Ok(pct) if (0.0..100.0).contains(&pct) => pct,
        _ => {
            return Err(rounds_error(format!(
                "--min-saving '{text}' is not a percentage from 0 to 99; e.g. --min-saving 3 \
                 counts only savings of 3% or more"
            )))
        }
    };
    let memory_metric = args
        .memory_metric
        .as_deref()
        .map(|m| match m.trim() {
            "peak" => Ok(MemoryMetric::Peak),
            "mean" => Ok(MemoryMetric::Mean),
            "final" => Ok(MemoryMetric::Final),
            "end-of-load" => Ok(MemoryMetric::EndOfLoad),
            other => Err(rounds_error(format!(
                "--memory-metric '{other}' is unknown; use peak, mean, final or end-of-load"
            ))),
        })
        .transpose()?;
    let perf_metric = args
        .perf_metric
        .as_deref()
        .map(|m| match m.trim() {
            "wall" => Ok(PerfMetric::Wall),
            "cpu" => Ok(PerfMetric::Cpu),
            "p50" => Ok(PerfMetric::P50),
            "p95" => Ok(PerfMetric::P95),
            "p99" => Ok(PerfMetric::P99),
            name if user_metrics.iter().any(|u| u == name) => Ok(PerfMetric::User(name.into())),
            other => Err(rounds_error(format!(
                "--perf-metric '{other}' is neither wall, cpu, p50, p95, p99 nor a --metric{}",
                if user_metrics.is_empty() {
                    format!("; define it, e.g. --metric '{other}=([0-9.]+) ops/sec'")
                } else {
                    format!(" ({})", user_metrics.join(", "))
                }
            ))),
        })
        .transpose()?;
    Ok(JudgeSettings {
        max_slowdown_pct,
        min_saving_pct,
        memory_metric,
        perf_metric,
        ..JudgeSettings::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(runs: &str, extra: &[&str]) -> Result<RoundSettings, String> {
        let mut args = RoundArgs::default();
        let mut it = extra.iter();
        while let Some(flag) = it.next() {
            let value = it.next().map(|v| v.to_string()).unwrap_or_default();
            match *flag {
                "--max-runs" => args.max_runs = value,
                "--max-time" => args.max_time = Some(value),
                "--metric" => args.metric.push(value),
                "--higher-is-better" => args.higher_is_better.push(value),
                _ => panic!("{flag}"),
            }
        }
        parse_rounds(runs, &args).map_err(|e| e.to_string())
    }

    #[test]
    fn runs_are_a_count_or_auto() {
        assert_eq!(
            rounds("4", &[]).map(|r| r.schedule).ok(),
            Some(Schedule::Fixed(4))
        );
        let auto = rounds("auto", &["--max-runs", "7"])
            .map(|r| r.schedule)
            .ok();
        assert_eq!(auto, Some(Schedule::Auto { max_runs: 7 }));
        assert_eq!(auto.map(Schedule::max_rounds), Some(7));
        for (runs, extra, words) in [
            ("0", &[][..], "--runs '0'"),
            ("often", &[][..], "or --runs auto"),
            ("auto", &["--max-runs", "1"][..], "--max-runs '1'"),
            ("auto", &["--max-time", "soon"][..], "soon"),
        ] {
            let err = rounds(runs, extra).err().unwrap_or_default();
            assert!(err.contains(words), "{runs} {extra:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn metrics_and_higher_is_better() {
        let r = rounds(
            "auto",
            &[
                "--metric",
                "ops=ops: ([0-9]+)",
                "--metric",
                "lat=lat ([0-9.]+)",
                "--higher-is-better",
                "ops",
            ],
        )
        .expect("valid");
        let flags: Vec<_> = r
            .metrics
            .iter()
            .map(|m| (m.name.as_str(), m.higher_is_better))
            .collect();
        assert_eq!(flags, vec![("ops", true), ("lat", false)]);
        let err = rounds("auto", &["--higher-is-better", "ops"])
            .err()
            .unwrap_or_default();
        assert!(err.contains("names no --metric"), "{err}");
        let err = rounds("auto", &["--metric", "ops"])
            .err()
            .unwrap_or_default();
        assert!(err.contains("no '='"), "{err}");
        let err = rounds("auto", &["--metric", "a=(1)", "--metric", "a=(2)"])
            .err()
            .unwrap_or_default();
        assert!(err.contains("twice"), "{err}");
    }

    #[test]
    fn judge_flags() {
        let args = JudgeArgs {
            min_saving: Some("5%".into()),
            memory_metric: Some("peak".into()),
            perf_metric: Some("ops".into()),
        };
        let judge = parse_judge(&args, 5.0, &["ops".into()]).expect("valid");
        assert_eq!(judge.min_saving_pct, 5.0);
        assert_eq!(judge.memory_metric, Some(MemoryMetric::Peak));
        assert_eq!(judge.perf_metric, Some(PerfMetric::User("ops".into())));
        let defaults = parse_judge(&JudgeArgs::default(), 5.0, &[]).expect("valid");
        assert_eq!((defaults.min_saving_pct, defaults.perf_metric), (3.0, None));
        for (args, words) in [
            (
                JudgeArgs {
                    min_saving: Some("lots".into()),
                    ..JudgeArgs::default()
                },
                "--min-saving 'lots'",
            ),
            (
                JudgeArgs {
                    memory_metric: Some("max".into()),
                    ..JudgeArgs::default()
                },
                "peak, mean, final or end-of-load",
            ),
            (
                JudgeArgs {
                    perf_metric: Some("ops".into()),
                    ..JudgeArgs::default()
                },
                "define it",
            ),
        ] {
            let err = parse_judge(&args, 5.0, &[])
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains(words), "{err}");
        }
    }
}
