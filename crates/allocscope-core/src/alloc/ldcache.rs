//! The dynamic loader's cache, `/etc/ld.so.cache`, read directly: the same
//! soname -> path list `ldconfig -p` prints, without starting a process
//! (which cost about 40 ms of every start-up).
//!
//! Format (glibc `elf/cache.c`, "new" format, the only one written since
//! glibc 2.32): the magic `glibc-ld.so.cache1.1`, a u32 entry count, a u32
//! string-table size, 28 more header bytes, then 24-byte entries whose key
//! (soname) and value (path) are offsets of NUL-terminated strings from the
//! start of the file. Older caches put an old-format table first; the new
//! one then follows it, 8-byte aligned, so we look for the magic.

use std::path::PathBuf;

const MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
const HEADER_LEN: usize = 48;
const ENTRY_LEN: usize = 24;

/// One soname and the library path it resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    pub soname: String,
    pub path: PathBuf,
}

/// Reads `/etc/ld.so.cache`; empty when it is missing or unreadable.
pub fn read() -> Vec<CacheEntry> {
    std::fs::read("/etc/ld.so.cache")
        .map(|bytes| parse(&bytes))
        .unwrap_or_default()
}

/// Parses a cache file; entries that do not fit the file are skipped.
pub fn parse(bytes: &[u8]) -> Vec<CacheEntry> {
    let Some(start) = bytes.windows(MAGIC.len()).position(|w| w == MAGIC) else {
        return Vec::new();
    };
    let u32_at = |at: usize| -> Option<usize> {
        let b = bytes.get(at..at + 4)?;
        usize::try_from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])).ok()
    };
    let Some(count) = u32_at(start + MAGIC.len()) else {
        return Vec::new();
    };
    let string_at = |offset: usize| -> Option<String> {
        let tail = bytes.get(offset..)?;
        let end = tail.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&tail[..end]).ok().map(str::to_string)
    };
    (0..count)
        .map_while(|i| {
            let entry = start + HEADER_LEN + i * ENTRY_LEN;
            // An entry is flags (i32), key (u32), value (u32), osversion, hwcap.
            Some((u32_at(entry + 4)?, u32_at(entry + 8)?))
        })
        .filter_map(|(key, value)| {
            Some(CacheEntry {
                soname: string_at(key)?,
                path: PathBuf::from(string_at(value)?),
            })
        })
        .collect()
}
