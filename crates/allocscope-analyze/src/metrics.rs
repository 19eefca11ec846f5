//! Per-run figures from one run's samples: peak, time-weighted mean and final
//! RSS, peak and mean PSS where PSS was read (and peak USS where USS was),
//! and with the heap probe the live heap, the overhead ratio (RSS / live
//! heap) and the most arenas; where the samples carry one, the memory
//! breakdown time-weighted over the ticks that had it and at the tick of
//! peak RSS among them; where the run had a memory cgroup, the peak and
//! time-weighted mean of its charge and working set.
//!
//! PSS is read sparsely (smaps_rollup is rationed by the sampler's CPU
//! budget) while RSS is read every tick. So the PSS series is the dense RSS
//! series times the PSS/RSS ratio, interpolated linearly between the ticks
//! that read PSS (held flat before the first and after the last). At those
//! ticks it is exactly the PSS read; between them it follows RSS. Averaging
//! only the sparse reads would miss what happened in between.
//!
//! The means of a batch program that keeps a CPU busy are taken over its
//! work, not its wall time (`Clock`): a neighbour that takes its CPU away
//! stretches whichever phase it lands on, and the wall-time mean moves with
//! where the neighbour happened to land.

use allocscope_core::model::{
    Breakdown, CgroupSample, RunMetrics, RunRecord, RunStatus, Sample, StoredConfig, StoredRun,
};

/// The runs of `config` that ended `ok`: the only ones analysed.
pub fn ok_runs(config: &StoredConfig) -> impl Iterator<Item = &StoredRun> {
    config
        .runs
        .iter()
        .filter(|r| r.record.status == RunStatus::Ok)
}

/// A stored run's metrics: computed from its samples, or, for a run a file
/// older than schema version 6 kept without samples, the values it stored.
pub fn of(run: &StoredRun) -> RunMetrics {
    match &run.legacy_metrics {
        Some(stored) if run.record.samples.is_empty() => *stored,
        _ => run_metrics(&run.record),
    }
}

/// Derives a run's metrics from its record.
///
/// The peak RSS is the largest of the sampled maximum, a single process's
/// RSS at its reclaim test, and the kernel's VmHWM
/// (the workload's own process's as its ticks read it, wait4's for the
/// others: `run/reaper.rs`): for a single process VmHWM is exact (sampling
/// can miss a short spike); for
/// a tree the sampled sum is the better figure, but never less than the
/// largest single process's high-water mark.
pub fn run_metrics(record: &RunRecord) -> RunMetrics {
    let samples = &record.samples;
    let weighting = Weighting::of(record);
    let time_weighted_mean = |series: &[(f64, u64)]| weighting.mean(series);
    let rss: Vec<(f64, u64)> = samples.iter().map(|s| (s.t_s, s.rss_bytes)).collect();
    let pss = estimated(samples, |s| s.pss_bytes);
    let sampled_peak = rss.iter().map(|&(_, v)| v).max().unwrap_or(0);
    // One process's RSS at its reclaim test (at exit, after the last tick
    // read its high-water mark) is a moment of its life the peak covers;
    // the sum over several processes is not (they are read at different times).
    let reclaim_read = (record.reclaim.as_ref())
        .filter(|r| r.processes == 1)
        .map_or(0, |r| r.rss_before_bytes);
    RunMetrics {
        peak_rss_bytes: sampled_peak.max(record.max_hwm_bytes).max(reclaim_read),
        mean_rss_bytes: time_weighted_mean(&rss).unwrap_or(0),
        final_rss_bytes: samples.last().map(|s: &Sample| s.rss_bytes).unwrap_or(0),
        peak_pss_bytes: pss.iter().map(|&(_, v)| v).max(),
        mean_pss_bytes: time_weighted_mean(&pss),
        ..cgroup_metrics(
            record,
            &weighting,
            breakdown_metrics(samples, &weighting, heap_metrics(samples, &weighting)),
        )
    }
}

/// A batch run whose tree kept at least this share of a core busy over its
/// wall time is CPU-bound: its means are taken over its CPU time.
pub const WORK_CLOCK_MIN_CORES: f64 = 0.5;

