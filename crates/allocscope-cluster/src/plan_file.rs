//! The plan file (`plan.json`): what every node needs to run its round of
//! the matrix. It keeps the `compare` arguments as typed (without the
//! cluster flags), so a node checks and resolves them exactly as a local
//! `compare` would, against its own allocators; and a plan id that every
//! shard carries, so shards of different plans are never mixed.

use crate::error::ClusterError;
use allocscope_core::usage_error::UsageError;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::Path;

/// The layout version of plan.json; a node refuses a newer one.
pub(crate) const PLAN_FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterPlan {
    pub format: u32,
    /// Unique per plan: the merge refuses to mix shards of two plans.
    pub plan_id: String,
    /// When the plan was written; every shard's experiment starts then.
    pub started_at: String,
    /// One round per measured repetition (`--runs`).
    pub rounds: u32,
    /// The configuration names, in order (for the reader; nodes re-parse `args`).
    pub configs: Vec<String>,
    /// The `compare` arguments (everything after `compare`), cluster flags removed.
    pub args: Vec<String>,
    /// What `args` are arguments of: `compare` (a task runs a round) or
    /// `soak` (a task runs one instance); plans before soak's are compare's.
    #[serde(default = "compare")]
    pub command: String,
}

fn compare() -> String {
    "compare".into()
}

impl ClusterPlan {
    pub fn new(
        started_at: String,
        rounds: u32,
        configs: Vec<String>,
        args: Vec<String>,
        command: &str,
    ) -> ClusterPlan {
        ClusterPlan {
            format: PLAN_FORMAT,
            plan_id: new_plan_id(&started_at, &args),
            started_at,
            rounds,
            configs,
            args,
            command: command.to_string(),
        }
    }

    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing '{}'", path.display()))
    }

    pub fn read(path: &Path) -> anyhow::Result<ClusterPlan> {
        let shown = path.display();
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading plan '{shown}' (is it on a shared filesystem?)"))?;
        let not_a_plan = |e: serde_json::Error| {
            UsageError::from(ClusterError::NotAPlan {
                path: path.into(),
                reason: e.to_string(),
            })
        };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(not_a_plan)?;
        let format = value.get("format").and_then(|f| f.as_u64()).unwrap_or(0);
        if format > u64::from(PLAN_FORMAT) {
            return Err(UsageError::from(ClusterError::NewerPlan {
                path: path.into(),
                format,
                reads: PLAN_FORMAT,
            })
            .into());
        }
        serde_json::from_value(value).map_err(|e| not_a_plan(e).into())
    }

    /// The directory name and Job name part: short, and safe in both.
    pub(crate) fn short_id(&self) -> &str {
        &self.plan_id[..self.plan_id.len().min(12)]
    }
}

/// 16 hex digits from the time, this process and the arguments: unique
/// enough that two plans written by one user never share an id.
fn new_plan_id(started_at: &str, args: &[String]) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    started_at.hash(&mut hasher);
    args.hash(&mut hasher);
    std::process::id().hash(&mut hasher);
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
        .hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The `compare` arguments a node re-runs: everything after the `command`
/// word (`compare`, or `tune`, whose caller names its own flags to drop) of
/// this process's command line, less the flags `dropped` (each with whether
/// it takes a value; in the `--flag value` and `--flag=value` forms, a short
/// flag also as `-a value`, `-avalue` and `-a=value`; only before `--`).
pub fn node_arguments(
    argv: &[OsString],
    command: &str,
    dropped: &[(String, bool)],
) -> anyhow::Result<Vec<String>> {
    let words = argv
        .iter()
        .map(|a| {
            a.to_str().map(str::to_string).ok_or_else(|| {
                UsageError::from(ClusterError::NotUtf8(a.to_string_lossy().into_owned()))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let start = words.iter().position(|w| w == command).map_or(0, |p| p + 1);
    let mut kept = Vec::new();
    let mut rest = words[start..].iter();
    while let Some(word) = rest.next() {
        if word == "--" {
            kept.push(word.clone());
            kept.extend(rest.cloned());
            break;
        }
        let name = word.split('=').next().unwrap_or(word);
        let attached = |flag: &str| is_short(flag) && word.len() > 2 && word.starts_with(flag);
        match dropped.iter().find(|(flag, _)| flag == name) {
            Some((_, true)) if !word.contains('=') => {
                rest.next();
            }
            Some(_) => {}
            None if dropped
                .iter()
                .any(|(flag, valued)| *valued && attached(flag)) => {}
            None => kept.push(word.clone()),
        }
    }
    Ok(kept)
}

/// `-a`, not `--alloc`.
fn is_short(flag: &str) -> bool {
    flag.len() == 2 && flag.starts_with('-') && flag != "--"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn node_arguments_drop_the_cluster_flags_only() {
        let argv = os(&[
            "allocscope",
            "compare",
            "-a",
            "glibc",
            "--executor",
            "slurm",
            "--slurm-arg=--time=1:00:00",
            "--slurm-arg",
            "--partition=big",
            "--dry-run",
            "-r",
            "4",
            "--shards=/x",
            "--",
            "prog",
            "--executor",
            "kept",
        ]);
        let dropped: Vec<(String, bool)> = [
            ("--executor", true),
            ("--slurm-arg", true),
            ("--dry-run", false),
            ("--shards", true),
        ]
        .map(|(flag, valued)| (flag.to_string(), valued))
        .to_vec();
        assert_eq!(
            node_arguments(&argv, "compare", &dropped).expect("utf-8"),
            ["-a", "glibc", "-r", "4", "--", "prog", "--executor", "kept"]
        );
    }

    #[test]
    fn short_flags_are_dropped_in_every_form_after_the_command_word() {
        let argv = os(&[
            "allocscope",
            "tune",
            "-a",
            "glibc",
            "-ajemalloc",
            "-a=tcmalloc",
            "--alloc",
            "mimalloc",
            "--try",
            "arena_max=3",
            "--no-combine",
            "-q",
            "--max-runs",
            "3",
            "--",
            "prog",
            "-a",
            "x",
        ]);
        let dropped: Vec<(String, bool)> = [
            ("-a", true),
            ("--alloc", true),
            ("--try", true),
            ("--no-combine", false),
        ]
        .map(|(flag, valued)| (flag.to_string(), valued))
        .to_vec();
        assert_eq!(
            node_arguments(&argv, "tune", &dropped).expect("utf-8"),
            ["-q", "--max-runs", "3", "--", "prog", "-a", "x"]
        );
    }

    #[test]
    fn plans_round_trip_and_newer_formats_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plan.json");
        let plan = ClusterPlan::new(
            "now".into(),
            4,
            vec!["glibc".into()],
            vec!["--".into()],
            "compare",
        );
        plan.write(&path).expect("written");
        assert_eq!(ClusterPlan::read(&path).expect("read"), plan);
        assert_eq!(plan.plan_id.len(), 16);
        let mut newer = plan;
        newer.format = PLAN_FORMAT + 1;
        newer.write(&path).expect("written");
        let error = ClusterPlan::read(&path).expect_err("newer format");
        assert!(
            error.to_string().contains("same allocscope version"),
            "{error}"
        );
    }
}
