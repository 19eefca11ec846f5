//! Simulated memory series with a known truth, for the coverage tests and
//! the labelled corpus (`corpus.rs`): a noise-free shape (flat, linear
//! growth, a staircase, growth that levels off, a warm-up, a saturating
//! climb, a step, a sawtooth, a periodic load, a leak under a sawtooth)
//! plus AR(1) noise, the autocorrelated wander of memory sampled often.

use allocscope_core::rng::SplitMix64;

/// The level the shapes start from (1 GB).
pub const LEVEL: f64 = 1e9;

/// A noise-free memory curve.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    Flat,
    /// Growth of this share of `LEVEL` per hour.
    Linear(f64),
    /// A step of `share` of `LEVEL` every `every_s`, at a random phase.
    Steps {
        share: f64,
        every_s: f64,
    },
    /// Linear growth of `share_per_hour` until `until_s`, flat after.
    LevelsOff {
        share_per_hour: f64,
        until_s: f64,
    },
    /// Slow convergence to a plateau `share` above the start:
    /// `share (1 - e^(-t/tau))`, as fragmentation that saturates.
    Saturates {
        share: f64,
        tau_s: f64,
    },
    /// Flat, then a step of `share` at `at_s`, flat after.
    Step {
        share: f64,
        at_s: f64,
    },
    /// A collector's sawtooth: from the level up by `share` over each
    /// `period_s`, then back.
    Sawtooth {
        share: f64,
        period_s: f64,
    },
    /// A periodic load: `share` times a sine of `period_s`.
    Periodic {
        share: f64,
        period_s: f64,
    },
    /// A warm-up of `share` over `warm_s`, flat, and at `at_s` a restart
    /// that starts it over.
    Restart {
        share: f64,
        warm_s: f64,
        at_s: f64,
    },
    /// Linear growth of `share_per_hour` under a sawtooth of `share` every
    /// `period_s`.
    LeakUnderSawtooth {
        share_per_hour: f64,
        share: f64,
        period_s: f64,
    },
}

impl Shape {
    pub fn label(&self) -> String {
        let pct = |s: f64| format!("{:.1}%", s * 100.0);
        match *self {
            Shape::Flat => "flat".into(),
            Shape::Linear(s) => format!("linear {}/h", pct(s)),
            Shape::Steps { share, every_s } => {
                format!("steps {} every {:.0} min", pct(share), every_s / 60.0)
            }
            Shape::LevelsOff {
                share_per_hour,
                until_s,
            } => {
                format!(
                    "{}/h, flat from {:.1} h",
                    pct(share_per_hour),
                    until_s / 3600.0
                )
            }
            Shape::Saturates { share, tau_s } => {
                format!("{} saturating, tau {:.0} min", pct(share), tau_s / 60.0)
            }
            Shape::Step { share, at_s } => {
                format!("step {} at {:.0} min", pct(share), at_s / 60.0)
            }
            Shape::Sawtooth { share, period_s } => {
                format!("sawtooth {} every {:.0} s", pct(share), period_s)
            }
            Shape::Periodic { share, period_s } => {
                format!("periodic {} every {:.0} min", pct(share), period_s / 60.0)
            }
            Shape::Restart { at_s, .. } => format!("restart at {:.0} min", at_s / 60.0),
            Shape::LeakUnderSawtooth {
                share_per_hour,
                period_s,
                ..
            } => format!(
                "{}/h under a sawtooth every {:.0} s",
                pct(share_per_hour),
                period_s
            ),
        }
    }

