//! Programs that bring their own allocator (redis links jemalloc, some
//! builds link tcmalloc or mimalloc): a configuration without a preload then
//! measures that allocator, not glibc malloc, and glibc's tunables do nothing
//! to it, unless allocscope's glibc shim was preloaded (runs that recorded
//! `served_by`). Says which, naming the configurations concerned. And a
//! program of the tree that calls an allocator's own API (`mallocx`,
//! `tc_new`, ...) allocates from it whatever is preloaded: said once per
//! caller, with the configurations where those calls bypassed the
//! allocator under test and the lever that does reach them.

use allocscope_core::model::StoredExperiment;

/// One warning per allocator the program linked, naming the configurations
/// that ran it without a preloaded allocator.
pub fn warnings(experiment: &StoredExperiment) -> Vec<String> {
    // A `--variant` runs a build of its own: what that build links is
    // what it compares, not a warning about the experiment's program.
    let programs = || {
        experiment
            .configs
            .iter()
            .filter(|c| c.config.command.is_none())
    };
    let mut linked: Vec<&str> = Vec::new();
    for lib in programs()
        .flat_map(|c| &c.runs)
        .flat_map(|r| &r.record.linked_allocators)
    {
        if !linked.contains(&lib.as_str()) {
            linked.push(lib);
        }
    }
    let unpreloaded: Vec<&str> = programs()
        .filter(|c| !c.config.env.iter().any(|(k, _)| k == "LD_PRELOAD"))
        .map(|c| c.config.name.as_str())
        .collect();
    let shimmed = programs()
        .flat_map(|c| &c.runs)
        .any(|r| r.record.served_by.is_some());
    let own_api = own_api_warnings(experiment);
    linked
        .into_iter()
        .map(|lib| {
            if shimmed && !unpreloaded.is_empty() {
                return format!(
                    "the program links {lib} itself: {} preloaded allocscope's glibc shim, so \
                     glibc served malloc (the served-by column says what served each \
                     configuration); the program's own statistics keep naming {lib}",
                    unpreloaded.join(", ")
                );
            }
            if unpreloaded.is_empty() {
                return format!(
                    "the program links {lib} itself; the preloaded allocators replaced its \
                     malloc, but its own statistics keep naming {lib}"
                );
            }
            format!(
                "the program links {lib} itself: {} ran without a preloaded allocator, so \
                 {} measured {lib}, not glibc malloc, and glibc tunables do not apply to it; \
                 the preloaded allocators replaced its malloc",
                unpreloaded.join(", "),
                if unpreloaded.len() > 1 { "they" } else { "it" }
            )
        })
        .chain(own_api)
        .collect()
}

/// One warning per program and allocator whose own API it calls, naming
/// its callers and the configurations whose preload those calls bypassed.
fn own_api_warnings(experiment: &StoredExperiment) -> Vec<String> {
    use super::own_api_words::{own_api_callers, own_api_lever};
    type Found<'a> = (Vec<&'a allocscope_core::model::OwnApiUse>, Vec<&'a str>);
    let mut found: Vec<Found> = Vec::new();
    for config in experiment
        .configs
        .iter()
        .filter(|c| c.config.command.is_none())
    {
        let Some(tree) = super::served::tree(config) else {
            continue;
        };
        for u in &tree.own_api {
            let at = found.iter().position(|(uses, _)| {
                uses.iter()
                    .any(|f| (&f.program, &f.api_of) == (&u.program, &u.api_of))
            });
            let at = at.unwrap_or_else(|| {
                found.push((Vec::new(), Vec::new()));
                found.len() - 1
            });
            let (uses, bypassed) = &mut found[at];
            if !uses.iter().any(|f| f.caller == u.caller) {
                uses.push(u);
            }
            let name = config.config.name.as_str();
            if u.reach != u.malloc && !bypassed.contains(&name) {
                bypassed.push(name);
            }
        }
    }
    found
        .into_iter()
        .filter_map(|(uses, bypassed)| {
            let first = uses.first()?;
            let under = if bypassed.is_empty() {
                String::new()
            } else {
                format!(
                    " (under {} those calls still reached {})",
                    bypassed.join(", "),
                    first.api_of
                )
            };
            Some(format!(
                "{}{under}: {}",
                own_api_callers(&uses),
                own_api_lever(&first.api_of)
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::fixture;

    #[test]
    fn names_the_configurations_that_ran_the_linked_allocator() {
        let mut e = fixture::experiment();
        for run in e.configs.iter_mut().flat_map(|c| &mut c.runs) {
            run.record.linked_allocators.clear();
        }
        assert!(warnings(&e).is_empty(), "nothing linked");
        for run in e.configs.iter_mut().flat_map(|c| &mut c.runs) {
            run.record.linked_allocators = vec!["jemalloc".to_string()];
        }
        let found = warnings(&e);
        assert_eq!(found.len(), 1, "{found:?}");
        let base = &e.configs[0].config.name;
        assert!(
            found[0].contains(&format!("links jemalloc itself: {base}")),
            "{found:?}"
        );
        assert!(found[0].contains("not glibc malloc"), "{found:?}");
        for c in &mut e.configs {
            for run in &mut c.runs {
                run.record.served_by = Some(c.config.allocator.clone());
            }
        }
        let shimmed = warnings(&e);
        assert!(
            shimmed[0].contains("glibc shim, so glibc served"),
            "{shimmed:?}"
        );
    }

    #[test]
    fn a_variant_that_links_an_allocator_is_no_warning_about_the_program() {
        let mut e = fixture::experiment();
        for run in e.configs.iter_mut().flat_map(|c| &mut c.runs) {
            run.record.linked_allocators.clear();
        }
        let variant = &mut e.configs[0];
        variant.config.command = Some(vec!["./app-jemalloc".to_string()]);
        for run in &mut variant.runs {
            run.record.linked_allocators = vec!["jemalloc".to_string()];
        }
        assert_eq!(warnings(&e), Vec::<String>::new());
    }
}
