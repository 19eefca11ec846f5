//! Which allocator really serves a program's `malloc`: the first object in
//! the dynamic loader's lookup order that defines it. That order is the
//! executable, then each LD_PRELOAD library, then their DT_NEEDED libraries
//! breadth first (glibc `elf/dl-deps.c`), so a program that links jemalloc
//! gets jemalloc's `malloc` ahead of libc's, an executable with its own
//! `malloc` beats every preload, and allocscope's glibc shim, preloaded,
//! beats the linked allocator.
//!
//! The answer is a word: `glibc` (libc, or the shim that sends the family to
//! it), a built-in allocator's name, `program` (the executable's own), or
//! the defining library's file name.

use super::known::allocator_of_library;
use super::ldcache;
use goblin::elf::Elf;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The symbol allocscope's glibc shim (`probe/glibc_shim.c`) exports, by
/// which it is known here and by the heap probe.
pub const GLIBC_SHIM_SYMBOL: &str = "allocscope_glibc_shim";

/// What the executable's own `malloc` is called.
pub const PROGRAM_OWN: &str = "program";

/// The allocator serving `malloc` in `program` run with `preloads` (in
/// LD_PRELOAD order, interposers that pass calls on, such as the heap
/// probe, left out). `None` when the program is not a dynamic ELF file or
/// no object in reach defines `malloc` (a script: the interpreter decides).
pub fn served_by(program: &Path, preloads: &[PathBuf]) -> Option<String> {
    let cache = ldcache::read();
    let mut queue: Vec<PathBuf> = std::iter::once(program.to_path_buf())
        .chain(preloads.iter().cloned())
        .collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut at = 0;
    while let Some(path) = queue.get(at).cloned() {
        at += 1;
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Ok(elf) = Elf::parse(&bytes) else {
            continue;
        };
        if at == 1 && elf.interpreter.is_none() {
            return None;
        }
        let exports = |name: &str| {
            elf.dynsyms
                .iter()
                .any(|s| s.st_shndx != 0 && elf.dynstrtab.get_at(s.st_name) == Some(name))
        };
        if exports(GLIBC_SHIM_SYMBOL) {
            return Some("glibc".to_string());
        }
        if exports("malloc") {
            return Some(label(&path, at == 1));
        }
        for soname in &elf.libraries {
            if seen.insert(soname.to_string()) {
                if let Some(found) = locate(soname, &cache) {
                    queue.push(found);
                }
            }
        }
    }
    None
}

fn label(path: &Path, is_program: bool) -> String {
    if is_program {
        return PROGRAM_OWN.to_string();
    }
    let file = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if file.starts_with("libc.so") || file.starts_with("libc-") {
        return "glibc".to_string();
    }
    allocator_of_library(path).map_or_else(|| file.to_string(), str::to_string)
}

/// A DT_NEEDED entry's path: itself when it holds a '/', else from the
/// loader's cache (the first entry whose file exists: the cache may list
/// other architectures' too, which then fail to parse as the same soname
/// would fail to load).
fn locate(soname: &str, cache: &[ldcache::CacheEntry]) -> Option<PathBuf> {
    if soname.contains('/') {
        return Some(PathBuf::from(soname));
    }
    cache
        .iter()
        .filter(|e| e.soname == soname)
        .map(|e| e.path.clone())
        .find(|p| p.exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_links_nothing_is_served_by_glibc() {
        assert_eq!(
            served_by(Path::new("/bin/sh"), &[]).as_deref(),
            Some("glibc")
        );
        assert_eq!(served_by(Path::new("/no/such/program"), &[]), None);
    }

    #[test]
    fn a_linked_allocator_serves_until_the_shim_is_preloaded() -> anyhow::Result<()> {
        let redis = Path::new("/usr/bin/redis-server");
        if !crate::alloc::test_deps::require(redis.exists(), "redis-server", "redis-server") {
            return Ok(());
        }
        assert_eq!(served_by(redis, &[]).as_deref(), Some("jemalloc"));
        let shim = crate::probe::install_glibc_shim()?;
        assert_eq!(served_by(redis, &[shim]).as_deref(), Some("glibc"));
        Ok(())
    }
}
