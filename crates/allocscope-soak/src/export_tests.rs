//! `report --soak`'s formats on a fixed soak stored the way `soak` stores
//! one: glibc's two replicas growing while their live heap is flat (the
//! allocator holds it), `glibc:arena_max=2`'s flat, ten minutes at 1 s.

use crate::export::{csv, figures, json, markdown};
use crate::page::html;
use crate::stored::{load, SoakRecord};
use allocscope_core::model::{Breakdown, Sample};
use allocscope_core::store::{NewRecording, Reading, Store};

const MIB: f64 = 1024.0 * 1024.0;

/// A tick of replica `replica` at `t` s: 100 MiB live, free memory growing
/// `free_per_s` with a little deterministic noise.
fn sample(t: u32, replica: u32, free_per_s: f64) -> Sample {
    let noise = (((t * 7919 + replica * 104_729) % 97) as f64 / 97.0 - 0.5) * MIB;
    let live = 100.0 * MIB + f64::from(replica) * MIB;
    let free = 8.0 * MIB + free_per_s * f64::from(t) + noise;
    let breakdown = Breakdown {
        live_heap_bytes: live as u64,
        allocator_free_bytes: free as u64,
        file_bytes: 4 << 20,
        ..Breakdown::default()
    };
    Sample {
        t_s: f64::from(t),
        rss_bytes: breakdown.total_bytes(),
        pss_bytes: Some(breakdown.total_bytes()),
        live_heap_bytes: Some(live as u64),
        breakdown: Some(breakdown),
        processes: 1,
        threads: 1,
        ..Sample::default()
    }
}

fn stored(dir: &std::path::Path) -> anyhow::Result<(Store, SoakRecord)> {
    stored_with_load(dir, &[])
}

/// `stored`, with a load figure `rtt` read every 10 s of each instance, at
/// `rtt_ms` per configuration in order (none when empty).
fn stored_with_load(dir: &std::path::Path, rtt_ms: &[f64]) -> anyhow::Result<(Store, SoakRecord)> {
    let mut store = Store::open(&dir.join("soak.db"))?;
    let arguments: Vec<String> = "soak -a glibc -a glibc:arena_max=2 --duration 10m -- grow"
        .split(' ')
        .map(String::from)
        .collect();
    let (soak, _) = store.begin_soak(&arguments)?;
    let configs = [("glibc", 0.1 * MIB), ("glibc:arena_max=2", 0.0)];
    for (k, (config, free_per_s)) in configs.into_iter().enumerate() {
        for replica in 1..=2 {
            let (id, _) = store.begin_recording(&NewRecording {
                name: format!("soak {config}#{replica}"),
                config: config.into(),
                env: vec![],
                command: Some(vec!["grow".into()]),
                target_pid: 1,
                target_start: 0,
                interval_ms: 1000,
                hostname: "h".into(),
                soak_id: Some(soak),
            })?;
            let samples: Vec<Sample> = (0..600).map(|t| sample(t, replica, free_per_s)).collect();
            store.append_samples(id, &samples)?;
            if let Some(rtt) = rtt_ms.get(k) {
                let readings: Vec<Reading> = (0..60)
                    .map(|i| Reading {
                        name: "rtt".into(),
                        higher_is_better: false,
                        t_s: f64::from(i * 10),
                        value: rtt + f64::from(replica + i % 3) * 0.01,
                    })
                    .collect();
                store.add_readings(id, &readings)?;
            }
        }
    }
    let record = load(&store, soak)?;
    Ok((store, record))
}

fn snapshot(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

#[test]
fn a_stored_soak_renders_in_every_format() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (_store, record) = stored(dir.path())?;
    let rendered = figures(&record);
    snapshot("soak_md", &markdown(&record, &rendered));
    snapshot("soak_json", &json(&record, &rendered)?);
    snapshot("soak_csv", &csv(&rendered));
    snapshot("soak_html", &html(&record, &rendered, None));
    Ok(())
}

#[test]
fn the_report_picks_the_configuration_that_levels_off_with_its_projection() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (_store, record) = stored(dir.path())?;
    let rendered = figures(&record);
    let text = markdown(&record, &rendered);
    assert!(text.contains("Use glibc:arena_max=2"), "{text}");
    assert!(
        text.contains("the allocator holds it (fragmentation)"),
        "{text}"
    );
    let html = html(&record, &rendered, None);
    assert!(
        html.contains("stroke-dasharray"),
        "the projection is dashed"
    );
    assert!(
        html.contains("<title>glibc: projected"),
        "the projection has a hover"
    );
    assert!(html.contains("id=\"plot-soak_breakdown\""));
    let json: serde_json::Value = serde_json::from_str(&json(&record, &rendered)?)?;
    assert_eq!(json["soak"]["instances"].as_array().map(Vec::len), Some(4));
    let glibc = &json["soak"]["configurations"][0];
    assert!(glibc["slope_ci_low_bytes_per_h"].as_f64() > Some(0.0));
    // Ten minutes, growth read from the last five: a day is 288x that, too
    // far for a figure; the flat configuration is not extrapolated.
    assert_eq!(glibc["projection_24h"], "too_far");
    let factor = glibc["projection_24h_factor"].as_f64().unwrap_or_default();
    assert!((280.0..300.0).contains(&factor), "{factor}");
    assert!(glibc["projection_24h_bytes"].is_null());
    assert!(text.contains("not projected: 28"), "{text}");
    let flat = &json["soak"]["configurations"][1];
    assert_eq!(flat["projection_24h"], "not_growing");
    Ok(())
}

