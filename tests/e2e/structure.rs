//! The house's shape, checked on the source itself, over every crate of the
//! workspace (the root package's `src/` and each `crates/*/src`, each a crate
//! of its own): no import loop between modules or between the files of one
//! module (at any level of folders, the crate root's file included), no
//! `#[path]` attribute (a module's file is where its name says), no file
//! that no module declares (Rust skips it, tests and all); and the
//! crates' graph, read from their manifests: the pipeline's crates
//! (core, analyze, report, rounds) each depend only on the ones before them,
//! and each feature crate on the core, on pipeline crates, and on no other
//! feature crate.
//!
//! The reading is textual, like a reviewer's: every path in non-test code
//! (in `use` lines, braces expanded, and inline) that starts with `crate`,
//! `super`, `self` or a name the file has in scope (a `mod child;` it
//! declares, a name it imports: 2018-style `use child::X`, `child::f()`) is
//! resolved, within its crate, to the file that defines what it names,
//! following a module's imports and re-exports to the file they come from.
//! A path into another crate of the workspace (`allocscope_core::...`,
//! or a name the root package re-exports from one) is a crate edge, not a
//! file edge. Files are named by their path from the repository's root.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The pipeline's first crate, which every other crate builds on.
const CORE: &str = "allocscope-core";

/// The pipeline's crates, in the order data flows through them: each may
/// depend only on the ones before it.
const PIPELINE: [&str; 4] = [
    CORE,
    "allocscope-analyze",
    "allocscope-report",
    "allocscope-rounds",
];

/// A source file with its test-only parts blanked out.
struct Source {
    /// Path from the repository's root, with `/` separators.
    rel: String,
    /// Its crate's source folder (`src`, `crates/NAME/src`).
    krate: String,
    /// Non-test code, line for line (test items become empty lines).
    code: Vec<String>,
}

impl Source {
    fn new(rel: &str, code: Vec<String>) -> Source {
        let segs: Vec<&str> = rel.split('/').collect();
        let at = segs.iter().position(|s| *s == "src").unwrap_or(0);
        Source {
            rel: rel.to_string(),
            krate: segs[..=at].join("/"),
            code,
        }
    }

