//! The reclaim test of one run: once, at the end of its measured phase, the
//! allocator of every probed process is asked to return what it holds
//! (`malloc_trim(0)`, jemalloc's purge, gperftools' `ReleaseFreeMemory`,
//! mimalloc's `mi_collect(true)`) and each measures its RSS just before and
//! after (probe/PROTOCOL.md, "Reclaim requests"). When: a service just
//! before its stop; a batch program at its exit, or at `--reclaim-at
//! LABEL|DURATION`. Nothing the verdict judges may change because of it, so
//! the samples taken from the moment it started (a request's time, or each
//! exit test's window where its tests returned 1% or more of the tree's
//! RSS) leave the run, and its CPU time (and at exit its
//! duration, which delays the end) is taken off the run's. Each process's
//! free memory and live heap just before the test are capped at what it
//! held then before they are summed (`heap_vet::vet_reclaim`).

pub use super::reclaim_at::ReclaimAt;
use crate::model::{Reclaim, ReclaimReach, Sample};
use crate::sample::heap_vet::vet_reclaim;
use crate::sample::probe_shm::{
    ProbeReading, ReclaimReading, RECLAIM_CALLING_THREAD, RECLAIM_WHOLE,
};
use std::time::{Duration, Instant};

/// Slack around an exit test's window: a tick's reads of one process may
/// come a little after the tick's time, and the process lives a little
/// after its test (the rest of its exit).
const EXIT_SLACK_S: f64 = 0.02;

/// The share of a sample's RSS that the exit tests running at its time
/// must have returned for it to leave the run. A tree of many short-lived
/// processes (a shell script, a version manager's shims: 41 processes
/// for one `python3`) runs an exit test in each; dropping every sample in
/// every window left 1-3 samples of a 0.5 s run, while a small process's
/// trim moves the tree's figure by less than its own pages, which leave
/// the tree a moment later anyway.
const EXIT_MOVE_SHARE: f64 = 0.01;

/// The run's side of the test: when it was asked for, and why.
#[derive(Debug)]
pub(super) struct Reclaimer {
    at: ReclaimAt,
    service: bool,
    /// When allocscope asked, and the trigger's words.
    requested: Option<(Instant, String)>,
    /// A marker's trigger, waiting for the marker's reading.
    armed: Option<String>,
}

impl Reclaimer {
    pub fn new(at: ReclaimAt, service: bool) -> Reclaimer {
        Reclaimer {
            at,
            service,
            requested: None,
            armed: None,
        }
    }

    /// Holds a marker's trigger until the marker has had its reading.
    pub fn arm(&mut self, trigger: String) {
        self.armed.get_or_insert(trigger);
    }

    /// The armed trigger, once `marker_read`.
    pub(crate) fn take_armed(&mut self, marker_read: bool) -> Option<String> {
        if marker_read && self.requested.is_none() {
            self.armed.take()
        } else {
            None
        }
    }

    /// Whether it is time to ask: `since_start` after the start, or `label`
    /// just arrived; `None` once asked or when asking is not this run's way.
    pub fn due(&self, since_start: Duration, label: Option<&str>) -> Option<String> {
        if self.requested.is_some() {
            return None;
        }
        match (&self.at, label) {
            (ReclaimAt::After(after), _) if since_start >= *after => Some(format!(
                "after {}",
                crate::units::format_seconds(after.as_secs_f64())
            )),
            (ReclaimAt::Label(want), Some(label)) if want == label => {
                Some(format!("marker {label}"))
            }
            _ => None,
        }
    }

    /// A service's test, just before its stop (when nothing else asked).
    pub(crate) fn due_at_stop(&self) -> Option<String> {
        (self.service && self.at == ReclaimAt::End && self.requested.is_none())
            .then(|| "end of load".to_string())
    }

    pub fn asked(&mut self, at: Instant, trigger: String) {
        self.requested = Some((at, trigger));
    }

