//! The house's shape, checked on the source itself: no import loop between
//! modules or between the files of one module (at any level of folders), no
//! non-test function over 80 lines and no non-test file over 600 lines.
//!
//! The reading is textual, like a reviewer's: every `crate::`, `super::` and
//! `self::` path in non-test code (in `use` lines, braces expanded, and
//! inline) is resolved to the file that defines what it names, following a
//! module's `pub use` re-exports to the file they come from.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const MAX_FUNCTION_LINES: usize = 80;
const MAX_FILE_LINES: usize = 600;

/// A source file with its test-only parts blanked out.
struct Source {
    /// Path relative to `src/`, with `/` separators.
    rel: String,
    /// Non-test code, line for line (test items become empty lines).
    code: Vec<String>,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Strips string and char literals and `//` comments from one line, so that
/// braces and paths inside them are not read as code.
fn code_only(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            break;
        }
        if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            out.push('"');
            i += 1;
            continue;
        }
        // A char literal ('{', '\n'), not a lifetime ('a).
        if c == '\'' {
            let close = if chars.get(i + 1) == Some(&'\\') {
                i + 3
            } else {
                i + 2
            };
            if chars.get(close) == Some(&'\'') {
                out.push_str("' '");
                i = close + 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Follows an item's braces over one line of code: `depth` is how deep
/// inside it we are, `opened` whether its first brace has been seen.
fn count_braces(line: &str, depth: &mut i32, opened: &mut bool) {
    for c in line.chars() {
        match c {
            '{' => {
                *depth += 1;
                *opened = true;
            }
            '}' => *depth -= 1,
            _ => {}
        }
    }
}

/// The lines of a file with every `#[cfg(test)]` item blanked, and the
/// names of the child modules declared test-only (`#[cfg(test)] mod x;`,
/// with any `#[path]`).
fn strip_tests(text: &str) -> (Vec<String>, Vec<String>) {
    let lines: Vec<String> = text.lines().map(code_only).collect();
    let mut out = lines.clone();
    let mut test_children = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            i += 1;
            continue;
        }
        let start = i;
        let mut path_attr = None;
        let mut depth = 0i32;
        let mut opened = false;
        let mut j = i + 1;
        while j < lines.len() {
            let l = lines[j].trim();
            if let Some(p) = text
                .lines()
                .nth(j)
                .and_then(|raw| raw.trim().strip_prefix("#[path = \""))
            {
                path_attr = p.split('"').next().map(str::to_string);
            }
            count_braces(l, &mut depth, &mut opened);
            // A test-only field or argument ends at its comma.
            if !opened && l.ends_with(',') {
                break;
            }
            if !opened && l.ends_with(';') {
                if let Some(name) = l
                    .strip_prefix("mod ")
                    .or_else(|| l.strip_prefix("pub(crate) mod "))
                {
                    let name = name.trim_end_matches(';').trim().to_string();
                    test_children.push(path_attr.clone().unwrap_or(format!("{name}.rs")));
                }
                break;
            }
            if opened && depth <= 0 {
                break;
            }
            j += 1;
        }
        for line in out.iter_mut().take(j.min(lines.len() - 1) + 1).skip(start) {
            line.clear();
        }
        i = j + 1;
    }
    (out, test_children)
}

fn load_sources() -> Vec<Source> {
    let src = src_dir();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    let mut sources = Vec::new();
    for path in &paths {
        let text =
            fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let (code, children) = strip_tests(&text);
        let dir = module_dir(path);
        for child in children {
            test_only.insert(dir.join(&child));
            test_only.insert(dir.join(child.trim_end_matches(".rs")).join("mod.rs"));
        }
        let rel = path
            .strip_prefix(&src)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        sources.push((path.clone(), Source { rel, code }));
    }
    sources
        .into_iter()
        .filter(|(path, s)| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            !test_only.contains(path)
                && !name.ends_with("_tests.rs")
                && name != "tests.rs"
                && !s.rel.contains("fixtures/")
        })
        .map(|(_, s)| s)
        .collect()
}

/// The folder that a file's child modules live in: its own folder for
/// `mod.rs`, `lib.rs` and `main.rs`, `x/` beside `x.rs` otherwise.
fn module_dir(path: &Path) -> PathBuf {
    let parent = path.parent().unwrap_or(Path::new("")).to_path_buf();
    match path.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "lib.rs" | "main.rs") => parent,
        _ => parent.join(path.file_stem().and_then(|s| s.to_str()).unwrap_or("")),
    }
}

