//! What the store keeps of a race, beside its experiment's runs: the
//! environment entry `tune` (JSON), so that `report` re-renders and
//! re-judges a race at the level it was raced at, with who was dropped,
//! when and why, and which experiment held phase one.

use super::race::Dropped;
use serde::{Deserialize, Serialize};

/// The environment key a race's record is stored under.
pub const TUNE_KEY: &str = "tune";

/// One phase of a race, as stored with its experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneRecord {
    /// 1: each setting on its own; 2: the finalists and the combinations.
    pub phase: u32,
    /// The candidates that raced the baseline (the family the level is
    /// shared among).
    pub candidates: usize,
    /// The two-sided level of each look (`race::race_alpha`).
    pub race_alpha: f64,
    /// The two-sided level of the final verdict (`race::verdict_alpha`).
    pub verdict_alpha: f64,
    /// In the order they were dropped.
    pub dropped: Vec<Dropped>,
    /// Phase two: the experiment that held phase one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<i64>,
    /// Phase two: the combinations of settings that helped on their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub combined: Vec<String>,
}

impl TuneRecord {
    /// The record among an experiment's environment entries, if it is a race.
    pub fn from_environment(entries: &[(String, Option<String>)]) -> Option<TuneRecord> {
        entries
            .iter()
            .find(|(key, _)| key == TUNE_KEY)
            .and_then(|(_, value)| serde_json::from_str(value.as_deref()?).ok())
    }

    /// Why a configuration stopped running, if it was dropped.
    pub fn dropped(&self, config: &str) -> Option<&Dropped> {
        self.dropped.iter().find(|d| d.config == config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_through_the_environment() {
        let record = TuneRecord {
            phase: 2,
            candidates: 4,
            race_alpha: 0.001,
            verdict_alpha: 0.0125,
            dropped: vec![Dropped {
                config: "glibc:arena_max=1".into(),
                round: 3,
                reason: "over the 5% budget".into(),
            }],
            earlier: Some(7),
            combined: vec!["glibc:arena_max=2,trim=1s".into()],
        };
        let json = serde_json::to_string(&record).expect("encodes");
        let env = vec![
            ("kernel".to_string(), Some("6.1".to_string())),
            (TUNE_KEY.to_string(), Some(json)),
        ];
        assert_eq!(TuneRecord::from_environment(&env), Some(record.clone()));
        assert_eq!(
            record.dropped("glibc:arena_max=1").map(|d| d.round),
            Some(3)
        );
        assert_eq!(TuneRecord::from_environment(&env[..1]), None);
    }
}
