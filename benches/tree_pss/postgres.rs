//! `TREE_PSS_POSTGRES=1`: the tree PSS estimate on PostgreSQL under
//! pgbench, a many-process server whose backends share the buffer pool and
//! their postmaster's heap. A scratch cluster is created with `initdb` in
//! the temp dir (as user postgres when run as root, which PostgreSQL
//! refuses), then for glibc and tcmalloc (preloaded into the server only):
//! start the server on a free port, `pgbench -i -s 10`, 8 clients for 15 s,
//! stop. Sampled at 100 ms with the budget `compare` uses; every tick also
//! reads every process's smaps_rollup in full for the reference. Printed
//! per allocator: mean PSS estimated and read, the error of the mean and of
//! the worst sample; then the tcmalloc/glibc ratio of both.
//! `TREE_PSS_PGBENCH="-C -c 8 -T 15"` replaces the load's pgbench options
//! (`-C`: a new connection per transaction, so backends come and go on
//! every tick).

use allocscope_core::alloc::Registry;
use allocscope_core::sample::{descendants, Sampler, DEFAULT_BUDGET};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INTERVAL: Duration = Duration::from_millis(100);
const MIB: f64 = 1024.0 * 1024.0;

pub fn run() -> Result<(), String> {
    let bindir = output(Command::new("pg_config").arg("--bindir"))?;
    let dir = std::env::temp_dir().join(format!("allocscope-tree-pss-pg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let result = measure_all(Path::new(bindir.trim()), &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure_all(bindir: &Path, dir: &Path) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    if as_root {
        let uid: u32 = output(Command::new("id").args(["-u", "postgres"]))?
            .trim()
            .parse()
            .map_err(|_| "no user postgres to run the server as")?;
        std::os::unix::fs::chown(dir, Some(uid), None).map_err(|e| e.to_string())?;
    }
    let data = dir.join("data");
    let initdb = format!(
        "{} -D {} -A trust -U postgres >/dev/null",
        bindir.join("initdb").display(),
        data.display()
    );
    status(&mut shell(&initdb, as_root))?;
    let tcmalloc = Registry::discover()
        .get("tcmalloc")
        .map(|found| found.library.clone())
        .ok_or("tcmalloc not found (scripts/bootstrap installs it)")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let mut means = Vec::new();
    for (name, preload) in [("glibc", None), ("tcmalloc", Some(&tcmalloc))] {
        let script = workload(bindir, &data, dir, port, preload);
        let mut breakdown = super::breakdown::Breakdown::new(name);
        let (estimated, read, bracket, cost) = sample_run(shell(&script, as_root), &mut breakdown)?;
        println!(
            "tree_pss_postgres allocator={name} ticks={} full_passes={} probes={} sampler_cpu_pct={:.2} \
             pss_cpu_pct={:.2} mean_pss_estimated_mib={:.1} \
             mean_pss_read_mib={:.1} mean_pss_error_pct={:+.2} worst_sample_error_pct={:.2}",
            read.len(),
            cost.passes,
            cost.probes,
            cost.cpu_pct,
            cost.pss_cpu_pct,
            mean(&estimated) / MIB,
            mean(&read) / MIB,
            100.0 * (mean(&estimated) - mean(&read)) / mean(&read).max(1.0),
            worst(&estimated, &read),
        );
        super::print_bracketed(&format!("tree_pss_postgres allocator={name}"), &bracket);
        breakdown.print(&format!("tree_pss_postgres allocator={name} breakdown"));
        means.push((mean(&estimated), mean(&read)));
    }
    if let [(ge, gr), (te, tr)] = means[..] {
        let (estimated, read) = (te / ge.max(1.0), tr / gr.max(1.0));
        // The estimate must not make up a difference: its error is to stay
        // within the true difference between the allocators.
        println!(
            "tree_pss_postgres ratio=tcmalloc/glibc estimated={estimated:.3} read={read:.3} \
             error={:+.3} true_difference={:.3} within_true_difference={}",
            estimated - read,
            (read - 1.0).abs(),
            (estimated - read).abs() <= (read - 1.0).abs()
        );
    }
    Ok(())
}

/// One run: server up, tables, load, server down.
fn workload(
    bindir: &Path,
    data: &Path,
    dir: &Path,
    port: u16,
    preload: Option<&PathBuf>,
) -> String {
    let preload = preload.map_or(String::new(), |lib| {
        format!("LD_PRELOAD={} ", lib.display())
    });
    let bin = |name: &str| bindir.join(name).display().to_string();
    format!(
        "{preload}{postgres} -D {data} -p {port} -k {dir} -c listen_addresses=127.0.0.1 \
         >/dev/null 2>&1 & pid=$!; sleep 2; \
         {pgbench} -h 127.0.0.1 -p {port} -i -s 10 postgres >/dev/null 2>&1; \
         {pgbench} -h 127.0.0.1 -p {port} {load} postgres >/dev/null 2>&1; \
         kill $pid; wait",
        load = std::env::var("TREE_PSS_PGBENCH").unwrap_or_else(|_| "-c 8 -T 15".to_string()),
        postgres = bin("postgres"),
        pgbench = bin("pgbench"),
        data = data.display(),
        dir = dir.display(),
    )
}

fn shell(script: &str, as_root: bool) -> Command {
    let mut command = if as_root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", "sh", "-c", script]);
        c
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    };
    command.stdin(Stdio::null());
    command
}