    /// Its path within its crate's source folder.
    fn in_crate(&self) -> &str {
        self.rel
            .strip_prefix(&self.krate)
            .map_or(self.rel.as_str(), |r| r.trim_start_matches('/'))
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The workspace's crates: the root package and each `crates/*`, as folders
/// from the repository's root (`""` for the root package).
fn package_dirs(root: &Path) -> Vec<String> {
    let mut dirs = vec![String::new()];
    let mut members: Vec<String> = fs::read_dir(root.join("crates"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().join("Cargo.toml").is_file())
                .map(|e| format!("crates/{}", e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    members.sort();
    dirs.extend(members);
    dirs
}

/// The name code uses for each crate of the workspace (`allocscope_core`).
fn crate_idents(root: &Path) -> BTreeSet<String> {
    package_dirs(root)
        .iter()
        .map(|d| match d.rsplit('/').next() {
            Some(name) if !name.is_empty() => name.replace('-', "_"),
            _ => "allocscope".to_string(),
        })
        .collect()
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

/// Every non-test source file of every crate of the workspace.
fn load_sources() -> Vec<Source> {
    let root = repo_root();
    let mut paths = Vec::new();
    for dir in package_dirs(&root) {
        rust_files(&root.join(&dir).join("src"), &mut paths);
    }
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
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        sources.push((path.clone(), Source::new(&rel, code)));
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

/// The module path of a file within its crate, as a folder: `""` for the
/// crate root, `a/b` for `a/b.rs` and `a/b/mod.rs`.
fn module_path(in_crate: &str) -> String {
    module_dir(Path::new(in_crate))
        .to_string_lossy()
        .replace('\\', "/")
}

fn parent_of(dir: &str) -> String {
    dir.rsplit_once('/')
        .map_or(String::new(), |(p, _)| p.to_string())
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() || name.is_empty() {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// One name a `use` brings in: the path it stands for, and the name the
/// file knows it by (its alias; `None` for `_` and globs).
#[derive(Debug, Clone, PartialEq)]
struct UseItem {
    segs: Vec<String>,
    name: Option<String>,
    glob: bool,
}

/// The byte ranges of `use` statements in `text` (possibly spanning lines).
fn use_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(at) = find_use(&text[from..]) {
        let at = from + at;
        let end = text[at..].find(';').map_or(text.len(), |e| at + e);
        ranges.push((at, end));
        from = end;
    }
    ranges
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

/// Every `use` of non-test code, braces expanded.
fn use_items(code: &[String]) -> Vec<UseItem> {
    let text = code.join("\n");
    let mut items = Vec::new();
    for (at, end) in use_ranges(&text) {
        let body = text[at..end].trim_start_matches("use");
        // `a as b` keeps its alias as `a@b`; other spaces go.
        let body = body
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" as ", "@")
            .replace(' ', "");
        expand_use(&[], &body, &mut items);
    }
    items
}

/// Expands `a::{b, c::{d, e as f}}` under `prefix` into one item per name.
fn expand_use(prefix: &[String], body: &str, out: &mut Vec<UseItem>) {
    let body = body.trim_start_matches("::");
    let segments = |s: &str| -> Vec<String> {
        s.split("::")
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    if let Some(open) = body.find('{') {
        let mut head = prefix.to_vec();
        head.extend(segments(&body[..open]));
        let inner = &body[open + 1..body.rfind('}').unwrap_or(body.len())];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&head, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&head, &inner[start..], out);
    } else if !body.is_empty() {
        let (path, alias) = match body.split_once('@') {
            Some((p, a)) => (p, Some(a.to_string())),
            None => (body, None),
        };
        let mut segs = prefix.to_vec();
        segs.extend(segments(path));
        // `a::{self}` is `a`.
        if segs.len() > 1 && segs.last().is_some_and(|s| s == "self") {
            segs.pop();
        }
        let glob = segs.last().is_some_and(|s| s == "*");
        if glob {
            segs.pop();
        }
        let name = alias
            .or_else(|| segs.last().cloned())
            .filter(|n| !glob && n != "_");
        if !segs.is_empty() {
            out.push(UseItem { segs, name, glob });
        }
    }
}

/// The modules a file declares (`mod child;`, `pub(crate) mod child { .. }`).
fn declared_modules(code: &[String]) -> Vec<String> {
    code.iter()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let mut w = words.next()?;
            if w == "pub" || w.starts_with("pub(") {
                w = words.next()?;
            }
            if w != "mod" {
                return None;
            }
            let name = words.next()?.trim_end_matches([';', '{']);
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

/// The names a file defines (functions, types, constants), at any depth.
fn defined_names(code: &[String]) -> BTreeSet<String> {
    const KINDS: [&str; 9] = [
        "fn",
        "struct",
        "enum",
        "trait",
        "type",
        "const",
        "static",
        "union",
        "macro_rules!",
    ];
    let mut names = BTreeSet::new();
    for line in code {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            if KINDS.contains(&pair[0]) {
                let name = pair[1].split(|c: char| !(c.is_alphanumeric() || c == '_'));
                if let Some(name) = name.into_iter().next().filter(|n| !n.is_empty()) {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

/// Every path of non-test code that may name something of this crate or
/// another crate of the workspace, as segments: those of `use` statements,
/// and inline ones that start with `crate`, `super`, `self` or one of
/// `names` (what the file has in scope, and the workspace's crates).
fn paths_in(code: &[String], names: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut paths: Vec<Vec<String>> = use_items(code).into_iter().map(|u| u.segs).collect();
    let mut text = code.join("\n");
    // The `use` lines are read above, braces and all; blank them so that
    // `a::{b::C}` is not read again as a path `b::C` of this file.
    for (at, end) in use_ranges(&text.clone()) {
        text.replace_range(at..end, &" ".repeat(end - at));
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let tail = &text[i..];
        let boundary = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        let ident = tail.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if !(boundary && ident) {
            i += tail.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        let segs: Vec<String> = tail[..len]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let first = segs.first().map(String::as_str).unwrap_or("");
        let known = matches!(first, "crate" | "super" | "self") || names.contains(first);
        if tail[..len].contains("::") && known {
            paths.push(segs);
        }
        i += len;
    }
    paths.retain(|p| !p.is_empty());
    paths
}

/// What a file has in scope: the modules it declares and the names it
/// imports, each as the path it stands for from that file.
#[derive(Default)]
struct Scope {
    names: BTreeMap<String, Vec<String>>,
    /// The crate a glob import of another crate of the workspace brings
    /// everything of (`pub use allocscope_core::*`).
    crate_glob: Option<String>,
    defined: BTreeSet<String>,
}

/// What a path names: a file of its own crate (within the crate's source
/// folder) or another crate of the workspace.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    File(String),
    Crate(String),
}

/// Resolves the paths of one crate's files to files of that crate.
struct Resolver<'a> {
    /// Every non-test file, within the crate's source folder.
    files: BTreeSet<String>,
    scopes: BTreeMap<String, Scope>,
    /// The workspace's crates as code names them (`allocscope_core`).
    crates: &'a BTreeSet<String>,
}

impl<'a> Resolver<'a> {
    fn new(sources: &[&Source], crates: &'a BTreeSet<String>) -> Self {
        let files = sources.iter().map(|s| s.in_crate().to_string()).collect();
        let mut scopes = BTreeMap::new();
        for s in sources {
            let mut scope = Scope {
                defined: defined_names(&s.code),
                ..Scope::default()
            };
            for child in declared_modules(&s.code) {
                scope
                    .names
                    .insert(child.clone(), vec!["self".to_string(), child]);
            }
            for item in use_items(&s.code) {
                let first = item.segs.first().cloned().unwrap_or_default();
                if item.glob && crates.contains(&first) {
                    scope.crate_glob = Some(first);
                }
                // A module and a function may share a name (`mod install;
                // pub use install::install;`): the module is the one a
                // path goes through.
                if let Some(name) = item.name {
                    scope.names.entry(name).or_insert(item.segs);
                }
            }
            scopes.insert(s.in_crate().to_string(), scope);
        }
        Resolver {
            files,
            scopes,
            crates,
        }
    }

    /// The crate root's file as seen from `from`: `main.rs` for itself, else
    /// `lib.rs` if there is one.
    fn root_file(&self, from: &str) -> String {
        if from == "main.rs" || !self.files.contains("lib.rs") {
            "main.rs".to_string()
        } else {
            "lib.rs".to_string()
        }
    }

    /// The module file (`x.rs` or `x/mod.rs`) of folder path `dir`.
    fn module_file(&self, dir: &str, root: &str) -> Option<String> {
        if dir.is_empty() {
            return Some(root.to_string());
        }
        [format!("{dir}.rs"), format!("{dir}/mod.rs")]
            .into_iter()
            .find(|f| self.files.contains(f))
    }

    /// Which file or crate a path used in file `from` names.
    fn resolve(&self, from: &str, segs: &[String]) -> Option<Target> {
        self.resolve_at(from, segs, 0)
    }

    fn resolve_at(&self, from: &str, segs: &[String], depth: usize) -> Option<Target> {
        // Imports lead on to imports; a cycle of them does not compile.
        if depth > 16 {
            return None;
        }
        let root = self.root_file(from);
        let (mut dir, rest) = match segs.first().map(String::as_str) {
            Some("crate") => (String::new(), &segs[1..]),
            Some("self") => (module_path(from), &segs[1..]),
            Some("super") => {
                let mut dir = module_path(from);
                let mut rest = segs;
                while rest.first().is_some_and(|s| s == "super") {
                    dir = parent_of(&dir);
                    rest = &rest[1..];
                }
                (dir, rest)
            }
            Some(first) => {
                let via = self.scopes.get(from).and_then(|s| s.names.get(first));
                if let Some(via) = via.filter(|v| v.first().is_some_and(|f| f != first)) {
                    let full: Vec<String> = via.iter().chain(&segs[1..]).cloned().collect();
                    return self.resolve_at(from, &full, depth + 1);
                }
                return self
                    .crates
                    .contains(first)
                    .then(|| Target::Crate(first.to_string()));
            }
            None => return None,
        };
        for (i, seg) in rest.iter().enumerate() {
            let child = join(&dir, seg);
            if self.module_file(&child, &root).is_some() {
                dir = child;
                continue;
            }
            // An item of the module `dir`: where it comes from, if imported.
            let module = self.module_file(&dir, &root)?;
            let Some(scope) = self.scopes.get(&module) else {
                return Some(Target::File(module));
            };
            if let Some(via) = scope.names.get(seg) {
                let full: Vec<String> = via.iter().chain(&rest[i + 1..]).cloned().collect();
                return self
                    .resolve_at(&module, &full, depth + 1)
                    .or(Some(Target::File(module)));
            }
            if let Some(krate) = scope
                .crate_glob
                .as_ref()
                .filter(|_| !scope.defined.contains(seg))
            {
                return Some(Target::Crate(krate.clone()));
            }
            return Some(Target::File(module));
        }
        self.module_file(&dir, &root).map(Target::File)
    }
}

/// Every file-to-file import edge of non-test code, per crate (its source
/// folder), between paths within that folder; `crates` are the names code
/// gives the workspace's crates.
fn file_edges_with(
    sources: &[Source],
    crates: &BTreeSet<String>,
) -> BTreeMap<String, BTreeSet<(String, String)>> {
    let mut by_crate: BTreeMap<&str, Vec<&Source>> = BTreeMap::new();
    for s in sources {
        by_crate.entry(&s.krate).or_default().push(s);
    }
    let mut all = BTreeMap::new();
    for (krate, files) in by_crate {
        let resolver = Resolver::new(&files, crates);
        let mut edges = BTreeSet::new();
        for s in files {
            let from = s.in_crate();
            let mut names: BTreeSet<String> = crates.clone();
            if let Some(scope) = resolver.scopes.get(from) {
                names.extend(scope.names.keys().cloned());
            }
            for segs in paths_in(&s.code, &names) {
                if let Some(Target::File(target)) = resolver.resolve(from, &segs) {
                    if target != from {
                        edges.insert((from.to_string(), target));
                    }
                }
            }
        }
        all.insert(krate.to_string(), edges);
    }
    all
}

/// Edges between nodes of one folder level, named by their paths within
/// the crate: a node is a direct file or a direct sub-folder of `dir` (with
/// `x.rs` and `x/` as one node, named `x.rs`, else `x/`), and the module's
/// own file `dir.rs` when it has one (as `mod.rs` is a file of `dir`).
fn edges_at(
    dir: &str,
    files: &BTreeSet<String>,
    file_edges: &BTreeSet<(String, String)>,
) -> BTreeSet<(String, String)> {
    let node = |file: &str| -> Option<String> {
        if !dir.is_empty() && file == format!("{dir}.rs") {
            return Some(file.to_string());
        }
        let inner = if dir.is_empty() {
            file
        } else {
            file.strip_prefix(&format!("{dir}/"))?
        };
        let first = inner.split('/').next().unwrap_or(inner);
        let stem = join(dir, first.trim_end_matches(".rs"));
        let module = format!("{stem}.rs");
        Some(if files.contains(&module) {
            module
        } else {
            format!("{stem}/")
        })
    };
    file_edges
        .iter()
        .filter_map(|(a, b)| Some((node(a)?, node(b)?)))
        .filter(|(a, b)| a != b)
        .collect()
}

/// The groups of nodes that reach each other (the strongly connected
/// components of more than one node), each as the edges inside it.
fn circles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<(String, String)>> {
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
        found.push(
            edges
                .iter()
                .filter(|(a, b)| group.contains(a) && group.contains(b))
                .cloned()
                .collect(),
        );
        done.extend(group);
    }
    found
}

/// Every import loop, each as the edges inside it, its files and folders
/// named from the repository's root.
fn import_loops(sources: &[Source]) -> Vec<String> {
    import_loops_with(sources, &crate_idents(&repo_root()))
}

fn import_loops_with(sources: &[Source], crates: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (krate, edges) in file_edges_with(sources, crates) {
        let in_crate = sources.iter().filter(|s| s.krate == krate);
        let files: BTreeSet<String> = in_crate.clone().map(|s| s.in_crate().to_string()).collect();
        let mut dirs: BTreeSet<String> = BTreeSet::new();
        dirs.insert(String::new());
        for s in in_crate {
            let mut p = Path::new(s.in_crate()).parent();
            while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
                dirs.insert(d.to_string_lossy().replace('\\', "/"));
                p = d.parent();
            }
        }
        for dir in dirs {
            for circle in circles(&edges_at(&dir, &files, &edges)) {
                let inside: Vec<String> = circle
                    .iter()
                    .map(|(a, b)| format!("{krate}/{a} -> {krate}/{b}"))
                    .collect();
                found.push(inside.join(", "));
            }
        }
    }
    found
}

/// Every `#[path]` attribute in the crates' sources, test code included:
/// a module's file is the one its name gives (`x/tests.rs` for a test
/// module of `x.rs`), so a reader finds it where the compiler would.
fn path_attributes(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .flat_map(|(rel, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.trim_start().starts_with("#[path"))
                .map(move |(i, l)| format!("{rel}:{}: {}", i + 1, l.trim()))
        })
        .collect()
}

/// The files no module declares: a `name.rs` (or `name/mod.rs`) whose
/// parent module (`lib.rs`/`main.rs` at a crate's `src/` root, else the
/// folder's own `dir.rs` or `dir/mod.rs`) has no `mod name;`. Rust never
/// compiles such a file, tests in it included, and says nothing.
fn undeclared_files(files: &[(String, String)]) -> Vec<String> {
    let text_of = |rel: &str| files.iter().find(|(r, _)| r == rel).map(|(_, t)| t);
    let declares = |parent: &str, name: &str| {
        text_of(parent).is_some_and(|text| {
            text.lines().any(|l| {
                let l = l
                    .trim_start()
                    .trim_start_matches("pub ")
                    .trim_start_matches("pub(crate) ");
                l.strip_prefix("mod ")
                    .is_some_and(|rest| rest.trim_end() == format!("{name};"))
            })
        })
    };
    files
        .iter()
        .filter_map(|(rel, _)| {
            let (dir, file) = rel.rsplit_once('/')?;
            if matches!(file, "lib.rs" | "main.rs") && dir.ends_with("src") {
                return None;
            }
            // `a/b/mod.rs` is module `b` of folder `a`; `a/b/c.rs` module `c` of `a/b`.
            let (dir, name) = match file {
                "mod.rs" => dir.rsplit_once('/')?,
                _ => (dir, file.strip_suffix(".rs")?),
            };
            let parents = if dir.ends_with("src") {
                vec![format!("{dir}/lib.rs"), format!("{dir}/main.rs")]
            } else {
                vec![format!("{dir}.rs"), format!("{dir}/mod.rs")]
            };
            (!parents.iter().any(|p| declares(p, name))).then(|| rel.clone())
        })
        .collect()
}

/// Every Rust file of every crate's `src/`, as (path from the
/// repository's root, text).
fn all_source_texts() -> Vec<(String, String)> {
    let root = repo_root();
    let mut paths = Vec::new();
    for dir in package_dirs(&root) {
        rust_files(&root.join(&dir).join("src"), &mut paths);
    }
    paths
        .iter()
        .map(|path| {
            let text = fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            let rel = path.strip_prefix(&root).unwrap_or(path);
            (rel.to_string_lossy().replace('\\', "/"), text)
        })
        .collect()
}

/// A manifest's package name and the crates it depends on, in any
/// dependency table (`[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`, a target's, `[dependencies.NAME]`), each with
/// its table.
fn manifest_deps(text: &str) -> (Option<String>, Vec<(String, String)>) {
    let mut name = None;
    let mut deps = Vec::new();
    let mut table = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header.trim_end_matches(']').trim().to_string();
            // `[dependencies.NAME]`: the table names the crate.
            for kind in ["dependencies.", "dev-dependencies.", "build-dependencies."] {
                if let Some((head, dep)) = table.split_once(kind) {
                    if head.is_empty() || head.ends_with('.') {
                        deps.push((
                            format!("{head}{}", kind.trim_end_matches('.')),
                            dep.to_string(),
                        ));
                    }
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_matches('"');
        if table == "package" && key == "name" {
            name = Some(value.trim().trim_matches('"').to_string());
        }
        if table.ends_with("dependencies") {
            let dep = key.split('.').next().unwrap_or(key).trim_matches('"');
            deps.push((table.clone(), dep.to_string()));
        }
    }
    (name, deps)
}

/// What breaks the crates' graph: a pipeline crate depending on a later
/// one or on a feature, a feature crate not depending on the core or
/// depending on another feature crate. `manifests` are (path, text) of
/// `crates/*`.
fn crate_graph_problems(manifests: &[(String, String)]) -> Vec<String> {
    let ours = |dep: &str| dep == "allocscope" || dep.starts_with("allocscope-");
    let stage = |name: &str| PIPELINE.iter().position(|p| *p == name);
    let mut found = Vec::new();
    for (path, text) in manifests {
        let (name, deps) = manifest_deps(text);
        let Some(name) = name else {
            found.push(format!("{path}: no package name"));
            continue;
        };
        for (table, dep) in deps.iter().filter(|(_, d)| ours(d) && *d != name) {
            match (stage(&name), stage(dep)) {
                (Some(own), Some(theirs)) if theirs > own => found.push(format!(
                    "{path}: pipeline crate {name} depends on {dep} ([{table}]), which comes after it"
                )),
                (Some(_), None) => found.push(format!(
                    "{path}: pipeline crate {name} depends on {dep} ([{table}]); the pipeline names no feature"
                )),
                (None, None) => found.push(format!(
                    "{path}: feature crate {name} depends on {dep} ([{table}]); a feature builds on the pipeline alone"
                )),
                _ => {}
            }
        }
        let on_core = deps.iter().any(|(t, d)| t == "dependencies" && d == CORE);
        if name != CORE && !on_core {
            found.push(format!("{path}: {name} does not depend on {CORE}"));
        }
    }
    found
}

/// `crates/*/Cargo.toml`, as (path from the repository's root, text).
fn member_manifests() -> Vec<(String, String)> {
    let root = repo_root();
    package_dirs(&root)
        .into_iter()
        .filter(|d| !d.is_empty())
        .map(|d| {
            let path = format!("{d}/Cargo.toml");
            let text = fs::read_to_string(root.join(&path))
                .unwrap_or_else(|e| panic!("reading {path}: {e}"));
            (path, text)
        })
        .collect()
}

#[test]
fn no_import_loop_between_modules_or_between_files_of_one_module() {
    let loops = import_loops(&load_sources());
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
}

#[test]
fn no_module_is_read_from_a_file_named_by_a_path_attribute() {
    let found = path_attributes(&all_source_texts());
    assert!(
        found.is_empty(),
        "#[path] attributes (move the file where its module's name puts it):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_source_file_is_a_module_some_file_declares() {
    let found = undeclared_files(&all_source_texts());
    assert!(
        found.is_empty(),
        "files no module declares (never compiled, their tests never run):\n{}",
        found.join("\n")
    );
    // Planted: a folder's file its parent does not declare.
    let planted = [
        ("crates/x/src/lib.rs", "mod a;\n"),
        (
            "crates/x/src/a/mod.rs",
            "mod b;\n#[cfg(test)]\nmod tests;\n",
        ),
        ("crates/x/src/a/b.rs", ""),
        ("crates/x/src/a/tests.rs", ""),
        ("crates/x/src/a/orphan.rs", "#[test]\nfn never_runs() {}\n"),
    ]
    .map(|(r, t)| (r.to_string(), t.to_string()));
    assert_eq!(undeclared_files(&planted), ["crates/x/src/a/orphan.rs"]);
}

#[test]
fn the_pipeline_flows_one_way_and_each_feature_builds_on_it_alone() {
    let manifests = member_manifests();
    assert!(
        manifests.iter().any(|(p, _)| p.contains(CORE)),
        "{CORE} is a member: {manifests:?}"
    );
    let problems = crate_graph_problems(&manifests);
    assert!(problems.is_empty(), "crate graph:\n{}", problems.join("\n"));
}

/// Every crate of the workspace is read: the root package's `src/` and
/// each `crates/*/src`.
#[test]
fn the_structure_checks_read_every_crate_of_the_workspace() {
    let sources = load_sources();
    let read: BTreeSet<&str> = sources.iter().map(|s| s.krate.as_str()).collect();
    for dir in package_dirs(&repo_root()) {
        let src = join(&dir, "src");
        assert!(read.contains(src.as_str()), "{src} not read: {read:?}");
    }
}

fn planted(rel: &str, text: &str) -> Source {
    Source::new(rel, strip_tests(text).0)
}

fn planted_loops(files: &[(&str, &str)]) -> Vec<String> {
    let sources: Vec<Source> = files.iter().map(|(r, t)| planted(r, t)).collect();
    let crates = ["allocscope_demo"].map(str::to_string).into();
    import_loops_with(&sources, &crates)
}

/// The checks themselves can fail: a loop and a `#[path]` attribute made
/// up here are each found.
#[test]
fn the_structure_checks_find_a_planted_loop_and_a_path_attribute() {
    let c = "pub struct Thing;\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use super::super::b::Other;\n}\n";
    let d = "use crate::a::c::Thing;\n";
    assert!(
        planted_loops(&[
            ("src/lib.rs", "mod a;\nmod d;\n"),
            ("src/a/mod.rs", "mod b;\nmod c;\n"),
            ("src/a/b.rs", "use super::c::Thing;\npub struct Other;\n"),
            ("src/a/c.rs", c),
            ("src/d.rs", d),
        ])
        .is_empty(),
        "a test module's import is not a loop"
    );
    let loops = planted_loops(&[
        ("src/a/mod.rs", "mod b;\nmod c;\n"),
        ("src/a/b.rs", "use super::c::Thing;\npub struct Other;\n"),
        (
            "src/a/c.rs",
            "pub struct Thing;\nfn g() { let _ = crate::a::b::Other; }\n",
        ),
    ]);
    assert_eq!(
        loops,
        vec!["src/a/b.rs -> src/a/c.rs, src/a/c.rs -> src/a/b.rs"]
    );
    let planted = [(
        "src/a/c.rs".to_string(),
        "#[cfg(test)]\n#[path = \"c_tests.rs\"]\nmod tests;\n".to_string(),
    )];
    assert_eq!(
        path_attributes(&planted),
        vec!["src/a/c.rs:2: #[path = \"c_tests.rs\"]"]
    );
}

/// 2018-style paths are read: a module that imports from the child it
/// declares (`use child::X`, or `child::f()` inline) while the child
/// imports from it is a loop, in a crate of `crates/` and at a crate root.
#[test]
fn the_structure_checks_find_a_planted_use_child_loop() {
    let parent = "mod child;\nuse child::Thing;\npub struct Shared;\n";
    let child = "use super::Shared;\npub struct Thing;\n";
    let loops = planted_loops(&[
        ("crates/demo/src/lib.rs", "mod a;\n"),
        ("crates/demo/src/a/mod.rs", parent),
        ("crates/demo/src/a/child.rs", child),
    ]);
    assert_eq!(
        loops,
        vec!["crates/demo/src/a/child.rs -> crates/demo/src/a/mod.rs, crates/demo/src/a/mod.rs -> crates/demo/src/a/child.rs"]
    );
    // Inline, at the crate root, through `use self::child` and a use of
    // the root's item from a grandchild.
    let loops = planted_loops(&[
        (
            "crates/demo/src/lib.rs",
            "mod child;\nuse self::child as inner;\npub fn mark() {}\nfn run() { inner::go(); }\n",
        ),
        (
            "crates/demo/src/child.rs",
            "mod deep;\npub fn go() { deep::f() }\n",
        ),
        (
            "crates/demo/src/child/deep.rs",
            "use crate::mark;\npub fn f() { mark() }\n",
        ),
    ]);
    assert_eq!(
        loops,
        vec!["crates/demo/src/child.rs -> crates/demo/src/lib.rs, crates/demo/src/lib.rs -> crates/demo/src/child.rs"]
    );
    // A module in `x.rs` whose folder's file imports from it.
    let loops = planted_loops(&[
        ("src/lib.rs", "mod x;\n"),
        (
            "src/x.rs",
            "mod y;\npub struct Args;\npub fn run() { y::go() }\n",
        ),
        ("src/x/y.rs", "use super::Args;\npub fn go() {}\n"),
    ]);
    assert_eq!(
        loops,
        vec!["src/x.rs -> src/x/y.rs, src/x/y.rs -> src/x.rs"]
    );
    // The child importing from a sibling, not from its parent, is no loop;
    // nor is a path into another crate of the workspace, also through a
    // name the root re-exports from it.
    assert!(planted_loops(&[
        (
            "crates/demo/src/lib.rs",
            "pub use allocscope_demo::*;\nmod a;\nmod b;\nuse a::Thing;\n"
        ),
        (
            "crates/demo/src/a.rs",
            "use crate::b::Shared;\nuse crate::store::Store;\npub struct Thing;\n"
        ),
        (
            "crates/demo/src/b.rs",
            "pub struct Shared;\nfn f() { allocscope_demo::g() }\n"
        ),
    ])
    .is_empty());
}

/// The crates' graph is read from manifests: the core depending on a
/// feature, a feature on another and a feature without the core are found.
#[test]
fn the_crate_graph_check_finds_a_planted_dependency_on_a_feature() {
    let manifest = |name: &str, deps: &str| {
        (
            format!("crates/{name}/Cargo.toml"),
            format!("[package]\nname = \"{name}\"\n\n[dependencies]\n{deps}\nanyhow.workspace = true\n\n[dev-dependencies]\ntempfile.workspace = true\n"),
        )
    };
    let fine = [
        manifest(CORE, "serde = \"1\""),
        manifest("allocscope-tune", "allocscope-core.workspace = true"),
        manifest(
            "allocscope-record",
            "allocscope-core = { path = \"../allocscope-core\" }\nallocscope-rounds.workspace = true",
        ),
        manifest(
            "allocscope-report",
            "allocscope-core.workspace = true\nallocscope-analyze.workspace = true",
        ),
    ];
    assert_eq!(crate_graph_problems(&fine), Vec::<String>::new());
    let (path, text) = manifest(CORE, "allocscope-tune.workspace = true");
    let text =
        format!("{text}\n[dev-dependencies.allocscope-record]\npath = \"../allocscope-record\"\n");
    let broken = [
        (path, text),
        manifest(
            "allocscope-tune",
            "allocscope-core.workspace = true\nallocscope-cluster = { workspace = true }",
        ),
        manifest("allocscope-record", ""),
        manifest(
            "allocscope-analyze",
            "allocscope-core.workspace = true\nallocscope-report.workspace = true",
        ),
    ];
    assert_eq!(
        crate_graph_problems(&broken),
        vec![
            "crates/allocscope-core/Cargo.toml: pipeline crate allocscope-core depends on allocscope-tune ([dependencies]); the pipeline names no feature",
            "crates/allocscope-core/Cargo.toml: pipeline crate allocscope-core depends on allocscope-record ([dev-dependencies]); the pipeline names no feature",
            "crates/allocscope-tune/Cargo.toml: feature crate allocscope-tune depends on allocscope-cluster ([dependencies]); a feature builds on the pipeline alone",
            "crates/allocscope-record/Cargo.toml: allocscope-record does not depend on allocscope-core",
            "crates/allocscope-analyze/Cargo.toml: pipeline crate allocscope-analyze depends on allocscope-report ([dependencies]), which comes after it",
        ]
    );
}
