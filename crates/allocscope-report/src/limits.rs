//! What the terminal, Markdown and HTML reports share about where the runs
//! ran and what a container needs: the host in one line, the line saying
//! whether each run had a memory cgroup of its own (and why not, with how
//! to get one) and under which `--memory-limit`; and per configuration the
//! memory limit it needs (`analyze::limit`) and, where the runs had a
//! cgroup and PSS was read, the cgroup's charge (every page of the tree
//! once, the figure a platform limits on) against the tree's PSS, and their
//! difference.

use allocscope_analyze::types::Analysis;
use allocscope_core::model::Host;
use allocscope_core::units::{format_bytes, ColumnUnit, Unit};

/// `box, Linux 6.8.0, glibc 2.39, 2 CPUs, THP madvise, cgroup memory limit
/// none`.
pub(crate) fn host_line(h: &Host) -> String {
    let limit = h.cgroup_memory_limit_bytes.map(|b| format_bytes(b as f64));
    format!(
        "{}, Linux {}, glibc {}, {} CPUs, THP {}, cgroup memory limit {}",
        h.hostname,
        h.kernel,
        h.glibc,
        h.cpus,
        h.thp,
        limit.as_deref().unwrap_or("none")
    )
}

/// `runs: each in a memory cgroup of its own (v1), limit 64 MiB`, or why
/// not and how to get one; `None` for an experiment that did not record it.
pub(crate) fn runs_line(host: &Host) -> Option<String> {
    let how = host.run_cgroup.as_deref()?;
    let group = match how {
        "off" => "not in a memory cgroup (--cgroup off)".to_string(),
        version if !version.starts_with("none") => {
            format!("each in a memory cgroup of its own (cgroup {version})")
        }
        none => format!(
            "not in a memory cgroup ({}): no charge or working set; {}",
            none.trim_start_matches("none")
                .trim_start_matches(':')
                .trim(),
            allocscope_core::cgroup::HOW_TO_GET_ONE
        ),
    };
    let limit = host
        .run_memory_limit_bytes
        .map(|b| format!(", --memory-limit {}", format_bytes(b as f64)))
        .unwrap_or_default();
    Some(format!("runs: {group}{limit}"))
}

/// The column heads of `rows`, by what the experiment measured.
pub fn head(analysis: &Analysis) -> Vec<String> {
    let mut head = vec![
        "configuration".to_string(),
        "needs a memory limit of".to_string(),
        "from".to_string(),
    ];
    if with_charge(analysis) {
        head.extend(["mean cgroup charge", "mean PSS", "charge - PSS"].map(String::from));
    }
    head
}

/// The title the terminal block carries.
pub fn title(analysis: &Analysis) -> String {
    let headroom = analysis
        .limits
        .iter()
        .flatten()
        .map(|l| l.headroom_pct)
        .next()
        .unwrap_or(allocscope_core::judging::DEFAULT_LIMIT_HEADROOM_PCT);
    format!("memory limit needed (highest peak of the ok runs + {headroom}%)")
}

/// Whether some configuration has both a cgroup charge and a PSS.
fn with_charge(analysis: &Analysis) -> bool {
    analysis.summaries.iter().any(|s| {
        s.estimate("mean_cgroup_bytes").is_some() && s.estimate("mean_pss_bytes").is_some()
    })
}

/// One row per configuration, cells as `head` orders them; empty when no
/// configuration has a limit.
pub fn rows(analysis: &Analysis) -> Vec<Vec<String>> {
    if analysis.limits.iter().all(Option::is_none) {
        return Vec::new();
    }
    let medians = |id: &str| -> Vec<Option<f64>> {
        analysis
            .summaries
            .iter()
            .map(|s| s.estimate(id).map(|e| e.median))
            .collect()
    };
    let (charge, pss) = (medians("mean_cgroup_bytes"), medians("mean_pss_bytes"));
    let unit = ColumnUnit::for_values(Unit::Bytes, charge.iter().chain(&pss).flatten().copied());
    let show = |v: Option<f64>| v.map_or("-".to_string(), |v| unit.show(v));
    let charge_column = with_charge(analysis);
    analysis
        .experiment
        .configs
        .iter()
        .zip(&analysis.limits)
        .enumerate()
        .map(|(i, (config, limit))| {
            let mut row = vec![config.config.name.clone()];
            match limit {
                Some(l) => row.extend([
                    format!("{} MiB", l.mib()),
                    format!(
                        "{} {}, {} run{}",
                        l.basis_label,
                        format_bytes(l.peak_bytes as f64),
                        l.runs,
                        if l.runs == 1 { "" } else { "s" }
                    ),
                ]),
                None => row.extend(["-".to_string(), "no successful runs".to_string()]),
            }
            if charge_column {
                let difference = match (charge[i], pss[i]) {
                    (Some(c), Some(p)) if p > 0.0 => format!(
                        "{}{} ({:+.1}%)",
                        if c >= p { "+" } else { "-" },
                        unit.show((c - p).abs()),
                        100.0 * (c - p) / p
                    ),
                    _ => "-".to_string(),
                };
                row.extend([show(charge[i]), show(pss[i]), difference]);
            }
            row
        })
        .collect()
}

/// The terminal's block: the title, then one aligned line per
/// configuration (the name column `width` wide); nothing without limits.
pub fn block(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    use std::fmt::Write;
    let rows = rows(analysis);
    if rows.is_empty() {
        return Ok(());
    }
    let mut heads = head(analysis);
    heads[0] = String::new();
    writeln!(out, "\n{}", title(analysis))?;
    super::section::terminal(out, width, &heads, &rows, |_| false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_line_says_whether_runs_had_a_cgroup_and_how_to_get_one() {
        let mut host = Host::default();
        assert_eq!(runs_line(&host), None);
        host.run_cgroup = Some("v2".into());
        host.run_memory_limit_bytes = Some(64 << 20);
        assert_eq!(
            runs_line(&host).as_deref(),
            Some("runs: each in a memory cgroup of its own (cgroup v2), --memory-limit 64.0 MiB")
        );
        host.run_cgroup = Some("none: cannot write /sys/fs/cgroup: Permission denied".into());
        host.run_memory_limit_bytes = None;
        let line = runs_line(&host).unwrap_or_default();
        assert!(
            line.contains("(cannot write /sys/fs/cgroup: Permission denied)"),
            "{line}"
        );
        assert!(
            line.contains("systemd-run --user --scope -p Delegate=yes"),
            "{line}"
        );
    }
}
