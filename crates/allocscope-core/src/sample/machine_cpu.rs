//! What else ran on the machine during a run: the CPU time every CPU spent
//! busy (`/proc/stat`) minus what allocscope and its reaped descendants
//! spent (its own rusage and its children's: the measured tree, a
//! `--load` command), and the time tasks waited for a CPU
//! (`/proc/pressure/cpu`, where the kernel has PSI). A run that shared
//! its cores with other work is slower for reasons that are not its
//! allocator's (`analyze::disturbed`).
//!
//! The parsers take the files' text; only `MachineCpu::read` opens them.

/// One reading of the machine's and allocscope's CPU counters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineCpu {
    /// Seconds all CPUs spent busy since boot (steal included: a
    /// hypervisor's other guests are foreign work too).
    pub busy_s: f64,
    /// Seconds some task waited for a CPU since boot; `None` without PSI.
    pub pressure_some_s: Option<f64>,
    /// CPU seconds of allocscope and of every descendant it has reaped.
    pub own_s: f64,
}

/// The foreign work between two readings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForeignCpu {
    /// CPU seconds that ran outside allocscope and its reaped descendants.
    pub cpu_s: f64,
    /// Seconds some task (the measured tree's own included) waited for a CPU.
    pub pressure_s: Option<f64>,
}

impl MachineCpu {
    /// The counters now; `None` when `/proc/stat` cannot be read or parsed.
    pub fn read() -> Option<MachineCpu> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let busy_s = parse_busy_seconds(&stat, clock_ticks_per_second())?;
        let pressure_some_s = std::fs::read_to_string("/proc/pressure/cpu")
            .ok()
            .and_then(|text| parse_pressure_some_seconds(&text));
        Some(MachineCpu {
            busy_s,
            pressure_some_s,
            own_s: own_cpu_seconds(),
        })
    }

    /// The foreign work from `earlier` to `self`. The machine's counters
    /// tick at 1/USER_HZ (10 ms), rusage finer: a difference below zero is
    /// that rounding, read as none.
    pub fn foreign_since(&self, earlier: &MachineCpu) -> ForeignCpu {
        let busy = self.busy_s - earlier.busy_s;
        let own = self.own_s - earlier.own_s;
        let pressure_s = match (self.pressure_some_s, earlier.pressure_some_s) {
            (Some(now), Some(then)) => Some((now - then).max(0.0)),
            _ => None,
        };
        ForeignCpu {
            cpu_s: (busy - own).max(0.0),
            pressure_s,
        }
    }
}

/// Busy seconds of all CPUs from `/proc/stat`'s aggregate `cpu` line:
/// user, nice, system, irq, softirq and steal (guest time is already in
/// user; idle and iowait are not busy). Older kernels print fewer columns,
/// missing ones count as zero. `None` without a `cpu` line.
pub fn parse_busy_seconds(stat: &str, ticks_per_second: f64) -> Option<f64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if fields.len() < 4 || ticks_per_second <= 0.0 {
        return None;
    }
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal guest guest_nice
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    Some(busy as f64 / ticks_per_second)
}

/// Seconds some task waited for a CPU since boot: the `total=` (µs) of the
/// `some` line of `/proc/pressure/cpu`. `None` without one.
pub fn parse_pressure_some_seconds(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let total = line
        .split_whitespace()
        .find_map(|field| field.strip_prefix("total="))?;
    Some(total.parse::<u64>().ok()? as f64 * 1e-6)
}

/// USER_HZ, the unit of `/proc/stat`.
pub(crate) fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf takes a plain integer and reads no memory of ours.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// User + system seconds of this process (every thread) and of the
/// descendants it has waited for.
fn own_cpu_seconds() -> f64 {
    rusage_cpu_seconds(libc::RUSAGE_SELF) + rusage_cpu_seconds(libc::RUSAGE_CHILDREN)
}

