//! The errors a user can cause when naming allocator configurations. Each
//! message is one line that names the problem and says what is valid, because
//! the caller prints it as is and exits 2.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AllocError {
    #[error("empty allocator configuration; use NAME[:key=value,...] or LABEL=/path/to/lib.so")]
    EmptySpec,
    #[error("unknown allocator '{name}'; built-in: {builtins}, or LABEL=/path/to/lib.so")]
    UnknownAllocator { name: String, builtins: String },
    #[error(
        "invalid label '{label}' in '{spec}'; a label is letters, digits, '_', '-', '.' or '+'"
    )]
    BadLabel { label: String, spec: String },
    #[error(
        "label '{label}' is a built-in allocator name; choose another label, e.g. my{label}={path}"
    )]
    LabelIsBuiltin { label: String, path: String },
    #[error("missing library path after '{label}=' in '{spec}'; write {label}=/path/to/lib.so")]
    EmptyPath { label: String, spec: String },
    #[error("unknown key '{key}' for {allocator}; valid keys: {valid}")]
    UnknownKey {
        allocator: String,
        key: String,
        valid: String,
    },
    #[error("empty key in '{pair}' of '{spec}'; write key=value")]
    EmptyKey { pair: String, spec: String },
    #[error("empty value for key '{key}' in '{spec}'; write {key}=VALUE")]
    EmptyValue { key: String, spec: String },
    #[error("key '{key}' given twice in '{spec}'; give each key once")]
    DuplicateKey { key: String, spec: String },
    #[error("malformed setting '{pair}' in '{spec}'; settings are key=value separated by ','")]
    MalformedPair { pair: String, spec: String },
    #[error("invalid value '{value}' for {allocator} key '{key}'; expected {expected}")]
    BadValue {
        allocator: String,
        key: String,
        value: String,
        expected: String,
    },
    #[error(
        "invalid environment variable name '{name}'; use letters, digits and '_', not starting with a digit"
    )]
    BadEnvName { name: String },
    #[error("environment variable {name} is set twice by '{spec}'; set it once (built-in keys already set it)")]
    EnvConflict { name: String, spec: String },
    #[error("{allocator} is not installed; install the Debian package {package} (apt-get install {package})")]
    NotInstalled { allocator: String, package: String },
    #[error("'{}' contains a space, which LD_PRELOAD treats as a separator; copy or link the library to a path without spaces", path.display())]
    PathNotPreloadable { path: PathBuf },
    #[error("'{}' does not exist; give the path of an allocator shared library", path.display())]
    LibraryMissing { path: PathBuf },
    #[error("'{}' cannot be read ({reason}); check its permissions", path.display())]
    LibraryUnreadable { path: PathBuf, reason: String },
    #[error("'{}' is not an ELF shared object; give a .so file such as /usr/lib/x86_64-linux-gnu/libjemalloc.so.2", path.display())]
    NotElf { path: PathBuf },
    #[error("'{}' is an ELF {kind}, not a shared object; give the allocator's .so file", path.display())]
    NotSharedObject { path: PathBuf, kind: String },
    #[error("'{}' is built for {found}, but this host runs {host}; use a library built for this machine", path.display())]
    WrongArchitecture {
        path: PathBuf,
        found: String,
        host: String,
    },
    #[error("'{}' does not export malloc, so preloading it replaces nothing; give an allocator library", path.display())]
    NoMalloc { path: PathBuf },
}
