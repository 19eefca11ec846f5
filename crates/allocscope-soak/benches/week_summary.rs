//! What summarizing a week of 1 s samples costs: one instance (memory, live
//! heap and allocator free memory, 604,800 samples each) through
//! `instance::summarize`, which thins each window to at most 256 block
//! medians before the pairwise slopes. `cargo bench -p allocscope-soak`.

use allocscope_core::rng::SplitMix64;
use allocscope_soak::instance::{summarize, InstanceSeries};
use std::time::Instant;

const WEEK_S: usize = 7 * 24 * 3600;

/// Linear growth of `per_hour` on 1 GB with AR(1) noise of 1% (1 min).
fn series(per_hour: f64, rng: &mut SplitMix64) -> Vec<(f64, f64)> {
    let phi = (-1.0f64 / 60.0).exp();
    let mut e = 0.0;
    (0..WEEK_S)
        .map(|i| {
            let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let v = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            e = phi * e + (1.0 - phi * phi).sqrt() * 1e7 * z;
            let t = i as f64;
            (t, 1e9 + per_hour * t / 3600.0 + e)
        })
        .collect()
}

fn main() {
    let mut rng = SplitMix64::new(1);
    let (memory, heap, free) = (
        series(1e6, &mut rng),
        series(0.0, &mut rng),
        series(1e6, &mut rng),
    );
    let instance = InstanceSeries {
        memory: &memory,
        live_heap: &heap,
        allocator_free: &free,
        cpu: &[],
        restart_s: None,
    };
    let mut times_ms = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let summary = summarize(&instance);
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
        assert!(summary.is_some());
    }
    times_ms.sort_by(f64::total_cmp);
    println!(
        "summarize, a week at 1 s ({WEEK_S} samples x 3 series): median {:.0} ms, range {:.0}-{:.0} ms",
        times_ms[2], times_ms[0], times_ms[4]
    );
}
