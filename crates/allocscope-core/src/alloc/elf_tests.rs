//! ELF checks on this machine's real files: installed allocator libraries,
//! /bin/ls, a static binary built on the spot, and files that are not ELF.

use super::elf::{check_library, inspect_program, preload_ignored_reason, ProgramInfo};
use super::test_deps::require;
use std::path::Path;

#[test]
fn accepts_real_allocator_libraries() {
    for lib in [
        "/lib/x86_64-linux-gnu/libjemalloc.so.2",
        "/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
        "/lib/x86_64-linux-gnu/libmimalloc.so.2",
        "/lib/x86_64-linux-gnu/libc.so.6",
    ] {
        if Path::new(lib).exists() {
            assert_eq!(check_library(Path::new(lib)), Ok(()), "{lib}");
        }
    }
}

#[test]
fn rejects_files_that_are_not_allocator_libraries() {
    let not = |p: &str| check_library(Path::new(p)).map_err(|e| e.to_string());
    assert!(not("/etc/passwd").is_err_and(|e| e.contains("not an ELF shared object")));
    assert!(not("/bin/ls")
        .is_err_and(|e| e.contains("does not export malloc") || e.contains("not a shared object")));
    assert!(not("/no/such.so").is_err_and(|e| e.contains("does not exist")));
    assert!(not("/etc").is_err_and(|e| e.contains("not an ELF")));
    let libm = "/lib/x86_64-linux-gnu/libm.so.6";
    if Path::new(libm).exists() {
        assert!(not(libm).is_err_and(|e| e.contains("does not export malloc")));
    }
}

#[test]
fn inspects_a_dynamic_program() {
    let info = inspect_program(Path::new("/bin/ls")).expect("ls is ELF");
    assert!(info.is_elf && !info.is_static && !info.is_go && !info.is_setuid);
    assert!(info.needs.iter().any(|n| n == "libc.so.6"), "{info:?}");
    assert!(info.linked_allocators.is_empty());
    assert_eq!(preload_ignored_reason(&info), None);
    assert_eq!(inspect_program(Path::new("/etc/passwd")), None);
}

#[test]
fn static_program_ignores_preload() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("s.c");
    let bin = dir.path().join("s");
    std::fs::write(&src, "int main(void){return 0;}\n").expect("write");
    let built = std::process::Command::new("cc")
        .args(["-static", "-o"])
        .arg(&bin)
        .arg(&src)
        .status();
    if !require(
        built.is_ok_and(|s| s.success()),
        "a static libc (cc -static failed)",
        "libc6-dev",
    ) {
        return;
    }
    let info = inspect_program(&bin).expect("ELF");
    assert!(info.is_static && info.needs.is_empty());
    assert!(preload_ignored_reason(&info).is_some_and(|r| r.starts_with("statically linked")));
}

#[test]
fn setuid_and_go_programs_are_flagged() {
    let mut info = ProgramInfo {
        is_elf: true,
        is_setuid: true,
        ..Default::default()
    };
    assert!(preload_ignored_reason(&info).is_some_and(|r| r.contains("secure mode")));
    info.is_setuid = false;
    info.defines_malloc = true;
    assert!(preload_ignored_reason(&info).is_some_and(|r| r.contains("defines malloc itself")));
    info.defines_malloc = false;
    info.is_go = true;
    assert!(preload_ignored_reason(&info).is_some_and(|r| r.contains("Go runtime")));
}

#[test]
fn setuid_copy_of_a_program_is_flagged() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("ls");
    std::fs::copy("/bin/ls", &bin).expect("copy /bin/ls");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o4755)).expect("chmod");
    let info = inspect_program(&bin).expect("ELF");
    assert!(info.is_setuid);
    assert!(preload_ignored_reason(&info).is_some_and(|r| r.contains("secure mode")));
}

#[test]
fn go_program_is_recognised() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("m.go");
    let bin = dir.path().join("m");
    std::fs::write(&src, "package main\nfunc main() {}\n").expect("write");
    let built = std::process::Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .current_dir(dir.path())
        .env("GO111MODULE", "off")
        .status();
    if !require(
        built.is_ok_and(|s| s.success()),
        "a Go toolchain",
        "golang-go",
    ) {
        return;
    }
    let info = inspect_program(&bin).expect("ELF");
    assert!(info.is_go, "{info:?}");
}

#[test]
fn program_linking_jemalloc_itself_is_reported() {
    let lib = Path::new("/lib/x86_64-linux-gnu/libjemalloc.so.2");
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("j.c");
    let bin = dir.path().join("j");
    std::fs::write(
        &src,
        "#include <stdlib.h>\nint main(void){free(malloc(8));return 0;}\n",
    )
    .expect("write");
    let built = std::process::Command::new("cc")
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .arg("-Wl,--no-as-needed")
        .arg(lib)
        .status();
    if !require(
        lib.exists() && built.is_ok_and(|s| s.success()),
        &format!("a program linked against {}", lib.display()),
        "libjemalloc2",
    ) {
        return;
    }
    let info = inspect_program(&bin).expect("ELF");
    assert_eq!(info.linked_allocators, ["jemalloc"]);
    assert!(info.needs.iter().any(|n| n == "libjemalloc.so.2"));
}
