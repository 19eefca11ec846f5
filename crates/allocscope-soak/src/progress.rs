//! The progress block a soak shows while it runs: how far it is and how
//! long it has left, then per configuration its level, its growth rate
//! with the 95% interval, and whether it has settled (since which look) or
//! when it would. Pure text from the configurations' figures now; `live.rs`
//! draws it.

use crate::config::ConfigSummary;
use crate::growth::{Settling, PERSISTS_FOR_S};
use crate::render::{bytes_text, growth_text};
use allocscope_core::units::format_seconds;

/// Where the soak stands.
pub struct Pace {
    pub elapsed_s: f64,
    /// `--duration`: the cap.
    pub duration_s: Option<f64>,
    /// `--until settled`: it stops once every configuration has settled.
    pub until_settled: bool,
}

/// One configuration now.
pub struct ConfigNow {
    pub label: String,
    pub replicas: usize,
    /// Its replicas combined; `None` while one has too few samples.
    pub summary: Option<ConfigSummary>,
    /// The elapsed time of the first look that found it settled, in the
    /// run of looks that still does.
    pub settled_by_s: Option<f64>,
}

impl ConfigNow {
    /// How long it has left to settle at its current noise and centre: 0
    /// once settled; `None` when the statistics cannot say.
    fn settles_in_s(&self) -> Option<f64> {
        let s = self.summary.as_ref()?;
        if s.settling.is_settled() {
            return Some(0.0);
        }
        Some((s.settles_after_s? - (s.end_s - s.start_s)).max(0.0))
    }
}

/// The block: a line on the soak, then two per configuration.
pub fn block(configs: &[ConfigNow], pace: &Pace) -> Vec<String> {
    let elapsed = format_seconds(pace.elapsed_s);
    let mut lines = vec![match pace.duration_s {
        Some(cap) => format!(
            "allocscope: soak at {elapsed} of {}, {}",
            format_seconds(cap),
            left(configs, pace)
        ),
        None => format!("allocscope: soak at {elapsed}, {}", left(configs, pace)),
    }];
    for c in configs {
        let Some(s) = &c.summary else {
            lines.push(format!(
                "  {} x{}: too few samples yet",
                c.label, c.replicas
            ));
            continue;
        };
        lines.push(format!(
            "  {} x{}: level {}",
            c.label,
            c.replicas,
            bytes_text(s.level.median, s.level.ci_low, s.level.ci_high)
        ));
        let by = c
            .settled_by_s
            .map_or(String::new(), |t| format!(" by {}", format_seconds(t)));
        let state = match (s.settling, c.settles_in_s()) {
            (Settling::Plateau, _) => format!("settled{by}: flat"),
            (Settling::Grows, _) => format!("settled{by}: grows beyond noise"),
            // Growth beyond noise not yet seen for PERSISTS_FOR_S.
            (Settling::Rising, _) => format!(
                "rising, seen {} of {}",
                format_seconds(s.seen_s),
                format_seconds(PERSISTS_FOR_S)
            ),
            (Settling::Open, Some(t)) => {
                format!("open, would settle in about {}", format_seconds(t))
            }
            (Settling::Open, None) => "open, no estimate of when it settles".to_string(),
        };
        lines.push(format!("    growth {}, {state}", growth_text(&s.growth)));
    }
    lines
}

