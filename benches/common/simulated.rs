//! A simulated tree's samples and this process's memory, shared by the
//! store benches (`recording_store`, `soak_store`).

use allocscope_core::model::Sample;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The tree at second `t`: 10 processes, RSS climbing for ten days then
/// level, a few MiB of noise.
pub fn simulated(t: u64, rng: &mut u64) -> Sample {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    let noise = (*rng % (64 << 20)) as f64;
    let days = t as f64 / 86400.0;
    let rss = (1.0 + 3.8 * (days / 10.0).min(1.0)) * GIB + noise;
    Sample {
        t_s: t as f64,
        rss_bytes: rss as u64,
        pss_bytes: t.is_multiple_of(5).then_some((rss * 0.9) as u64),
        uss_bytes: t.is_multiple_of(5).then_some((rss * 0.85) as u64),
        swap_bytes: t.is_multiple_of(5).then_some(0),
        vsz_bytes: (rss * 2.5) as u64,
        processes: 10,
        threads: 250,
        minor_faults: t * 100,
        major_faults: t / 1000,
        ..Sample::default()
    }
}

/// (VmRSS, VmHWM) of this process, in KiB.
pub fn own_memory_kib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
