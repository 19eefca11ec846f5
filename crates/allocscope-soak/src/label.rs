//! `soak --pid LABEL=PID`: whether the label's allocator is the one the
//! running process really maps. A label is a configuration as `-a` takes
//! it (`jemalloc`, `glibc:arena_max=2`); its allocator word is checked
//! against the allocator libraries in the process's memory map, by the
//! file-name prefixes of the core's table of built-in allocators. glibc's
//! malloc is the one served when no other allocator library is mapped.

use crate::error::SoakError;
use allocscope_core::alloc::{allocator_of_library, BUILTINS};
use std::path::PathBuf;

/// The allocator word of `label`: what comes before its first `:`.
pub fn allocator_word(label: &str) -> &str {
    label.split(':').next().unwrap_or(label)
}

/// Checks `label` against `mapped`, the file paths `pid` maps (in the
/// order of its map); the error is the one line that names the fix.
pub fn check(label: &str, pid: i32, mapped: &[PathBuf]) -> Result<(), SoakError> {
    let word = allocator_word(label);
    let (label, word_owned) = (label.to_string(), word.to_string());
    if !BUILTINS.iter().any(|b| b.name == word) {
        return Err(SoakError::UnknownAllocator {
            label,
            pid,
            word: word_owned,
            known: allocscope_core::alloc::known::names(),
        });
    }
    let found = mapped
        .iter()
        .find_map(|path| Some((allocator_of_library(path)?, path.file_name()?)));
    match found {
        Some((name, _)) if name == word => Ok(()),
        Some((mapped, file)) => Err(SoakError::MapsAnother {
            label,
            pid,
            file: file.to_string_lossy().into_owned(),
            word: word_owned,
            mapped,
        }),
        None if word == "glibc" => Ok(()),
        None => Err(SoakError::MapsNone {
            label,
            pid,
            word: word_owned,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maps(files: &[&str]) -> Vec<PathBuf> {
        files.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn a_label_must_name_the_allocator_the_process_maps() {
        let tcmalloc = maps(&[
            "/usr/bin/server",
            "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.9",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
        ]);
        assert!(check("tcmalloc", 4243, &tcmalloc).is_ok());
        assert_eq!(
            check("jemalloc", 4243, &tcmalloc).map_err(|e| e.to_string()),
            Err(
                "--pid jemalloc=4243: process 4243 maps libtcmalloc_minimal.so.4.5.9, not \
                 jemalloc; label it tcmalloc=4243"
                    .into()
            )
        );
        let plain = maps(&["/usr/bin/server", "/usr/lib/x86_64-linux-gnu/libc.so.6"]);
        assert!(check("glibc:arena_max=2", 7, &plain).is_ok());
        let refused = check("mimalloc", 7, &plain)
            .expect_err("no mimalloc mapped")
            .to_string();
        assert!(
            refused.ends_with("not mimalloc; label it glibc=7"),
            "{refused}"
        );
        let unknown = check("hoard", 7, &plain)
            .expect_err("not a built-in")
            .to_string();
        assert!(unknown.contains("'hoard' is not an allocator"), "{unknown}");
    }
}
