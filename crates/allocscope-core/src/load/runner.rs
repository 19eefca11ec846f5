//! Runs a [`Plan`]: `concurrency` worker threads, each with its own
//! connection, take request numbers from one shared counter, wait for the
//! request's due time in open-loop schedules, and record latencies in their
//! own HDR histogram; the histograms, counts and CPU times are merged into
//! the [`LoadReport`], with warnings when the generator saturated or fell
//! behind its schedule.
//!
//! Open-loop latency of a request sent late, because every connection was
//! still waiting on earlier responses, runs from the time it was *due*, not
//! the time it was sent (as wrk2 does): a server that stalls makes the
//! requests queued behind the stall late, and that lateness is what its
//! users would see. Measuring from the send time would hide it (coordinated
//! omission). A request sent on time runs from its send.

use super::http::{Client, Failure, Method};
use super::plan::{Plan, PlanError, Requests, Schedule};
use super::replay::LogEntry;
use super::report::{ErrorCounts, LoadReport, Percentiles};
use super::target::PathTemplate;
use crate::sample::thread_cpu_seconds;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Latencies are recorded in microseconds up to an hour, 3 significant
/// digits (0.1% resolution).
const HIGHEST_US: u64 = 3_600_000_000;
/// Longest sleep before a due time: bounds how late the stop flag is seen.
const SLEEP_SLICE: Duration = Duration::from_millis(50);
/// CPU use, as a fraction of what the workers could use, that makes the
/// generator a suspect bottleneck.
const SATURATED: f64 = 0.9;
/// An open-loop schedule sending slower than this fraction of its target
/// rate fell behind.
const BEHIND: f64 = 0.95;
/// Lateness of the last send no schedule is blamed for: a thread woken
/// late by a busy machine (a 4-request replay whose last send came 70 ms
/// late read as 4.5/s against 5/s).
const JITTER_S: f64 = 0.1;

/// Where request paths come from.
enum Source<'a> {
    Template(PathTemplate, u64),
    Replay(&'a [LogEntry]),
}

impl Source<'_> {
    fn len(&self) -> u64 {
        match self {
            Source::Template(_, count) => *count,
            Source::Replay(entries) => entries.len() as u64,
        }
    }
}

/// The checks behind [`Plan::validate`], returning the compiled source.
fn prepare(plan: &Plan) -> Result<Source<'_>, PlanError> {
    plan.validate_schedule()?;
    Ok(match &plan.requests {
        Requests::Template { template, count } => {
            Source::Template(PathTemplate::parse(template)?, *count)
        }
        Requests::Replay(entries) => Source::Replay(entries),
    })
}

/// What one worker measured.
struct Tally {
    histogram: Histogram<u64>,
    responses: u64,
    errors: ErrorCounts,
    cpu_s: f64,
    /// Requests handed to the server, and the latest actual send and due
    /// times among them (since the start): how far behind the schedule ran.
    sent: u64,
    last_send_s: f64,
    last_due_s: f64,
}

/// Runs the plan until every request is done or `stop` is raised; never
/// fails: a plan that cannot run returns an empty report with a warning.
pub fn run(plan: &Plan, stop: &AtomicBool) -> LoadReport {
    let source = match prepare(plan) {
        Ok(source) => source,
        Err(e) => return empty_report(format!("the load could not run: {e}")),
    };
    let histogram = match Histogram::<u64>::new_with_bounds(1, HIGHEST_US, 3) {
        Ok(h) => h,
        Err(e) => return empty_report(format!("the latency histogram could not be made: {e}")),
    };
    let next = AtomicU64::new(0);
    let start = Instant::now();
    let mut warnings = Vec::new();
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let mut workers = Vec::new();
        for i in 0..plan.concurrency {
            let spawned = std::thread::Builder::new()
                .name(format!("load-{i}"))
                .spawn_scoped(scope, || {
                    worker(plan, &source, histogram.clone(), &next, start, stop)
                });
            match spawned {
                Ok(handle) => workers.push(handle),
                // Thread limits: run with the connections that did start.
                Err(e) => {
                    warnings.push(format!(
                        "only {i} of {} connections could start a thread: {e}",
                        plan.concurrency
                    ));
                    break;
                }
            }
        }
        // A worker cannot panic short of a bug; its tally is then lost,
        // not the run.
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    let duration_s = start.elapsed().as_secs_f64();
    let mut report = merge(plan, histogram, tallies, duration_s);
    report.warnings.splice(0..0, warnings);
    report
}