    /// The noise-free value at `t_s`; `phase_s` shifts a staircase.
    pub fn value(&self, t_s: f64, phase_s: f64) -> f64 {
        let hours = |t: f64| t / 3600.0;
        LEVEL
            * (1.0
                + match *self {
                    Shape::Flat => 0.0,
                    Shape::Linear(s) => s * hours(t_s),
                    Shape::Steps { share, every_s } => share * ((t_s + phase_s) / every_s).floor(),
                    Shape::LevelsOff {
                        share_per_hour,
                        until_s,
                    } => share_per_hour * hours(t_s.min(until_s)),
                    Shape::Saturates { share, tau_s } => share * (1.0 - (-t_s / tau_s).exp()),
                    Shape::Step { share, at_s } => share * f64::from(u8::from(t_s >= at_s)),
                    Shape::Sawtooth { share, period_s } => {
                        share * ((t_s + phase_s) / period_s).fract()
                    }
                    Shape::Periodic { share, period_s } => {
                        share * (std::f64::consts::TAU * (t_s + phase_s) / period_s).sin()
                    }
                    Shape::Restart {
                        share,
                        warm_s,
                        at_s,
                    } => share * (since_restart(t_s, at_s) / warm_s).min(1.0),
                    Shape::LeakUnderSawtooth {
                        share_per_hour,
                        share,
                        period_s,
                    } => share_per_hour * hours(t_s) + share * ((t_s + phase_s) / period_s).fract(),
                })
    }

    /// The true growth at `t_s`, per hour: the staircase's mean rate.
    pub fn growth_per_hour(&self, t_s: f64) -> f64 {
        LEVEL
            * match *self {
                Shape::Flat => 0.0,
                Shape::Linear(s) => s,
                Shape::Steps { share, every_s } => share * 3600.0 / every_s,
                Shape::LevelsOff {
                    share_per_hour,
                    until_s,
                } => {
                    if t_s < until_s {
                        share_per_hour
                    } else {
                        0.0
                    }
                }
                Shape::Saturates { share, tau_s } => share * 3600.0 / tau_s * (-t_s / tau_s).exp(),
                Shape::Step { .. } | Shape::Sawtooth { .. } | Shape::Periodic { .. } => 0.0,
                Shape::Restart {
                    share,
                    warm_s,
                    at_s,
                } => {
                    if since_restart(t_s, at_s) < warm_s {
                        share * 3600.0 / warm_s
                    } else {
                        0.0
                    }
                }
                Shape::LeakUnderSawtooth { share_per_hour, .. } => share_per_hour,
            }
    }
}

/// The time since the last restart at `at_s` (since 0 before it).
fn since_restart(t_s: f64, at_s: f64) -> f64 {
    if t_s >= at_s {
        t_s - at_s
    } else {
        t_s
    }
}

/// AR(1) noise: stationary standard deviation `sd`, correlation time `tau_s`.
#[derive(Debug, Clone, Copy)]
pub struct Noise {
    pub sd: f64,
    pub tau_s: f64,
}

pub fn uniform(rng: &mut SplitMix64) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal draw (Box–Muller).
pub fn normal(rng: &mut SplitMix64) -> f64 {
    let (u, v) = (uniform(rng), uniform(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// One simulated series and its truth.
pub struct Simulated {
    pub noisy: Vec<(f64, f64)>,
    pub truth: Vec<(f64, f64)>,
    /// The staircase's phase, for its true value beyond the series.
    pub phase_s: f64,
}

/// `shape` sampled every `step_s` for `duration_s` with `noise`.
pub fn series(
    shape: Shape,
    noise: Noise,
    step_s: f64,
    duration_s: f64,
    rng: &mut SplitMix64,
) -> Simulated {
    let phase = match shape {
        Shape::Steps { every_s, .. } => uniform(rng) * every_s,
        Shape::Sawtooth { period_s, .. }
        | Shape::Periodic { period_s, .. }
        | Shape::LeakUnderSawtooth { period_s, .. } => uniform(rng) * period_s,
        _ => 0.0,
    };
    let phi = (-step_s / noise.tau_s).exp();
    let innovation = noise.sd * (1.0 - phi * phi).sqrt();
    let mut e = noise.sd * normal(rng);
    let n = (duration_s / step_s) as usize;
    let mut noisy = Vec::with_capacity(n);
    let mut truth = Vec::with_capacity(n);
    for i in 0..n {
        let t = i as f64 * step_s;
        let v = shape.value(t, phase);
        noisy.push((t, v + e));
        truth.push((t, v));
        e = phi * e + innovation * normal(rng);
    }
    Simulated {
        noisy,
        truth,
        phase_s: phase,
    }
}
