//! A program's calls to an allocator's own API in words, with the lever
//! that reaches them: the warnings (`linked.rs`) and the reporters
//! (`report::served_words`, `report::verdict_words`) say them alike.

use allocscope_core::model::OwnApiUse;

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
pub(crate) fn own_api_callers(uses: &[&OwnApiUse]) -> String {
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
pub(crate) fn own_api_lever(api_of: &str) -> String {
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
}
