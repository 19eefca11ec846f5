//! Throughput figures found in real benchmark output.

use super::*;

fn one(text: &str, name: &str) -> Figure {
    let found = find(text);
    found
        .iter()
        .find(|f| f.name == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} not in {found:?}"))
}

/// The pattern reads back the figure it was made from, as `--metric` would.
fn reads_back(figure: &Figure, text: &str) {
    let pattern = Regex::new(&figure.pattern).expect("a valid pattern");
    let got = crate::user_metric::extract(&pattern, text);
    assert!(
        format!("{got:?}").contains(&format!("{}", figure.value)),
        "{figure:?}: {got:?}"
    );
}

const DB_BENCH: &str = "\
RocksDB:    version 7.8.3
Keys:       16 bytes each (+ 0 bytes user-defined timestamp)
Entries:    1000000
------------------------------------------------
fillrandom   :       4.567 micros/op 218964 ops/sec 15.000 seconds 3284460 operations;   24.2 MB/s
";

#[test]
fn db_bench_ops_and_mb_per_second_are_found_under_its_benchmark_name() {
    let ops = one(DB_BENCH, "fillrandom_ops_sec");
    assert_eq!(ops.value, 218964.0);
    reads_back(&ops, DB_BENCH);
    let mb = one(DB_BENCH, "fillrandom_mb_s");
    assert_eq!(mb.value, 24.2);
    reads_back(&mb, DB_BENCH);
    assert_eq!(find(DB_BENCH).len(), 2, "{:?}", find(DB_BENCH));
}

#[test]
fn pgbench_tps_before_its_number_is_found() {
    let text = "\
number of transactions actually processed: 74073
latency average = 1.349 ms
initial connection time = 12.345 ms
tps = 1234.56 (without initial connection time)
";
    let tps = one(text, "tps");
    assert_eq!(tps.value, 1234.56);
    reads_back(&tps, text);
}

#[test]
fn redis_benchmark_requests_per_second_is_found() {
    let text = "\
Summary:
  throughput summary: 123456.78 requests per second
  latency summary (msec):
";
    let rps = one(text, "throughput_summary_requests_per_second");
    assert_eq!(rps.value, 123456.78);
    reads_back(&rps, text);
}

#[test]
fn the_last_line_wins_and_plain_numbers_are_not_throughput() {
    let text = "ops/sec 1\nround 1: 1,000 ops/sec\nround 2: 1,500 ops/sec\n42 seconds\n";
    let found = find(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].value, 1500.0);
}

fn figure(name: &str, value: f64) -> Figure {
    Figure {
        name: name.into(),
        pattern: format!("{name}: ([0-9.]+)"),
        value,
    }
}

#[test]
fn suggestions_keep_figures_of_every_run_most_varying_first_and_say_which_differ() {
    // Two configurations, two runs each: ops differs by 30%, mb moves within
    // the runs' own noise, lat is missing from one run.
    let runs = vec![
        vec![
            vec![figure("ops", 100.0), figure("mb", 10.0), figure("lat", 1.0)],
            vec![figure("ops", 102.0), figure("mb", 11.0), figure("lat", 1.0)],
        ],
        vec![
            vec![figure("ops", 130.0), figure("mb", 10.5)],
            vec![figure("ops", 131.0), figure("mb", 10.0), figure("lat", 1.0)],
        ],
    ];
    let s = suggest(&runs);
    let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ops", "mb"]);
    assert!(s[0].differs, "{:?}", s[0]);
    assert!(!s[1].differs, "{:?}", s[1]);
    assert_eq!(
        s[0].flags(),
        "--metric 'ops=ops: ([0-9.]+)' --higher-is-better ops --perf-metric ops"
    );
}
