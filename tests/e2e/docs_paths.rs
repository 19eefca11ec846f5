//! docs/ARCHITECTURE.md names files and folders from the repository's root
//! (in backticks) and links its sibling pages; each must exist, so the page
//! cannot keep pointing at code that moved. A recipe's placeholder file
//! (`.../NAME.rs`, `.../FORMAT.rs`) names a file to be written: its folder
//! must exist.

use std::path::Path;

const PAGE: &str = "docs/ARCHITECTURE.md";
/// Where a repository path in the page starts.
const TOP: [&str; 6] = ["src/", "crates/", "tests/", "benches/", "docs/", "scripts/"];

/// The repository paths a Markdown text names: backticked spans that start
/// at a top-level folder, and relative link targets (resolved from `docs/`).
fn named_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        let path_like = span
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
        if i % 2 == 1 && path_like && TOP.iter().any(|t| span.starts_with(t)) {
            found.push(span.trim_end_matches('/').to_string());
        }
    }
    for link in text.split("](").skip(1) {
        let target = link.split([')', '#']).next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") {
            found.push(format!("docs/{target}"));
        }
    }
    found
}

/// The paths of `names` missing under `root`; a placeholder file (an
/// upper-case stem) counts when its folder exists.
fn missing(root: &Path, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|name| {
            let path = root.join(name);
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string());
            let placeholder = stem.is_some_and(|s| s.chars().all(|c| c.is_ascii_uppercase()));
            match (placeholder, path.parent()) {
                (true, Some(dir)) => !dir.is_dir(),
                _ => !path.exists(),
            }
        })
        .cloned()
        .collect()
}

#[test]
fn every_path_the_architecture_page_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(PAGE)).expect("reading the architecture page");
    let names = named_paths(&text);
    assert!(names.len() >= 20, "{PAGE} names only {names:?}");
    let gone = missing(root, &names);
    assert!(
        gone.is_empty(),
        "{PAGE} names paths that do not exist: {gone:?}"
    );
}

#[test]
fn a_moved_file_and_a_broken_link_are_found() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = "the loop is `src/commands/session.rs`, the page [stats](statistics.md), \
                [gone](gone.md), a recipe's `crates/allocscope-report/src/FORMAT.rs` \
                and `crates/nowhere/NAME.rs`";
    assert_eq!(
        missing(root, &named_paths(text)),
        [
            "src/commands/session.rs",
            "crates/nowhere/NAME.rs",
            "docs/gone.md"
        ]
    );
}
