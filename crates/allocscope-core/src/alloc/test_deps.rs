//! For the unit tests that need something installed (an allocator, Go, a
//! static libc): under `CI=true` a missing one fails the test, naming the
//! package to install (`scripts/bootstrap --test` installs them all);
//! elsewhere the test says it skips.

/// True when `present`; otherwise fails under CI, or prints and is false.
pub fn require(present: bool, what: &str, package: &str) -> bool {
    if !present {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and {what} is missing: apt-get install {package}"
        );
        eprintln!("skipped: {what} is missing (apt-get install {package})");
    }
    present
}
