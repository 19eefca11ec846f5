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
pub(crate) const GLIBC_SHIM_SYMBOL: &str = "allocscope_glibc_shim";

/// What the executable's own `malloc` is called.
pub const PROGRAM_OWN: &str = "program";

/// The allocator serving `malloc` in `program` run with `preloads` (in
/// LD_PRELOAD order, interposers that pass calls on, such as the heap
/// probe, left out). `None` when the program is not a dynamic ELF file or
/// no object in reach defines `malloc` (a script: the interpreter decides).
pub fn served_by(program: &Path, preloads: &[PathBuf]) -> Option<String> {
    resolve(program, preloads).map(|r| r.malloc)
}

pub use crate::model::Via;

/// Calls one object makes to an allocator's own API (`alloc::own_api`),
/// and which allocator they reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnApiCalls {
    /// The calling object's file name (`libisc-9.18.so`, `named`).
    pub caller: String,
    /// The caller is the executable itself (whose file may have been
    /// read under another name, `/proc/PID/exe`).
    pub from_program: bool,
    /// The allocator whose API it is (`jemalloc`).
    pub api_of: &'static str,
    /// What serves the calls: the first object in lookup order that
    /// defines them, as `served_by` names it (`glibc` for the shim, which
    /// maps jemalloc's API to glibc).
    pub reach: String,
    /// The functions called, sorted.
    pub symbols: Vec<String>,
}

/// What serves one program's allocations, found from its ELF files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// `served_by`'s answer.
    pub malloc: String,
    pub via: Via,
    /// Every object's calls to an allocator's own API.
    pub own_api: Vec<OwnApiCalls>,
}

/// One object in the loader's lookup order: the names it defines that
/// matter here, and the own-API functions it calls.
struct Object {
    path: PathBuf,
    program: bool,
    preloaded: bool,
    exports: HashSet<String>,
    calls: Vec<String>,
}

/// `served_by` with how the allocator got there and what the program calls
/// of an allocator's own API, from every object the loader maps at start.
pub fn resolve(program: &Path, preloads: &[PathBuf]) -> Option<Resolution> {
    let objects = load_order(program, preloads)?;
    let defining = |name: &str| objects.iter().find(|o| o.exports.contains(name));
    let served = |o: &Object| {
        if o.exports.contains(GLIBC_SHIM_SYMBOL) {
            "glibc".to_string()
        } else {
            label(&o.path, o.program)
        }
    };
    let server = defining("malloc")?;
    let via = match () {
        _ if server.program => Via::Program,
        _ if server.preloaded && !server.exports.contains(GLIBC_SHIM_SYMBOL) => Via::Preloaded,
        _ => match served(server).as_str() {
            "glibc" => Via::Libc,
            _ => Via::Linked,
        },
    };
    let mut own_api = Vec::new();
    for caller in objects.iter().filter(|o| !o.calls.is_empty()) {
        for symbol in &caller.calls {
            let Some(api_of) = super::own_api::allocator_of(symbol) else {
                continue;
            };
            let reach = defining(symbol).map_or_else(|| api_of.to_string(), served);
            let name = file_name(&caller.path);
            match own_api
                .iter_mut()
                .find(|c: &&mut OwnApiCalls| c.caller == name && c.reach == reach)
            {
                Some(calls) => calls.symbols.push(symbol.clone()),
                None => own_api.push(OwnApiCalls {
                    caller: name,
                    from_program: caller.program,
                    api_of,
                    reach,
                    symbols: vec![symbol.clone()],
                }),
            }
        }
    }
    for calls in &mut own_api {
        calls.symbols.sort();
    }
    Some(Resolution {
        malloc: served(server),
        via,
        own_api,
    })
}

/// The executable, then each preload, then their DT_NEEDED libraries
/// breadth first; `None` when the program is not a dynamic ELF file.
fn load_order(program: &Path, preloads: &[PathBuf]) -> Option<Vec<Object>> {
    let cache = ldcache::read();
    let mut queue: Vec<PathBuf> = std::iter::once(program.to_path_buf())
        .chain(preloads.iter().cloned())
        .collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut objects = Vec::new();
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
        // The allocators' own libraries and libc call nothing of interest.
        let calls_nothing = allocator_of_library(&path).is_some() || is_libc(&path);
        let mut object = Object {
            path: path.clone(),
            program: at == 1,
            preloaded: at > 1 && at <= 1 + preloads.len(),
            exports: HashSet::new(),
            calls: Vec::new(),
        };
        for sym in elf.dynsyms.iter() {
            let Some(name) = elf.dynstrtab.get_at(sym.st_name) else {
                continue;
            };
            let wanted = name == "malloc"
                || name == GLIBC_SHIM_SYMBOL
                || super::own_api::allocator_of(name).is_some();
            if !wanted {
                continue;
            }
            if sym.st_shndx != 0 {
                object.exports.insert(name.to_string());
            } else if !calls_nothing && !object.calls.iter().any(|c| c == name) {
                object.calls.push(name.to_string());
            }
        }
        objects.push(object);
        for soname in &elf.libraries {
            if seen.insert(soname.to_string()) {
                if let Some(found) = locate(soname, &cache) {
                    queue.push(found);
                }
            }
        }
    }
    (!objects.is_empty()).then_some(objects)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string()
}

fn is_libc(path: &Path) -> bool {
    let file = file_name(path);
    file.starts_with("libc.so") || file.starts_with("libc-")
}

fn label(path: &Path, is_program: bool) -> String {
    if is_program {
        return PROGRAM_OWN.to_string();
    }
    if is_libc(path) {
        return "glibc".to_string();
    }
    allocator_of_library(path).map_or_else(|| file_name(path), str::to_string)
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
