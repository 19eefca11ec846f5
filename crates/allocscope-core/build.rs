//! Builds the C heap probe (probe/probe.c) twice with the system C compiler:
//! stats mode and count mode, and the glibc shim (probe/glibc_shim.c).
//! `src/probe` embeds the three shared objects.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=probe/probe.c");
    println!("cargo:rerun-if-changed=probe/glibc_shim.c");
    println!("cargo:rerun-if-env-changed=CC");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    for (name, defines) in [("stats", &[][..]), ("count", &["-DALLOCSCOPE_COUNT"][..])] {
        let out = out_dir.join(format!("probe-{name}.so"));
        let status = Command::new(&compiler)
            .args(["-O2", "-g0", "-fPIC", "-shared", "-pthread", "-fexceptions"])
            .args(["-fvisibility=hidden", "-Wall", "-Wextra", "-Werror"])
            .args(defines)
            .arg("-o")
            .arg(&out)
            .arg("probe/probe.c")
            .arg("-ldl")
            .status()
            .unwrap_or_else(|e| panic!("running the C compiler '{compiler}': {e}"));
        assert!(
            status.success(),
            "compiling probe/probe.c ({name} mode) failed"
        );
    }
    // The shim's C++ deletes take parameters they do not use.
    let status = Command::new(&compiler)
        .args(["-O2", "-g0", "-fPIC", "-shared", "-fvisibility=hidden"])
        .args(["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror", "-o"])
        .arg(out_dir.join("glibc-shim.so"))
        .arg("probe/glibc_shim.c")
        .arg("-ldl")
        .status()
        .unwrap_or_else(|e| panic!("running the C compiler '{compiler}': {e}"));
    assert!(status.success(), "compiling probe/glibc_shim.c failed");
}
