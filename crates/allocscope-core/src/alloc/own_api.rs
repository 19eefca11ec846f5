//! An allocator's own API: the functions jemalloc, tcmalloc and mimalloc
//! offer besides the malloc family (`mallocx`, `sdallocx`, `je_malloc`,
//! `tc_new`, `mi_heap_malloc`, ...). A program that calls them, found by
//! these names among the undefined dynamic symbols of its executable and
//! libraries, allocates from that allocator whatever is preloaded: a
//! preload replaces `malloc`, not functions it does not define. Only
//! calls that allocate or free count; size queries and control calls
//! (`nallocx`, `mallctl`, `mi_option_set`) move no memory.

/// The allocator whose own API `symbol` belongs to, when it allocates or
/// frees memory.
pub fn allocator_of(symbol: &str) -> Option<&'static str> {
    if JEMALLOC_UNPREFIXED.contains(&symbol) {
        return Some("jemalloc");
    }
    let (allocator, rest) = if let Some(rest) = symbol.strip_prefix("je_") {
        ("jemalloc", rest)
    } else if let Some(rest) = symbol.strip_prefix("tc_") {
        ("tcmalloc", rest)
    } else if let Some(rest) = symbol.strip_prefix("mi_") {
        ("mimalloc", rest)
    } else {
        return None;
    };
    moves_memory(rest).then_some(allocator)
}

/// jemalloc's non-standard API, exported without a prefix by Debian's
/// build (`nallocx` is a size query and is left out).
const JEMALLOC_UNPREFIXED: &[&str] = &["mallocx", "rallocx", "xallocx", "dallocx", "sdallocx"];

/// Whether an allocator function, without its prefix, allocates or frees:
/// `malloc`, `calloc`, `heap_zalloc_aligned`, `free_sized`, `new`,
/// `deletearray`, `mallocx`; not `malloc_usable_size`, `nallocx`,
/// `good_size`, `mallctl`, `stats_print`, `option_set`.
fn moves_memory(rest: &str) -> bool {
    let verb = ["alloc", "free", "new", "delete", "memalign"]
        .iter()
        .any(|w| rest.contains(w));
    let query = [
        "usable", "nallocx", "size", "ctl", "stats", "option", "good",
    ]
    .iter()
    .any(|w| rest.contains(w))
        && !rest.contains("free_size");
    verb && !query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocating_calls_are_named_and_queries_are_not() {
        for (symbol, allocator) in [
            ("mallocx", "jemalloc"),
            ("sdallocx", "jemalloc"),
            ("je_malloc", "jemalloc"),
            ("je_rallocx", "jemalloc"),
            ("tc_new", "tcmalloc"),
            ("tc_deletearray_nothrow", "tcmalloc"),
            ("tc_free_sized", "tcmalloc"),
            ("mi_malloc", "mimalloc"),
            ("mi_heap_zalloc_aligned", "mimalloc"),
            ("mi_free", "mimalloc"),
        ] {
            assert_eq!(allocator_of(symbol), Some(allocator), "{symbol}");
        }
        for symbol in [
            "nallocx",
            "mallctl",
            "je_mallctl",
            "je_malloc_usable_size",
            "tc_malloc_size",
            "mi_option_set",
            "mi_stats_print",
            "mi_good_size",
            "malloc",
            "minor",
            "tcsetattr",
        ] {
            assert_eq!(allocator_of(symbol), None, "{symbol}");
        }
    }
}
