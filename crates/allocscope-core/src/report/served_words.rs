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
        None => match served::bypassed(config) {
            Some(u) => format!(
                "served by {by}; {}'s calls to {}'s own API still reached {}",
                u.program, u.api_of, u.reach
            ),
            None => format!("served by {by}"),
        },
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

/// One program's callers of one allocator's API: `own_api_calls` for a
/// single caller, else `named and its libraries (libisc.so, libdns.so)
/// call jemalloc's own API (mallocx, rallocx, sdallocx)`.
pub fn own_api_callers(uses: &[&OwnApiUse]) -> String {
    let [first, ..] = uses else {
        return String::new();
    };
    if uses.len() == 1 {
        return own_api_calls(first);
    }
    let mut symbols: Vec<&str> = uses
        .iter()
        .flat_map(|u| u.symbols.iter().map(String::as_str))
        .collect();
    symbols.sort_unstable();
    symbols.dedup();
    let libraries: Vec<&str> = uses
        .iter()
        .map(|u| u.caller.as_str())
        .filter(|c| *c != first.program)
        .collect();
    let who = if libraries.len() == uses.len() {
        format!("{}'s libraries", first.program)
    } else {
        format!("{} and its libraries", first.program)
    };
    format!(
        "{who} ({}) call {}'s own API ({})",
        libraries.join(", "),
        first.api_of,
        symbols.join(", ")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(caller: &str, symbols: &[&str]) -> OwnApiUse {
        OwnApiUse {
            program: "named".to_string(),
            caller: caller.to_string(),
            api_of: "jemalloc".to_string(),
            reach: "jemalloc".to_string(),
            malloc: "tcmalloc".to_string(),
            symbols: symbols.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_programs_callers_are_named_once_with_every_function() {
        let own = calls("named", &["mallocx"]);
        let isc = calls("libisc.so", &["mallocx", "rallocx", "sdallocx"]);
        let dns = calls("libdns.so", &["mallocx"]);
        assert_eq!(
            own_api_callers(&[&isc]),
            "libisc.so (in named) calls jemalloc's own API (mallocx, rallocx, sdallocx)"
        );
        assert_eq!(
            own_api_callers(&[&own, &isc, &dns]),
            "named and its libraries (libisc.so, libdns.so) call jemalloc's own API (mallocx, \
             rallocx, sdallocx)"
        );
        assert_eq!(
            own_api_callers(&[&isc, &dns]),
            "named's libraries (libisc.so, libdns.so) call jemalloc's own API (mallocx, rallocx, \
             sdallocx)"
        );
    }

    #[test]
    fn shares_are_whole_percents_and_a_sliver_is_not_zero() {
        let names = ["varnishd".to_string()];
        assert_eq!(
            served_share("jemalloc", 0.97, &names, Some(Via::Linked)),
            "jemalloc served 97% of the tree's memory (varnishd links it)"
        );
        assert_eq!(percent(0.004), "<1%");
        assert_eq!(percent(0.996), ">99%");
        assert_eq!(percent(1.0), "100%");
    }
}