/// What a run's means are weighted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Wall time: a service (its idle settle period is part of what it
    /// holds), a program that waits or sleeps for much of its run, or
    /// samples without the tree's CPU time.
    Wall,
    /// The tree's CPU time: a CPU-bound batch program's memory over its
    /// work. A phase stretched by a neighbour that took its CPU counts for
    /// the work done in it, as on a quiet machine. Measured on sqlite3
    /// running a batch beside two busy loops (2 s in every 5 s), 20 rounds:
    /// the paired mean-PSS ratio of glibc:arena_max=2 to glibc spread by
    /// 12.1% (standard deviation) over wall time and 4.1% over CPU time,
    /// what it spread by over wall time on the quiet machine (4.1%).
    Work,
}

impl Clock {
    /// `Work` for a run without a service whose every sample carries the
    /// tree's CPU time and whose tree kept `WORK_CLOCK_MIN_CORES` busy.
    pub fn of(record: &RunRecord) -> Clock {
        let busy = record.wall_s > 0.0
            && (record.user_s + record.sys_s) / record.wall_s >= WORK_CLOCK_MIN_CORES;
        let timed = !record.samples.is_empty() && record.samples.iter().all(|s| s.cpu_s.is_some());
        match record.service.is_none() && busy && timed {
            true => Clock::Work,
            false => Clock::Wall,
        }
    }
}

/// A run's means on its `Clock`: for `Work`, each tick's place on the
/// tree's CPU time, found once for every series of the run.
struct Weighting {
    /// `(t_s, CPU seconds)` of each tick, the CPU time never falling (a
    /// process that ended unwaited-for takes its CPU time out of the
    /// tree's sum); `None` on `Wall`.
    work: Option<Vec<(f64, f64)>>,
}

impl Weighting {
    fn of(record: &RunRecord) -> Weighting {
        let work = (Clock::of(record) == Clock::Work).then(|| {
            let mut work = 0.0_f64;
            (record.samples.iter())
                .map(|s| {
                    work = work.max(s.cpu_s.unwrap_or(0.0));
                    (s.t_s, work)
                })
                .collect()
        });
        Weighting { work }
    }

    /// The mean of `series`, read at the run's ticks, on the run's clock.
    fn mean(&self, series: &[(f64, u64)]) -> Option<u64> {
        let Some(work) = &self.work else {
            return time_weighted_mean(series);
        };
        let on_work: Vec<(f64, u64)> = (series.iter())
            .map(|&(t, v)| {
                let at = work.partition_point(|c| c.0 < t).min(work.len() - 1);
                (work[at].1, v)
            })
            .collect();
        time_weighted_mean(&on_work)
    }
}

/// The run's memory cgroup over the ticks that read it: the charge's peak
/// (never below the kernel's own peak, which sees between ticks) and
/// time-weighted mean, and the working set's (sampled only: the kernel
/// keeps no peak of it). All `None` for a run without a group.
fn cgroup_metrics(record: &RunRecord, weighting: &Weighting, metrics: RunMetrics) -> RunMetrics {
    let time_weighted_mean = |series: &[(f64, u64)]| weighting.mean(series);
    let charge = cgroup_series(record, |c| c.charge_bytes);
    let working_set = cgroup_series(record, |c| c.working_set_bytes);
    let peak = |series: &[(f64, u64)]| series.iter().map(|&(_, v)| v).max();
    let sampled_peak = peak(&charge);
    RunMetrics {
        cgroup_peak_bytes: sampled_peak
            .map(|p| p.max(record.cgroup_peak_kernel_bytes.unwrap_or(0))),
        cgroup_mean_bytes: time_weighted_mean(&charge),
        working_set_peak_bytes: peak(&working_set),
        working_set_mean_bytes: time_weighted_mean(&working_set),
        ..metrics
    }
}

/// One figure of the run's memory cgroup over the ticks that read it.
fn cgroup_series(record: &RunRecord, pick: fn(&CgroupSample) -> u64) -> Vec<(f64, u64)> {
    (record.samples.iter())
        .filter_map(|s| s.cgroup.as_ref().map(|c| (s.t_s, pick(c))))
        .collect()
}

