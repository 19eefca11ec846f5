//! Trees of 10, 100 and 1,000 processes: how right the sampler's tree
//! figure is, and what it costs, as `name key=value` lines and a Markdown
//! table at the end.
//!
//! The tree is `tests/programs/fork_tree.c`: a parent fills a 64 MiB
//! block and forks N children that share it copy-on-write and sleep
//! ("shared"), or that each also fill 1 MiB of their own ("own"). The
//! sampler runs as `compare` runs it (the tree walked every 100 ms and
//! charged to `DEFAULT_BUDGET`) from the spawn; once the tree is whole and
//! has settled, a thread of the bench reads every process's smaps_rollup
//! (the true sum of `Pss` and `Rss`) while the sampler keeps ticking. The
//! reported figure is the mean of the samples taken during that read; the
//! error is in % of the true sum. The sampler's share of a core is its CPU
//! time over the ticks after the tree was whole, against their wall time.
//!
//! Each tree is measured twice: without a cgroup (the tree's figure is the
//! sampler's PSS) and, where this machine can make one (`cgroup::find`),
//! in a memory cgroup of its own as `compare` runs it (the tree's figure
//! is then the group's charge, which counts every page once, plus the
//! kernel's own memory for the tree: page tables, 128 KiB for each process
//! mapping 64 MiB; the sampler reads fewer processes' counters).
//!
//! Then each tree runs through `allocscope compare` itself (`compare.rs`:
//! the heap probe on, as by default; the sampler's share over the whole
//! run, forking included), judged against the true sum `fork_tree` reads.
//!
//! `BIG_TREES_SIZES=10,100`, `BIG_TREES_SHAPES=own`,
//! `BIG_TREES_CGROUP=off|only` and `BIG_TREES_PARTS=sampler|compare`
//! choose what runs (default: every size, shape, both and both parts). Watch memory: the "own" tree of 1,000 holds about
//! 1.1 GiB.

#[path = "big_trees/compare.rs"]
mod compare;

use allocscope_core::cgroup::RunGroup;
use allocscope_core::sample::thread_cpu_seconds;
use allocscope_core::sample::{Sampler, TreeWalker, DEFAULT_BUDGET};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const MIB: f64 = 1024.0 * 1024.0;
const INTERVAL: Duration = Duration::from_millis(100);
/// How long the whole tree is sampled before the truth is read.
const SETTLE: Duration = Duration::from_secs(4);
/// How long it is sampled after the truth was read.
const AFTER: Duration = Duration::from_secs(2);

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// One measured tree.
struct Row {
    processes: usize,
    shape: &'static str,
    /// The run's cgroup, when it had one.
    cgroup: Option<&'static str>,
    /// The group's mean charge while the truth was read.
    charge_mib: Option<f64>,
    reported_pss_mib: f64,
    true_pss_mib: f64,
    reported_rss_mib: f64,
    true_rss_mib: f64,
    /// The worst error of one steady sample's PSS, in %.
    worst_pss_pct: f64,
    core_pct: f64,
    note: String,
}

impl Row {
    fn pss_error_pct(&self) -> f64 {
        100.0 * (self.reported_pss_mib - self.true_pss_mib) / self.true_pss_mib
    }

    fn rss_error_pct(&self) -> f64 {
        100.0 * (self.reported_rss_mib - self.true_rss_mib) / self.true_rss_mib
    }
}

