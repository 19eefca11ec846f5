//! What `allocscope soak` itself costs in CPU over 10 instances sampled
//! every second, as a plain `name key=value` line: the release binary soaks
//! 10 instances (one configuration, 10 replicas) of a small real program (a
//! Python interpreter holding 20000 objects of 1000 B, then asleep) for
//! `SECONDS` (default 70), and allocscope's own CPU time (utime + stime of
//! its /proc/PID/stat: every thread of it, none of the instances) is read
//! 10 s in, once the instances have started, and 5 s before the end. The
//! difference over that span, as a share of one core, must stay under 1%;
//! divided by the ticks of that span (one a second an instance), it is what
//! a tick of one instance costs.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WARM_UP: Duration = Duration::from_secs(10);
const BUDGET_PERCENT: f64 = 1.0;
const INSTANCES: u32 = 10;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> anyhow::Result<()> {
    let seconds: u64 = std::env::var("SECONDS")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(70);
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("soak.db");
    let child = Command::new(env!("CARGO_BIN_EXE_allocscope"))
        .args([
            "soak",
            "-a",
            "glibc",
            "--replicas",
            &INSTANCES.to_string(),
            "--interval",
            "1s",
        ])
        .args(["--until", "duration", "--duration", &format!("{seconds}s")])
        .arg("--db")
        .arg(&db)
        .args(["--", "python3", "-c"])
        .arg("import time; x = [bytes(1000) for _ in range(20000)]; time.sleep(86400)")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let start = Instant::now();
    std::thread::sleep(WARM_UP);
    let (t0, cpu0) = (start.elapsed(), cpu_seconds(child.id())?);
    std::thread::sleep(
        Duration::from_secs(seconds).saturating_sub(WARM_UP + Duration::from_secs(5)),
    );
    let (t1, cpu1) = (start.elapsed(), cpu_seconds(child.id())?);
    let output = child.wait_with_output()?;
    let said = String::from_utf8_lossy(&output.stderr);
    anyhow::ensure!(output.status.success(), "the soak failed: {said}");
    let span_s = (t1 - t0).as_secs_f64();
    let percent = 100.0 * (cpu1 - cpu0) / span_s;
    let sampler = said
        .split("sampler CPU ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or("?");
    let tick_us = 1e6 * (cpu1 - cpu0) / (span_s * f64::from(INSTANCES));
    println!(
        "soak_cpu_10x1s allocscope_cpu_s={:.2} span_s={span_s:.1} core_percent={percent:.2} \
         per_instance_tick_us={tick_us:.0} budget_percent={BUDGET_PERCENT} within_budget={} \
         sampler_cpu_said={}",
        cpu1 - cpu0,
        percent < BUDGET_PERCENT,
        sampler.replace(' ', "")
    );
    Ok(())
}

/// utime + stime of process `pid` (all its threads, none of its children),
/// in seconds.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after_name = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split(' ').collect();
    // Fields 14 and 15 of the line; the third after the name is field 3.
    let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Ok(ticks as f64 / per_second)
}
