//! Memory outside malloc, named: anonymous memory no allocator counted
//! (the breakdown's `other_anon`: the program's own `mmap`, a runtime's
//! memory manager, thread stacks), when it is a large part of what the
//! tree holds, is memory no allocator setting moves. Said once, from the
//! baseline's median run, with the lever of a runtime recognised among
//! the tree's programs (PHP's `USE_ZEND_ALLOC=0` and CPython's
//! `PYTHONMALLOC=malloc` route its allocations through malloc; the JVM's
//! heap is its own, sized by its flags) as a `--variant` to try.

use super::cause::median_run;
use super::verdict_reasons::{Note, Runtime};
use allocscope_core::model::StoredExperiment;

/// Below this, the memory outside malloc is not worth a note.
pub(crate) const OUTSIDE_MIN_BYTES: f64 = 32.0 * 1024.0 * 1024.0;
/// Nor below this share of the run's mean RSS.
pub(crate) const OUTSIDE_MIN_SHARE: f64 = 0.2;

/// The note on the baseline's memory outside malloc, if it is large.
pub fn explain(experiment: &StoredExperiment, baseline: usize) -> Option<Note> {
    let config = experiment.configs.get(baseline)?;
    let (_, m) = median_run(config)?;
    let mean = m.breakdown_mean?;
    let outside = mean.other_anon_bytes as f64;
    let total = mean.total_bytes() as f64;
    if outside < OUTSIDE_MIN_BYTES || total <= 0.0 || outside / total < OUTSIDE_MIN_SHARE {
        return None;
    }
    Some(Note::OutsideMalloc {
        config: config.config.name.clone(),
        bytes: outside,
        share: outside / total,
        runtime: runtime(experiment),
    })
}

/// A runtime with its own memory manager among the tree's programs.
fn runtime(experiment: &StoredExperiment) -> Option<Runtime> {
    let programs = experiment
        .configs
        .iter()
        .filter_map(super::served::tree)
        .flat_map(|t| &t.programs);
    let command = experiment.info.command.join(" ");
    for program in programs {
        let known = if program.starts_with("php") {
            ("PHP", "zend-malloc", Some("USE_ZEND_ALLOC=0"))
        } else if program.starts_with("python") {
            ("CPython", "pymalloc-off", Some("PYTHONMALLOC=malloc"))
        } else if program == "java" {
            ("the JVM", "", None)
        } else {
            continue;
        };
        let (name, label, setting) = known;
        return Some(Runtime {
            program: program.clone(),
            name: name.to_string(),
            setting: setting.map(str::to_string),
            variant: setting.map(|s| format!("--variant {label}='env {s} {command}'")),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::fixture;
    use allocscope_core::model::{Breakdown, ServedTree};

    const MIB: u64 = 1 << 20;

    /// The fixture with every sample's breakdown holding `other` MiB of
    /// other anonymous memory beside 20 MiB of live heap.
    fn experiment(other: u64, programs: &[&str]) -> StoredExperiment {
        let mut e = fixture::experiment();
        for run in e.configs.iter_mut().flat_map(|c| &mut c.runs) {
            run.record.status = allocscope_core::model::RunStatus::Ok;
            run.record.served_tree = Some(ServedTree {
                programs: programs.iter().map(|p| p.to_string()).collect(),
                ..ServedTree::default()
            });
            for s in &mut run.record.samples {
                s.rss_bytes = (20 + other) * MIB;
                s.breakdown = Some(Breakdown {
                    live_heap_bytes: 20 * MIB,
                    other_anon_bytes: other * MIB,
                    ..Breakdown::default()
                });
            }
        }
        e
    }

    #[test]
    fn large_memory_outside_malloc_is_named_with_the_runtime_lever() {
        let e = experiment(171, &["sh", "php-fpm8.2"]);
        let Some(Note::OutsideMalloc {
            bytes,
            share,
            runtime: Some(r),
            ..
        }) = explain(&e, 0)
        else {
            panic!("no note: {:?}", explain(&e, 0));
        };
        assert_eq!(bytes, (171 * MIB) as f64);
        assert!(share > 0.85, "{share}");
        assert_eq!(r.setting.as_deref(), Some("USE_ZEND_ALLOC=0"));
        assert!(
            r.variant
                .as_deref()
                .is_some_and(|v| v.contains("env USE_ZEND_ALLOC=0")),
            "{r:?}"
        );
        let python = experiment(171, &["python3.11"]);
        assert!(matches!(
            explain(&python, 0),
            Some(Note::OutsideMalloc { runtime: Some(Runtime { setting: Some(s), .. }), .. })
                if s == "PYTHONMALLOC=malloc"
        ));
    }

    #[test]
    fn a_little_memory_outside_malloc_is_no_note() {
        assert_eq!(explain(&experiment(4, &["php-fpm8.2"]), 0), None);
        assert!(matches!(
            explain(&experiment(171, &["server"]), 0),
            Some(Note::OutsideMalloc { runtime: None, .. })
        ));
    }
}