    /// The run's record of the test from every process's last words, with
    /// the samples it could have touched dropped and its cost taken off
    /// `wall_s`, `user_s` and `sys_s`. `start` is time zero of the samples.
    pub fn conclude(
        &self,
        readings: &[(i32, ProbeReading)],
        start: Instant,
        samples: &mut Vec<Sample>,
        times: &mut RunTimes,
    ) -> Option<Reclaim> {
        if self.at == ReclaimAt::Off {
            return None;
        }
        let clock = RunClock::new(start);
        let answers: Vec<ReclaimReading> = readings.iter().filter_map(|(_, r)| r.reclaim).collect();
        let at_exit = self.at.at_exit(self.service) && self.requested.is_none();
        self.take_out_cost(&answers, at_exit, start, &clock, samples, times);
        let ran = |a: &ReclaimReading| a.rss_before_bytes.is_some() && a.rss_after_bytes.is_some();
        // Each process's figures within what it held, before they are
        // summed: one allocator's count above its RSS would pass for the
        // tree's free memory.
        let vetted: Vec<(ReclaimReading, Option<u64>)> = answers
            .iter()
            .filter(|a| ran(a))
            .map(|a| vet_reclaim(*a))
            .collect();
        let measured: Vec<&ReclaimReading> = vetted.iter().map(|(a, _)| a).collect();
        let capped = vetted.iter().any(|(_, counted)| counted.is_some());
        // Asked, with no call to return memory: the test could not run there.
        let unavailable = answers.len() - measured.len();
        let first_ns = answers.iter().map(|a| a.start_ns).min()?;
        let trigger = match &self.requested {
            Some((_, trigger)) => trigger.clone(),
            None if at_exit => "exit".to_string(),
            None => return None,
        };
        let reach = readings
            .iter()
            .filter_map(|(_, r)| {
                r.reclaim
                    .filter(ran)
                    .map(|a| reach_of(a.kind, r.threads, at_exit))
            })
            .fold(None, |all, one| Some(combine(all, one)))
            .unwrap_or_default();
        let some = !measured.is_empty();
        Some(Reclaim {
            t_s: clock.t_s(first_ns).max(0.0),
            trigger,
            rss_before_bytes: measured.iter().filter_map(|a| a.rss_before_bytes).sum(),
            rss_after_bytes: measured.iter().filter_map(|a| a.rss_after_bytes).sum(),
            processes: u32::try_from(measured.len()).unwrap_or(u32::MAX),
            free_before_bytes: sum_all(measured.iter().map(|a| a.free_before_bytes))
                .filter(|_| some),
            live_before_bytes: sum_all(measured.iter().map(|a| a.live_before_bytes))
                .filter(|_| some),
            // What the allocators counted, where that was more than held.
            free_counted_bytes: sum_all(
                vetted
                    .iter()
                    .map(|(a, counted)| counted.or(a.free_before_bytes)),
            )
            .filter(|_| capped),
            reach,
            unavailable_processes: u32::try_from(unavailable).unwrap_or(u32::MAX),
        })
    }

    /// The test's own cost out of the run's figures: its CPU time off
    /// `user_s` and `sys_s` (and its wall time at exit), and the samples
    /// it could have touched dropped.
    fn take_out_cost(
        &self,
        answers: &[ReclaimReading],
        at_exit: bool,
        start: Instant,
        clock: &RunClock,
        samples: &mut Vec<Sample>,
        times: &mut RunTimes,
    ) {
        for a in answers {
            times.user_s -= a.user_ns as f64 * 1e-9;
            times.sys_s -= a.sys_ns as f64 * 1e-9;
            if at_exit {
                times.wall_s -= a.end_ns.saturating_sub(a.start_ns) as f64 * 1e-9;
            }
        }
        times.clamp();
        if let Some((asked, _)) = &self.requested {
            let cut_s = asked.saturating_duration_since(start).as_secs_f64();
            samples.retain(|s| s.t_s < cut_s);
        } else if at_exit {
            // Each window with what its test returned to the system.
            let windows: Vec<(f64, f64, u64)> = answers
                .iter()
                .map(|a| {
                    let returned = a
                        .rss_before_bytes
                        .zip(a.rss_after_bytes)
                        .map_or(0, |(before, after)| before.saturating_sub(after));
                    (
                        clock.t_s(a.start_ns) - EXIT_SLACK_S,
                        clock.t_s(a.end_ns) + EXIT_SLACK_S,
                        returned,
                    )
                })
                .collect();
            samples.retain(|s| {
                let returned: u64 = windows
                    .iter()
                    .filter(|&&(from, to, _)| s.t_s >= from && s.t_s <= to)
                    .map(|&(_, _, returned)| returned)
                    .sum();
                returned == 0 || (returned as f64) < EXIT_MOVE_SHARE * s.rss_bytes as f64
            });
        }
    }
}

