//! Helpers for the end-to-end tests: build the C workloads, run the real
//! binary in a scratch directory, read its JSON export.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

static BUILD_LOCK: Mutex<()> = Mutex::new(());
static HEAVY_LOCK: Mutex<()> = Mutex::new(());

/// Held by tests that load both cores for seconds (the heap probe's
/// every-allocator runs) and by the timing-sensitive tests that fail when a
/// neighbour does: they run one at a time.
pub fn one_heavy_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    HEAVY_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Compiles tests/programs/NAME.c (once per test binary run) and returns it.
pub fn program(name: &str) -> PathBuf {
    program_with(name, &[])
}

pub fn program_with(name: &str, extra_flags: &[&str]) -> PathBuf {
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let suffix = extra_flags.join("").replace(['-', ' '], "");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}{suffix}"));
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.c"));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&out) < modified(&source) {
        let status = Command::new("cc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&out)
            .arg(&source)
            .args(extra_flags)
            .status()
            .expect("cc runs");
        assert!(status.success(), "compiling {}", source.display());
    }
    out
}

/// Compiles tests/programs/NAME.cpp with c++ (once per test binary run).
pub fn cxx_program(name: &str) -> PathBuf {
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-cxx"));
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.cpp"));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&out) < modified(&source) {
        let status = Command::new("c++")
            .args(["-O2", "-pthread", "-o"])
            .arg(&out)
            .arg(&source)
            .status()
            .expect("c++ runs");
        assert!(status.success(), "compiling {}", source.display());
    }
    out
}

/// A scratch directory with its own store.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn db(&self) -> PathBuf {
        self.path("store.db")
    }

    /// Runs allocscope with the given arguments in the scratch directory.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("allocscope runs")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_allocscope"));
        command.args(args).current_dir(self.dir.path());
        command
    }

    /// `compare --full` (the complete report, whose parts the tests read)
    /// with the store and a JSON export in the scratch directory; returns
    /// the output and the parsed JSON.
    pub fn compare(&self, options: &[&str], workload: &[&str]) -> (Output, Value) {
        let json = self.path("out.json");
        let db = self.db();
        let mut args = vec![
            "compare",
            "--full",
            "--db",
            db.to_str().expect("utf-8"),
            "--export-json",
        ];
        args.push(json.to_str().expect("utf-8"));
        args.extend_from_slice(options);
        args.push("--");
        args.extend_from_slice(workload);
        let output = self.run(&args);
        let text = std::fs::read_to_string(&json).unwrap_or_else(|_| {
            panic!(
                "no JSON export; stderr:\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        (output, serde_json::from_str(&text).expect("valid JSON"))
    }

    /// The one screen (`report`'s default) of the store's last experiment:
    /// what `compare` without `--full` ends with.
    pub fn screen(&self) -> String {
        let db = self.db();
        let output = self.run(&["report", "--db", db.to_str().expect("utf-8")]);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    }
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Whether a dependency the test needs is here. When it is not: under
/// `CI=true` the test fails, naming what to install (`scripts/bootstrap
/// --test` installs all of it); elsewhere it says why it is skipped and the
/// caller returns.
pub fn require(present: bool, what: &str, install: &str) -> bool {
    if !present {
        fail_under_ci(what, install);
        eprintln!("skipped: {what} is missing: {install}");
    }
    present
}

/// Under `CI=true`, a missing dependency fails the test.
fn fail_under_ci(what: &str, install: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and {what} is missing: {install} (scripts/bootstrap --test does)");
    }
}

/// `require` for a program on PATH from a Debian package.
pub fn require_program(program: &str, package: &str) -> bool {
    require(
        on_path(program),
        &format!("`{program}`"),
        &format!("apt-get install {package}"),
    )
}

/// `require` for root, which some tests need to set up another user's
/// process or daemons.
pub fn require_root(why: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    require(root, &format!("root ({why})"), "run the tests as root")
}

/// Whether `program` is an executable on PATH.
pub fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The built-in allocators besides glibc: name, soname, Debian package.
const PACKAGED_ALLOCATORS: [(&str, &str, &str); 3] = [
    ("jemalloc", "libjemalloc.so.2", "libjemalloc2"),
    (
        "tcmalloc",
        "libtcmalloc_minimal.so.4",
        "libtcmalloc-minimal4",
    ),
    ("mimalloc", "libmimalloc.so.2", "libmimalloc2.0"),
];

/// The allocator libraries installed on this machine, by the names
/// allocscope uses. The "every installed allocator" tests need all four
/// under `CI=true`: one missing fails them, naming its package; elsewhere
/// they go on with those installed and say which they leave out.
pub fn installed_allocators() -> Vec<&'static str> {
    let listing = ldconfig_listing();
    let mut found = vec!["glibc"];
    for (name, soname, package) in PACKAGED_ALLOCATORS {
        if listing.contains(soname) {
            found.push(name);
        } else {
            let install = format!("apt-get install {package}");
            fail_under_ci(&format!("{name} ({soname})"), &install);
            eprintln!("testing without {name}: {install}");
        }
    }
    found
}

/// `require` for one packaged allocator.
pub fn require_allocator(name: &str) -> bool {
    let (_, soname, package) = PACKAGED_ALLOCATORS
        .into_iter()
        .find(|a| a.0 == name)
        .unwrap_or_else(|| panic!("{name} is not a packaged allocator"));
    require(
        ldconfig_listing().contains(soname),
        &format!("{name} ({soname})"),
        &format!("apt-get install {package}"),
    )
}

/// What `ldconfig -p` prints: the libraries the loader finds.
fn ldconfig_listing() -> String {
    let listing = Command::new("ldconfig")
        .arg("-p")
        .output()
        .expect("ldconfig runs");
    String::from_utf8_lossy(&listing.stdout).into_owned()
}

pub fn configs(json: &Value) -> &Vec<Value> {
    json["configs"].as_array().expect("configs array")
}

pub fn config<'a>(json: &'a Value, name: &str) -> &'a Value {
    configs(json)
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("config {name} in {json}"))
}

