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
    let got = allocscope_core::user_metric::extract(&pattern, text);
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

/// `wrk -t2 -c16 -d1s --latency` against nginx, captured: its percentiles
/// change unit between lines (`378.00us`, `2.43ms`), read in milliseconds.
const WRK: &str = include_str!("../fixtures/wrk_latency.txt");

#[test]
fn wrk_requests_per_second_and_its_latencies_are_found_in_milliseconds() {
    let rps = one(WRK, "requests_sec");
    assert_eq!((rps.value, rps.higher_is_better), (18301.44, true));
    reads_back(&rps, WRK);
    for (name, ms) in [
        ("latency_avg_ms", 1.60),
        ("latency_p50_ms", 0.378),
        ("latency_p75_ms", 2.43),
        ("latency_p99_ms", 8.23),
    ] {
        let latency = one(WRK, name);
        assert!((latency.value - ms).abs() < 1e-9, "{latency:?}");
        assert!(!latency.higher_is_better, "{latency:?}");
        reads_back(&latency, WRK);
    }
    // Req/Sec per thread (`9.64k`) and Transfer/sec are not read.
    assert_eq!(find(WRK).len(), 6, "{:?}", find(WRK));
}

/// `sysbench threads --time=1 run`, captured, and the SQL statistics an
/// OLTP run prints above it (sysbench 1.0's layout).
#[test]
fn sysbench_transactions_per_second_and_95th_percentile_are_found() {
    let text = format!(
        "SQL statistics:\n    transactions:                        10000  (499.38 per sec.)\n    \
         queries:                             200000 (9987.67 per sec.)\n    \
         ignored errors:                      0      (0.00 per sec.)\n{}",
        include_str!("../fixtures/sysbench_threads.txt")
    );
    let tps = one(&text, "transactions_per_sec");
    assert_eq!((tps.value, tps.higher_is_better), (499.38, true));
    reads_back(&tps, &text);
    let p95 = one(&text, "latency_p95_ms");
    assert_eq!((p95.value, p95.higher_is_better), (4.91, false));
    reads_back(&p95, &text);
    assert_eq!(one(&text, "queries_per_sec").value, 9987.67);
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
        higher_is_better: true,
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

#[test]
fn a_figure_that_differs_comes_before_a_noisier_one_and_zeros_are_left_out() {
    // p99 varies most, but as much within a configuration as between them.
    let run = |rps: f64, p99: f64| {
        let mut lat = figure("p99", p99);
        lat.higher_is_better = false;
        vec![figure("rps", rps), lat, figure("errors", 0.0)]
    };
    let runs = vec![
        vec![run(100.0, 5.0), run(101.0, 9.0)],
        vec![run(110.0, 6.0), run(111.0, 12.0)],
    ];
    let s = suggest(&runs);
    let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["rps", "p99"]);
    assert!(s[1].spread > s[0].spread, "{s:?}");
    assert_eq!(
        s[1].flags(),
        "--metric 'p99=p99: ([0-9.]+)' --perf-metric p99"
    );
}
