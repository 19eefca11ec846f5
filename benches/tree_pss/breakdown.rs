//! Where the estimate's error comes from: every tick, each process's PSS as
//! the sampler had it (read or estimated, by kind) against its
//! smaps_rollup read at once for the reference. Printed as `name key=value`
//! lines: the error by estimate source and kind, by process, and the
//! processes behind the worst tick. Errors are in percent of the mean
//! reference tree PSS, signed (bias) and absolute (spread).

use allocscope_core::sample::proc::{self, RssParts};
use allocscope_core::sample::{ProcessPss, PssSource};
use std::collections::HashMap;
use std::io::Write;

const KINDS: [&str; 3] = ["anon", "file", "shmem"];
const SOURCES: [PssSource; 6] = [
    PssSource::Read,
    PssSource::Own,
    PssSource::Parent,
    PssSource::Tree,
    PssSource::Rss,
    PssSource::Scaled,
];

/// Signed and absolute error, summed over ticks.
#[derive(Debug, Default, Clone, Copy)]
struct Err {
    signed: f64,
    abs: f64,
    n: u64,
}

impl Err {
    fn add(&mut self, e: f64) {
        self.signed += e;
        self.abs += e.abs();
        self.n += 1;
    }
}

#[derive(Debug, Default)]
pub struct Breakdown {
    ticks: u64,
    reference_sum: f64,
    by_source: HashMap<(usize, usize), Err>,
    /// pid -> (label, error per kind).
    by_pid: HashMap<i32, (String, [Err; 3])>,
    /// (|tree error| in %, t, description) of the worst tick.
    worst: Option<(f64, f64, String)>,
    /// With `TREE_PSS_TRACE=FILE`: one CSV line per process and tick, to
    /// try other estimates on the same ticks offline.
    trace: Option<std::io::BufWriter<std::fs::File>>,
    /// The tree's PSS read just before the sampler's tick.
    before: Option<f64>,
}

/// One tick's tree PSS: the sampler's, and the reference read just after
/// it; `bracket_error_pct` is how far the sampler's lies outside the range
/// of the reads just before and just after (0 inside: the tree moved
/// during the tick, and any value in between was true at some instant).
#[derive(Debug, Clone, Copy)]
pub struct TickPss {
    pub estimated: u64,
    pub reference: u64,
    pub bracket_error_pct: f64,
}

fn kinds(p: &RssParts) -> [f64; 3] {
    [
        p.anon_bytes as f64,
        p.file_bytes as f64,
        p.shmem_bytes as f64,
    ]
}

fn source_name(s: PssSource) -> &'static str {
    match s {
        PssSource::Read => "read",
        PssSource::Own => "own",
        PssSource::Parent => "parent",
        PssSource::Tree => "tree",
        PssSource::Rss => "rss",
        PssSource::Scaled => "scaled",
    }
}

/// A short, stable name: a process title up to its first `(` (PostgreSQL
/// backends), else the program's base name; `[top]` when its parent is
/// outside the tree.
fn label(pid: i32, top: bool) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    let argv0 = text.split(' ').next().unwrap_or("");
    let name = if argv0.ends_with(':') {
        let title = text.split('(').next().unwrap_or("").trim();
        // Drop a backend's changing state word ("idle", "SELECT").
        match title.rsplit_once(' ') {
            Some((head, last)) if last.chars().all(|c| c.is_ascii_uppercase()) => head.into(),
            _ => title.to_string(),
        }
    } else {
        argv0.rsplit('/').next().unwrap_or(argv0).to_string()
    };
    if top {
        format!("{name} [top]")
    } else {
        name
    }
}

impl Breakdown {
    /// `name` tells runs apart in the trace file's name.
    pub fn new(name: &str) -> Breakdown {
        let trace = std::env::var_os("TREE_PSS_TRACE").and_then(|path| {
            let mut path = std::path::PathBuf::from(path);
            path.set_extension(format!("{name}.csv"));
            let mut file = std::io::BufWriter::new(std::fs::File::create(path).ok()?);
            writeln!(
                file,
                "t,pid,ppid,source,rss_anon,rss_file,rss_shmem,est_anon,est_file,est_shmem,\
                 ref_anon,ref_file,ref_shmem,ref_uss,comm,name"
            )
            .ok()?;
            Some(file)
        });
        Breakdown {
            trace,
            ..Breakdown::default()
        }
    }

    /// One tick: the sampler's processes against their smaps_rollup read
    /// now. `None` when a process could not be read (it exited).
    /// Reads the tree's PSS just before the sampler's tick.
    pub fn before(&mut self, pids: &[i32]) {
        self.before = pids
            .iter()
            .map(|&pid| proc::read_smaps_rollup(pid).map(|r| r.pss_bytes as f64))
            .sum();
    }

