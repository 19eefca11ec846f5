//! `allocscope allocators`: the table of built-in allocators this machine
//! has (library, version) and, for each missing one, the Debian package that
//! provides it. Rendering only; discovery is `alloc::Registry::discover`.

use allocscope_core::alloc::Registry;

/// An aligned table, one row per built-in allocator, ending in a newline.
pub fn render(registry: &Registry) -> String {
    let header = ["ALLOCATOR", "LIBRARY", "VERSION", "STATUS"].map(String::from);
    let mut rows = vec![header];
    for (builtin, found) in registry.entries() {
        rows.push(match found {
            Some(f) => [
                builtin.name.to_string(),
                f.library.display().to_string(),
                f.version.clone().unwrap_or_else(|| "?".into()),
                "found".to_string(),
            ],
            None => [
                builtin.name.to_string(),
                "-".to_string(),
                "-".to_string(),
                format!("missing: apt-get install {}", builtin.package()),
            ],
        });
    }
    let widths = [0, 1, 2, 3].map(|k| rows.iter().map(|r| r[k].chars().count()).max());
    let widths = widths.map(Option::unwrap_or_default);
    let mut out = String::new();
    for row in &rows {
        // Padded to the widths; the last column's padding is trimmed.
        let padded = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"));
        out.push_str(padded.collect::<Vec<_>>().join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::alloc::Found;
    use std::path::PathBuf;

    #[test]
    fn lists_found_and_missing_allocators_with_install_hint() {
        let lib = |p: &str| PathBuf::from(p);
        let registry = Registry::from_found(vec![
            Found {
                name: "glibc",
                library: lib("/lib/x86_64-linux-gnu/libc.so.6"),
                mapped: lib("/usr/lib/x86_64-linux-gnu/libc.so.6"),
                version: Some("2.36".into()),
                package: "libc6",
            },
            Found {
                name: "jemalloc",
                library: lib("/lib/x86_64-linux-gnu/libjemalloc.so.2"),
                mapped: lib("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"),
                version: None,
                package: "libjemalloc2",
            },
        ]);
        let expected = "\
ALLOCATOR  LIBRARY                                 VERSION  STATUS
glibc      /lib/x86_64-linux-gnu/libc.so.6         2.36     found
jemalloc   /lib/x86_64-linux-gnu/libjemalloc.so.2  ?        found
tcmalloc   -                                       -        missing: apt-get install libtcmalloc-minimal4
mimalloc   -                                       -        missing: apt-get install libmimalloc2.0
";
        assert_eq!(render(&registry), expected);
    }
}
