//! The clocks the sampler reads: the calling thread's CPU time, which every
//! file measures its cost by, and the monotonic clock, the heap probe's (a
//! leaf, so that every file of `sample` can use it).

/// `clock` now; `None` when it cannot be read.
fn now(clock: libc::clockid_t) -> Option<libc::timespec> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0).then_some(ts)
}

/// CPU time of the calling thread, in seconds.
pub fn thread_cpu_seconds() -> f64 {
    now(libc::CLOCK_THREAD_CPUTIME_ID).map_or(0.0, |ts| ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// `f`'s result and the thread CPU time it took.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start_s = thread_cpu_seconds();
    let out = f();
    (out, (thread_cpu_seconds() - start_s).max(0.0))
}

/// CLOCK_MONOTONIC now, in nanoseconds: the probe's clock.
pub fn monotonic_ns() -> u64 {
    now(libc::CLOCK_MONOTONIC).map_or(0, |ts| {
        (ts.tv_sec as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(ts.tv_nsec as u64)
    })
}