fn run() -> Result<(), String> {
    let program = compile()?;
    let sizes: Vec<usize> = match std::env::var("BIG_TREES_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().parse().map_err(|_| format!("size '{s}'")))
            .collect::<Result<_, _>>()?,
        Err(_) => vec![10, 100, 1000],
    };
    let shapes: Vec<(&'static str, u32)> = [("shared", 0), ("own", 1)]
        .into_iter()
        .filter(|(name, _)| {
            std::env::var("BIG_TREES_SHAPES").map_or(true, |s| s.split(',').any(|x| x == *name))
        })
        .collect();
    let cgroup = std::env::var("BIG_TREES_CGROUP").unwrap_or_default();
    let parent = match allocscope_core::cgroup::find() {
        Ok(parent) => Some(parent),
        Err(why) => {
            println!("big_trees cgroup=none note=\"{}\"", why.note());
            None
        }
    };
    let mut groups: Vec<Option<&allocscope_core::cgroup::Parent>> = Vec::new();
    if cgroup != "only" {
        groups.push(None);
    }
    if cgroup != "off" {
        groups.extend(parent.as_ref().map(Some));
    }
    let parts = std::env::var("BIG_TREES_PARTS").unwrap_or_default();
    if parts != "compare" {
        sampler_rows(&program, &sizes, &shapes, &groups)?;
    }
    if parts != "sampler" {
        let mut rows = Vec::new();
        for &children in &sizes {
            for &shape in &shapes {
                for cgroup in groups.iter().map(Option::is_some) {
                    let row = compare::measure(&program, children, shape, cgroup)?;
                    println!(
                        "big_trees_compare processes={} shape={} cgroup={} pss_error_pct={:+.2} \
                         worst_pss_error_pct={:.2} peak_pss_error_pct={:+.2} charge_error_pct={} \
                         sampler_core_pct={:.2} note=\"{}\"",
                        row.processes,
                        row.shape,
                        row.cgroup,
                        row.pss_error_pct(),
                        row.worst_pss_pct,
                        row.peak_pss_pct,
                        row.charge_error_pct()
                            .map_or("-".into(), |e| format!("{e:+.2}")),
                        row.core_pct,
                        row.note
                    );
                    rows.push(row);
                }
            }
        }
        compare::print_table(&rows);
    }
    Ok(())
}

/// The sampler alone on each tree, as `compare` runs it without the heap
/// probe, from the spawn.
fn sampler_rows(
    program: &Path,
    sizes: &[usize],
    shapes: &[(&'static str, u32)],
    groups: &[Option<&allocscope_core::cgroup::Parent>],
) -> Result<(), String> {
    let mut rows = Vec::new();
    for &children in sizes {
        for &(shape, child_mib) in shapes {
            for &group in groups {
                let row = measure(program, children, (shape, child_mib), group)?;
                println!(
                "big_trees processes={} shape={} cgroup={} charge_mib={} reported_pss_mib={:.1} \
                 true_pss_mib={:.1} pss_error_pct={:+.2} worst_pss_error_pct={:.2} \
                 reported_rss_mib={:.1} true_rss_mib={:.1} rss_error_pct={:+.2} \
                 sampler_core_pct={:.2} note=\"{}\"",
                row.processes,
                row.shape,
                row.cgroup.unwrap_or("none"),
                row.charge_mib.map_or("-".into(), |c| format!("{c:.1}")),
                row.reported_pss_mib,
                row.true_pss_mib,
                row.pss_error_pct(),
                row.worst_pss_pct,
                row.reported_rss_mib,
                row.true_rss_mib,
                row.rss_error_pct(),
                row.core_pct,
                row.note
            );
                rows.push(row);
            }
        }
    }
    print_table(&rows);
    Ok(())
}

/// Builds fork_tree.c into the bench's scratch directory.
fn compile() -> Result<PathBuf, String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/fork_tree.c");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fork_tree");
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if !status.success() {
        return Err(format!("compiling {}", source.display()));
    }
    Ok(out)
}

/// Samples one tree of `children` children from its spawn, reads the truth
/// once it is whole and settled, and ends it.
fn measure(
    program: &Path,
    children: usize,
    (shape, child_mib): (&'static str, u32),
    parent: Option<&allocscope_core::cgroup::Parent>,
) -> Result<Row, String> {
    let group = parent.map(|p| RunGroup::create(p, None)).transpose()?;
    let mut command = Command::new(program);
    command
        .args([
            children.to_string(),
            "64".into(),
            child_mib.to_string(),
            "600000".into(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if let Some(fd) = group.as_ref().and_then(RunGroup::procs_fd) {
        // SAFETY: between fork and exec, only getpid and write(2) of a
        // buffer on the stack to an fd opened before the fork (no
        // allocation: other threads may hold the allocator's lock).
        unsafe {
            command.pre_exec(move || {
                let (mut digits, mut at, mut pid) = ([0u8; 20], 20, libc::getpid());
                while pid > 0 || at == 20 {
                    at -= 1;
                    digits[at] = b'0' + (pid % 10) as u8;
                    pid /= 10;
                }
                if libc::write(fd, digits[at..].as_ptr().cast(), 20 - at) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut tree = command
        .spawn()
        .map_err(|e| format!("spawning fork_tree: {e}"))?;
    let forked = forked_signal(&mut tree)?;
    let root = tree.id() as i32;
    let reader = group.as_ref().map(RunGroup::reader).transpose();
    let result = reader
        .map_err(|e| format!("reading the cgroup: {e}"))
        .and_then(|reader| sample(root, children, &forked, reader));
    let _ = tree.kill();
    let _ = tree.wait();
    // The children die with their parent (parent-death signal); wait for
    // them to go before the next tree.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !allocscope_core::sample::descendants(std::process::id() as i32).is_empty()
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (reported, truth, worst, core_pct, note) = result?;
    Ok(Row {
        processes: children + 1,
        shape,
        cgroup: group.as_ref().map(|g| g.version().as_str()),
        charge_mib: reported.2.map(|c| c / MIB),
        reported_pss_mib: reported.0 / MIB,
        true_pss_mib: truth.0 / MIB,
        reported_rss_mib: reported.1 / MIB,
        true_rss_mib: truth.1 / MIB,
        worst_pss_pct: worst,
        core_pct,
        note,
    })
}

/// A channel that receives once the tree printed "forked N".
fn forked_signal(tree: &mut Child) -> Result<mpsc::Receiver<()>, String> {
    let stdout = tree.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if line.is_ok_and(|l| l.starts_with("forked")) {
                let _ = tx.send(());
            }
        }
    });
    Ok(rx)
}

type Measured = ((f64, f64, Option<f64>), (f64, f64), f64, f64, String);

/// Ticks every `INTERVAL` as `compare` does; returns the mean (PSS, RSS,
/// cgroup charge) of the samples taken while the truth was read, the
/// truth, the worst PSS
/// error of a steady sample, the sampler's share of a core over the steady
/// ticks in %, and its note on what it thinned.
fn sample(
    root: i32,
    children: usize,
    forked: &mpsc::Receiver<()>,
    cgroup: Option<allocscope_core::cgroup::Reader>,
) -> Result<Measured, String> {
    let me = std::process::id() as i32;
    let mut walker = TreeWalker::new(me);
    let mut sampler = Sampler::new(DEFAULT_BUDGET);
    if let Some(reader) = cgroup {
        sampler.attach_cgroup(reader);
    }
    let mut charges: Vec<f64> = Vec::new();
    let start = Instant::now();
    let mut whole: Option<(Instant, f64)> = None;
    let mut truth: Option<mpsc::Receiver<(f64, f64)>> = None;
    let mut got: Option<(f64, f64)> = None;
    let mut during: Vec<(f64, f64)> = Vec::new();
    let mut steady: Vec<f64> = Vec::new();
    let mut next = Instant::now();
    let mut walk_cpu_s = 0.0;
    let mut forked_seen = false;
    let deadline = start + Duration::from_secs(600);
    loop {
        let now = Instant::now();
        if now > deadline {
            return Err("the tree never became whole".into());
        }
        let cpu = thread_cpu_seconds();
        let pids = walker.walk_rationed();
        let walk_s = thread_cpu_seconds() - cpu;
        sampler.charge(walk_s);
        if whole.is_some() {
            walk_cpu_s += walk_s;
        }
        let s = sampler.sample(&pids, start.elapsed().as_secs_f64());
        forked_seen |= forked.try_recv().is_ok();
        if whole.is_none() && forked_seen && s.processes as usize > children {
            whole = Some((Instant::now(), sampler.cpu_seconds()));
        }
        if let (Some((at, _)), Some(pss)) = (whole, s.pss_bytes) {
            if at.elapsed() > Duration::from_secs(1) {
                steady.push(pss as f64);
            }
            if std::env::var_os("BIG_TREES_VERBOSE").is_some() {
                println!(
                    "  t={:.1} processes={} pss_mib={:.1} read={} rss_mib={:.1}",
                    at.elapsed().as_secs_f64(),
                    s.processes,
                    pss as f64 / MIB,
                    s.processes - s.pss_estimated_processes,
                    s.rss_bytes as f64 / MIB
                );
            }
            if truth.is_none() && got.is_none() && at.elapsed() >= SETTLE {
                let (tx, rx) = mpsc::channel();
                std::thread::spawn(move || {
                    let _ = tx.send(true_sums(root));
                });
                truth = Some(rx);
            }
            if truth.is_some() {
                during.push((pss as f64, s.rss_bytes as f64));
                charges.extend(s.cgroup.map(|c| c.charge_bytes as f64));
            }
        }
        if let Some(rx) = &truth {
            if let Ok(t) = rx.try_recv() {
                got = Some(t);
                truth = None;
                during.push(during.last().copied().unwrap_or_default());
            }
        }
        if let (Some(t), Some((at, _))) = (got, whole) {
            if at.elapsed() >= SETTLE + AFTER {
                let (at, cpu0) = whole.ok_or("")?;
                let core = 100.0 * (sampler.cpu_seconds() - cpu0) / at.elapsed().as_secs_f64();
                let n = during.len().max(1) as f64;
                let (pss, rss) = during
                    .iter()
                    .fold((0.0, 0.0), |a, x| (a.0 + x.0 / n, a.1 + x.1 / n));
                let charge = (!charges.is_empty())
                    .then(|| charges.iter().sum::<f64>() / charges.len() as f64);
                let mean = (pss, rss, charge);
                let worst = steady
                    .iter()
                    .map(|p| (100.0 * (p - t.0) / t.0).abs())
                    .fold(0.0, f64::max);
                let walk = 100.0 * walk_cpu_s / at.elapsed().as_secs_f64();
                let note = format!(
                    "walk {walk:.2}% of a core, on {} of {} ticks; {}",
                    walker.walks,
                    walker.walks + walker.reused,
                    sampler.thinning_note().unwrap_or_default()
                );
                return Ok((mean, t, worst, core, note));
            }
        }
        next += INTERVAL;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}

/// The true sums of `Pss` and `Rss` over the tree at `root`, from every
/// process's smaps_rollup.
fn true_sums(root: i32) -> (f64, f64) {
    let mut pids = vec![root];
    pids.extend(allocscope_core::sample::descendants(root));
    let (mut pss, mut rss) = (0.0, 0.0);
    for pid in pids {
        if let Some(r) = allocscope_core::sample::proc::read_smaps_rollup(pid) {
            pss += r.pss_bytes as f64;
            rss += r.rss_bytes as f64;
        }
    }
    (pss, rss)
}

fn print_table(rows: &[Row]) {
    println!();
    println!(
        "| processes | shape | cgroup | charge | reported PSS | true sum of Pss | PSS error | RSS error | sampler, % of a core |"
    );
    println!("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {:.1} MiB | {:.1} MiB | {:+.1}% | {:+.1}% | {:.2}% |",
            r.processes,
            r.shape,
            r.cgroup.unwrap_or("none"),
            r.charge_mib.map_or("-".into(), |c| format!("{c:.1} MiB")),
            r.reported_pss_mib,
            r.true_pss_mib,
            r.pss_error_pct(),
            r.rss_error_pct(),
            r.core_pct
        );
    }
}
