//! The round schedule (`--runs N|auto`, `--max-runs`, `--max-time`) and the
//! user's own metrics (`--metric`, `--higher-is-better`), checked. The
//! judging flags are `judge.rs`'s.

use crate::cli::{RoundArgs, Runs};
use allocscope_core::usage_error::UsageError;
use allocscope_core::user_metric::{parse_spec, UserMetric};
use std::time::Duration;

pub use allocscope_rounds::Schedule;

#[derive(Debug, Clone)]
pub struct RoundSettings {
    pub schedule: Schedule,
    /// `--max-time`: no round starts after it.
    pub max_time: Option<Duration>,
    /// `--metric`, in the order given.
    pub metrics: Vec<UserMetric>,
}

/// `--runs N|auto`, `--max-runs N` (>= 2), `--max-time DUR`, `--metric`,
/// `--higher-is-better` (each naming a `--metric`).
pub fn parse_rounds(runs: Runs, args: &RoundArgs) -> Result<RoundSettings, UsageError> {
    let schedule = match runs {
        Runs::Auto => Schedule::Auto {
            max_runs: args.max_runs,
        },
        Runs::Fixed(n) => Schedule::Fixed(n),
    };
    Ok(RoundSettings {
        schedule,
        max_time: args.max_time,
        metrics: parse_metrics(&args.metric, &args.higher_is_better)?,
    })
}

/// `--metric NAME=REGEX` (each name once) and `--higher-is-better NAME`
/// (each naming a `--metric`), as `compare` and `soak` take them.
pub fn parse_metrics(
    specs: &[String],
    higher_is_better: &[String],
) -> Result<Vec<UserMetric>, UsageError> {
    let mut metrics: Vec<UserMetric> = Vec::new();
    for spec in specs {
        let (name, pattern) = parse_spec(spec)?;
        if metrics.iter().any(|m| m.name == name) {
            return Err(UsageError::MetricTwice(name));
        }
        metrics.push(UserMetric {
            name,
            pattern,
            higher_is_better: false,
        });
    }
    for name in higher_is_better {
        let metric = metrics
            .iter_mut()
            .find(|m| &m.name == name)
            .ok_or_else(|| UsageError::HigherIsBetterUnknown(name.clone()))?;
        metric.higher_is_better = true;
    }
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compare --runs RUNS EXTRA... -- true` through clap, then checked;
    /// a value parser's message as `main` prints it.
    fn rounds(runs: &str, extra: &[&str]) -> Result<RoundSettings, String> {
        use clap::Parser;
        let mut line = vec!["allocscope", "compare", "--runs", runs];
        line.extend_from_slice(extra);
        line.extend(["--", "true"]);
        let args = match crate::cli::Cli::try_parse_from(line) {
            Ok(cli) => match cli.command {
                crate::cli::Command::Compare(args) => args,
                _ => return Err("not compare".into()),
            },
            Err(e) => {
                return Err(std::error::Error::source(&e)
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| e.to_string()))
            }
        };
        parse_rounds(args.runs, &args.rounds).map_err(|e| e.to_string())
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
}
