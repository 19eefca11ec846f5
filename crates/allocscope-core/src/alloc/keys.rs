//! The settings each built-in allocator accepts, what they mean, and how a
//! value typed by the user becomes the text the allocator reads from its
//! environment. Values are checked here so that a typo fails before a run
//! instead of being silently ignored by the allocator.

use super::error::AllocError;

/// What a value must look like, and how it is rewritten for the allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Non-negative integer.
    Uint,
    /// Integer that may be negative (e.g. `-1` meaning "never").
    Int,
    /// Non-negative integer in bytes; accepts k/K, m/M, g/G suffixes, converted to bytes.
    Size,
    /// Non-negative decimal number.
    Float,
    /// true/false/1/0/yes/no/on/off, written as the allocator spells it.
    Bool,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// Free text (a path, a tag); only checked to be non-empty.
    Text,
    /// A duration (`500ms`, `1s`) for the heap probe's periodic `malloc_trim`,
    /// written as milliseconds to `ALLOCSCOPE_PROBE_TRIM_MS` rather than to
    /// the allocator's own variables.
    ProbeTrim,
}

/// The variable a `Kind::ProbeTrim` value is written to: the heap probe,
/// not the allocator, reads it (probe/PROTOCOL.md).
pub(crate) const PROBE_TRIM_MS_ENV: &str = "ALLOCSCOPE_PROBE_TRIM_MS";

/// The key every configuration accepts, a user library's included:
/// `thp=never` turns transparent huge pages off for the workload's tree.
pub(crate) const THP_KEY: &str = "thp";

/// The variable a `thp=never` setting is carried in. The run takes it out
/// of the workload's environment and calls `prctl(PR_SET_THP_DISABLE)` in
/// the child before exec instead (`run::process`); no allocator reads it.
pub const THP_DISABLE_ENV: &str = "ALLOCSCOPE_THP_DISABLE";

/// Checks a `thp=` value for an allocator without a `thp` key of its own:
/// only `never` exists, because a process can turn huge pages off for
/// itself but cannot force them on beyond the host's mode.
pub(crate) fn thp_disable(allocator: &str, value: &str) -> Result<(String, String), AllocError> {
    if value == "never" {
        return Ok((THP_DISABLE_ENV.to_string(), "1".to_string()));
    }
    Err(AllocError::BadValue {
        allocator: allocator.to_string(),
        key: THP_KEY.to_string(),
        value: value.to_string(),
        expected: "never (huge pages can be turned off for a process tree, not forced on; \
                   the host's mode is /sys/kernel/mm/transparent_hugepage/enabled)"
            .to_string(),
    })
}

/// One setting of a built-in allocator.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    pub kind: Kind,
    pub meaning: &'static str,
    /// Values `allocscope tune` tries for this key by default (each one a
    /// candidate of its own, beside the allocator's defaults): only values
    /// that can hold less memory than the allocator's own default, since a
    /// race recommends the least memory within the budget; a milder step
    /// beside the extreme one where that costs time. Every value costs a
    /// run of round 1, so there are 20 on a machine with all four
    /// allocators. Empty for keys that change nothing a tuning is after
    /// (debugging, statistics), whose useful values depend on the program
    /// (limits, paths), or whose memory-saving value is already the default
    /// (jemalloc 5.2+'s `muzzy_decay_ms` is 0).
    pub tries: &'static [&'static str],
}

const fn k(name: &'static str, kind: Kind, meaning: &'static str) -> Key {
    Key {
        name,
        kind,
        meaning,
        tries: &[],
    }
}

/// A key with the values `tune` tries, written next to it.
const fn t(
    name: &'static str,
    kind: Kind,
    tries: &'static [&'static str],
    meaning: &'static str,
) -> Key {
    Key {
        name,
        kind,
        meaning,
        tries,
    }
}

/// glibc 2.36 `glibc.malloc.*` tunables.
#[rustfmt::skip]
pub(crate) const GLIBC_KEYS: &[Key] = &[
    t("arena_max", Kind::Uint, &["1", "2", "4", "8"], "maximum number of malloc arenas"),
    k("arena_test", Kind::Uint, "arenas created before arena_max is checked"),
    k("check", Kind::Uint, "heap consistency checking level (needs libc_malloc_debug.so)"),
    k("hugetlb", Kind::Uint, "1 = madvise THP for the heap, 2 = use huge pages"),
    k("mmap_max", Kind::Uint, "maximum number of chunks served by mmap"),
    t("mmap_threshold", Kind::Size, &["64k", "1M"], "requests at least this large are served by mmap"),
    k("mxfast", Kind::Size, "largest request served from the fastbins"),
    k("perturb", Kind::Uint, "fill byte for allocated and freed memory (debugging)"),
    k("tcache_count", Kind::Uint, "chunks kept per thread-cache bin"),
    k("tcache_max", Kind::Size, "largest request served from the thread cache"),
    k("tcache_unsorted_limit", Kind::Uint, "unsorted chunks scanned when filling the tcache"),
    k("top_pad", Kind::Size, "extra memory requested from the kernel on each heap growth"),
    t("trim", Kind::ProbeTrim, &["250ms", "1s"], "call malloc_trim(0) this often from the heap probe's thread (e.g. 1s)"),
    t("trim_threshold", Kind::Size, &["32k"], "free memory at the heap top that triggers returning it"),
];

