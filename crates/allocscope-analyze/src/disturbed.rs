//! Runs disturbed by other work on the machine, and the rule that names
//! them (docs/statistics.md, "Foreign CPU and disturbed runs").
//!
//! A run's foreign load is the CPU the machine spent outside allocscope and
//! the measured tree during the run, per second of the run: in cores. A
//! steady neighbour slows every run of a round alike, which the pairing
//! cancels; what it cannot cancel is a burst beside one run. So a run is
//! disturbed when its foreign load exceeds the experiment's typical (the
//! median over its measured runs) by more than `DISTURBED_EXCESS_CORES`, or
//! by more than half the CPUs the typical load leaves when that is less: on
//! a machine other work already keeps nearly busy, the foreign load cannot
//! rise far above the typical however starved the run is. A disturbed
//! run's round is left out of its configuration's performance ratio
//! (`judge::undisturbed_cost_ratio`) while two clean pairs remain; its memory
//! counts as measured (another process's CPU does not change this tree's
//! pages).

use super::stats::median;
use allocscope_core::model::{RunRecord, StoredExperiment};

/// How far above the experiment's typical foreign load, in cores, a run's
/// must be to call it disturbed (at most: `Rule::excess_cores`). Two busy
/// loops beside a run add up to about a core on a 2-core machine with room
/// for them; a third of that still names a burst. The background of builds
/// beside one experiment's 18 runs here ranged 0.86-1.67 cores (median
/// 1.30), and the line named 1 of them (1.67) (docs/statistics.md).
pub(crate) const DISTURBED_EXCESS_CORES: f64 = 0.3;

/// A run's foreign CPU per second of its wall time; `None` when it was not
/// measured or the run took no time.
pub fn foreign_cores(r: &RunRecord) -> Option<f64> {
    let cpu = r.foreign_cpu_s?;
    (r.wall_s > 0.0).then(|| cpu / r.wall_s)
}

/// The experiment's rule: its typical foreign load and the line above it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// The median foreign load of its measured runs, in cores.
    pub typical_cores: f64,
    /// The machine's CPUs; 0 when not known.
    pub cpus: u32,
}

impl Rule {
    /// The rule of `experiment`; `None` when no run measured foreign CPU.
    pub fn of(experiment: &StoredExperiment) -> Option<Rule> {
        let loads: Vec<f64> = experiment
            .configs
            .iter()
            .flat_map(|c| &c.runs)
            .filter_map(|r| foreign_cores(&r.record))
            .collect();
        median(&loads).map(|typical_cores| Rule {
            typical_cores,
            cpus: experiment.info.host.cpus,
        })
    }

    /// How far above the typical a disturbed run's foreign load is.
    pub fn excess_cores(&self) -> f64 {
        let headroom = f64::from(self.cpus) - self.typical_cores;
        if self.cpus == 0 {
            DISTURBED_EXCESS_CORES
        } else {
            DISTURBED_EXCESS_CORES.min(headroom.max(0.0) / 2.0)
        }
    }

    /// The foreign load above which a run is disturbed, in cores.
    pub fn limit_cores(&self) -> f64 {
        self.typical_cores + self.excess_cores()
    }

    pub fn is_disturbed(&self, r: &RunRecord) -> bool {
        foreign_cores(r).is_some_and(|c| c > self.limit_cores())
    }
}

/// True when `r` is disturbed under `experiment`'s rule.
pub fn is_disturbed_in(experiment: &StoredExperiment, r: &RunRecord) -> bool {
    Rule::of(experiment).is_some_and(|rule| rule.is_disturbed(r))
}

/// One disturbed run, as the reports name it.
#[derive(Debug, Clone, PartialEq)]
pub struct DisturbedRun {
    pub config: String,
    pub index: u32,
    pub foreign_cores: f64,
}

/// The experiment's disturbed runs and how many runs measured foreign CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Disturbance {
    pub rule: Rule,
    pub measured: usize,
    pub runs: Vec<DisturbedRun>,
}

impl Disturbance {
    /// `None` when no run measured foreign CPU.
    pub fn of(experiment: &StoredExperiment) -> Option<Disturbance> {
        let rule = Rule::of(experiment)?;
        let all = experiment
            .configs
            .iter()
            .flat_map(|c| c.runs.iter().map(move |r| (&c.config.name, &r.record)));
        let measured = all
            .clone()
            .filter(|(_, r)| r.foreign_cpu_s.is_some())
            .count();
        let runs = all
            .filter(|(_, r)| rule.is_disturbed(r))
            .map(|(name, r)| DisturbedRun {
                config: name.clone(),
                index: r.index,
                foreign_cores: foreign_cores(r).unwrap_or(0.0),
            })
            .collect();
        Some(Disturbance {
            rule,
            measured,
            runs,
        })
    }

