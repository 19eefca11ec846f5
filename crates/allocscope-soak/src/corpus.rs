//! The labelled corpus: simulated series of known shape (`simulate.rs`) at
//! several noise levels and sampling intervals, each judged as
//! `--until settled` judges a soak: a look at the series so far every
//! `LOOK_EVERY_S`, stopping when two looks in a row find it settled on the
//! same call, else judged at the end. The corpus bench prints, per shape
//! and noise, the share classified right and the median time to a
//! decision; the tests hold false alarms on plateau shapes under 1%.

use crate::growth::Settling;
use crate::instance::{summarize, InstanceSeries};
use crate::simulate::{series, Noise, Shape, LEVEL};
use allocscope_core::rng::SplitMix64;

/// How long each simulated soak may run.
pub const DURATION_S: f64 = 3600.0;
/// How often the simulated soak looks at whether it has settled.
pub const LOOK_EVERY_S: f64 = 120.0;

/// What a shape should be called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truth {
    /// It levels off (after a warm-up, a step, a restart; or a level it
    /// returns to each period): "grows" or a leak is a false alarm.
    Plateau,
    /// It grows for good: a leak.
    Grows,
}

/// The corpus's shapes with their truth.
pub fn shapes() -> Vec<(&'static str, Shape, Truth)> {
    vec![
        (
            "warm-up then plateau",
            Shape::LevelsOff {
                share_per_hour: 0.2 * 3600.0 / 150.0,
                until_s: 150.0,
            },
            Truth::Plateau,
        ),
        (
            "slow convergence to a plateau",
            Shape::Saturates {
                share: 0.2,
                tau_s: 180.0,
            },
            Truth::Plateau,
        ),
        ("linear leak", Shape::Linear(0.05), Truth::Grows),
        (
            "step then flat",
            Shape::Step {
                share: 0.1,
                at_s: 900.0,
            },
            Truth::Plateau,
        ),
        (
            "sawtooth",
            Shape::Sawtooth {
                share: 0.3,
                period_s: 60.0,
            },
            Truth::Plateau,
        ),
        (
            "periodic load",
            Shape::Periodic {
                share: 0.1,
                period_s: 600.0,
            },
            Truth::Plateau,
        ),
        (
            "restart mid-soak",
            Shape::Restart {
                share: 0.2,
                warm_s: 150.0,
                at_s: 1800.0,
            },
            Truth::Plateau,
        ),
        (
            "leak under a sawtooth",
            Shape::LeakUnderSawtooth {
                share_per_hour: 0.05,
                share: 0.3,
                period_s: 60.0,
            },
            Truth::Grows,
        ),
    ]
}

/// A noise level and sampling interval of the corpus.
#[derive(Debug, Clone, Copy)]
pub struct Condition {
    /// AR(1) noise as a share of the level.
    pub noise_share: f64,
    pub tau_s: f64,
    pub step_s: f64,
}

impl Condition {
    pub fn label(&self) -> String {
        format!(
            "noise {:.1}%, tau {:.0} s, every {:.0} s",
            self.noise_share * 100.0,
            self.tau_s,
            self.step_s
        )
    }
}

/// The noise levels and sampling intervals: 0.2% and 1% of the level, with
/// correlation times of 30 s and 2 min, sampled every 1 s or 5 s.
pub const CONDITIONS: [Condition; 4] = [
    Condition {
        noise_share: 0.002,
        tau_s: 30.0,
        step_s: 1.0,
    },
    Condition {
        noise_share: 0.002,
        tau_s: 30.0,
        step_s: 5.0,
    },
    Condition {
        noise_share: 0.01,
        tau_s: 30.0,
        step_s: 5.0,
    },
    Condition {
        noise_share: 0.01,
        tau_s: 120.0,
        step_s: 5.0,
    },
];

/// What a simulated soak decided, and when.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub settling: Settling,
    /// The elapsed time it stopped at, or `DURATION_S`.
    pub at_s: f64,
}

impl Decision {
    /// A "grows" (or a leak) on a shape that levels off.
    pub fn false_alarm(&self, truth: Truth) -> bool {
        truth == Truth::Plateau && self.settling.grows()
    }

    pub fn right(&self, truth: Truth) -> bool {
        match truth {
            Truth::Plateau => self.settling == Settling::Plateau,
            Truth::Grows => self.settling.grows(),
        }
    }
}

/// How long a simulated soak may run and how often it looks.
#[derive(Debug, Clone, Copy)]
pub struct Length {
    pub duration_s: f64,
    pub look_every_s: f64,
}

/// The corpus's soaks: an hour, looked at every 2 minutes.
pub const HOUR_SOAK: Length = Length {
    duration_s: DURATION_S,
    look_every_s: LOOK_EVERY_S,
};

/// One simulated soak of `shape` under `condition`, an hour long.
pub fn decide(shape: Shape, condition: Condition, rng: &mut SplitMix64) -> Decision {
    decide_over(shape, condition, HOUR_SOAK, rng)
}

/// One simulated soak of `shape` under `condition`, `length` long.
pub fn decide_over(
    shape: Shape,
    condition: Condition,
    length: Length,
    rng: &mut SplitMix64,
) -> Decision {
    let Length {
        duration_s,
        look_every_s,
    } = length;
    let noise = Noise {
        sd: condition.noise_share * LEVEL,
        tau_s: condition.tau_s,
    };
    let sim = series(shape, noise, condition.step_s, duration_s, rng);
    let restart_s = match shape {
        Shape::Restart { at_s, .. } => Some(at_s),
        _ => None,
    };
    let judge = |until_s: f64| {
        let upto = sim.noisy.partition_point(|p| p.0 <= until_s);
        let instance = InstanceSeries {
            memory: &sim.noisy[..upto],
            live_heap: &[],
            allocator_free: &[],
            cpu: &[],
            restart_s: restart_s.filter(|&r| r <= until_s),
        };
        summarize(&instance).map(|s| s.settling)
    };
    let mut last = None;
    let mut at = look_every_s;
    while at < duration_s {
        let now = judge(at).filter(|s| s.is_settled());
        if now.is_some() && now == last {
            return Decision {
                settling: now.unwrap_or(Settling::Open),
                at_s: at,
            };
        }
        last = now;
        at += look_every_s;
    }
    Decision {
        settling: judge(duration_s).unwrap_or(Settling::Open),
        at_s: duration_s,
    }
}

/// `count` soaks of `shape` under `condition` from `seed`, on `threads`
/// threads.
pub fn decisions(
    shape: Shape,
    condition: Condition,
    count: usize,
    seed: u64,
    threads: usize,
) -> Vec<Decision> {
    decisions_over(shape, condition, HOUR_SOAK, count, seed, threads)
}

/// `count` soaks `length` long of `shape` under `condition` from `seed`,
/// on `threads` threads.
pub fn decisions_over(
    shape: Shape,
    condition: Condition,
    length: Length,
    count: usize,
    seed: u64,
    threads: usize,
) -> Vec<Decision> {
    let threads = threads.max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                scope.spawn(move || {
                    let mut rng = SplitMix64::new(seed ^ (k as u64).wrapping_mul(0x9E37_79B9));
                    (k..count)
                        .step_by(threads)
                        .map(|_| decide_over(shape, condition, length, &mut rng))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}