/// Each of the cgroup's parts (anon, file, shmem, kernel, huge pages, and
/// the charge and working set) weighted over the ticks that read the group
/// on the run's `Clock`; `None` for a run without one (no tick, so no mean).
pub fn cgroup_mean(record: &RunRecord) -> Option<CgroupSample> {
    let weighting = Weighting::of(record);
    let mean = |pick: fn(&CgroupSample) -> u64| weighting.mean(&cgroup_series(record, pick));
    Some(CgroupSample {
        charge_bytes: mean(|c| c.charge_bytes)?,
        working_set_bytes: mean(|c| c.working_set_bytes)?,
        anon_bytes: mean(|c| c.anon_bytes)?,
        file_bytes: mean(|c| c.file_bytes)?,
        shmem_bytes: mean(|c| c.shmem_bytes)?,
        kernel_bytes: mean(|c| c.kernel_bytes)?,
        huge_pages_bytes: mean(|c| c.huge_pages_bytes)?,
    })
}

/// The cgroup's figures at the tick of its peak charge (the last among
/// equals, as the breakdown's peak), so the parts are those of one moment;
/// `None` for a run without a group.
pub fn cgroup_at_peak(record: &RunRecord) -> Option<CgroupSample> {
    record
        .samples
        .iter()
        .filter_map(|s| s.cgroup)
        .max_by_key(|c| c.charge_bytes)
}

/// The breakdown's mean: each part's mean on the run's clock (as its mean
/// RSS) over the ticks that had a breakdown, then all scaled by one factor so that they add up to the
/// run's mean RSS (the ticks without one, their probe reading stale or not
/// made yet, are in the mean RSS the table shows: the split describes the
/// ticks it was read on, and the line says how many those were). Then its
/// value at the tick of peak RSS among them (the last such tick: the heap
/// probe polls on its own clock, so on the first tick of a plateau its
/// figures may still describe the climb to it), the most processes without
/// allocator figures, and the share of the ticks the breakdown covers (the
/// others' probe readings were stale); all `None` when no tick had one.
fn breakdown_metrics(samples: &[Sample], weighting: &Weighting, metrics: RunMetrics) -> RunMetrics {
    let time_weighted_mean = |series: &[(f64, u64)]| weighting.mean(series);
    let with: Vec<&Sample> = samples.iter().filter(|s| s.breakdown.is_some()).collect();
    let parts = |s: &Sample| s.breakdown.unwrap_or_default().parts();
    let mut mean = [0u64; Breakdown::COUNT];
    for (i, part) in mean.iter_mut().enumerate() {
        let series: Vec<(f64, u64)> = with.iter().map(|s| (s.t_s, parts(s)[i])).collect();
        *part = time_weighted_mean(&series).unwrap_or(0);
    }
    // Scaled by the run's mean RSS over that of the ticks with a
    // breakdown: a single process's parts then add up to the mean RSS the
    // table shows, and a tree's, whose parts add up to its PSS (pages
    // shared by a family count once), keep that measure.
    let rss = |of: &[&Sample]| {
        let series: Vec<(f64, u64)> = of.iter().map(|s| (s.t_s, s.rss_bytes)).collect();
        time_weighted_mean(&series).unwrap_or(0)
    };
    let all: Vec<&Sample> = samples.iter().collect();
    let (rss_all, rss_with) = (rss(&all), rss(&with));
    let total: u64 = mean.iter().sum();
    let target = if rss_with > 0 {
        (total as f64 * rss_all as f64 / rss_with as f64).round() as u64
    } else {
        total
    };
    let mean = scaled_to(mean, target);
    // `max_by_key` keeps the last of equals.
    let peak = with
        .iter()
        .max_by_key(|s| s.rss_bytes)
        .and_then(|s| s.breakdown);
    RunMetrics {
        breakdown_mean: peak.map(|_| Breakdown::from_parts(mean)),
        breakdown_peak: peak,
        heapless_processes_max: with.iter().map(|s| s.heapless_processes).max(),
        breakdown_coverage: peak.map(|_| {
            let stale = samples
                .iter()
                .filter(|s| s.heap_stale_processes > 0)
                .count();
            with.len() as f64 / (with.len() + stale) as f64
        }),
        ..metrics
    }
}

