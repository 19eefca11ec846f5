//! The allocator registry: which allocators exist (glibc, jemalloc, tcmalloc,
//! mimalloc, or a user's `.so`), where this machine has them, and how a
//! configuration such as `glibc:arena_max=2` or `mylib=/opt/libfoo.so`
//! becomes a `model::Config` (a name plus a launch environment). Nothing
//! downstream needs to know which allocator a configuration uses.

pub(crate) mod config;
pub mod cpus;
mod dpkg;
pub mod elf;
pub(crate) mod error;
pub mod keys;
pub mod known;
mod ldcache;
pub(crate) mod own_api;
pub(crate) mod registry;
pub mod served;

#[cfg(test)]
mod discovery_tests;
#[cfg(test)]
mod elf_tests;
#[cfg(any(test, feature = "fixtures"))]
pub mod test_deps;
#[cfg(test)]
mod tests;

pub use config::{parse_spec, Target};
pub use elf::{inspect_program, preload_ignored_reason};
pub(crate) use error::AllocError;
pub use known::{allocator_of_library, install_of, Builtin, Install, BUILTINS};
pub use registry::{Found, Registry};
