//! The soak's labelled corpus (`allocscope_soak::corpus`): simulated series
//! of known shape (warm-up then plateau, slow convergence, a linear leak, a
//! step, a sawtooth, a periodic load, a restart, a leak under a sawtooth)
//! at several noise levels and sampling intervals, each judged as
//! `--until settled` judges a soak. Printed as a Markdown table, shape x
//! condition: the share classified right (a plateau called a plateau, a
//! leak called growth), the share of false "grows" on shapes that level
//! off, and the median time to a decision. `SERIES` (default 400) soaks per
//! cell, `THREADS` (default 2) threads.

use allocscope_soak::corpus::{
    decisions, decisions_over, shapes, Condition, Decision, Length, Truth, CONDITIONS, DURATION_S,
};
use allocscope_soak::growth::Settling;
use allocscope_soak::simulate::Shape;
use std::time::Instant;

fn main() {
    let count: usize = env("SERIES", 400);
    let threads: usize = env("THREADS", 2);
    let began = Instant::now();
    println!(
        "| shape | condition | right | false grows | median time to a decision | open at {:.0} min |",
        DURATION_S / 60.0
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for (s, (name, shape, truth)) in shapes().into_iter().enumerate() {
        for (c, condition) in CONDITIONS.iter().enumerate() {
            let seed = 0xC0_4905 + (100 * s + c) as u64;
            let mut run = decisions(shape, *condition, count, seed, threads);
            let share = |f: &dyn Fn(&allocscope_soak::corpus::Decision) -> bool| {
                run.iter().filter(|d| f(d)).count() as f64 / run.len() as f64 * 100.0
            };
            let right = share(&|d| d.right(truth));
            let false_grows = share(&|d| d.false_alarm(truth));
            let open = share(&|d| d.settling == Settling::Open);
            run.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
            let median_min = run[run.len() / 2].at_s / 60.0;
            println!(
                "| {name} | {} | {right:.1}% | {false_grows:.1}% | {median_min:.0} min | {open:.1}% |",
                condition.label()
            );
        }
    }
    short_soaks(count, threads);
    eprintln!(
        "{} soaks a cell, in {:.1} s",
        count,
        began.elapsed().as_secs_f64()
    );
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Soaks of seconds, as the e2e tests run them: sampled every 200 ms,
/// looked at every 5 s, a wander of 0.1% of the level with 2 s correlation.
fn short_soaks(count: usize, threads: usize) {
    let condition = Condition {
        noise_share: 0.001,
        tau_s: 2.0,
        step_s: 0.2,
    };
    let cases = [
        (
            "warm-up +50% over 20 s, then flat",
            Shape::LevelsOff {
                share_per_hour: 0.5 * 3600.0 / 20.0,
                until_s: 20.0,
            },
            Truth::Plateau,
            75.0,
        ),
        (
            "sawtooth 50% every 10 s",
            Shape::Sawtooth {
                share: 0.5,
                period_s: 10.0,
            },
            Truth::Plateau,
            60.0,
        ),
        (
            "leak 0.4%/s in 1 s steps",
            Shape::Steps {
                share: 0.004,
                every_s: 1.0,
            },
            Truth::Grows,
            14.0,
        ),
    ];
    println!();
    println!("| short soak | length | right | false grows | open | median time to a decision |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (k, (name, shape, truth, duration_s)) in cases.into_iter().enumerate() {
        let length = Length {
            duration_s,
            look_every_s: 5.0,
        };
        let mut run = decisions_over(shape, condition, length, count, 0x5_0A4 + k as u64, threads);
        let share = |f: &dyn Fn(&Decision) -> bool| {
            run.iter().filter(|d| f(d)).count() as f64 / run.len() as f64 * 100.0
        };
        let right = share(&|d| d.right(truth));
        let false_grows = share(&|d| d.false_alarm(truth));
        let open = share(&|d| d.settling == Settling::Open);
        run.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        let median = run[run.len() / 2].at_s;
        println!(
            "| {name} | {duration_s:.0} s | {right:.1}% | {false_grows:.1}% | {open:.1}% | {median:.0} s |"
        );
    }
}
