//! Evidence for the time to settle an open instance reports: simulated
//! instances run on to the predicted time, and how many have settled by
//! then. The prediction takes the centre and the noise as they are, so
//! about half should have; a wrong scaling of the interval with time
//! (W^(-1/2) or none, against W^(-3/2)) would leave nearly all or nearly
//! none. `cargo test --release -p allocscope-soak settle -- --nocapture`.

use crate::instance::{summarize, InstanceSeries, InstanceSummary};
use crate::simulate::{series, Noise, Shape, LEVEL};
use allocscope_analyze::stats::median;
use allocscope_core::rng::SplitMix64;

const HOUR: f64 = 3600.0;
const LOOK_S: f64 = HOUR;
const LONGEST_S: f64 = 24.0 * HOUR;
const SIMS: usize = 200;

fn summary_until(memory: &[(f64, f64)], until_s: f64) -> InstanceSummary {
    let end = memory.partition_point(|p| p.0 <= until_s);
    let instance = InstanceSeries {
        memory: &memory[..end],
        live_heap: &[],
        allocator_free: &[],
        cpu: &[],
        restart_s: None,
    };
    summarize(&instance).expect("summary")
}

#[test]
fn about_half_the_open_instances_have_settled_by_their_predicted_time() {
    println!(
        "| shape, AR(1) correlation time | open at 4 h | predicted (median) | settled by then |"
    );
    println!("| --- | --- | --- | --- |");
    for (i, (shape, tau_s)) in [(Shape::Linear(0.005), 60.0), (Shape::Flat, 600.0)]
        .into_iter()
        .enumerate()
    {
        let mut rng = SplitMix64::new(0x5E77_1E00 + i as u64);
        let noise = Noise {
            sd: 0.01 * LEVEL,
            tau_s,
        };
        let (mut open, mut settled) = (0usize, 0usize);
        let mut predicted_h = Vec::new();
        for _ in 0..SIMS {
            let memory = series(shape, noise, 5.0, LONGEST_S, &mut rng).noisy;
            let Some(at_s) = summary_until(&memory, LOOK_S).settles_after_s else {
                continue;
            };
            open += 1;
            predicted_h.push(at_s / HOUR);
            if at_s < LONGEST_S {
                settled += usize::from(summary_until(&memory, at_s).settling.is_settled());
            }
        }
        let share = settled as f64 / open as f64;
        println!(
            "| {}, {:.0} min | {open} of {SIMS} | {:.1} h | {:.1}% |",
            shape.label(),
            tau_s / 60.0,
            median(&predicted_h).unwrap_or(f64::NAN),
            100.0 * share
        );
        assert!(open >= SIMS / 4, "{open} open");
        assert!(
            (0.3..=0.9).contains(&share),
            "settled by the predicted time: {share}"
        );
    }
}