    /// "2 of 24 runs disturbed by other work on the machine (...): glibc
    /// 1, jemalloc 1 (1.02-1.48 cores); ..."; `None` when none was. How
    /// many of each configuration's runs, not which: `report --section
    /// runs` names each, and a busy machine disturbs dozens.
    pub fn sentence(&self) -> Option<String> {
        let lo = self.runs.iter().map(|d| d.foreign_cores).reduce(f64::min)?;
        let hi = self.runs.iter().map(|d| d.foreign_cores).fold(lo, f64::max);
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for d in &self.runs {
            match counts.iter_mut().find(|(name, _)| *name == d.config) {
                Some((_, n)) => *n += 1,
                None => counts.push((&d.config, 1)),
            }
        }
        let counts: Vec<String> = counts.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let cores = match hi - lo < 0.005 {
            true => format!("{lo:.2} cores"),
            false => format!("{lo:.2}-{hi:.2} cores"),
        };
        Some(format!(
            "{} of {} runs disturbed by other work on the machine (foreign CPU over {:.2} \
             cores, the typical {:.2} + {:.2}): {} ({cores}); their rounds are left out of the \
             performance ratio (report --section runs names each run)",
            self.runs.len(),
            self.measured,
            self.rule.limit_cores(),
            self.rule.typical_cores,
            self.rule.excess_cores(),
            counts.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::fixture;

    fn with_foreign(loads: &[&[f64]]) -> StoredExperiment {
        let mut e = fixture::experiment();
        for (config, loads) in e.configs.iter_mut().zip(loads) {
            for (run, &load) in config.runs.iter_mut().zip(loads.iter()) {
                run.record.foreign_cpu_s = Some(load * run.record.wall_s);
            }
        }
        e
    }

    #[test]
    fn a_burst_above_the_typical_load_is_disturbed_and_a_steady_one_is_not() {
        // A steady neighbour of 1.0 core beside every run: none disturbed.
        let steady = with_foreign(&[
            &[1.0, 1.02, 0.98, 1.0, 1.0],
            &[1.01, 0.99, 1.0, 1.0, 1.0],
            &[1.0, 1.0, 1.0, 1.03, 0.97],
        ]);
        let d = Disturbance::of(&steady).expect("measured");
        assert!((d.rule.typical_cores - 1.0).abs() < 1e-9);
        assert!(d.runs.is_empty() && d.sentence().is_none());
        // A busy loop beside one run of a quiet machine.
        let burst = with_foreign(&[
            &[0.05, 0.04, 0.06, 0.05, 0.05],
            &[0.05, 1.05, 0.04, 0.05, 0.05],
            &[0.05, 0.05, 0.05, 0.05, 0.05],
        ]);
        let d = Disturbance::of(&burst).expect("measured");
        let name = burst.configs[1].config.name.clone();
        assert_eq!(d.runs.len(), 1);
        assert_eq!(
            (d.runs[0].config.as_str(), d.runs[0].index),
            (name.as_str(), 2)
        );
        let sentence = d.sentence().expect("one disturbed");
        assert!(
            sentence.starts_with("1 of 15 runs disturbed by other work on the machine"),
            "{sentence}"
        );
        assert!(
            sentence.contains(&format!("{name} 1 (1.05 cores)")),
            "{sentence}"
        );
        // Two more beside another configuration: counted per configuration,
        // with the range of their loads.
        let mut more = burst.clone();
        for run in &mut more.configs[2].runs[..2] {
            run.record.foreign_cpu_s = Some(1.30 * run.record.wall_s);
        }
        let sentence = Disturbance::of(&more)
            .and_then(|d| d.sentence())
            .unwrap_or_default();
        let other = more.configs[2].config.name.clone();
        assert!(
            sentence.starts_with("3 of 15 runs disturbed")
                && sentence.contains(&format!("{name} 1, {other} 2 (1.05-1.30 cores)")),
            "{sentence}"
        );
        assert!(is_disturbed_in(&burst, &burst.configs[1].runs[1].record));
        assert!(!is_disturbed_in(&burst, &burst.configs[1].runs[0].record));
    }

    /// Other work keeps 1.7 of 2 CPUs busy beside every run: a burst that
    /// starves one run lifts its foreign load only to about 2.
    #[test]
    fn on_a_nearly_busy_machine_the_line_is_half_the_headroom() {
        let busy = with_foreign(&[
            &[1.62, 1.97, 1.71, 1.65, 1.69],
            &[1.68, 1.66, 1.70, 1.64, 1.69],
            &[1.67, 1.70, 1.66, 1.69, 1.68],
        ]);
        let d = Disturbance::of(&busy).expect("measured");
        assert_eq!(busy.info.host.cpus, 2);
        assert!((d.rule.excess_cores() - 0.16).abs() < 1e-9, "{:?}", d.rule);
        let named: Vec<(String, u32)> =
            d.runs.iter().map(|r| (r.config.clone(), r.index)).collect();
        assert_eq!(named, [(busy.configs[0].config.name.clone(), 2)]);
        // Unknown CPUs: the fixed excess.
        let rule = Rule {
            typical_cores: 1.68,
            cpus: 0,
        };
        assert_eq!(rule.excess_cores(), DISTURBED_EXCESS_CORES);
    }

    #[test]
    fn runs_without_foreign_cpu_have_no_rule() {
        let e = fixture::experiment();
        assert_eq!(Disturbance::of(&e), None);
        assert!(!is_disturbed_in(&e, &e.configs[0].runs[0].record));
    }
}
