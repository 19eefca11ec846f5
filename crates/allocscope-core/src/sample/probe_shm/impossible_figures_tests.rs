//! Property test: arbitrary heap probe words (wrapped negatives, the
//! "unknown" word, sizes far beyond any RSS included) go through the whole
//! path a run's figures take — the probe files, `ProbeReader::read` and
//! its vetting, the breakdown of each process and of the tree, a sample,
//! the store — and come out possible: nothing panics, no live heap exceeds
//! the tick's RSS, the breakdown's parts add up to the RSS, the run is
//! stored `ok` with every tick, and what the store holds loads back.

use super::*;
use crate::model::{RunStatus, Sample};
use crate::sample::breakdown::{of_process, of_tree, HeapFigures, ProcessMemory};
use crate::sample::proc::{AnonPages, RssParts};
use proptest::prelude::*;
use std::time::Duration;

/// A counter word as a probe may publish it: an honest size, the probe's
/// "unknown", a counter that wrapped just below zero (2^64 - 1200), any
/// word at all.
fn word() -> impl Strategy<Value = u64> {
    prop_oneof![
        0..(1u64 << 36),
        Just(u64::MAX),
        (1u64..1_000_000).prop_map(|k| 0u64.wrapping_sub(k)),
        Just(1u64 << 63),
        (1u64 << 40)..(1u64 << 63),
        any::<u64>(),
    ]
}

/// One process: its counter words (live, free, metadata, resident,
/// retained, arenas), mode, and the kernel's figures (sizes a kernel can
/// report: under 1 PiB).
#[derive(Debug, Clone)]
struct Process {
    mode: u64,
    words: [u64; 6],
    rss: RssParts,
    pages: AnonPages,
}

fn process() -> impl Strategy<Value = Process> {
    let size = 0..(1u64 << 50);
    (
        0u64..3,
        prop::array::uniform6(word()),
        (size.clone(), size.clone(), size.clone()),
        (size.clone(), size),
    )
        .prop_map(|(mode, words, (anon, file, shmem), (lazy, huge))| Process {
            mode,
            words,
            rss: RssParts {
                anon_bytes: anon,
                file_bytes: file,
                shmem_bytes: shmem,
            },
            pages: AnonPages {
                lazy_free_bytes: lazy,
                huge_pages_bytes: huge,
            },
        })
}

/// Writes `p`'s probe file for `pid` in `dir`, without poll times (a probe
/// that predates them is never stale: the words alone decide).
fn publish(dir: &Path, pid: i32, p: &Process) -> anyhow::Result<()> {
    let mut w = [0u64; WORDS];
    w[W_MAGIC] = MAGIC;
    w[W_PID] = pid as u64;
    w[W_MODE] = p.mode;
    w[W_LIVE] = p.words[0];
    w[W_FREE] = p.words[1];
    w[W_METADATA] = p.words[2];
    w[W_RESIDENT] = p.words[3];
    w[W_RETAINED] = p.words[4];
    w[W_ARENAS] = p.words[5];
    let mut bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    bytes.resize(MAP_BYTES, 0);
    std::fs::write(dir.join(pid.to_string()), bytes)?;
    Ok(())
}