/// How far one process's reclaim reached, from the probe's word (`kind`),
/// the process's threads (the probe's own among them) and whether it ran
/// at exit (in the exiting thread) or on request (in the probe's thread).
fn reach_of(kind: u64, threads: u64, at_exit: bool) -> ReclaimReach {
    match kind {
        RECLAIM_WHOLE => ReclaimReach::Whole,
        // The calling thread's heap is the whole heap only when it is the
        // program's one thread: at exit, beside the probe's thread alone.
        // On request the caller is the probe's thread, which holds none.
        RECLAIM_CALLING_THREAD if at_exit && (1..=2).contains(&threads) => ReclaimReach::Whole,
        RECLAIM_CALLING_THREAD => ReclaimReach::CallingThread,
        _ => ReclaimReach::Unknown,
    }
}

/// The run's reach from its processes': the narrowest wins.
fn combine(all: Option<ReclaimReach>, one: ReclaimReach) -> ReclaimReach {
    use ReclaimReach::*;
    match (all.unwrap_or(one), one) {
        (CallingThread, _) | (_, CallingThread) => CallingThread,
        (Unknown, _) | (_, Unknown) => Unknown,
        (Whole, Whole) => Whole,
    }
}

/// The sum of one figure over the answers, `None` unless every one has it
/// (a partial sum would pass for the tree's).
fn sum_all(mut figures: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    figures.try_fold(0u64, |sum, v| Some(sum.saturating_add(v?)))
}

/// The run's wall and CPU times, which the test's cost is taken off.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct RunTimes {
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
}

impl RunTimes {
    fn clamp(&mut self) {
        self.wall_s = self.wall_s.max(0.0);
        self.user_s = self.user_s.max(0.0);
        self.sys_s = self.sys_s.max(0.0);
    }
}

/// Turns the probe's CLOCK_MONOTONIC nanoseconds into seconds since `start`
/// (Rust's `Instant` is CLOCK_MONOTONIC on Linux).
struct RunClock {
    now_s: f64,
    now_ns: u64,
}

impl RunClock {
    fn new(start: Instant) -> RunClock {
        let now_s = start.elapsed().as_secs_f64();
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call's duration.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        let now_ns = u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000
            + u64::try_from(ts.tv_nsec).unwrap_or(0);
        RunClock { now_s, now_ns }
    }