/// Per tick: the sampler's tree PSS, the reference read just after, and
/// (read in full by the sampler, error outside the bracket in %); and what
/// the sampler cost.
type Series = (Vec<f64>, Vec<f64>, Vec<(bool, f64)>, Cost);

/// The sampler's own CPU over a run, in percent of one core, its full
/// passes and the processes it read alone to learn their family's growth.
struct Cost {
    cpu_pct: f64,
    pss_cpu_pct: f64,
    passes: u64,
    probes: u64,
}

/// The tree's PSS per tick: (sampler's, read in full), over ticks where
/// every process could be read in full.
fn sample_run(
    mut command: Command,
    breakdown: &mut super::breakdown::Breakdown,
) -> Result<Series, String> {
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    let me = std::process::id() as i32;
    let mut sampler = Sampler::new(DEFAULT_BUDGET);
    let (mut estimated, mut read, mut bracket) = (Vec::new(), Vec::new(), Vec::new());
    let start = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        let pids = descendants(me);
        let t_s = start.elapsed().as_secs_f64();
        breakdown.before(&pids);
        let sample = sampler.sample(&pids, t_s);
        if sample.pss_bytes.is_some() && sample.processes as usize == pids.len() {
            if let Some(tick) = breakdown.tick(t_s, sampler.processes()) {
                estimated.push(tick.estimated as f64);
                read.push(tick.reference as f64);
                bracket.push((sample.pss_estimated_processes == 0, tick.bracket_error_pct));
            }
        }
        std::thread::sleep(INTERVAL);
    }
    let elapsed_s = start.elapsed().as_secs_f64();
    let cost = Cost {
        cpu_pct: 100.0 * sampler.cpu_seconds() / elapsed_s,
        pss_cpu_pct: 100.0 * sampler.pss_cpu_seconds() / elapsed_s,
        passes: sampler.pss_reads(),
        probes: sampler.probes(),
    };
    Ok((estimated, read, bracket, cost))
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn worst(series: &[f64], reference: &[f64]) -> f64 {
    series
        .iter()
        .zip(reference)
        .map(|(s, r)| 100.0 * (s - r).abs() / r.max(1.0))
        .fold(0.0, f64::max)
}

fn output(command: &mut Command) -> Result<String, String> {
    let out = command.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("{command:?} failed"));
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

fn status(command: &mut Command) -> Result<(), String> {
    match command.status() {
        Ok(s) if s.success() => Ok(()),
        _ => Err(format!("{command:?} failed")),
    }
}