    /// The tree's PSS as the sampler had it and as read now.
    pub fn tick(&mut self, t_s: f64, processes: &[ProcessPss]) -> Option<TickPss> {
        let rollups: Vec<proc::Rollup> = processes
            .iter()
            .map(|p| proc::read_smaps_rollup(p.pid))
            .collect::<Option<_>>()?;
        let reference: Vec<RssParts> = rollups
            .iter()
            .map(|r| {
                r.pss_parts.unwrap_or(RssParts {
                    anon_bytes: r.pss_bytes,
                    ..RssParts::default()
                })
            })
            .collect();
        let total: f64 = reference.iter().map(|r| r.total_bytes() as f64).sum();
        let estimated: f64 = processes.iter().map(|p| p.pss.total_bytes() as f64).sum();
        self.ticks += 1;
        self.reference_sum += total;
        let pids: Vec<i32> = processes.iter().map(|p| p.pid).collect();
        let mut worst_here: Vec<(f64, String)> = Vec::new();
        for ((p, r), rollup) in processes.iter().zip(&reference).zip(&rollups) {
            let source = SOURCES.iter().position(|&s| s == p.source).unwrap_or(0);
            let entry = self
                .by_pid
                .entry(p.pid)
                .or_insert_with(|| (String::new(), [Err::default(); 3]));
            let name = label(p.pid, !pids.contains(&p.ppid));
            if !name.is_empty() {
                entry.0 = name;
            }
            if let Some(trace) = self.trace.as_mut() {
                let _ = writeln!(
                    trace,
                    "{t_s:.3},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    p.pid,
                    p.ppid,
                    source_name(p.source),
                    p.rss.anon_bytes,
                    p.rss.file_bytes,
                    p.rss.shmem_bytes,
                    p.pss.anon_bytes,
                    p.pss.file_bytes,
                    p.pss.shmem_bytes,
                    r.anon_bytes,
                    r.file_bytes,
                    r.shmem_bytes,
                    rollup.uss_bytes,
                    proc::read_comm(p.pid).unwrap_or_default().replace(',', " "),
                    entry.0.replace(',', " ")
                );
            }
            for (k, (e, r)) in kinds(&p.pss).iter().zip(kinds(r)).enumerate() {
                let err = e - r;
                self.by_source.entry((source, k)).or_default().add(err);
                entry.1[k].add(err);
                if err.abs() >= 512.0 * 1024.0 {
                    worst_here.push((
                        err,
                        format!(
                            "{}:{}:{}:{:+.1}MiB(rss {:.1})",
                            entry.0,
                            source_name(p.source),
                            KINDS[k],
                            err / MIB,
                            kinds(&p.rss)[k] / MIB
                        ),
                    ));
                }
            }
        }
        let tick_err = 100.0 * (estimated - total).abs() / total.max(1.0);
        if self.worst.as_ref().is_none_or(|w| tick_err > w.0) {
            worst_here.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
            let top: Vec<&str> = worst_here.iter().take(4).map(|w| w.1.as_str()).collect();
            let desc = format!(
                "processes={} estimated_mib={:.1} read_mib={:.1} largest=[{}]",
                processes.len(),
                estimated / MIB,
                total / MIB,
                top.join(" ")
            );
            self.worst = Some((tick_err, t_s, desc));
        }
        let (lo, hi) = match self.before.take() {
            Some(before) => (before.min(total), before.max(total)),
            None => (total, total),
        };
        let outside = if estimated < lo {
            estimated - lo
        } else if estimated > hi {
            estimated - hi
        } else {
            0.0
        };
        Some(TickPss {
            estimated: estimated as u64,
            reference: total as u64,
            bracket_error_pct: 100.0 * outside.abs() / ((lo + hi) / 2.0).max(1.0),
        })
    }

    /// Prints the breakdown, each line starting with `prefix`.
    pub fn print(&self, prefix: &str) {
        let mean_ref = self.reference_sum / self.ticks.max(1) as f64;
        let pct = |x: f64| 100.0 * x / self.ticks.max(1) as f64 / mean_ref.max(1.0);
        let mut keys: Vec<_> = self.by_source.keys().copied().collect();
        keys.sort_unstable();
        for (s, k) in keys {
            let e = self.by_source[&(s, k)];
            println!(
                "{prefix} by=source source={} kind={} process_ticks={} error_pct={:+.2} \
                 abs_error_pct={:.2}",
                source_name(SOURCES[s]),
                KINDS[k],
                e.n,
                pct(e.signed),
                pct(e.abs)
            );
        }
        // Per process name: the labels of many pids merged.
        let mut by_label: HashMap<&str, ([Err; 3], usize)> = HashMap::new();
        for (name, errs) in self.by_pid.values() {
            let entry = by_label.entry(name.as_str()).or_default();
            entry.1 += 1;
            for (sum, e) in entry.0.iter_mut().zip(errs) {
                sum.signed += e.signed;
                sum.abs += e.abs;
            }
        }
        let mut labels: Vec<_> = by_label.into_iter().collect();
        labels.sort_by(|a, b| {
            let abs = |e: &[Err; 3]| e.iter().map(|x| x.abs).sum::<f64>();
            abs(&b.1 .0).total_cmp(&abs(&a.1 .0))
        });
        for (name, (errs, pids)) in labels.iter().take(8) {
            let cells: Vec<String> = KINDS
                .iter()
                .zip(errs)
                .map(|(k, e)| format!("{k}={:+.2}/{:.2}", pct(e.signed), pct(e.abs)))
                .collect();
            println!(
                "{prefix} by=process name=\"{name}\" pids={pids} error_pct(signed/abs) {}",
                cells.join(" ")
            );
        }
        if let Some((err, t, desc)) = &self.worst {
            println!("{prefix} worst_tick t_s={t:.2} error_pct={err:.2} {desc}");
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;
