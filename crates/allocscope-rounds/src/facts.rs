//! What each round records about the node it ran on (host name, CPU model,
//! kernel, glibc, the allocator versions found there) and the check that
//! the rounds of one experiment ran on the same hardware and software:
//! ratios between configurations stay within a round, but the medians
//! across rounds mix nodes, so a difference is worth a warning.

use allocscope_core::model::StoredExperiment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One round of a merged experiment, as stored in its environment under
/// `round.N`. `state` is `merged`, or the engine's state of a task that
/// left no shard (`CANCELLED`, `FAILED`, `TIMEOUT`, ...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RoundFacts {
    pub round: u32,
    pub state: String,
    #[serde(default)]
    pub hostname: String,
    #[serde(default)]
    pub cpu_model: String,
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub glibc: String,
    /// Allocator -> its version found on the node (glibc's is `glibc`).
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
}

pub const MERGED: &str = "merged";

impl RoundFacts {
    /// The facts of a shard's experiment (one round, run on one node).
    pub(crate) fn of_shard(
        round: u32,
        experiment: &StoredExperiment,
        cpu_model: String,
    ) -> RoundFacts {
        let host = &experiment.info.host;
        RoundFacts {
            round,
            state: MERGED.to_string(),
            hostname: host.hostname.clone(),
            cpu_model,
            kernel: host.kernel.clone(),
            glibc: host.glibc.clone(),
            // By allocator, not configuration: tunings of one allocator
            // share its version; glibc's is the `glibc` field already.
            versions: experiment
                .configs
                .iter()
                .filter(|c| c.config.allocator != "glibc")
                .filter_map(|c| Some((c.config.allocator.clone(), c.config.version.clone()?)))
                .collect(),
        }
    }

    /// What must match for rounds to be comparable (not the host name:
    /// identical nodes are the point of a cluster).
    fn platform(&self) -> String {
        let mut text = format!(
            "{}, kernel {}, glibc {}",
            if self.cpu_model.is_empty() {
                "unknown CPU"
            } else {
                &self.cpu_model
            },
            self.kernel,
            self.glibc
        );
        for (config, version) in &self.versions {
            text.push_str(&format!(", {config} {version}"));
        }
        text
    }
}

/// The CPU model of this machine, from /proc/cpuinfo (`model name` on x86,
/// `Model`, `Hardware` or `cpu model` elsewhere); empty when unknown.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .map(|text| parse_cpu_model(&text))
        .unwrap_or_default()
}

pub(crate) fn parse_cpu_model(cpuinfo: &str) -> String {
    ["model name", "Model", "Hardware", "cpu model"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                (name.trim() == *key && !value.trim().is_empty()).then(|| value.trim().to_string())
            })
        })
        .unwrap_or_default()
}

/// Lines saying which rounds ran where (`rounds 0, 2: node-a (...)`), and
/// whether the merged rounds ran on more than one platform.
pub fn where_rounds_ran(rounds: &[RoundFacts]) -> (Vec<String>, bool) {
    let mut by_place: BTreeMap<(String, String), Vec<u32>> = BTreeMap::new();
    let mut platforms = std::collections::BTreeSet::new();
    for facts in rounds.iter().filter(|f| f.state == MERGED) {
        platforms.insert(facts.platform());
        by_place
            .entry((facts.hostname.clone(), facts.platform()))
            .or_default()
            .push(facts.round);
    }
    let lines = by_place
        .into_iter()
        .map(|((host, platform), rounds)| {
            let list: Vec<String> = rounds.iter().map(u32::to_string).collect();
            format!(
                "round{} {}: {host} ({platform})",
                if rounds.len() > 1 { "s" } else { "" },
                list.join(", ")
            )
        })
        .collect();
    (lines, platforms.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(round: u32, host: &str, cpu: &str) -> RoundFacts {
        RoundFacts {
            round,
            state: MERGED.into(),
            hostname: host.into(),
            cpu_model: cpu.into(),
            kernel: "6.1".into(),
            glibc: "2.36".into(),
            versions: BTreeMap::from([("jemalloc".into(), "5.3.0".into())]),
        }
    }

    #[test]
    fn identical_nodes_are_one_platform_and_a_different_cpu_is_not() {
        let same = [facts(0, "a", "Xeon"), facts(1, "b", "Xeon")];
        let (lines, differ) = where_rounds_ran(&same);
        assert!(!differ);
        assert_eq!(lines.len(), 2);
        let mixed = [
            facts(0, "a", "Xeon"),
            facts(1, "a", "Xeon"),
            facts(2, "b", "EPYC"),
        ];
        let (lines, differ) = where_rounds_ran(&mixed);
        assert!(differ);
        assert_eq!(
            lines[0],
            "rounds 0, 1: a (Xeon, kernel 6.1, glibc 2.36, jemalloc 5.3.0)"
        );
        assert!(lines[1].starts_with("round 2: b (EPYC"), "{}", lines[1]);
    }

    #[test]
    fn cpu_models_are_read_from_cpuinfo() {
        assert_eq!(
            parse_cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n"),
            "AMD EPYC 7B13"
        );
        assert_eq!(parse_cpu_model("processor : 0\n"), "");
    }
}