/// The time left: to the cap, or with `--until settled` what the
/// slowest configuration needs (within the cap), when every one can say.
fn left(configs: &[ConfigNow], pace: &Pace) -> String {
    let cap = pace.duration_s.map(|d| (d - pace.elapsed_s).max(0.0));
    let settles = (configs.iter()).try_fold(0.0_f64, |m, c| Some(m.max(c.settles_in_s()?)));
    let at_most = cap.map_or(String::new(), |c| {
        format!(", at most {} left", format_seconds(c))
    });
    match (pace.until_settled, settles, cap) {
        // The soak stops at the next looks that find the verdict decided.
        (true, Some(0.0), _) => format!("every configuration settled{at_most}"),
        (true, Some(s), cap) => {
            format!("about {} left", format_seconds(cap.map_or(s, |c| s.min(c))))
        }
        (true, None, Some(c)) => format!("at most {} left", format_seconds(c)),
        (true, None, None) => "left: until every configuration settles".to_string(),
        (false, _, Some(c)) => format!("{} left", format_seconds(c)),
        (false, _, None) => "left: until Ctrl-C".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::growth::Growth;
    use allocscope_analyze::figures::Estimate;

    /// A configuration 600 s into its segment, `settling` with
    /// `settles_after_s`.
    fn config(label: &str, settling: Settling, settles_after_s: Option<f64>) -> ConfigNow {
        let rate = Growth {
            per_hour: 1e6,
            ci_low: -1e6,
            ci_high: 3e6,
            std_err: 1e6,
            df: 30,
        };
        ConfigNow {
            label: label.into(),
            replicas: 2,
            summary: Some(ConfigSummary {
                replicas: 2,
                level: Estimate {
                    median: 1e8,
                    ci_low: 0.9e8,
                    ci_high: 1.1e8,
                },
                level_at_s: 450.0,
                start_s: 0.0,
                end_s: 600.0,
                window_start_s: 300.0,
                seen_s: 300.0,
                period_s: None,
                growth: rate,
                settling,
                settles_after_s,
            }),
            settled_by_s: settling.is_settled().then_some(300.0),
        }
    }

    fn pace(duration_s: Option<f64>, until_settled: bool) -> Pace {
        Pace {
            elapsed_s: 600.0,
            duration_s,
            until_settled,
        }
    }

    #[test]
    fn the_time_left_is_the_slowest_configurations_within_the_cap() {
        let configs = [
            config("glibc", Settling::Plateau, None),
            config("jemalloc", Settling::Open, Some(1800.0)),
        ];
        let lines = block(&configs, &pace(Some(3600.0), true));
        assert_eq!(
            lines[0],
            "allocscope: soak at 10.0 min of 60.0 min, about 20.0 min left"
        );
        assert_eq!(lines[1], "  glibc x2: level 95.4 MiB [85.8 MiB, 105 MiB]");
        assert!(
            lines[2].ends_with(", settled by 300 s: flat"),
            "{}",
            lines[2]
        );
        assert!(
            lines[4].ends_with(", open, would settle in about 20.0 min"),
            "{}",
            lines[4]
        );
        let capped = block(&configs, &pace(Some(900.0), true));
        assert!(capped[0].ends_with("about 300 s left"), "{}", capped[0]);
        let by_cap = block(&configs, &pace(Some(3600.0), false));
        assert!(by_cap[0].ends_with(", 50.0 min left"), "{}", by_cap[0]);
    }

    #[test]
    fn without_an_estimate_the_cap_bounds_the_time_left() {
        let mut configs = [
            config("glibc", Settling::Grows, None),
            config("jemalloc", Settling::Open, None),
        ];
        let lines = block(&configs, &pace(Some(3600.0), true));
        assert!(
            lines[0].ends_with(", at most 50.0 min left"),
            "{}",
            lines[0]
        );
        assert!(lines[2].ends_with(", settled by 300 s: grows beyond noise"));
        assert!(lines[4].ends_with(", open, no estimate of when it settles"));
        configs[1] = config("jemalloc", Settling::Plateau, None);
        let settled = block(&configs, &pace(None, true));
        assert_eq!(
            settled[0],
            "allocscope: soak at 10.0 min, every configuration settled"
        );
        configs[1].summary = None;
        let waiting = block(&configs, &pace(None, true));
        assert_eq!(waiting[3], "  jemalloc x2: too few samples yet");
        assert!(waiting[0].ends_with("left: until every configuration settles"));
    }
}
