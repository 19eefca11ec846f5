//! ELF checks on the libraries we preload and the programs we launch: is a
//! user's `.so` really a loadable allocator for this host, and will a
//! program honour LD_PRELOAD at all (static, setuid and Go programs do not,
//! or not for most of their memory)? Also which allocators a program links
//! itself, so a result is not credited to the wrong allocator.

use super::error::AllocError;
use super::known::allocator_of_library;
use goblin::elf::header::{ET_DYN, ET_EXEC, ET_REL};
use goblin::elf::Elf;
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The Go toolchain's build-id note type (name "Go").
const NT_GO_BUILD_ID: u32 = 4;

/// What matters about a program for preloading an allocator into it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProgramInfo {
    pub is_elf: bool,
    /// No PT_INTERP: the dynamic loader never runs.
    pub is_static: bool,
    /// Set-user-ID or set-group-ID bit.
    pub is_setuid: bool,
    /// Built by the Go toolchain.
    pub is_go: bool,
    /// The executable defines and exports `malloc` itself (an allocator
    /// linked in statically, as many C++ and Rust servers do): the loader
    /// finds the executable's definition before any preloaded library's.
    pub defines_malloc: bool,
    /// Known allocators among the DT_NEEDED entries (`jemalloc`, ...).
    pub linked_allocators: Vec<String>,
    /// All DT_NEEDED entries.
    pub needs: Vec<String>,
}

/// `e_machine` of the host, to reject other-architecture libraries.
fn host_machine() -> Option<u16> {
    use goblin::elf::header::*;
    Some(match std::env::consts::ARCH {
        "x86_64" | "x86" => {
            if cfg!(target_pointer_width = "64") {
                EM_X86_64
            } else {
                EM_386
            }
        }
        "aarch64" => EM_AARCH64,
        "arm" => EM_ARM,
        "riscv64" | "riscv32" => EM_RISCV,
        "powerpc64" => EM_PPC64,
        "powerpc" => EM_PPC,
        "s390x" => EM_S390,
        "loongarch64" => EM_LOONGARCH,
        _ => return None,
    })
}

fn describe(is_64: bool, machine: u16) -> String {
    let bits = if is_64 { 64 } else { 32 };
    format!(
        "{bits}-bit {}",
        goblin::elf::header::machine_to_str(machine)
    )
}

fn read(path: &Path) -> Result<Vec<u8>, AllocError> {
    std::fs::read(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => AllocError::LibraryMissing {
            path: path.to_path_buf(),
        },
        // Reading a directory fails with "Is a directory": not a library either.
        _ if path.is_dir() => AllocError::NotElf {
            path: path.to_path_buf(),
        },
        _ => AllocError::LibraryUnreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        },
    })
}

/// Checks that `path` is a shared object this host can load and that it
/// exports `malloc`, i.e. preloading it can replace the allocator.
pub(crate) fn check_library(path: &Path) -> Result<(), AllocError> {
    let bytes = read(path)?;
    let not_elf = || AllocError::NotElf {
        path: path.to_path_buf(),
    };
    if !bytes.starts_with(b"\x7fELF") {
        return Err(not_elf());
    }
    let elf = Elf::parse(&bytes).map_err(|_| not_elf())?;
    if elf.header.e_type != ET_DYN {
        let kind = match elf.header.e_type {
            ET_EXEC => "executable",
            ET_REL => "object file (.o)",
            _ => "file of another type",
        };
        return Err(AllocError::NotSharedObject {
            path: path.to_path_buf(),
            kind: kind.to_string(),
        });
    }
    let host_64 = cfg!(target_pointer_width = "64");
    let machine_ok = host_machine().is_none_or(|m| m == elf.header.e_machine);
    if elf.is_64 != host_64 || !machine_ok {
        return Err(AllocError::WrongArchitecture {
            path: path.to_path_buf(),
            found: describe(elf.is_64, elf.header.e_machine),
            host: describe(host_64, host_machine().unwrap_or(elf.header.e_machine)),
        });
    }
    let exports_malloc = elf
        .dynsyms
        .iter()
        .any(|sym| sym.st_shndx != 0 && elf.dynstrtab.get_at(sym.st_name) == Some("malloc"));
    if !exports_malloc {
        return Err(AllocError::NoMalloc {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Reads what decides whether a preloaded allocator takes effect. `None` for
/// scripts, missing files and anything else that is not ELF.
pub fn inspect_program(path: &Path) -> Option<ProgramInfo> {
    let bytes = std::fs::read(path).ok()?;
    let elf = Elf::parse(&bytes).ok()?;
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    let has_go_section = elf
        .section_headers
        .iter()
        .any(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(".go.buildinfo"));
    let has_go_note = elf.iter_note_headers(&bytes).is_some_and(|mut notes| {
        notes.any(|n| n.is_ok_and(|n| n.name == "Go" && n.n_type == NT_GO_BUILD_ID))
    });
    let defines_malloc = elf
        .dynsyms
        .iter()
        .any(|sym| sym.st_shndx != 0 && elf.dynstrtab.get_at(sym.st_name) == Some("malloc"));
    let needs: Vec<String> = elf.libraries.iter().map(|s| s.to_string()).collect();
    let linked_allocators = needs
        .iter()
        .filter_map(|lib| allocator_of_library(Path::new(lib)))
        .map(str::to_string)
        .collect();
    Some(ProgramInfo {
        is_elf: true,
        is_static: elf.interpreter.is_none(),
        is_setuid: mode & 0o6000 != 0,
        is_go: has_go_section || has_go_note,
        defines_malloc,
        linked_allocators,
        needs,
    })
}

/// Why an LD_PRELOAD allocator will not (fully) take effect, in one line.
pub fn preload_ignored_reason(info: &ProgramInfo) -> Option<String> {
    // Go first: Go binaries are usually static too, and "Go" is the reason
    // that matters (even a cgo build that maps the library barely uses it).
    if info.is_go {
        Some("a Go program: the Go runtime allocates its own memory, so a preloaded malloc sees only cgo allocations".into())
    } else if info.is_static {
        Some("statically linked: the dynamic loader never runs, so LD_PRELOAD is ignored".into())
    } else if info.is_setuid {
        Some("set-user-ID or set-group-ID: the loader runs it in secure mode and ignores LD_PRELOAD paths".into())
    } else if info.defines_malloc {
        Some("the program defines malloc itself (a statically linked allocator): its own malloc comes before any preloaded one, so LD_PRELOAD does not replace it".into())
    } else {
        None
    }
}