/// User + system seconds `getrusage(who)` reports (`RUSAGE_SELF`: this
/// process, every thread; `RUSAGE_CHILDREN`: the descendants it has
/// waited for); 0 when it cannot be read.
pub fn rusage_cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: an all-zero rusage is valid; getrusage writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the call.
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return 0.0;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(usage.ru_utime) + s(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_seconds_add_the_busy_columns_of_the_aggregate_line() {
        // Captured from a 2-CPU machine: the aggregate line is
        // `cpu  51569 0 10329 105464 1052 0 103 63 0 0`.
        let stat = include_str!("fixtures/proc_stat_2cpu.txt");
        let busy = parse_busy_seconds(stat, 100.0).expect("cpu line");
        assert!((busy - (51569.0 + 10329.0 + 103.0 + 63.0) / 100.0).abs() < 1e-9);
        // Idle and iowait are not busy; the per-CPU lines are not added.
        let idle_only = "cpu  0 0 0 9999 500 0 0 0 0 0\ncpu0 7 7 7 7 7 7 7 7 0 0\n";
        assert_eq!(parse_busy_seconds(idle_only, 100.0), Some(0.0));
        // A kernel of the 2.6.11 era: no steal, guest columns.
        assert_eq!(
            parse_busy_seconds("cpu  100 0 50 900 0 10 5\n", 100.0),
            Some(1.65)
        );
        assert_eq!(parse_busy_seconds("cpu0 1 2 3 4\n", 100.0), None);
        assert_eq!(parse_busy_seconds("cpu  1 x 3 4\n", 100.0), None);
    }

    #[test]
    fn pressure_is_the_some_total_in_seconds() {
        // Captured: `some avg10=0.01 avg60=3.51 avg300=5.39 total=36628164`.
        let text = include_str!("fixtures/pressure_cpu.txt");
        let s = parse_pressure_some_seconds(text).expect("some line");
        assert!((s - 36.628164).abs() < 1e-9);
        let full_only = "full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n";
        assert_eq!(parse_pressure_some_seconds(full_only), None);
        assert_eq!(parse_pressure_some_seconds(""), None);
    }

    #[test]
    fn foreign_cpu_is_the_busy_time_allocscope_did_not_spend() {
        let at = |busy_s, pressure: Option<f64>, own_s| MachineCpu {
            busy_s,
            pressure_some_s: pressure,
            own_s,
        };
        let f = at(110.0, Some(7.0), 23.0).foreign_since(&at(100.0, Some(5.0), 20.0));
        assert_eq!((f.cpu_s, f.pressure_s), (7.0, Some(2.0)));
        // The machine's coarser ticks may lag the own rusage: none, not less.
        let f = at(100.01, None, 20.5).foreign_since(&at(100.0, None, 20.0));
        assert_eq!((f.cpu_s, f.pressure_s), (0.0, None));
    }

    /// A busy loop in a process allocscope does not own is foreign; the
    /// same loop in allocscope's own thread is not.
    #[test]
    fn a_busy_neighbour_reads_as_foreign_and_own_work_does_not() -> anyhow::Result<()> {
        // Spins until this thread has spent `cpu_s` (on a shared machine
        // the wall time it takes varies).
        let spin = |cpu_s: f64| {
            let end = crate::sample::thread_cpu_seconds() + cpu_s;
            let mut x = 0u64;
            while crate::sample::thread_cpu_seconds() < end {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        };
        let before = MachineCpu::read().expect("/proc/stat");
        spin(0.6);
        let after = MachineCpu::read().expect("/proc/stat");
        // The own loop is counted as allocscope's (whatever else the shared
        // machine ran meanwhile).
        assert!(after.own_s - before.own_s >= 0.5, "{before:?} {after:?}");
        // A neighbour allocscope has not reaped: `sh` busy-looping, read
        // while it runs.
        let mut neighbour = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()?;
        // The neighbour's own CPU time, from its schedstat (ns on a CPU).
        let path = format!("/proc/{}/schedstat", neighbour.id());
        let on_cpu_s = || -> anyhow::Result<f64> {
            let text = std::fs::read_to_string(&path)?;
            let ns: u64 = text.split_whitespace().next().unwrap_or("").parse()?;
            Ok(ns as f64 * 1e-9)
        };
        let (before, ran_before) = (MachineCpu::read().expect("/proc/stat"), on_cpu_s()?);
        while on_cpu_s()? - ran_before < 0.5 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let foreign = MachineCpu::read()
            .expect("/proc/stat")
            .foreign_since(&before);
        let ran = on_cpu_s()? - ran_before;
        neighbour.kill()?;
        neighbour.wait()?;
        // All of it, to the machine counters' 10 ms ticks per CPU.
        assert!(
            foreign.cpu_s >= ran - 0.05,
            "{foreign:?}, the neighbour ran {ran} s"
        );
        Ok(())
    }
}
