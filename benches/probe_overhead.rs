//! What the heap probe costs, as plain `name key=value` lines: wall time of
//! a workload plain, with the probe in stats mode and in count mode (and
//! under heaptrack when it is installed), repetitions interleaved
//! (plain, stats, count, heaptrack, plain, ...), medians and ratios to plain.
//!
//! Workloads: `tight` (tests/programs/tight.c: 2 threads doing nothing but
//! malloc/free) and the `churn` scenario (`allocscope workload churn --ops
//! 2000000 --seconds 0`). Floors from the issue: stats <= 1.03x on both;
//! count <= 1.5x on tight and <= 1.15x on churn.
//!
//! Environment: `PROBE_BENCH_REPS` (default 7), `PROBE_BENCH_PRELOAD` (an
//! allocator library to preload after the probe, e.g. mimalloc's).

#[path = "common/programs.rs"]
mod programs;
use programs::compile;

use allocscope_core::probe::{install, ProbeBuild, ENV_INTERVAL_MS, ENV_SHM};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Plain,
    Stats,
    Count,
    Heaptrack,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Stats => "stats",
            Mode::Count => "count",
            Mode::Heaptrack => "heaptrack",
        }
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let reps: usize = std::env::var("PROBE_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let preload = std::env::var("PROBE_BENCH_PRELOAD").ok();
    let work = std::env::temp_dir().join(format!("allocscope-probe-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("creating {}: {e}", work.display()))?;
    let tight = compile(&work, "tight")?;
    let stats = install(ProbeBuild::Stats).map_err(|e| format!("{e:#}"))?;
    let count = install(ProbeBuild::Count).map_err(|e| format!("{e:#}"))?;
    let heaptrack = which("heaptrack");
    let mut modes = vec![Mode::Plain, Mode::Stats, Mode::Count];
    if heaptrack.is_some() {
        modes.push(Mode::Heaptrack);
    } else {
        println!("heaptrack not installed: its column is left out (apt-get install heaptrack)");
    }
    let allocscope = PathBuf::from(env!("CARGO_BIN_EXE_allocscope"));
    let workloads: [(&str, Vec<String>); 2] = [
        (
            "tight",
            vec![tight.display().to_string(), "2".into(), "20000000".into()],
        ),
        (
            "churn",
            vec![
                allocscope.display().to_string(),
                "workload".into(),
                "churn".into(),
                "--ops".into(),
                "2000000".into(),
                "--seconds".into(),
                "0".into(),
            ],
        ),
    ];
    for (name, command) in &workloads {
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
        for _ in 0..reps {
            for (i, &mode) in modes.iter().enumerate() {
                let library = match mode {
                    Mode::Stats => Some(&stats),
                    Mode::Count => Some(&count),
                    _ => None,
                };
                times[i].push(time_once(
                    command,
                    mode,
                    library.map(PathBuf::as_path),
                    preload.as_deref(),
                    &work,
                )?);
            }
        }
        let plain = median(&times[0]);
        for (i, &mode) in modes.iter().enumerate() {
            let m = median(&times[i]);
            println!(
                "{name} mode={} median_s={m:.3} ratio={:.3} reps={reps}",
                mode.name(),
                m / plain
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn time_once(
    command: &[String],
    mode: Mode,
    probe: Option<&Path>,
    preload: Option<&str>,
    work: &Path,
) -> Result<f64, String> {
    let (program, args) = command.split_first().ok_or("empty command")?;
    let mut cmd = if mode == Mode::Heaptrack {
        let mut c = Command::new("heaptrack");
        c.arg("-o")
            .arg(work.join("heaptrack.out"))
            .arg(program)
            .args(args);
        c
    } else {
        let mut c = Command::new(program);
        c.args(args);
        c
    };
    let libs: Vec<String> = probe
        .map(|p| p.display().to_string())
        .into_iter()
        .chain(preload.map(str::to_string))
        .collect();
    if !libs.is_empty() {
        cmd.env("LD_PRELOAD", libs.join(" "));
    }
    if probe.is_some() {
        let shm = work.join("shm");
        std::fs::create_dir_all(&shm).map_err(|e| e.to_string())?;
        // As `compare --heap` at its default 100 ms interval.
        cmd.env(ENV_SHM, &shm).env(ENV_INTERVAL_MS, "50");
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("running {program}: {e}"))?;
    let elapsed = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("{program} ({}) failed: {status}", mode.name()));
    }
    Ok(elapsed)
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}