fn worker(
    plan: &Plan,
    source: &Source<'_>,
    histogram: Histogram<u64>,
    next: &AtomicU64,
    start: Instant,
    stop: &AtomicBool,
) -> Tally {
    if !matches!(plan.schedule, Schedule::AsFastAsPossible) {
        tighten_timer_slack();
    }
    let cpu_start_s = thread_cpu_seconds();
    let mut tally = Tally {
        histogram,
        responses: 0,
        errors: ErrorCounts::default(),
        cpu_s: 0.0,
        sent: 0,
        last_send_s: 0.0,
        last_due_s: 0.0,
    };
    let mut client = Client::new(
        plan.target_addr,
        &plan.host_header,
        plan.request_timeout,
        stop,
    );
    let mut path = String::with_capacity(128);
    let total = source.len();
    while !stop.load(Ordering::Relaxed) {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= total {
            break;
        }
        let due = due_offset(plan.schedule, source, index).map(|offset| start + offset);
        // The clock starts at the due time only for a request that is late
        // because this connection was still busy: that is the queueing a
        // server stall causes. A worker that waited idle for the due time
        // starts it when it sends, so the OS's wake-up delay (55-110 us
        // measured on the 2-core dev VM) is not charged to the server.
        let mut late_since = None;
        if let Some(due) = due {
            match wait_until(due, stop) {
                Wait::Stopped => break,
                Wait::Late => late_since = Some(due),
                Wait::Slept => {}
            }
        }
        path.clear();
        let Some(method) = request(source, index, plan.seed, &mut path) else {
            break;
        };
        let sent_at = Instant::now();
        let outcome = client.send(method, &path);
        let timing = Timing {
            start,
            due,
            late_since,
            sent_at,
            done_at: Instant::now(),
        };
        if !tally.count(outcome, timing) {
            break;
        }
    }
    tally.cpu_s = (thread_cpu_seconds() - cpu_start_s).max(0.0);
    tally
}

/// Request `index`'s method, its path written to `path`; `None` past the
/// end of a replay.
fn request(source: &Source<'_>, index: u64, seed: u64, path: &mut String) -> Option<Method> {
    match source {
        Source::Template(template, _) => {
            template.render(index, seed, path);
            Some(Method::Get)
        }
        Source::Replay(entries) => entries.get(index as usize).map(|entry| {
            path.push_str(&entry.path);
            entry.method
        }),
    }
}

/// When one request was due, sent and answered.
struct Timing {
    /// The start of the run.
    start: Instant,
    /// Its due time in an open loop.
    due: Option<Instant>,
    /// Its due time, when it was sent late: its latency runs from then.
    late_since: Option<Instant>,
    sent_at: Instant,
    done_at: Instant,
}

impl Tally {
    /// Counts one request's outcome; false, and not counted, when the stop
    /// flag cut it short.
    fn count(&mut self, outcome: Result<u16, Failure>, timing: Timing) -> bool {
        self.sent += 1;
        self.last_send_s = self
            .last_send_s
            .max((timing.sent_at - timing.start).as_secs_f64());
        if let Some(due) = timing.due {
            self.last_due_s = self.last_due_s.max((due - timing.start).as_secs_f64());
        }
        match outcome {
            Ok(status) => {
                let from = timing.late_since.unwrap_or(timing.sent_at);
                let latency_us = timing.done_at.saturating_duration_since(from).as_micros();
                self.histogram
                    .saturating_record(u64::try_from(latency_us).unwrap_or(u64::MAX).max(1));
                self.responses += 1;
                if !(200..300).contains(&status) {
                    self.errors.status += 1;
                }
            }
            Err(Failure::Stopped) => {
                self.sent -= 1;
                return false;
            }
            Err(Failure::Reset) => self.errors.reset += 1,
            Err(Failure::Timeout) => self.errors.timeout += 1,
            Err(Failure::Connect) => self.errors.connect += 1,
            Err(Failure::Protocol) => self.errors.protocol += 1,
        }
        true
    }
}

/// When request `index` is due after the start; `None` in a closed loop.
fn due_offset(schedule: Schedule, source: &Source<'_>, index: u64) -> Option<Duration> {
    match (schedule, source) {
        (Schedule::AsFastAsPossible, _) => None,
        (Schedule::Rate(rate), _) => Some(Duration::from_secs_f64(index as f64 / rate)),
        (Schedule::Paced(speed), Source::Replay(entries)) => entries
            .get(index as usize)
            .map(|entry| entry.offset.div_f64(speed)),
        // `prepare` refuses a paced template.
        (Schedule::Paced(_), Source::Template(..)) => None,
    }
}

enum Wait {
    Stopped,
    /// The due time had already passed: the request is behind schedule.
    Late,
    /// The worker slept until the due time.
    Slept,
}

/// Open-loop workers sleep until each request's due time. The kernel's
/// default timer slack (50 us) lets such a wake-up run late, merged with
/// other timers; 1 ns makes it punctual. Measured on the 2-core VM, one
/// connection at 455/s against the server scenario's `/health`, 5 rounds:
/// p90 45-51 us with it, 44-132 us without (p50 42 us either way). Only
/// this worker thread is affected; if the call fails the worker just wakes
/// less precisely.
fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes plain integers and changes only the
    // calling thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