/// One tick of `tree` as the sampler makes it: its RSS, the probe's sums
/// and the breakdown.
fn tick(tree: &[Process], t_s: f64) -> anyhow::Result<Sample> {
    let dir = tempfile::tempdir()?;
    let pids: Vec<(i32, u64)> = tree
        .iter()
        .enumerate()
        .map(|(i, p)| (100 + i as i32, p.rss.anon_bytes))
        .collect();
    for (&(pid, _), p) in pids.iter().zip(tree) {
        publish(dir.path(), pid, p)?;
    }
    let mut reader = ProbeReader::new(dir.path().to_path_buf(), Duration::MAX);
    let heap = reader.read(&pids);
    let figures: foldhash::HashMap<i32, HeapFigures> = heap
        .processes
        .iter()
        .map(|(pid, r)| (*pid, HeapFigures::from(r)))
        .collect();
    let memory: Vec<ProcessMemory> = pids
        .iter()
        .zip(tree)
        .map(|(&(pid, _), p)| ProcessMemory {
            rss: p.rss,
            anon_pages: p.pages,
            heap: figures.get(&pid).copied(),
        })
        .collect();
    for m in &memory {
        let parts: u64 = of_process(m).parts().iter().sum();
        assert_eq!(parts, m.rss.total_bytes(), "one process's parts: {m:?}");
    }
    let rss: u64 = tree.iter().map(|p| p.rss.total_bytes()).sum();
    let breakdown = of_tree(memory);
    if let Some((b, _)) = breakdown {
        assert_eq!(b.parts().iter().sum::<u64>(), rss, "the tree's parts");
    }
    Ok(Sample {
        t_s,
        rss_bytes: rss,
        processes: tree.len() as u32,
        live_heap_bytes: heap.live_heap_bytes,
        allocator_resident_bytes: heap.allocator_resident_bytes,
        allocator_retained_bytes: heap.allocator_retained_bytes,
        arenas: heap.arenas.map(|(a, _)| a),
        arenas_pid: heap.arenas.map(|(_, p)| p),
        breakdown: breakdown.map(|(b, _)| b),
        heapless_processes: breakdown.map_or(0, |(_, n)| n),
        heap_stale_processes: heap.stale_processes,
        ..Sample::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn arbitrary_counter_words_give_possible_figures_and_a_stored_run(
        ticks in prop::collection::vec(prop::collection::vec(process(), 1..5), 1..4),
    ) {
        let samples: Vec<Sample> = ticks
            .iter()
            .enumerate()
            .map(|(i, tree)| tick(tree, i as f64 * 0.1))
            .collect::<anyhow::Result<_>>()
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let peak_rss = samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0);
        for (s, tree) in samples.iter().zip(&ticks) {
            let live = s.live_heap_bytes.unwrap_or(0);
            prop_assert!(live <= s.rss_bytes, "live {live} > RSS {}", s.rss_bytes);
            // A wrapped live word never reaches a sum: its tick has none.
            let wrapped = tree
                .iter()
                .any(|p| p.mode != 0 && p.words[0] >= 1 << 63 && p.words[0] != u64::MAX);
            if wrapped {
                prop_assert_eq!(s.live_heap_bytes, None);
            }
        }

        let fixture = crate::fixture::experiment();
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut store = crate::store::Store::open(&dir.path().join("p.db"))
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let config = fixture.configs[0].config.clone();
        let (id, config_ids) = store
            .begin_experiment(&fixture.info, &[config])
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let mut record = fixture.configs[0].runs[0].record.clone();
        record.samples = samples.clone();
        record.markers.clear();
        record.max_hwm_bytes = peak_rss;
        let stored = store.store_run(config_ids[0], &record);
        prop_assert!(stored.is_ok(), "not stored: {:?}", stored.err());
        let loaded = store
            .load_experiment(Some(id))
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let run = &loaded.configs[0].runs[0].record;
        prop_assert_eq!(run.status, RunStatus::Ok);
        prop_assert_eq!(run.samples.len(), samples.len());
        for (back, s) in run.samples.iter().zip(&samples) {
            prop_assert!(back.live_heap_bytes.unwrap_or(0) <= peak_rss);
            prop_assert_eq!(back.rss_bytes, s.rss_bytes);
            prop_assert_eq!(back.live_heap_bytes, s.live_heap_bytes);
            prop_assert_eq!(back.breakdown, s.breakdown);
        }
    }

    /// Any figure at all in a sample: the store keeps the run, with what
    /// does not fit as unknown and said in its message.
    #[test]
    fn a_sample_of_any_figures_is_stored_with_what_does_not_fit_as_unknown(
        figures in prop::array::uniform9(any::<u64>()),
        live in word(),
    ) {
        let fixture = crate::fixture::experiment();
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut store = crate::store::Store::open(&dir.path().join("q.db"))
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let (id, config_ids) = store
            .begin_experiment(&fixture.info, &[fixture.configs[0].config.clone()])
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let mut record = fixture.configs[0].runs[0].record.clone();
        record.samples[0].live_heap_bytes = Some(live);
        record.samples[0].allocator_retained_bytes = Some(figures[0]);
        // The kernel part (the last) is the cgroup's, stored with it: none here.
        let mut parts = [0u64; crate::model::Breakdown::COUNT];
        parts[..figures.len()].copy_from_slice(&figures);
        record.samples[0].breakdown = Some(crate::model::Breakdown::from_parts(parts));
        let stored = store
            .store_run(config_ids[0], &record)
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let fits = |v: u64| i64::try_from(v).is_ok();
        let all_fit = fits(live) && figures.iter().all(|&v| fits(v));
        prop_assert_eq!(stored.note.is_none(), all_fit);
        let loaded = store
            .load_experiment(Some(id))
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let back = &loaded.configs[0].runs[0].record;
        prop_assert_eq!(back.status, record.status);
        prop_assert_eq!(back.samples.len(), record.samples.len());
        prop_assert_eq!(back.samples[0].live_heap_bytes, Some(live).filter(|&v| fits(v)));
        let whole = figures.iter().all(|&v| fits(v));
        prop_assert_eq!(back.samples[0].breakdown.is_some(), whole);
        if !all_fit {
            let message = back.message.clone().unwrap_or_default();
            prop_assert!(message.contains("stored as unknown"), "{}", message);
        }
    }
}
