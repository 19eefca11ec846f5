//! The labelled corpus in the tests (`corpus.rs`): at least 1,000 simulated
//! soaks of each shape that levels off are called "grows" (or a leak) fewer
//! than 1% of the time, and a linear leak is found. The bench
//! `soak_corpus` prints the whole table.
//! `cargo test --release -p allocscope-soak corpus -- --nocapture`.

use crate::corpus::{decisions, decisions_over, shapes, Condition, Length, Truth, CONDITIONS};
use crate::growth::Settling;
use crate::simulate::Shape;

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

/// Soaks of seconds, as the e2e tests run them: sampled every 200 ms,
/// looked at every 5 s (`--until settled`'s cadence), with a wander of
/// 0.1% of the level and 2 s correlation (RSS of a quiet program; glibc's
/// is often exactly flat).
const SHORT: Condition = Condition {
    noise_share: 0.001,
    tau_s: 2.0,
    step_s: 0.2,
};

fn short(duration_s: f64) -> Length {
    Length {
        duration_s,
        look_every_s: 5.0,
    }
}

#[test]
fn a_short_soak_calls_a_fast_staircase_leak_growth_and_a_warm_up_or_sawtooth_not() {
    // +50% of the level over 20 s, then flat, in a 75 s soak: never called
    // growth, never stopped during the ramp.
    let warm = Shape::LevelsOff {
        share_per_hour: 0.5 * 3600.0 / 20.0,
        until_s: 20.0,
    };
    let run = decisions_over(warm, SHORT, short(75.0), PLATEAU_SOAKS, SEED, 2);
    let alarms = run.iter().filter(|d| d.false_alarm(Truth::Plateau)).count();
    let early = run.iter().filter(|d| d.at_s <= 20.0).count();
    let plateaus = run
        .iter()
        .filter(|d| d.settling == Settling::Plateau)
        .count();
    println!("short warm-up: {alarms} called growth, {early} stopped in the ramp, {plateaus} plateaus of {}", run.len());
    assert!(
        (alarms as f64) < MAX_FALSE_ALARMS * run.len() as f64,
        "{alarms}"
    );
    assert_eq!(early, 0);

    // A sawtooth of 50% every 10 s over 60 s: not growth.
    let saw = Shape::Sawtooth {
        share: 0.5,
        period_s: 10.0,
    };
    let run = decisions_over(saw, SHORT, short(60.0), PLATEAU_SOAKS, SEED + 1, 2);
    let alarms = run.iter().filter(|d| d.false_alarm(Truth::Plateau)).count();
    println!("short sawtooth: {alarms} called growth of {}", run.len());
    assert!(
        (alarms as f64) < MAX_FALSE_ALARMS * run.len() as f64,
        "{alarms}"
    );

    // 0.4% of the level a second in steps of 1 s, 14 s seen: growth (rising,
    // seen under the span after which it persists), every time.
    let stairs = Shape::Steps {
        share: 0.004,
        every_s: 1.0,
    };
    let run = decisions_over(stairs, SHORT, short(14.0), PLATEAU_SOAKS, SEED + 2, 2);
    let found = run.iter().filter(|d| d.right(Truth::Grows)).count();
    println!(
        "short staircase leak: {found} called growth of {}",
        run.len()
    );
    assert!(found as f64 >= 0.95 * run.len() as f64, "{found}");
}