    fn t_s(&self, ns: u64) -> f64 {
        self.now_s - (self.now_ns as f64 - ns as f64) * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_once_at_its_label_or_time_and_a_service_at_its_stop() {
        let mut label = Reclaimer::new(ReclaimAt::Label("freed".into()), false);
        assert_eq!(label.due(Duration::from_secs(9), Some("other")), None);
        assert_eq!(
            label.due(Duration::ZERO, Some("freed")).as_deref(),
            Some("marker freed")
        );
        label.asked(Instant::now(), "marker freed".into());
        assert_eq!(label.due(Duration::ZERO, Some("freed")), None);
        let timed = Reclaimer::new(ReclaimAt::After(Duration::from_secs(2)), false);
        assert_eq!(timed.due(Duration::from_secs(1), None), None);
        let trigger = timed.due(Duration::from_secs(2), None);
        assert!(
            trigger.as_deref().is_some_and(|t| t.starts_with("after 2")),
            "{trigger:?}"
        );
        assert_eq!(timed.due_at_stop(), None);
        let service = Reclaimer::new(ReclaimAt::End, true);
        assert_eq!(service.due_at_stop().as_deref(), Some("end of load"));
    }

    fn answer(before: u64, after: u64, start_ns: u64) -> ProbeReading {
        ProbeReading {
            mode: 1,
            reclaim: Some(ReclaimReading {
                count: 1,
                rss_before_bytes: Some(before),
                rss_after_bytes: Some(after),
                start_ns,
                end_ns: start_ns + 50_000_000,
                user_ns: 10_000_000,
                sys_ns: 30_000_000,
                free_before_bytes: Some(before / 2),
                live_before_bytes: Some(before / 4),
                kind: RECLAIM_WHOLE,
                anon_before_bytes: None,
                anon_after_bytes: None,
            }),
            ..ProbeReading::default()
        }
    }

    #[test]
    fn a_requested_test_drops_later_samples_sums_the_answers_and_takes_off_its_cpu() {
        let start = Instant::now() - Duration::from_secs(3);
        let mut reclaimer = Reclaimer::new(ReclaimAt::Label("freed".into()), false);
        reclaimer.asked(start + Duration::from_secs(2), "marker freed".into());
        let clock = RunClock::new(start);
        let at_2s = (clock.now_ns as f64 - (clock.now_s - 2.0) * 1e9) as u64;
        let readings = vec![
            (10, answer(900, 300, at_2s)),
            (11, answer(100, 100, at_2s + 1)),
        ];
        let mut samples: Vec<Sample> = (0..6)
            .map(|i| Sample {
                t_s: f64::from(i) * 0.5,
                ..Sample::default()
            })
            .collect();
        let mut times = RunTimes {
            wall_s: 3.0,
            user_s: 1.0,
            sys_s: 1.0,
        };
        let reclaim = reclaimer
            .conclude(&readings, start, &mut samples, &mut times)
            .expect("answered");
        assert_eq!(
            (reclaim.rss_before_bytes, reclaim.rss_after_bytes),
            (1000, 400)
        );
        // What the allocators held just before, summed as the RSS is.
        assert_eq!(
            (reclaim.free_before_bytes, reclaim.live_before_bytes),
            (Some(500), Some(250))
        );
        assert_eq!(
            (reclaim.processes, reclaim.trigger.as_str()),
            (2, "marker freed")
        );
        assert!((reclaim.t_s - 2.0).abs() < 0.01, "{}", reclaim.t_s);
        assert_eq!(samples.len(), 4, "samples at 2.0 s and later leave the run");
        assert!((times.user_s - 0.98).abs() < 1e-9 && (times.sys_s - 0.94).abs() < 1e-9);
        assert_eq!(times.wall_s, 3.0, "a request runs beside the workload");
    }

    /// mimalloc's free memory is its committed memory less the live heap,
    /// and it commits whole segments: a 2-thread program's (threads.c 2
    /// 300000) read 199.6 MiB free at exit in 72.5 MiB of RSS. Each
    /// process's figure is capped at what it held before the sum, so a
    /// second, honest process cannot make room for it.
    #[test]
    fn each_process_free_memory_is_capped_at_what_it_held_before_the_sum() {
        const MIB: u64 = 1 << 20;
        let start = Instant::now() - Duration::from_secs(3);
        let clock = RunClock::new(start);
        let at_1s = (clock.now_ns as f64 - (clock.now_s - 1.0) * 1e9) as u64;
        let process = |rss: u64, anon: Option<u64>, live: u64, free: u64, after: u64| {
            let mut r = answer(rss * MIB, after * MIB, at_1s);
            if let Some(a) = r.reclaim.as_mut() {
                a.anon_before_bytes = anon.map(|m| m * MIB);
                a.anon_after_bytes = Some(MIB);
                a.live_before_bytes = Some(live * MIB);
                a.free_before_bytes = Some(free * MIB);
            }
            r
        };
        let reclaimer = Reclaimer::new(ReclaimAt::End, false);
        let conclude = |readings: &[(i32, ProbeReading)]| {
            reclaimer
                .conclude(readings, start, &mut Vec::new(), &mut RunTimes::default())
                .expect("answered")
        };
        // mimalloc alone: 200 counted free in 73 of RSS, 71 anonymous with
        // 1 live: 70 free at most, of which the reclaim returned 70.
        let mimalloc = conclude(&[(10, process(73, Some(71), 1, 200, 3))]);
        assert_eq!(mimalloc.free_before_bytes, Some(70 * MIB));
        assert_eq!(mimalloc.free_counted_bytes, Some(200 * MIB));
        assert!(mimalloc.free_before_bytes <= Some(mimalloc.rss_before_bytes));
        // Beside an honest process (300 RSS, 290 anonymous, 50 live, 100
        // free): 70 + 100, where a cap on the sums (500 free in 373 RSS
        // less 51 live) would have let 322 through.
        let both = conclude(&[
            (10, process(73, Some(71), 1, 200, 3)),
            (11, process(300, Some(290), 50, 100, 200)),
        ]);
        assert_eq!(both.free_before_bytes, Some(170 * MIB));
        assert_eq!(both.live_before_bytes, Some(51 * MIB));
        assert_eq!(both.free_counted_bytes, Some(300 * MIB));
        // A probe without the anonymous RSS word: its RSS bounds it.
        let old = conclude(&[(10, process(73, None, 1, 200, 3))]);
        assert_eq!(old.free_before_bytes, Some(72 * MIB));
        // Nothing capped: nothing counted apart.
        let honest = conclude(&[(11, process(300, Some(290), 50, 100, 200))]);
        assert_eq!(
            (honest.free_before_bytes, honest.free_counted_bytes),
            (Some(100 * MIB), None)
        );
    }

    #[test]
    fn an_exit_test_drops_only_the_samples_in_its_window_it_could_move_and_its_time() {
        let start = Instant::now() - Duration::from_secs(3);
        let clock = RunClock::new(start);
        let at_1s = (clock.now_ns as f64 - (clock.now_s - 1.0) * 1e9) as u64;
        let readings = vec![(10, answer(900, 300, at_1s))];
        let mut samples: Vec<Sample> = [0.5, 0.99, 1.03, 1.5]
            .iter()
            .map(|&t_s| Sample {
                t_s,
                ..Sample::default()
            })
            .collect();
        let mut times = RunTimes {
            wall_s: 3.0,
            ..RunTimes::default()
        };
        let reclaimer = Reclaimer::new(ReclaimAt::End, false);
        let reclaim = reclaimer.conclude(&readings, start, &mut samples, &mut times);
        assert_eq!(reclaim.map(|r| r.trigger), Some("exit".to_string()));
        let kept: Vec<f64> = samples.iter().map(|s| s.t_s).collect();
        assert_eq!(kept, vec![0.5, 1.5]);
        assert!((times.wall_s - 2.95).abs() < 1e-9);
        // A test that returned under 1% of a sample's RSS leaves it in.
        let mut big: Vec<Sample> = [0.99, 1.03]
            .iter()
            .map(|&t_s| Sample {
                t_s,
                rss_bytes: 1000 * 600,
                ..Sample::default()
            })
            .collect();
        reclaimer.conclude(&readings, start, &mut big, &mut times);
        assert_eq!(big.len(), 2);
        let off = Reclaimer::new(ReclaimAt::Off, false);
        assert_eq!(
            off.conclude(&readings, start, &mut samples, &mut times),
            None
        );
    }

    #[test]
    fn a_reclaim_reaches_the_whole_process_only_by_a_call_that_reaches_every_thread() {
        use ReclaimReach::*;
        assert_eq!(reach_of(RECLAIM_WHOLE, 26, false), Whole);
        // mimalloc's mi_collect at exit in a program with one thread (and
        // the probe's) collects its one heap; with more, or from the
        // probe's thread on request, it cannot reach the program's.
        assert_eq!(reach_of(RECLAIM_CALLING_THREAD, 2, true), Whole);
        assert_eq!(reach_of(RECLAIM_CALLING_THREAD, 26, true), CallingThread);
        assert_eq!(reach_of(RECLAIM_CALLING_THREAD, 2, false), CallingThread);
        // A probe that predates the word.
        assert_eq!(reach_of(0, 2, true), Unknown);
        assert_eq!(combine(Some(Whole), CallingThread), CallingThread);
        assert_eq!(combine(Some(Whole), Unknown), Unknown);
        assert_eq!(combine(None, Whole), Whole);
    }

    #[test]
    fn processes_without_a_reclaim_call_are_counted_and_their_figures_left_out() {
        let start = Instant::now() - Duration::from_secs(3);
        let clock = RunClock::new(start);
        let at_1s = (clock.now_ns as f64 - (clock.now_s - 1.0) * 1e9) as u64;
        let mut none = answer(0, 0, at_1s);
        if let Some(r) = none.reclaim.as_mut() {
            (r.rss_before_bytes, r.rss_after_bytes) = (None, None);
            r.kind = 0;
        }
        let mut samples = Vec::new();
        let mut times = RunTimes::default();
        let reclaimer = Reclaimer::new(ReclaimAt::End, false);
        let only = reclaimer
            .conclude(&[(10, none)], start, &mut samples, &mut times)
            .expect("asked, and answered that it could not");
        assert_eq!((only.processes, only.unavailable_processes), (0, 1));
        assert_eq!((only.free_before_bytes, only.measured()), (None, false));
        let mut threaded = answer(900, 900, at_1s);
        threaded.threads = 26;
        if let Some(r) = threaded.reclaim.as_mut() {
            r.kind = RECLAIM_CALLING_THREAD;
        }
        let both = reclaimer
            .conclude(
                &[(10, none), (11, threaded)],
                start,
                &mut samples,
                &mut times,
            )
            .expect("answered");
        assert_eq!((both.processes, both.unavailable_processes), (1, 1));
        assert_eq!(both.reach, ReclaimReach::CallingThread);
        assert!(!both.measured() && !both.reached_everything());
    }
}
