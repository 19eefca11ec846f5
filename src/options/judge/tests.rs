//! The judging flags: thresholds checked as read, metric words resolved to
//! rows of the experiment's table, the stored choices under the given ones.

use super::*;
use allocscope_core::model::UserMetricInfo;

fn ops() -> UserMetricInfo {
    UserMetricInfo {
        name: "ops".into(),
        pattern: "([0-9]+) ops".into(),
        higher_is_better: true,
    }
}

fn flags(memory: Option<&str>, perf: Option<&str>) -> JudgeFlags {
    JudgeFlags {
        memory_metric: memory.map(str::to_string),
        perf_metric: perf.map(str::to_string),
        ..JudgeFlags::default()
    }
}

fn error(result: Result<JudgeSettings, UsageError>) -> String {
    result.err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn thresholds_are_percentages_with_their_defaults_held_once() {
    assert_eq!(parse_max_slowdown("5").ok(), Some(5.0));
    assert_eq!(parse_max_slowdown(" 12.5% ").ok(), Some(12.5));
    assert_eq!(parse_limit_headroom("25%").ok(), Some(25.0));
    assert!(parse_limit_headroom("-5")
        .err()
        .is_some_and(|e| e.to_string().contains("--limit-headroom '-5'")));
    assert_eq!(parse_max_slowdown("1000%").ok(), Some(1000.0));
    for bad in ["fast", "-1", "1001", ""] {
        let err = parse_max_slowdown(bad).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("--max-slowdown")), "{bad}");
    }
    assert_eq!(parse_min_saving("5%").ok(), Some(5.0));
    for bad in ["lots", "100", "-2"] {
        let err = parse_min_saving(bad).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("--min-saving")), "{bad}");
    }
    let table = metric_table::of_parts(false, &[]);
    let defaults = JudgeFlags::default().settle(&table).ok();
    assert_eq!(defaults, Some(JudgeSettings::default()));
    let defaults = defaults.unwrap_or_default();
    assert_eq!(
        (defaults.max_slowdown_pct, defaults.min_saving_pct),
        (DEFAULT_MAX_SLOWDOWN_PCT, DEFAULT_MIN_SAVING_PCT)
    );
}

#[test]
fn metric_words_name_rows_of_the_table() {
    let table = metric_table::of_parts(false, &[ops()]);
    let settle = |memory, perf| flags(memory, perf).settle(&table);
    let judge = settle(Some("peak"), Some("ops")).unwrap_or_default();
    assert_eq!(judge.memory_metric, Some(MemoryChoice::Tree("peak".into())));
    assert_eq!(judge.perf_metric.as_deref(), Some("user.ops"));
    // A row by its name or by its id (what the store keeps).
    for word in ["peak_pss", "peak_pss_bytes"] {
        let judge = settle(Some(word), Some("wall")).unwrap_or_default();
        assert_eq!(
            judge.memory_metric,
            Some(MemoryChoice::Row("peak_pss_bytes".into()))
        );
        assert_eq!(judge.perf_metric.as_deref(), Some("wall_s"));
    }
    assert_eq!(
        settle(None, Some("user.ops"))
            .unwrap_or_default()
            .perf_metric
            .as_deref(),
        Some("user.ops")
    );
}

#[test]
fn a_word_no_row_answers_to_is_refused_naming_those_that_do() {
    let plain = metric_table::of_parts(false, &[]);
    let err = error(flags(Some("rss"), None).settle(&plain));
    assert!(err.contains("peak, mean, final or end-of-load"), "{err}");
    assert!(err.contains("peak_pss"), "{err}");
    // A memory row is not a performance measure, nor the other way round.
    let err = error(flags(None, Some("peak_rss")).settle(&plain));
    assert!(
        err.starts_with("--perf-metric 'peak_rss' is neither wall, cpu nor"),
        "{err}"
    );
    assert!(err.contains("define it"), "{err}");
    assert!(!error(flags(Some("wall"), None).settle(&plain)).is_empty());
    let err = error(flags(Some("end-of-load"), None).settle(&plain));
    assert!(err.contains("compare --server"), "{err}");
    // A service's rows are there only for a service.
    let service = metric_table::of_parts(true, &[ops()]);
    let judge = flags(Some("end-of-load"), Some("p95")).settle(&service);
    assert_eq!(
        judge.unwrap_or_default().perf_metric.as_deref(),
        Some("p95_ms")
    );
    let err = error(flags(None, Some("qps")).settle(&service));
    assert!(
        err.contains("wall, cpu, p50, p95, p99, load, cpu_per_request nor a --metric (ops)"),
        "{err}"
    );
}

#[test]
fn given_flags_override_the_stored_ones_read_by_the_same_parsers() {
    let stored = JudgeSettings {
        max_slowdown_pct: 10.0,
        min_saving_pct: 7.0,
        memory_metric: Some(MemoryChoice::Tree("peak".into())),
        perf_metric: Some("user.ops".into()),
        limit_headroom_pct: 35.0,
        ..JudgeSettings::default()
    };
    let environment: Vec<(String, Option<String>)> = stored
        .to_environment()
        .into_iter()
        .map(|(k, v)| (k.to_string(), Some(v)))
        .collect();
    let table = metric_table::of_parts(false, &[ops()]);
    let back = JudgeFlags::stored(&environment).and_then(|f| f.settle(&table));
    assert_eq!(back.ok(), Some(stored));
    let given = JudgeFlags {
        min_saving_pct: Some(2.0),
        perf_metric: Some("cpu".into()),
        ..JudgeFlags::default()
    };
    let merged = JudgeFlags::stored(&environment)
        .map(|s| given.or(s))
        .and_then(|f| f.settle(&table))
        .unwrap_or_default();
    assert_eq!(
        (merged.min_saving_pct, merged.max_slowdown_pct),
        (2.0, 10.0)
    );
    assert_eq!(merged.perf_metric.as_deref(), Some("cpu_s"));
    assert_eq!(
        merged.memory_metric,
        Some(MemoryChoice::Tree("peak".into()))
    );
    // What an older allocscope stored: the bare words.
    let old = [
        (PERF_METRIC_KEY.to_string(), Some("ops".to_string())),
        (MEMORY_METRIC_KEY.to_string(), Some("final".to_string())),
    ];
    let old = JudgeFlags::stored(&old)
        .and_then(|f| f.settle(&table))
        .unwrap_or_default();
    assert_eq!(old.perf_metric.as_deref(), Some("user.ops"));
    assert_eq!(old.memory_metric, Some(MemoryChoice::Tree("final".into())));
}