/// jemalloc 5.x `MALLOC_CONF` options.
#[rustfmt::skip]
pub(crate) const JEMALLOC_KEYS: &[Key] = &[
    k("abort_conf", Kind::Bool, "abort on an invalid MALLOC_CONF option"),
    t("background_thread", Kind::Bool, &["true"], "purge unused pages from background threads"),
    t("dirty_decay_ms", Kind::Int, &["0", "1000"], "time before dirty pages are purged (-1 = never)"),
    k("lg_extent_max_active_fit", Kind::Uint, "log2 of the largest size ratio when reusing extents"),
    k("lg_tcache_max", Kind::Uint, "log2 of the largest size class in the thread cache"),
    k("metadata_thp", Kind::Choice(&["disabled", "auto", "always"]),
        "transparent huge pages for metadata",
    ),
    k("muzzy_decay_ms", Kind::Int, "time before muzzy pages are released (-1 = never)"),
    t("narenas", Kind::Uint, &["1", "4"], "number of arenas"),
    k("oversize_threshold", Kind::Size, "requests at least this large use a dedicated arena"),
    k("percpu_arena", Kind::Choice(&["disabled", "percpu", "phycpu"]),
        "one arena per CPU",
    ),
    k("retain", Kind::Bool, "retain virtual memory instead of unmapping it"),
    k("stats_print", Kind::Bool, "print statistics at exit"),
    k("tcache", Kind::Bool, "enable the thread cache"),
    k("tcache_max", Kind::Size, "largest size class kept in the thread cache"),
    k("thp", Kind::Choice(&["default", "always", "never"]),
        "default/always: jemalloc's own use of huge pages for its arenas; never: off for the whole tree, as for every allocator",
    ),
];

/// gperftools tcmalloc `TCMALLOC_*` variables read by libtcmalloc_minimal
/// (checked against its strings; the profiler-only ones are left out).
#[rustfmt::skip]
pub(crate) const TCMALLOC_KEYS: &[Key] = &[
    t("aggressive_decommit", Kind::Bool, &["true"], "return freed spans to the kernel at once"),
    k("disable_memory_release", Kind::Bool, "never return free memory to the kernel"),
    k("heap_limit_mb", Kind::Uint, "fail allocations beyond this heap size in MiB"),
    k("large_alloc_report_threshold", Kind::Size, "report allocations at least this large"),
    k("max_total_thread_cache_bytes", Kind::Size, "total size of all thread caches"),
    k("memfs_limit_mb", Kind::Uint, "limit of memory taken from memfs_malloc_path, in MiB"),
    k("memfs_malloc_path", Kind::Text, "hugetlbfs path to allocate huge pages from"),
    t("release_rate", Kind::Float, &["10"], "how fast free memory is returned to the kernel (0 = never)"),
    k("skip_mmap", Kind::Bool, "never get memory with mmap"),
    k("skip_sbrk", Kind::Bool, "never get memory with sbrk"),
    k("transfer_num_obj", Kind::Uint, "objects moved between thread and central caches at once"),
];

/// mimalloc `MIMALLOC_*` options: those of 2.0.9 (Debian 12), plus a few 2.1
/// names marked as such, which 2.0 ignores.
#[rustfmt::skip]
pub(crate) const MIMALLOC_KEYS: &[Key] = &[
    k("abandoned_page_decommit", Kind::Bool, "decommit pages of exited threads"),
    k("abandoned_page_reset", Kind::Bool, "reset pages of exited threads"),
    k("allow_decommit", Kind::Bool, "return unused memory to the kernel"),
    k("allow_large_os_pages", Kind::Bool, "use large OS pages (mimalloc 2.1+)"),
    k("arena_eager_commit", Kind::Uint, "commit arena memory eagerly, 2 = only without overcommit (mimalloc 2.1+)"),
    t("decommit_delay", Kind::Uint, &["0"], "ms before unused memory is decommitted (alias reset_delay)"),
    k("decommit_extend_delay", Kind::Uint, "extra decommit delay in ms per use"),
    k("destroy_on_exit", Kind::Bool, "release all memory at exit"),
    k("eager_commit", Kind::Bool, "commit segments eagerly"),
    k("eager_commit_delay", Kind::Uint, "segments per thread before eager commit starts"),
    k("large_os_pages", Kind::Bool, "use large (2 MiB) OS pages"),
    k("limit_os_alloc", Kind::Bool, "use only reserved memory, never the OS"),
    k("max_errors", Kind::Uint, "error messages shown at most"),
    k("max_segment_reclaim", Kind::Uint, "abandoned segments reclaimed per try"),
    k("max_warnings", Kind::Uint, "warning messages shown at most"),
    k("os_tag", Kind::Uint, "tag for memory from the OS (macOS only)"),
    k("page_reset", Kind::Bool, "reset (madvise) freed pages at once"),
    k("purge_decommits", Kind::Bool, "purge by decommitting instead of resetting (mimalloc 2.1+)"),
    k("purge_delay", Kind::Int, "ms before unused memory is purged, -1 = never (mimalloc 2.1+)"),
    k("reserve_huge_os_pages", Kind::Uint, "1 GiB huge pages to reserve at start"),
    k("reserve_huge_os_pages_at", Kind::Int, "NUMA node for reserve_huge_os_pages"),
    k("reserve_os_memory", Kind::Size, "memory to reserve at start"),
    k("reset_delay", Kind::Uint, "ms before unused memory is decommitted (alias decommit_delay)"),
    k("segment_decommit_delay", Kind::Uint, "ms before unused segment memory is decommitted"),
    k("show_errors", Kind::Bool, "print errors"),
    k("show_stats", Kind::Bool, "print statistics at exit"),
    k("use_numa_nodes", Kind::Uint, "NUMA nodes to use (0 = all)"),
    k("verbose", Kind::Bool, "print diagnostic messages"),
];