/// `parts` scaled to add up to `total` (each rounded, the largest taking
/// the rounding's remainder); unchanged when they are all zero.
fn scaled_to(parts: [u64; Breakdown::COUNT], total: u64) -> [u64; Breakdown::COUNT] {
    let sum: u64 = parts.iter().sum();
    if sum == 0 || sum == total {
        return parts;
    }
    let factor = total as f64 / sum as f64;
    let mut scaled = parts.map(|p| (p as f64 * factor).round() as u64);
    let largest = (0..scaled.len()).max_by_key(|&i| scaled[i]).unwrap_or(0);
    let rest: u64 = scaled
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != largest)
        .map(|(_, v)| v)
        .sum();
    scaled[largest] = total.saturating_sub(rest);
    scaled
}

/// The heap probe's figures; the overhead ratio is the mean RSS over the
/// mean live heap (each on the run's clock), both over the ticks that read
/// the live heap (so ticks before the probe started do not count).
fn heap_metrics(samples: &[Sample], weighting: &Weighting) -> RunMetrics {
    let time_weighted_mean = |series: &[(f64, u64)]| weighting.mean(series);
    let (live, rss): (Vec<_>, Vec<_>) = samples
        .iter()
        .filter_map(|s| Some(((s.t_s, s.live_heap_bytes?), (s.t_s, s.rss_bytes))))
        .unzip();
    let mean_live = time_weighted_mean(&live);
    let mean_overhead_ratio = match (time_weighted_mean(&rss), mean_live) {
        (Some(r), Some(l)) if l > 0 => Some(r as f64 / l as f64),
        _ => None,
    };
    RunMetrics {
        peak_live_heap_bytes: live.iter().map(|&(_, v)| v).max(),
        mean_live_heap_bytes: mean_live,
        mean_overhead_ratio,
        arenas_max: samples.iter().filter_map(|s| s.arenas).max(),
        ..RunMetrics::default()
    }
}

/// The series of a sparsely read part of RSS (PSS, USS) at every tick: RSS
/// times the interpolated part/RSS ratio, exactly the read where there is
/// one. Empty when no tick read it.
fn estimated(samples: &[Sample], read: fn(&Sample) -> Option<u64>) -> Vec<(f64, u64)> {
    let reads: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.rss_bytes > 0)
        // A part never exceeds RSS at one instant; a ratio above 1 only
        // means the memory grew between the tick's RSS and smaps reads.
        .filter_map(|s| read(s).map(|p| (s.t_s, (p as f64 / s.rss_bytes as f64).min(1.0))))
        .collect();
    if reads.is_empty() {
        return Vec::new();
    }
    samples
        .iter()
        .map(|s| {
            let value = match read(s) {
                Some(part) => part,
                None => (s.rss_bytes as f64 * ratio_at(&reads, s.t_s)).round() as u64,
            };
            (s.t_s, value)
        })
        .collect()
}

/// A run's peak USS (the memory no other process shares), over the USS
/// series estimated like PSS between the ticks that read it; `None` when
/// no tick read USS (or the run kept no samples).
pub fn peak_uss_bytes(run: &StoredRun) -> Option<u64> {
    let uss = estimated(&run.record.samples, |s| s.uss_bytes);
    uss.iter().map(|&(_, v)| v).max()
}

/// Linear interpolation of `(t, ratio)` points (sorted by t) at `t`.
fn ratio_at(points: &[(f64, f64)], t: f64) -> f64 {
    let after = points.partition_point(|&(pt, _)| pt <= t);
    match (after.checked_sub(1).map(|i| points[i]), points.get(after)) {
        (Some((t0, r0)), Some(&(t1, r1))) if t1 > t0 => r0 + (r1 - r0) * (t - t0) / (t1 - t0),
        (Some((_, r0)), _) => r0,
        (None, Some(&(_, r1))) => r1,
        (None, None) => 1.0,
    }
}

