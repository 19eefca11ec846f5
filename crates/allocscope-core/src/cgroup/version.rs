//! The two memory cgroup interfaces and the name of each file a run reads
//! or writes in its group.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

impl Version {
    /// `v1` / `v2`, as the host line and the store say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        }
    }

    /// What the group is charged now: every page of the tree once.
    pub(crate) fn charge_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.usage_in_bytes",
            Version::V2 => "memory.current",
        }
    }

    /// The kernel's own high-water mark of the charge (v2 since 5.19).
    pub fn peak_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        }
    }

    pub(crate) fn limit_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        }
    }

    /// Where the OOM killer's kills are counted.
    pub(crate) fn oom_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        }
    }

    /// Kernel memory, when `memory.stat` does not have it (v1).
    pub(crate) fn kernel_file(self) -> Option<&'static str> {
        match self {
            Version::V1 => Some("memory.kmem.usage_in_bytes"),
            Version::V2 => None,
        }
    }
}