fn wait_until(due: Instant, stop: &AtomicBool) -> Wait {
    let mut slept = false;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Wait::Stopped;
        }
        let now = Instant::now();
        if now >= due {
            return if slept { Wait::Slept } else { Wait::Late };
        }
        slept = true;
        std::thread::sleep((due - now).min(SLEEP_SLICE));
    }
}

fn merge(
    plan: &Plan,
    mut histogram: Histogram<u64>,
    tallies: Vec<Tally>,
    duration_s: f64,
) -> LoadReport {
    let mut errors = ErrorCounts::default();
    let mut responses = 0;
    let mut generator_cpu_s = 0.0;
    let (mut sent, mut last_send_s, mut last_due_s) = (0u64, 0.0f64, 0.0f64);
    let mut warnings = Vec::new();
    for tally in &tallies {
        if let Err(e) = histogram.add(&tally.histogram) {
            warnings.push(format!("a worker's latencies could not be merged: {e}"));
        }
        errors.add(&tally.errors);
        responses += tally.responses;
        generator_cpu_s += tally.cpu_s;
        sent += tally.sent;
        last_send_s = last_send_s.max(tally.last_send_s);
        last_due_s = last_due_s.max(tally.last_due_s);
    }
    // Status errors are responses too; count each request once.
    let requests = responses + errors.total() - errors.status;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let capacity = plan
        .concurrency
        .min(u32::try_from(cores).unwrap_or(u32::MAX));
    warnings.extend(saturation_warning(generator_cpu_s, duration_s, capacity));
    warnings.extend(behind_warning(plan.schedule, sent, last_send_s, last_due_s));
    LoadReport {
        requests,
        errors: errors.total(),
        errors_by_kind: errors,
        duration_s,
        throughput_rps: if duration_s > 0.0 {
            requests as f64 / duration_s
        } else {
            0.0
        },
        latency: percentiles(&histogram),
        generator_cpu_s,
        warnings,
    }
}

fn percentiles(histogram: &Histogram<u64>) -> Option<Percentiles> {
    if histogram.is_empty() {
        return None;
    }
    let ms = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
    Some(Percentiles {
        p50_ms: ms(0.50),
        p90_ms: ms(0.90),
        p95_ms: ms(0.95),
        p99_ms: ms(0.99),
        p999_ms: ms(0.999),
        max_ms: histogram.max() as f64 / 1000.0,
    })
}

fn empty_report(warning: String) -> LoadReport {
    LoadReport {
        requests: 0,
        errors: 0,
        errors_by_kind: ErrorCounts::default(),
        duration_s: 0.0,
        throughput_rps: 0.0,
        latency: None,
        generator_cpu_s: 0.0,
        warnings: vec![warning],
    }
}

/// The generator's workers can use at most one core each, and no more
/// cores than the machine has.
pub(super) fn saturation_warning(cpu_s: f64, duration_s: f64, cores: u32) -> Option<String> {
    let capacity_s = f64::from(cores) * duration_s;
    let used = cpu_s / capacity_s;
    (capacity_s > 0.0 && used >= SATURATED).then(|| {
        format!(
            "the load generator used {:.0}% of its CPU capacity ({cpu_s:.2} CPU-seconds in \
             {duration_s:.2} s on {cores} core(s)); it may be the bottleneck, not the server",
            used * 100.0
        )
    })
}

/// Compares the actual pace of sending with the schedule's: `sent`
/// requests went out over `last_send_s` seconds where the schedule had
/// them due over `last_due_s`.
pub(super) fn behind_warning(
    schedule: Schedule,
    sent: u64,
    last_send_s: f64,
    last_due_s: f64,
) -> Option<String> {
    if sent < 2 || last_send_s <= 0.0 || last_due_s <= 0.0 {
        return None;
    }
    let intervals = (sent - 1) as f64;
    let achieved = intervals / last_send_s;
    let target = intervals / last_due_s;
    if achieved >= BEHIND * target || last_send_s - last_due_s < JITTER_S {
        return None;
    }
    Some(match schedule {
        Schedule::Paced(speed) => format!(
            "the replay at {speed}x speed fell behind the log's pace: {achieved:.0}/s achieved \
             against {target:.0}/s; add connections or lower the speed"
        ),
        Schedule::Rate(rate) => format!(
            "the target rate of {rate}/s was not reached: {achieved:.0}/s achieved; add \
             connections, or the server is saturated"
        ),
        Schedule::AsFastAsPossible => format!(
            "the schedule of {target:.0}/s was not reached: {achieved:.0}/s achieved; add \
             connections, or the server is saturated"
        ),
    })
}

#[cfg(test)]
mod tests;
