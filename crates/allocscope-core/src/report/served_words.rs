//! What served a configuration, in words, for the configurations table and
//! the verdict: `glibc requested; jemalloc served 97% of the tree's memory
//! (varnishd links it)`, and a program's calls to an allocator's own API
//! with the lever that reaches them.

use crate::analyze::served;
use crate::model::{OwnApiUse, StoredConfig, Via};

/// `jemalloc served 97% of the tree's memory (varnishd links it)`.
pub fn served_share(served_by: &str, share: f64, programs: &[String], via: Option<Via>) -> String {
    let names = programs.join(", ");
    let how = match via {
        Some(Via::Linked) if !names.is_empty() => {
            let verb = if programs.len() > 1 { "link" } else { "links" };
            format!(" ({names} {verb} it)")
        }
        Some(Via::Preloaded) => " (preloaded)".to_string(),
        Some(Via::Program) if !names.is_empty() => format!(" ({names}'s own malloc)"),
        _ if !names.is_empty() => format!(" ({names})"),
        _ => String::new(),
    };
    format!(
        "{served_by} served {} of the tree's memory{how}",
        percent(share)
    )
}

/// `97%`; `<1%` for a sliver, `100%` only when whole.
fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct > 0.0 && pct < 1.0 {
        "<1%".to_string()
    } else if pct < 100.0 && pct > 99.0 {
        ">99%".to_string()
    } else {
        format!("{pct:.0}%")
    }
}

/// The configurations table's words on what served `config`: `served by
/// glibc`, or, when what was asked is not what served, `glibc requested;
/// jemalloc served 97% of the tree's memory (varnishd links it)`.
pub fn table_words(config: &StoredConfig) -> Option<String> {
    let by = served::served_by(config)?;
    let part = served::mismatch(config).and_then(|other| {
        let tree = served::tree(config)?;
        tree.parts.iter().find(|p| p.allocator == other)
    });
    Some(match part {
        Some(p) => format!(
            "{} requested; {}",
            config.config.allocator,
            served_share(by, p.share, &p.programs, p.via)
        ),
        None => format!("served by {by}"),
    })
}

/// `libisc-9.18.so (in named) calls jemalloc's own API (mallocx, sdallocx)`.
pub fn own_api_calls(u: &OwnApiUse) -> String {
    let place = if u.caller == u.program {
        u.program.clone()
    } else {
        format!("{} (in {})", u.caller, u.program)
    };
    format!(
        "{place} calls {}'s own API ({})",
        u.api_of,
        u.symbols.join(", ")
    )
}

/// What reaches allocations made through an allocator's own API: its own
/// settings, or another build.
pub fn own_api_lever(api_of: &str) -> String {
    let settings = match api_of {
        "jemalloc" => "-a jemalloc:KEY=VALUE reaches it (MALLOC_CONF applies to a linked jemalloc too)",
        "tcmalloc" => "-a tcmalloc:KEY=VALUE reaches it (its TCMALLOC_* variables apply to a linked tcmalloc too)",
        "mimalloc" => "-a mimalloc:KEY=VALUE reaches it (its MIMALLOC_* variables apply to a linked mimalloc too)",
        _ => "its own settings reach it",
    };
    format!(
        "preloading another allocator cannot replace those calls; {settings}, or build the \
         program another way and compare the build with --variant LABEL=COMMAND"
    )
}