pub fn runs(config: &Value) -> &Vec<Value> {
    config["runs"].as_array().expect("runs array")
}

/// The `-a` arguments for every installed allocator.
pub fn every_allocator_args() -> Vec<String> {
    installed_allocators()
        .iter()
        .flat_map(|a| ["-a".to_string(), a.to_string()])
        .collect()
}

/// A copy of tests/programs/NAME.c's binary owned by nobody with the setuid
/// bit, so the kernel runs it in secure mode (its effective uid differs from
/// ours) and the loader ignores LD_PRELOAD. None when not root (`require`).
pub fn setuid_copy(scratch: &Scratch, name: &str) -> Option<PathBuf> {
    if !require_root("to make a set-user-ID program for another user") {
        return None;
    }
    let copy = scratch.path(&format!("setuid-{name}"));
    std::fs::copy(program(name), &copy).expect("copies");
    let chown = Command::new("chown").arg("nobody").arg(&copy).status();
    assert!(chown.is_ok_and(|s| s.success()), "chown nobody");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o4755)).expect("chmod u+s");
    std::fs::set_permissions(scratch.dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod dir");
    Some(copy)
}

/// Polls `done` every 50 ms until it holds or `limit` passes; its last answer.
pub fn wait_until(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    done()
}

/// The final screen (stdout, the progress being on stderr) fits one
/// screen: at most 40 lines, none over 100 columns.
pub fn fits_one_screen(screen: &str) {
    assert!(screen.lines().count() <= 40, "over 40 lines:\n{screen}");
    let wide: Vec<&str> = (screen.lines())
        .filter(|l| l.chars().count() > 100)
        .collect();
    assert!(wide.is_empty(), "over 100 columns: {wide:#?}\n{screen}");
}

/// Debian's libjemalloc-dev: the `libjemalloc.so` link and the header a
/// `-ljemalloc` build needs (the variant and served-tree tests build with it).
pub fn jemalloc_dev_present() -> bool {
    let link = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib",
    ]
    .iter()
    .any(|d| std::path::Path::new(d).join("libjemalloc.so").exists());
    let header = std::path::Path::new("/usr/include/jemalloc/jemalloc.h").exists();
    require(
        link && header,
        "jemalloc's header and libjemalloc.so (to build with -ljemalloc)",
        "apt-get install libjemalloc-dev",
    )
}