/// Every path in `use` statements (braces expanded) and inline in the code
/// that starts with `crate`, `super` or `self`, as segments.
fn paths_in(code: &[String]) -> Vec<Vec<String>> {
    let text = code.join("\n");
    let mut paths = Vec::new();
    // `use` statements, possibly spanning lines, with brace groups.
    let mut rest = text.as_str();
    while let Some(at) = find_use(rest) {
        let after = &rest[at..];
        let end = after.find(';').unwrap_or(after.len());
        let body: String = after[..end].split_whitespace().collect::<Vec<_>>().join("");
        let body = body.trim_start_matches("use");
        expand_use("", body, &mut paths);
        rest = &after[end.min(after.len())..];
    }
    // Inline paths such as `crate::units::bytes(..)` or `super::x::f()`.
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let tail = &text[i..];
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| tail.starts_with(p));
        let boundary = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        if starts && boundary {
            let len = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            let segs: Vec<String> = tail[..len]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            paths.push(segs);
            i += len;
        } else {
            i += tail.chars().next().map_or(1, char::len_utf8);
        }
    }
    paths.retain(|p| p.len() > 1);
    paths
}

fn find_use(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find("use ") {
        let at = from + at;
        let before = text[..at].trim_end_matches([' ', '\t']);
        let line_start = before.is_empty()
            || before.ends_with('\n')
            || before.ends_with("pub")
            || before.ends_with(')')
            || before.ends_with('{')
            || before.ends_with(';')
            || before.ends_with('}');
        if line_start {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

/// Expands `a::{b, c::{d, e}}` under `prefix` into full paths.
fn expand_use(prefix: &str, body: &str, out: &mut Vec<Vec<String>>) {
    let join = |p: &str, b: &str| {
        if p.is_empty() {
            b.to_string()
        } else {
            format!("{p}::{b}")
        }
    };
    if let Some(open) = body.find('{') {
        let head = body[..open].trim_end_matches("::");
        let inner = &body[open + 1..body.rfind('}').unwrap_or(body.len())];
        let new_prefix = join(prefix, head);
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&new_prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&new_prefix, &inner[start..], out);
    } else if !body.is_empty() {
        let full = join(prefix, body);
        let full = full
            .split(" as ")
            .next()
            .unwrap_or(&full)
            .split("as")
            .next()
            .unwrap_or(&full)
            .to_string();
        let segs: Vec<String> = full
            .split("::")
            .filter(|s| !s.is_empty() && *s != "self")
            .map(str::to_string)
            .collect();
        if matches!(segs.first().map(String::as_str), Some("crate" | "super"))
            || full.starts_with("self::")
        {
            let mut segs = segs;
            if full.starts_with("self::") {
                segs.insert(0, "self".to_string());
            }
            out.push(segs);
        }
    }
}

/// Resolves paths to files relative to `src/`.
struct Resolver {
    /// Every non-test file, relative to `src/`.
    files: BTreeSet<String>,
    /// Per module file, its `pub use child::...::Name` re-exports: Name -> child.
    reexports: BTreeMap<String, BTreeMap<String, String>>,
}

impl Resolver {
    fn new(sources: &[Source]) -> Self {
        let files = sources.iter().map(|s| s.rel.clone()).collect();
        let mut reexports = BTreeMap::new();
        for s in sources {
            let mut names = BTreeMap::new();
            for line in &s.code {
                let t = line.trim();
                let Some(body) = t
                    .strip_prefix("pub use ")
                    .or_else(|| t.strip_prefix("pub(crate) use "))
                else {
                    continue;
                };
                let body = body.trim_start_matches("self::").trim_end_matches(';');
                for (child, name) in plain_use_items(body).into_iter().flatten() {
                    names.insert(name, child);
                }
            }
            reexports.insert(s.rel.clone(), names);
        }
        Resolver { files, reexports }
    }

    /// The module file (`x.rs` or `x/mod.rs`) of folder path `dir` (relative).
    fn module_file(&self, dir: &str) -> Option<String> {
        if dir.is_empty() {
            return Some("lib.rs".to_string());
        }
        [format!("{dir}.rs"), format!("{dir}/mod.rs")]
            .into_iter()
            .find(|f| self.files.contains(f))
    }

    /// The file a path used in `from` names.
    fn resolve(&self, from: &str, segs: &[String]) -> Option<String> {
        let from_dir = {
            let p = Path::new(from);
            let parent = p
                .parent()
                .map(|x| x.to_string_lossy().to_string())
                .unwrap_or_default();
            let stem = p
                .file_stem()
                .map(|x| x.to_string_lossy().to_string())
                .unwrap_or_default();
            if matches!(stem.as_str(), "mod" | "lib" | "main") {
                parent
            } else if parent.is_empty() {
                stem
            } else {
                format!("{parent}/{stem}")
            }
        };
        let mut dir = String::new();
        let mut rest = segs;
        match segs.first().map(String::as_str) {
            Some("crate") => rest = &segs[1..],
            Some("self") => {
                dir = from_dir;
                rest = &segs[1..];
            }
            Some("super") => {
                dir = from_dir;
                while rest.first().map(String::as_str) == Some("super") {
                    dir = Path::new(&dir)
                        .parent()
                        .map(|x| x.to_string_lossy().to_string())
                        .unwrap_or_default();
                    rest = &rest[1..];
                }
            }
            _ => return None,
        }
        for seg in rest {
            let child = if dir.is_empty() {
                seg.clone()
            } else {
                format!("{dir}/{seg}")
            };
            if self.module_file(&child).is_some() {
                dir = child;
                continue;
            }
            // An item of the module `dir`: follow a re-export, if any.
            let module = self.module_file(&dir)?;
            if let Some(via) = self.reexports.get(&module).and_then(|m| m.get(seg)) {
                let target = if dir.is_empty() {
                    via.clone()
                } else {
                    format!("{dir}/{via}")
                };
                return self.module_file(&target).or(Some(module));
            }
            return Some(module);
        }
        self.module_file(&dir)
    }
}

/// `child::Name`, `child::{A, B}` items of one `pub use` body: (child, name).
fn plain_use_items(body: &str) -> Vec<Option<(String, String)>> {
    let body = body.replace(' ', "");
    let Some((child, tail)) = body.split_once("::") else {
        return Vec::new();
    };
    if matches!(child, "crate" | "super" | "std" | "core") {
        return Vec::new();
    }
    let tail = tail.trim_start_matches('{').trim_end_matches('}');
    tail.split(',')
        .map(|item| {
            let name = item.rsplit("::").next().unwrap_or(item);
            let name = name.split("as").next().unwrap_or(name);
            (!name.is_empty()).then(|| (child.to_string(), name.to_string()))
        })
        .collect()
}

/// Edges between nodes of one folder level: a node is a direct file or a
/// direct sub-folder of `dir` (with `x.rs` and `x/` as one node).
fn edges_at(dir: &str, file_edges: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
    let node = |file: &str| -> Option<String> {
        let inner = if dir.is_empty() {
            file
        } else {
            file.strip_prefix(&format!("{dir}/"))?
        };
        let first = inner.split('/').next().unwrap_or(inner);
        let first = first.trim_end_matches(".rs");
        if matches!(first, "lib" | "main") && dir.is_empty() {
            return None;
        }
        Some(first.to_string())
    };
    file_edges
        .iter()
        .filter_map(|(a, b)| Some((node(a)?, node(b)?)))
        .filter(|(a, b)| a != b)
        .collect()
}

/// The groups of nodes that reach each other (the strongly connected
/// components of more than one node), each with the edges inside it.
fn circles(edges: &BTreeSet<(String, String)>) -> Vec<String> {
    let mut adj: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (a, b) in edges {
        adj.entry(a).or_default().insert(b);
    }
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for &m in adj.get(n.as_str()).into_iter().flatten() {
                if seen.insert(m.to_string()) {
                    todo.push(m.to_string());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<String>> = adj.keys().map(|&n| (n, reach(n))).collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut found = Vec::new();
    for (&n, r) in &reaches {
        if done.contains(n) || !r.contains(n) {
            continue;
        }
        let group: BTreeSet<String> = r
            .iter()
            .filter(|m| reaches.get(m.as_str()).is_some_and(|back| back.contains(n)))
            .cloned()
            .collect();
        let inside: Vec<String> = edges
            .iter()
            .filter(|(a, b)| group.contains(a) && group.contains(b))
            .map(|(a, b)| format!("{a} -> {b}"))
            .collect();
        found.push(inside.join(", "));
        done.extend(group);
    }
    found
}

/// Every file-to-file import edge of non-test code.
fn file_edges(sources: &[Source]) -> BTreeSet<(String, String)> {
    let resolver = Resolver::new(sources);
    let mut edges = BTreeSet::new();
    for s in sources {
        for segs in paths_in(&s.code) {
            if let Some(target) = resolver.resolve(&s.rel, &segs) {
                if target != s.rel {
                    edges.insert((s.rel.clone(), target));
                }
            }
        }
    }
    edges
}

fn import_loops(sources: &[Source]) -> Vec<String> {
    let edges = file_edges(sources);
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    dirs.insert(String::new());
    for s in sources {
        let mut p = Path::new(&s.rel).parent();
        while let Some(d) = p {
            dirs.insert(d.to_string_lossy().to_string());
            p = d.parent();
        }
    }
    dirs.into_iter()
        .flat_map(|dir| {
            circles(&edges_at(&dir, &edges))
                .into_iter()
                .map(move |c| format!("in src/{dir}: {c}"))
        })
        .collect()
}

/// Functions over the limit: (file:line, name, lines).
fn long_functions(sources: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for s in sources {
        let code = &s.code;
        let mut i = 0;
        while i < code.len() {
            let Some(name) = fn_name(&code[i]) else {
                i += 1;
                continue;
            };
            let (mut depth, mut opened, mut j) = (0i32, false, i);
            while j < code.len() {
                let line = &code[j];
                if !opened && line.trim_end().ends_with(';') {
                    break;
                }
                count_braces(line, &mut depth, &mut opened);
                if opened && depth <= 0 {
                    break;
                }
                j += 1;
            }
            let lines = j - i + 1;
            if opened && lines > MAX_FUNCTION_LINES {
                found.push(format!("src/{}:{} fn {name}: {lines} lines", s.rel, i + 1));
            }
            i = if opened { j + 1 } else { i + 1 };
        }
    }
    found
}

fn fn_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.next() {
        match w {
            "pub" | "const" | "async" | "unsafe" | "extern" | "\"C\"" => {}
            _ if w.starts_with("pub(") => {}
            "fn" => {
                let name = words.next()?;
                return Some(name.split(['(', '<']).next().unwrap_or(name).to_string());
            }
            _ => return None,
        }
    }
    None
}

fn long_files(sources: &[Source]) -> Vec<String> {
    sources
        .iter()
        .filter_map(|s| {
            let last = s
                .code
                .iter()
                .rposition(|l| !l.trim().is_empty())
                .map_or(0, |i| i + 1);
            (last > MAX_FILE_LINES).then(|| format!("src/{}: {last} non-test lines", s.rel))
        })
        .collect()
}

#[test]
fn no_import_loop_between_modules_or_between_files_of_one_module() {
    let loops = import_loops(&load_sources());
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
}

#[test]
fn no_non_test_function_over_80_lines() {
    let long = long_functions(&load_sources());
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_non_test_source_file_over_600_lines() {
    let long = long_files(&load_sources());
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The checks themselves can fail: a loop, a long function and a long
/// file made up here are each found.
#[test]
fn the_structure_checks_find_a_planted_loop_a_long_function_and_a_long_file() {
    let file = |rel: &str, text: &str| Source {
        rel: rel.to_string(),
        code: strip_tests(text).0,
    };
    let body = "    let x = 1;\n".repeat(MAX_FUNCTION_LINES);
    let sources = vec![
        file("a/mod.rs", "mod b;\nmod c;\n"),
        file("a/b.rs", "use super::c::Thing;\npub struct Other;\n"),
        file("a/c.rs", &format!("pub struct Thing;\nfn f() {{\n{body}}}\n#[cfg(test)]\nmod tests {{\n    use super::super::b::Other;\n}}\n")),
        file("d.rs", &format!("{}use crate::a::c::Thing;\n", "//\n".repeat(MAX_FILE_LINES))),
    ];
    assert!(
        import_loops(&sources).is_empty(),
        "a test module's import is not a loop"
    );
    let loops = import_loops(&[
        file("a/mod.rs", "mod b;\nmod c;\n"),
        file("a/b.rs", "use super::c::Thing;\npub struct Other;\n"),
        file(
            "a/c.rs",
            "pub struct Thing;\nfn g() { let _ = crate::a::b::Other; }\n",
        ),
    ]);
    assert_eq!(loops, vec!["in src/a: b -> c, c -> b".to_string()]);
    let long = long_functions(&[file("a/c.rs", &format!("fn f() {{\n{body}}}\n"))]);
    assert_eq!(
        long,
        vec![format!(
            "src/a/c.rs:1 fn f: {} lines",
            MAX_FUNCTION_LINES + 2
        )]
    );
    let long = long_files(&[file("d.rs", &"let x = 1;\n".repeat(MAX_FILE_LINES + 1))]);
    assert_eq!(
        long,
        vec![format!("src/d.rs: {} non-test lines", MAX_FILE_LINES + 1)]
    );
}