#[test]
fn the_json_holds_the_verdict_as_data_with_its_text_beside_it() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (_store, record) = stored(dir.path())?;
    let json: serde_json::Value = serde_json::from_str(&json(&record, &figures(&record))?)?;
    let verdict = &json["soak"]["verdict"];
    assert_eq!(verdict["baseline"], "glibc");
    assert_eq!(verdict["outcome"]["kind"], "pick");
    assert_eq!(verdict["outcome"]["label"], "glibc:arena_max=2");
    assert!(verdict["outcome"]["plateau_ratio"]["value"].as_f64() < Some(1.0));
    let [glibc, arena] = [&verdict["configurations"][0], &verdict["configurations"][1]];
    // glibc grows 360 MiB/h, seen for under 5 minutes: rising, the
    // allocator holding it.
    assert_eq!(glibc["settling"], "rising");
    assert_eq!(glibc["cause"], "allocator_holds");
    assert!(glibc["growth"]["ci_low"].as_f64() > Some(300.0 * MIB));
    assert_eq!(glibc["reasons"], serde_json::json!([]));
    assert_eq!(arena["settling"], "plateau");
    assert!(arena["cause"].is_null());
    assert_eq!(arena["reasons"][0]["reason"], "plateau_lower");
    assert_eq!(arena["reasons"][1]["reason"], "grows_slower");
    let text = json["soak"]["verdict_text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("Use glibc:arena_max=2: plateau "),
        "{text}"
    );
    Ok(())
}

#[test]
fn a_live_page_reloads_itself_and_the_final_one_does_not() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (_store, record) = stored(dir.path())?;
    let rendered = figures(&record);
    let live = html(&record, &rendered, Some(std::time::Duration::from_secs(60)));
    let head = live.split("</head>").next().unwrap_or_default();
    assert!(
        head.contains("<meta http-equiv=\"refresh\" content=\"60\">"),
        "{head}"
    );
    assert!(!html(&record, &rendered, None).contains("http-equiv=\"refresh\""));
    Ok(())
}

#[test]
fn the_csv_and_json_rows_carry_the_loads_figures_with_each_configurations_ratio(
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (_store, record) = stored_with_load(dir.path(), &[10.0, 12.0])?;
    let rendered = figures(&record);
    let text = csv(&rendered);
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let at = |name: &str| head.iter().position(|h| *h == name).expect(name);
    let (value, ratio) = (at("load_rtt"), at("load_rtt_ratio"));
    let (low, high) = (at("load_rtt_ratio_ci_low"), at("load_rtt_ratio_ci_high"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // Every row as long as the header; 2 configurations and 4 instances.
    assert_eq!(rows.len(), 6, "{text}");
    assert!(rows.iter().all(|r| r.len() == head.len()), "{text}");
    let number = |r: &[&str], k: usize| r[k].parse::<f64>().unwrap_or(f64::NAN);
    let candidate = rows
        .iter()
        .find(|r| r[0] == "glibc:arena_max=2" && r[1].is_empty())
        .expect("the candidate's row");
    assert!((number(candidate, value) - 12.02).abs() < 0.02, "{text}");
    let r = number(candidate, ratio);
    assert!((r - 1.2).abs() < 0.01, "{text}");
    assert!(
        number(candidate, low) <= r && r <= number(candidate, high),
        "{text}"
    );
    // The baseline has no ratio; an instance its own median, no ratio.
    let base = rows
        .iter()
        .find(|r| r[0] == "glibc" && r[1].is_empty())
        .expect("glibc");
    assert!(base[ratio].is_empty() && !base[value].is_empty(), "{text}");
    let instance = rows.iter().find(|r| !r[1].is_empty()).expect("an instance");
    assert!(
        number(instance, value) > 9.9 && instance[ratio].is_empty(),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&json(&record, &rendered)?)?;
    let configs = &json["soak"]["configurations"];
    assert!(
        (configs[1]["load_rtt_ratio"].as_f64().unwrap_or(0.0) - 1.2).abs() < 0.01,
        "{configs}"
    );
    assert!(
        json["soak"]["instances"][0]["load_rtt"].as_f64().is_some(),
        "{json}"
    );
    Ok(())
}