/// Trapezoid-rule mean of a step-free series over its own time span. One
/// point is its own mean; points all at one instant average plainly.
fn time_weighted_mean(series: &[(f64, u64)]) -> Option<u64> {
    let (first, last) = (series.first()?, series.last()?);
    let span = last.0 - first.0;
    if series.len() == 1 || span <= 0.0 || !span.is_finite() {
        let sum: f64 = series.iter().map(|&(_, v)| v as f64).sum();
        return Some((sum / series.len() as f64).round() as u64);
    }
    let area: f64 = series
        .windows(2)
        .map(|w| {
            let dt = (w[1].0 - w[0].0).max(0.0);
            dt * (w[0].1 as f64 + w[1].1 as f64) / 2.0
        })
        .sum();
    Some((area / span).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::model::RunStatus;

    #[test]
    fn a_cpu_bound_batch_runs_means_are_over_its_work_not_a_neighbours_stall() {
        // One core busy: 100 B held for 2 s of work, then 200 B for 2 s.
        // Quiet, each tick a second of CPU; stalled, the 200 B phase waits
        // 4 s for a CPU (the tree's CPU time stands still meanwhile).
        let run = |ticks: &[(f64, u64, f64)], wall_s: f64| {
            let samples = (ticks.iter())
                .map(|&(t_s, rss, cpu)| Sample {
                    cpu_s: Some(cpu),
                    live_heap_bytes: Some(rss / 2),
                    breakdown: Some(Breakdown {
                        live_heap_bytes: rss / 2,
                        allocator_free_bytes: rss / 2,
                        ..Breakdown::default()
                    }),
                    ..sample(t_s, rss, Some(rss))
                })
                .collect();
            RunRecord {
                wall_s,
                user_s: 4.0,
                ..record(samples, 0)
            }
        };
        let quiet = run(
            &[
                (0.0, 100, 0.0),
                (2.0, 100, 2.0),
                (2.0, 200, 2.0),
                (4.0, 200, 4.0),
            ],
            4.0,
        );
        let stalled = run(
            &[
                (0.0, 100, 0.0),
                (2.0, 100, 2.0),
                (2.0, 200, 2.0),
                (6.0, 200, 2.0),
                (8.0, 200, 4.0),
            ],
            8.0,
        );
        assert_eq!(
            (Clock::of(&quiet), Clock::of(&stalled)),
            (Clock::Work, Clock::Work)
        );
        for r in [&quiet, &stalled] {
            let m = run_metrics(r);
            assert_eq!((m.mean_rss_bytes, m.mean_pss_bytes), (150, Some(150)));
            // The "why" parts and the live heap on the same clock: they add
            // up to the mean RSS the table shows.
            let parts = m.breakdown_mean.expect("breakdown").total_bytes();
            assert_eq!((parts, m.mean_live_heap_bytes), (150, Some(75)));
        }
        // Over wall time the stall moves it: 100 for 2 s, 200 for 6 s.
        let wall = RunRecord {
            service: Some(Default::default()),
            ..stalled.clone()
        };
        assert_eq!(Clock::of(&wall), Clock::Wall);
        assert_eq!(run_metrics(&wall).mean_rss_bytes, 175);
        // A tree that sleeps most of its run, or samples without CPU time,
        // keep wall time.
        let sleeper = RunRecord {
            user_s: 1.0,
            ..stalled.clone()
        };
        assert_eq!(Clock::of(&sleeper), Clock::Wall);
        let untimed = RunRecord {
            samples: (stalled.samples.iter())
                .map(|s| Sample { cpu_s: None, ..*s })
                .collect(),
            ..stalled
        };
        assert_eq!(Clock::of(&untimed), Clock::Wall);
    }

    #[test]
    fn sparse_pss_follows_rss_between_reads() {
        // PSS read at t=0 (ratio 0.5) and t=2 (ratio 1.0); RSS every second.
        let samples = vec![
            sample(0.0, 100, Some(50)),
            sample(1.0, 400, None),
            sample(2.0, 200, Some(200)),
            sample(3.0, 100, None),
        ];
        let series = estimated(&samples, |s| s.pss_bytes);
        // t=1: ratio 0.75 interpolated, times RSS 400; t=3: last ratio held.
        assert_eq!(series, vec![(0.0, 50), (1.0, 300), (2.0, 200), (3.0, 100)]);
        let metrics = run_metrics(&record(samples, 0));
        assert_eq!(metrics.peak_pss_bytes, Some(300));
        assert_eq!(
            estimated(&[sample(0.0, 100, None)], |s| s.pss_bytes),
            vec![]
        );
        // A PSS read that raced ahead of its tick's RSS read does not
        // inflate the ticks after it.
        let raced = estimated(
            &[sample(0.0, 100, Some(110)), sample(1.0, 200, None)],
            |s| s.pss_bytes,
        );
        assert_eq!(raced, vec![(0.0, 110), (1.0, 200)]);
    }

    #[test]
    fn peak_uss_follows_rss_between_reads() {
        // USS read at t=0 (ratio 0.25) and t=2 (ratio 0.5): at t=1 the RSS
        // peak of 400 holds 0.375 of it, more than either read.
        let mut samples = vec![
            sample(0.0, 100, Some(50)),
            sample(1.0, 400, None),
            sample(2.0, 200, Some(200)),
        ];
        samples[0].uss_bytes = Some(25);
        samples[2].uss_bytes = Some(100);
        let run = StoredRun {
            id: 1,
            record: record(samples, 0),
            legacy_metrics: None,
        };
        assert_eq!(peak_uss_bytes(&run), Some(150));
        let unread = StoredRun {
            record: record(vec![sample(0.0, 100, Some(50))], 0),
            ..run
        };
        assert_eq!(peak_uss_bytes(&unread), None);
    }

    fn sample(t_s: f64, rss_bytes: u64, pss_bytes: Option<u64>) -> Sample {
        Sample {
            t_s,
            rss_bytes,
            pss_bytes,
            ..Sample::default()
        }
    }

    fn record(samples: Vec<Sample>, max_hwm_bytes: u64) -> RunRecord {
        RunRecord {
            index: 1,
            status: RunStatus::Ok,
            exit_code: Some(0),
            signal: None,
            wall_s: 1.0,
            user_s: 0.0,
            sys_s: 0.0,
            max_hwm_bytes,
            minor_faults: 0,
            major_faults: 0,
            samples,
            markers: Vec::new(),
            stdout_path: "out".into(),
            stderr_path: "err".into(),
            message: None,
            linked_allocators: vec![],
            sampler_cpu_s: 0.0,
            probe_mode: None,
            probe_cpu_s: None,
            service: None,
            user_metrics: Default::default(),
            reclaim: None,
            cgroup_peak_kernel_bytes: None,
            served_tree: None,
            foreign_cpu_s: None,
            cpu_pressure_s: None,
            served_by: None,
            stderr_tail: None,
            started_at: String::new(),
        }
    }

    #[test]
    fn overhead_ratio_covers_only_the_ticks_with_a_live_heap() {
        let heap = |t_s, rss, live| Sample {
            live_heap_bytes: live,
            arenas: live.map(|_| 2),
            ..sample(t_s, rss, None)
        };
        let m = run_metrics(&record(
            vec![
                heap(0.0, 1000, None),
                heap(1.0, 300, Some(100)),
                heap(2.0, 300, Some(200)),
            ],
            0,
        ));
        assert_eq!(m.peak_live_heap_bytes, Some(200));
        assert_eq!(m.mean_live_heap_bytes, Some(150));
        assert_eq!(m.mean_overhead_ratio, Some(2.0));
        assert_eq!(m.arenas_max, Some(2));
        let none = run_metrics(&record(vec![sample(0.0, 5, None)], 0));
        assert_eq!(
            (none.mean_live_heap_bytes, none.mean_overhead_ratio),
            (None, None)
        );
    }

    #[test]
    fn breakdown_coverage_is_the_share_of_ticks_whose_probe_readings_were_fresh() {
        let split = |t_s| Sample {
            breakdown: Some(Breakdown {
                other_anon_bytes: 10,
                ..Breakdown::default()
            }),
            ..sample(t_s, 10, None)
        };
        let stale = |t_s| Sample {
            heap_stale_processes: 1,
            ..sample(t_s, 500, None)
        };
        let samples = vec![
            sample(0.0, 5, None),
            stale(0.1),
            stale(0.2),
            stale(0.3),
            split(0.4),
            split(0.5),
        ];
        let m = run_metrics(&record(samples, 0));
        assert_eq!(m.breakdown_coverage, Some(0.4));
        // The split is the fresh ticks', scaled to the run's mean RSS,
        // which the stale ticks are in.
        let mean = m.breakdown_mean.expect("a mean");
        assert_eq!(m.mean_rss_bytes, 304);
        assert_eq!(mean.other_anon_bytes, 304);
        assert_eq!(mean.total_bytes(), m.mean_rss_bytes);
    }

    #[test]
    fn breakdown_mean_is_time_weighted_over_its_ticks_and_peak_is_at_peak_rss() {
        let split = |t_s, live, other, heapless| Sample {
            breakdown: Some(Breakdown {
                live_heap_bytes: live,
                other_anon_bytes: other,
                file_bytes: 10,
                ..Breakdown::default()
            }),
            heapless_processes: heapless,
            ..sample(t_s, live + other + 10, None)
        };
        let m = run_metrics(&record(
            vec![
                // Before the probe published: no breakdown, but in the
                // mean RSS the mean parts are scaled to.
                sample(0.0, 5000, None),
                split(1.0, 100, 0, 0),
                split(2.0, 300, 40, 1),
                // The same RSS split otherwise: the last of them is the peak.
                split(2.1, 320, 20, 0),
                // 0.4 s at the new figures, then 2 s more.
                split(2.5, 100, 20, 0),
                split(4.5, 100, 20, 0),
            ],
            0,
        ));
        // Over the ticks with one, live: (1*200 + 0.1*310 + 0.4*210 +
        // 2*100) / 3.5 = 147.14; other: (1*20 + 0.1*30 + 0.4*20 + 2*20) /
        // 3.5 = 20; file 10: 177 in all, scaled to the run's mean RSS (706,
        // its first second at 5000 included) by 3.99.
        let mean = m.breakdown_mean.expect("a mean");
        assert_eq!(m.mean_rss_bytes, 706);
        assert_eq!(
            (mean.live_heap_bytes, mean.other_anon_bytes, mean.file_bytes),
            (586, 80, 40)
        );
        assert_eq!(mean.total_bytes(), m.mean_rss_bytes);
        let peak = m.breakdown_peak.expect("a peak");
        assert_eq!((peak.live_heap_bytes, peak.other_anon_bytes), (320, 20));
        assert_eq!(m.heapless_processes_max, Some(1));
        assert_eq!(
            m.breakdown_coverage,
            Some(1.0),
            "before the first reading is not stale"
        );
        let none = run_metrics(&record(vec![sample(0.0, 5, None)], 0));
        assert_eq!(
            (
                none.breakdown_mean,
                none.breakdown_peak,
                none.heapless_processes_max
            ),
            (None, None, None)
        );
    }

    #[test]
    fn cgroup_figures_cover_their_ticks_and_the_peak_is_never_below_the_kernels() {
        let with = |t_s, charge_bytes, working_set_bytes| Sample {
            cgroup: Some(allocscope_core::model::CgroupSample {
                charge_bytes,
                working_set_bytes,
                anon_bytes: working_set_bytes,
                ..Default::default()
            }),
            ..sample(t_s, 1000, None)
        };
        // No group on the first tick; charge 100 then 300 over 2 s.
        let samples = vec![
            sample(0.0, 1000, None),
            with(1.0, 100, 80),
            with(3.0, 300, 200),
        ];
        let mut run = record(samples, 0);
        let m = run_metrics(&run);
        assert_eq!(
            (m.cgroup_peak_bytes, m.cgroup_mean_bytes),
            (Some(300), Some(200))
        );
        assert_eq!(
            (m.working_set_peak_bytes, m.working_set_mean_bytes),
            (Some(200), Some(140))
        );
        assert_eq!(cgroup_mean(&run).map(|c| c.anon_bytes), Some(140));
        run.cgroup_peak_kernel_bytes = Some(450);
        assert_eq!(run_metrics(&run).cgroup_peak_bytes, Some(450));
        let without = record(vec![sample(0.0, 1000, None)], 0);
        let m = run_metrics(&without);
        assert_eq!(
            (m.cgroup_peak_bytes, m.working_set_mean_bytes),
            (None, None)
        );
        assert_eq!(cgroup_mean(&without), None);
    }

    #[test]
    fn mean_is_time_weighted_by_trapezoid() {
        // 0..1 s ramps 0 -> 100 (area 50), 1..3 s stays 100 (area 200): 250 / 3.
        let r = record(
            vec![
                sample(0.0, 0, None),
                sample(1.0, 100, None),
                sample(3.0, 100, None),
            ],
            0,
        );
        let m = run_metrics(&r);
        assert_eq!(m.mean_rss_bytes, 83);
        assert_eq!(m.peak_rss_bytes, 100);
        assert_eq!(m.final_rss_bytes, 100);
        assert_eq!((m.peak_pss_bytes, m.mean_pss_bytes), (None, None));
    }

    #[test]
    fn uneven_intervals_weigh_by_duration_not_count() {
        // Nine quick samples at 10 then a long stretch at 1000.
        let mut s: Vec<Sample> = (0..9)
            .map(|i| sample(f64::from(i) * 0.01, 10, None))
            .collect();
        s.push(sample(0.09, 1000, None));
        s.push(sample(10.09, 1000, None));
        let m = run_metrics(&record(s, 0));
        // area = 0.08*10 + 0.01*505 + 10*1000 = 10005.85 over 10.09 s.
        assert_eq!(m.mean_rss_bytes, (10005.85_f64 / 10.09).round() as u64);
    }

    #[test]
    fn peak_is_never_below_the_kernels_high_water_mark() {
        let r = record(vec![sample(0.0, 50, None), sample(1.0, 70, None)], 90);
        assert_eq!(run_metrics(&r).peak_rss_bytes, 90);
        let r = record(vec![sample(0.0, 50, None), sample(1.0, 170, None)], 90);
        assert_eq!(run_metrics(&r).peak_rss_bytes, 170);
    }

    #[test]
    fn peak_covers_one_process_at_its_reclaim_test_not_a_sum_of_several() {
        // The last tick read 60 (and a high-water mark of 90); at exit,
        // after it, the one process held 120.
        let reclaim = |processes| allocscope_core::model::Reclaim {
            t_s: 1.0,
            trigger: "exit".into(),
            rss_before_bytes: 120,
            rss_after_bytes: 100,
            processes,
            free_before_bytes: None,
            live_before_bytes: None,
            free_counted_bytes: None,
            reach: Default::default(),
            unavailable_processes: 0,
        };
        let one = RunRecord {
            reclaim: Some(reclaim(1)),
            ..record(vec![sample(0.0, 60, None)], 90)
        };
        assert_eq!(run_metrics(&one).peak_rss_bytes, 120);
        let several = RunRecord {
            reclaim: Some(reclaim(2)),
            ..record(vec![sample(0.0, 60, None)], 90)
        };
        assert_eq!(run_metrics(&several).peak_rss_bytes, 90);
    }

    #[test]
    fn pss_mean_covers_the_ticks_between_reads() {
        let r = record(
            vec![
                sample(0.0, 100, Some(40)),
                sample(1.0, 100, None),
                sample(2.0, 100, Some(80)),
                sample(3.0, 100, None),
            ],
            0,
        );
        let m = run_metrics(&r);
        assert_eq!(m.peak_pss_bytes, Some(80));
        // Series 40, 60 (interpolated), 80, 80 (held): trapezoid mean 66.7.
        assert_eq!(m.mean_pss_bytes, Some(67));
        assert_eq!(m.mean_rss_bytes, 100);
    }

    #[test]
    fn one_sample_is_its_own_mean_and_none_gives_zero() {
        let m = run_metrics(&record(vec![sample(0.5, 42, Some(7))], 0));
        assert_eq!((m.mean_rss_bytes, m.final_rss_bytes), (42, 42));
        assert_eq!((m.peak_pss_bytes, m.mean_pss_bytes), (Some(7), Some(7)));
        let m = run_metrics(&record(vec![], 33));
        assert_eq!(m.peak_rss_bytes, 33);
        assert_eq!((m.mean_rss_bytes, m.final_rss_bytes), (0, 0));
        assert_eq!(m.mean_pss_bytes, None);
    }
}
