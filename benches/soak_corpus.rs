//! The soak's labelled corpus (`allocscope_soak::corpus`): simulated series
//! of known shape (warm-up then plateau, slow convergence, a linear leak, a
//! step, a sawtooth, a periodic load, a restart, a leak under a sawtooth)
//! at several noise levels and sampling intervals, each judged as
//! `--until settled` judges a soak. Printed as a Markdown table, shape x
//! condition: the share classified right (a plateau called a plateau, a
//! leak called growth), the share of false "grows" on shapes that level
//! off, and the median time to a decision. `SERIES` (default 400) soaks per
//! cell, `THREADS` (default 2) threads.

use allocscope_soak::corpus::{decisions, shapes, CONDITIONS, DURATION_S};
use allocscope_soak::growth::Settling;
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