/// Comma-separated key names, for "valid keys: ..." messages.
pub(crate) fn key_names(keys: &[Key]) -> String {
    keys.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

pub fn find(keys: &[Key], name: &str) -> Option<Key> {
    keys.iter().copied().find(|k| k.name == name)
}

/// How an allocator spells booleans in its environment.
#[derive(Debug, Clone, Copy)]
pub enum BoolStyle {
    /// `true`/`false` (jemalloc).
    Word,
    /// `1`/`0` (tcmalloc, mimalloc).
    Digit,
}

/// Checks `value` against `key` and returns the text to pass to the allocator.
pub fn convert(
    allocator: &str,
    key: &Key,
    value: &str,
    style: BoolStyle,
) -> Result<String, AllocError> {
    let bad = |expected: String| AllocError::BadValue {
        allocator: allocator.to_string(),
        key: key.name.to_string(),
        value: value.to_string(),
        expected,
    };
    match key.kind {
        Kind::Uint => value
            .parse::<u64>()
            .map(|n| n.to_string())
            .map_err(|_| bad("a non-negative integer".into())),
        Kind::Int => value
            .parse::<i64>()
            .map(|n| n.to_string())
            .map_err(|_| bad("an integer".into())),
        Kind::Size => parse_size(value)
            .map(|n| n.to_string())
            .ok_or_else(|| bad("a size in bytes such as 65536, 64k, 32M or 1G".into())),
        Kind::Float => match value.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(value.to_string()),
            _ => Err(bad("a non-negative number".into())),
        },
        Kind::Bool => {
            let on = match value.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => return Err(bad("true or false".into())),
            };
            Ok(match (style, on) {
                (BoolStyle::Word, true) => "true",
                (BoolStyle::Word, false) => "false",
                (BoolStyle::Digit, true) => "1",
                (BoolStyle::Digit, false) => "0",
            }
            .to_string())
        }
        Kind::Choice(words) => {
            if words.contains(&value) {
                Ok(value.to_string())
            } else {
                Err(bad(format!("one of {}", words.join(", "))))
            }
        }
        Kind::Text => Ok(value.to_string()),
        Kind::ProbeTrim => match crate::units::parse_duration(value) {
            Ok(d) if d.as_millis() >= 1 => Ok(d.as_millis().to_string()),
            _ => Err(bad("a duration of at least 1ms such as 500ms or 1s".into())),
        },
    }
}

/// `64k` -> 65536. Binary multiples, because allocator sizes are page multiples.
pub fn parse_size(text: &str) -> Option<u64> {
    let (digits, shift) = match text.as_bytes().last()? {
        b'k' | b'K' => (&text[..text.len() - 1], 10),
        b'm' | b'M' => (&text[..text.len() - 1], 20),
        b'g' | b'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64k"), Some(65536));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        for bad in ["", "k", "-1", "1.5M", "12T", "+4", "99999999999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn booleans_are_spelled_as_the_allocator_reads_them() {
        let key = k("x", Kind::Bool, "");
        assert_eq!(
            convert("a", &key, "yes", BoolStyle::Word).ok().as_deref(),
            Some("true")
        );
        assert_eq!(
            convert("a", &key, "true", BoolStyle::Digit).ok().as_deref(),
            Some("1")
        );
        assert!(convert("a", &key, "maybe", BoolStyle::Digit).is_err());
    }

    #[test]
    fn trim_takes_a_duration_in_milliseconds() {
        let key = k("trim", Kind::ProbeTrim, "");
        let ms = |v| convert("glibc", &key, v, BoolStyle::Digit).ok();
        assert_eq!(ms("1s").as_deref(), Some("1000"));
        assert_eq!(ms("250ms").as_deref(), Some("250"));
        assert_eq!(ms("0s"), None);
        assert_eq!(ms("often"), None);
    }

    #[test]
    fn key_tables_are_sorted_and_unique() {
        for table in [GLIBC_KEYS, JEMALLOC_KEYS, TCMALLOC_KEYS, MIMALLOC_KEYS] {
            let names: Vec<_> = table.iter().map(|k| k.name).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(names, sorted);
        }
    }
}
