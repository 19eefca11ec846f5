//! `allocscope compare` itself on the trees of `big_trees`: the real binary
//! as a user runs it (the heap probe on, as by default), with and without
//! the run's memory cgroup, sampling at 100 ms from the spawn. `fork_tree`
//! reads the true sum of `Pss` (and, in a group, the group's charge)
//! halfway through its hold; the run's figures for the tree are judged
//! against it: the mean and the worst of the samples of the whole tree
//! from a second after it was forked until its children are woken to exit
//! (`fork_tree`'s markers), and the run's peak. The sampler's
//! share of a core is `sampler_cpu_s` over `wall_s`: the whole run, the
//! tree's forking included.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// How long the whole tree sleeps.
const HOLD_MS: u64 = 8000;
const MIB: f64 = 1024.0 * 1024.0;

/// One tree measured through `compare`.
pub struct CompareRow {
    pub processes: usize,
    pub shape: &'static str,
    pub cgroup: bool,
    pub true_pss_mib: f64,
    /// Over the steady samples: the mean PSS, and the worst error in %.
    pub pss_mib: f64,
    pub worst_pss_pct: f64,
    /// The run's `peak_pss_bytes`, as an error in %.
    pub peak_pss_pct: f64,
    /// In a group: the steady samples' mean charge, and the one
    /// `fork_tree` read.
    pub charge_mib: Option<f64>,
    pub true_charge_mib: Option<f64>,
    pub core_pct: f64,
    pub note: String,
}

impl CompareRow {
    pub fn pss_error_pct(&self) -> f64 {
        100.0 * (self.pss_mib - self.true_pss_mib) / self.true_pss_mib
    }

    pub fn charge_error_pct(&self) -> Option<f64> {
        let (c, t) = (self.charge_mib?, self.true_charge_mib?);
        Some(100.0 * (c - t) / t)
    }
}

/// Runs `compare` on a tree of `children`; `cgroup` asks for the run's
/// group (`auto`), else `off`.
pub fn measure(
    program: &Path,
    children: usize,
    (shape, child_mib): (&'static str, u32),
    cgroup: bool,
) -> Result<CompareRow, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let json_path = dir.path().join("out.json");
    let output = Command::new(env!("CARGO_BIN_EXE_allocscope"))
        .arg("compare")
        .arg("--db")
        .arg(dir.path().join("db.sqlite"))
        .arg("--export-json")
        .arg(&json_path)
        .args(["-a", "glibc", "-r", "1", "--samples", "--cgroup"])
        .arg(if cgroup { "auto" } else { "off" })
        .arg("--")
        .arg(program)
        .args([
            children.to_string(),
            "64".into(),
            child_mib.to_string(),
            HOLD_MS.to_string(),
        ])
        .current_dir(dir.path())
        .output()
        .map_err(|e| format!("running compare: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "compare failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = std::fs::read_to_string(&json_path).map_err(|e| format!("the export: {e}"))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| format!("the export: {e}"))?;
    let run = &json["configs"][0]["runs"][0];
    let printed = run["stdout_path"]
        .as_str()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .ok_or("the tree's stdout")?;
    let value = |key: &str| {
        printed
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let truth = value("true_pss_kib ").ok_or("no true_pss_kib")? * 1024.0;
    let marked = |label: &str| {
        run["markers"]
            .as_array()?
            .iter()
            .find(|m| m["label"] == label)?["t_s"]
            .as_f64()
    };
    let from_s = marked("forked").ok_or("no marker forked")? + 1.0;
    let to_s = marked("waking").ok_or("no marker waking")?;
    let steady: Vec<&Value> = run["timeline"]
        .as_array()
        .ok_or("no timeline")?
        .iter()
        .filter(|s| s["processes"].as_u64() == Some(children as u64 + 1))
        .filter(|s| s["t_s"].as_f64().is_some_and(|t| t >= from_s && t < to_s))
        .collect();
    let mean = |key: &dyn Fn(&Value) -> Option<f64>| {
        let values: Vec<f64> = steady.iter().filter_map(|s| key(s)).collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let pss = |s: &Value| s["pss_bytes"].as_f64();
    let pct = |bytes: f64| 100.0 * (bytes - truth) / truth;
    let worst = steady
        .iter()
        .filter_map(|s| pss(s))
        .map(|p| pct(p).abs())
        .fold(0.0, f64::max);
    let charge = |s: &Value| s["cgroup"]["charge_bytes"].as_f64();
    let core = run["sampler_cpu_s"].as_f64().unwrap_or(0.0) / run["wall_s"].as_f64().unwrap_or(1.0);
    Ok(CompareRow {
        processes: children + 1,
        shape,
        cgroup: run["peak_cgroup_bytes"].is_u64(),
        true_pss_mib: truth / MIB,
        pss_mib: mean(&pss).ok_or("no steady PSS")? / MIB,
        worst_pss_pct: worst,
        peak_pss_pct: pct(run["peak_pss_bytes"].as_f64().unwrap_or(0.0)),
        charge_mib: mean(&charge).map(|c| c / MIB),
        true_charge_mib: value("charge_bytes ").map(|c| c / MIB),
        core_pct: 100.0 * core,
        note: run["message"].as_str().unwrap_or_default().to_string(),
    })
}

/// The rows as a Markdown table.
pub fn print_table(rows: &[CompareRow]) {
    println!();
    println!(
        "| processes | shape | cgroup | charge (error) | PSS, mean of the whole tree's samples | true sum of Pss | PSS error: mean, worst sample, run's peak | sampler, % of a core over the run |"
    );
    println!("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for r in rows {
        let charge = match (r.charge_mib, r.charge_error_pct()) {
            (Some(c), Some(e)) => format!("{c:.1} MiB ({e:+.2}%)"),
            (Some(c), None) => format!("{c:.1} MiB"),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {} | {} | {:.1} MiB | {:.1} MiB | {:+.1}%, {:.1}%, {:+.1}% | {:.2}% |",
            r.processes,
            r.shape,
            if r.cgroup { "yes" } else { "off" },
            charge,
            r.pss_mib,
            r.true_pss_mib,
            r.pss_error_pct(),
            r.worst_pss_pct,
            r.peak_pss_pct,
            r.core_pct
        );
    }
}
