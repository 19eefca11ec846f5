//! The labelled corpus in the tests (`corpus.rs`): at least 1,000 simulated
//! soaks of each shape that levels off are called "grows" (or a leak) fewer
//! than 1% of the time, and a linear leak is found. The bench
//! `soak_corpus` prints the whole table.
//! `cargo test --release -p allocscope-soak corpus -- --nocapture`.

use crate::corpus::{decisions, shapes, Truth, CONDITIONS};

const SEED: u64 = 0xC0_2905;
/// Soaks per shape that levels off.
const PLATEAU_SOAKS: usize = 1000;
const MAX_FALSE_ALARMS: f64 = 0.01;

#[test]
fn shapes_that_level_off_are_called_growth_under_one_percent_of_the_time() {
    for (s, (name, shape, truth)) in shapes().into_iter().enumerate() {
        if truth != Truth::Plateau {
            continue;
        }
        // The quiet condition (where plateaus are decided, so a wrong stop
        // would show) and the noisiest, both at 5 s (1 s costs 5 times as
        // much; the bench runs it), half each.
        let mut alarms = 0;
        let mut count = 0;
        for (c, condition) in [CONDITIONS[1], CONDITIONS[3]].into_iter().enumerate() {
            let run = decisions(
                shape,
                condition,
                PLATEAU_SOAKS / 2,
                SEED + (10 * s + c) as u64,
                2,
            );
            alarms += run.iter().filter(|d| d.false_alarm(truth)).count();
            count += run.len();
        }
        let share = alarms as f64 / count as f64;
        println!("{name}: {alarms} false alarms in {count} soaks");
        assert!(count >= PLATEAU_SOAKS);
        assert!(share < MAX_FALSE_ALARMS, "{name}: {share}");
    }
}

#[test]
fn a_linear_leak_is_found() {
    let (_, shape, truth) = (shapes().into_iter())
        .find(|s| s.0 == "linear leak")
        .expect("the corpus has a linear leak");
    let run = decisions(shape, CONDITIONS[1], 200, SEED, 2);
    let found = run.iter().filter(|d| d.right(truth)).count() as f64 / run.len() as f64;
    assert!(found >= 0.95, "found {found}");
}
