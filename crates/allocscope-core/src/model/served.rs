//! What served the memory of one run's process tree (`model::ServedTree`):
//! per allocator that served `malloc` somewhere in the tree, its share of
//! the tree's memory, and the calls the tree's programs make to an
//! allocator's own API. Part of `model`, in a file of its own.

use serde::{Deserialize, Serialize};

/// How the object serving `malloc` came into the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// The C library, or allocscope's glibc shim sending the family to it.
    Libc,
    /// A library the executable (or one of its libraries) links.
    Linked,
    /// A library named in LD_PRELOAD.
    Preloaded,
    /// The executable's own `malloc`.
    Program,
}

/// The tree's view of one run: who served `malloc` in the processes that
/// hold the memory (`run::served_tree` gathers it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ServedTree {
    /// One part per allocator, the largest share first.
    pub parts: Vec<ServedPart>,
    /// `pss`: each process weighed by its PSS on every tick that read it;
    /// `processes`: no tick had PSS, each process counts once.
    pub weighed_by: String,
    /// Calls to an allocator's own API that bypass what serves `malloc`
    /// or that a preload cannot reach, one entry per program and caller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_api: Vec<OwnApiUse>,
    /// The executables seen in the tree (file names, first seen first): a
    /// runtime with its own memory manager is recognised by them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<String>,
}

/// One allocator's share of the tree's memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedPart {
    /// `glibc`, `jemalloc`, ..., `program`, a library's file name, or
    /// `unknown` (a process whose executable could not be read).
    pub allocator: String,
    /// How it got there; `None` for `unknown`.
    pub via: Option<Via>,
    /// Of the tree's memory, 0 to 1.
    pub share: f64,
    /// The executables it served (file names, the largest first, at most
    /// four).
    pub programs: Vec<String>,
}

/// A program of the tree calls an allocator's own API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnApiUse {
    /// The executable's file name.
    pub program: String,
    /// The object making the calls (the executable or one of its libraries).
    pub caller: String,
    /// Whose API it is (`jemalloc`).
    pub api_of: String,
    /// What served the calls (`jemalloc`, or `glibc` through allocscope's
    /// shim).
    pub reach: String,
    /// What served `malloc` in the same process.
    pub malloc: String,
    pub symbols: Vec<String>,
}

impl ServedTree {
    /// The part with the largest share.
    pub fn main_part(&self) -> Option<&ServedPart> {
        self.parts.first()
    }
}
