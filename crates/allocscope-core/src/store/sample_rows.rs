//! The one column list of a sample row, shared by `samples` (a run's) and
//! `recording_samples` (a recording's): the insert's values and the row
//! mapping back to `model::Sample` live here once. The breakdown is nine
//! columns named `breakdown_` + its part's key, all NULL when the tick had
//! none (`breakdown_unknown_bytes`, added by schema version 14, is NULL in
//! the rows stored before it: zero then); its tenth part, the cgroup's
//! kernel memory, is the `cgroup_kernel_bytes` column, stored once.

use super::convert::{opt_u64_at, u64_at, Unstorable};
use crate::model::{Breakdown, CgroupSample, ProcessName, Sample};
use rusqlite::types::Value;
use rusqlite::Row;

/// The sample columns, in insert order, after the owner column.
pub(super) const COLUMNS: &str = "t_s, rss_bytes, pss_bytes, uss_bytes, swap_bytes, vsz_bytes, \
     processes, threads, minor_faults, major_faults, live_heap_bytes, \
     allocator_resident_bytes, allocator_retained_bytes, arenas, pss_estimated_processes, \
     arenas_pid, arenas_process, heapless_processes, breakdown_live_heap_bytes, \
     breakdown_allocator_free_bytes, breakdown_allocator_metadata_bytes, \
     breakdown_huge_pages_bytes, breakdown_lazy_free_bytes, breakdown_other_anon_bytes, \
     breakdown_file_bytes, breakdown_shmem_bytes, cgroup_charge_bytes, \
     cgroup_working_set_bytes, cgroup_anon_bytes, cgroup_file_bytes, cgroup_shmem_bytes, \
     cgroup_kernel_bytes, cgroup_huge_pages_bytes, heap_stale_processes, \
     breakdown_unknown_bytes, cpu_s";

const COUNT: usize = 36;

/// The breakdown's columns, in the order of `Breakdown::KEYS`, but for its
/// last part (`kernel_bytes`), which is `cgroup_kernel_bytes`.
const BREAKDOWN: [&str; Breakdown::COUNT - 1] = [
    "breakdown_live_heap_bytes",
    "breakdown_allocator_free_bytes",
    "breakdown_allocator_metadata_bytes",
    "breakdown_huge_pages_bytes",
    "breakdown_lazy_free_bytes",
    "breakdown_other_anon_bytes",
    "breakdown_file_bytes",
    "breakdown_shmem_bytes",
    "breakdown_unknown_bytes",
];

/// `INSERT [OR REPLACE] INTO table (owner, COLUMNS) VALUES (?, ...)`.
pub(super) fn insert_sql(verb: &str, table: &str, owner: &str) -> String {
    let marks = vec!["?"; COUNT + 1].join(", ");
    format!("{verb} INTO {table} ({owner}, {COLUMNS}) VALUES ({marks})")
}

/// The owner's id followed by the sample's values, in `COLUMNS` order. A
/// figure too large for SQLite is stored as unknown and noted in
/// `unstorable` (`convert.rs`); the breakdown and the cgroup's figures are
/// stored whole or not at all, as they are read back.
pub(super) fn values(owner: i64, s: &Sample, unstorable: &mut Unstorable) -> Vec<Value> {
    let opt = |v: Option<i64>| v.map_or(Value::Null, Value::Integer);
    let u = unstorable;
    let mut values = vec![
        Value::Integer(owner),
        Value::Real(s.t_s),
        Value::Integer(u.saturating(s.rss_bytes, "rss_bytes")),
        opt(u.opt(s.pss_bytes, "pss_bytes")),
        opt(u.opt(s.uss_bytes, "uss_bytes")),
        opt(u.opt(s.swap_bytes, "swap_bytes")),
        Value::Integer(u.saturating(s.vsz_bytes, "vsz_bytes")),
        Value::Integer(s.processes.into()),
        Value::Integer(s.threads.into()),
        Value::Integer(u.saturating(s.minor_faults, "minor_faults")),
        Value::Integer(u.saturating(s.major_faults, "major_faults")),
        opt(u.opt(s.live_heap_bytes, "live_heap_bytes")),
        opt(u.opt(s.allocator_resident_bytes, "allocator_resident_bytes")),
        opt(u.opt(s.allocator_retained_bytes, "allocator_retained_bytes")),
        opt(s.arenas.map(i64::from)),
        Value::Integer(s.pss_estimated_processes.into()),
        opt(s.arenas_pid.map(i64::from)),
        s.arenas_process
            .as_ref()
            .map_or(Value::Null, |n| Value::Text(n.as_str().to_string())),
        Value::Integer(s.heapless_processes.into()),
    ];
    // Stored whole or not at all, as it is read back; the unknown part's
    // column comes last, after the columns older versions had.
    let breakdown = s.breakdown.map(|b| {
        let parts: Vec<(u64, &'static str)> = b.parts().into_iter().zip(BREAKDOWN).collect();
        (u.all_fit(&parts), parts)
    });
    let (mut parts, unknown) = match breakdown {
        Some((true, parts)) => {
            let mut stored: Vec<Value> = parts
                .iter()
                .map(|&(v, _)| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX)))
                .collect();
            let unknown = stored.pop().unwrap_or(Value::Null);
            (stored, unknown)
        }
        _ => (vec![Value::Null; BREAKDOWN.len() - 1], Value::Null),
    };
    values.append(&mut parts);
    values.extend(cgroup_values(s.cgroup.as_ref(), u));
    values.push(Value::Integer(s.heap_stale_processes.into()));
    values.push(unknown);
    values.push(s.cpu_s.map_or(Value::Null, Value::Real));
    values
}

/// The cgroup's columns of a sample, NULL for a run without a group or
/// one whose figures cannot all be stored.
fn cgroup_values(cgroup: Option<&CgroupSample>, u: &mut Unstorable) -> [Value; 7] {
    let Some(c) = cgroup else {
        return std::array::from_fn(|_| Value::Null);
    };
    let figures = [
        (c.charge_bytes, "cgroup_charge_bytes"),
        (c.working_set_bytes, "cgroup_working_set_bytes"),
        (c.anon_bytes, "cgroup_anon_bytes"),
        (c.file_bytes, "cgroup_file_bytes"),
        (c.shmem_bytes, "cgroup_shmem_bytes"),
        (c.kernel_bytes, "cgroup_kernel_bytes"),
        (c.huge_pages_bytes, "cgroup_huge_pages_bytes"),
    ];
    if !u.all_fit(&figures) {
        return std::array::from_fn(|_| Value::Null);
    }
    figures.map(|(v, _)| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX)))
}

/// The cgroup's columns of a row: present when the charge is.
fn cgroup_from_row(r: &Row<'_>) -> rusqlite::Result<Option<CgroupSample>> {
    let Some(charge_bytes) = opt_u64_at(r, "cgroup_charge_bytes")? else {
        return Ok(None);
    };
    let part = |name| opt_u64_at(r, name).map(Option::unwrap_or_default);
    Ok(Some(CgroupSample {
        charge_bytes,
        working_set_bytes: part("cgroup_working_set_bytes")?,
        anon_bytes: part("cgroup_anon_bytes")?,
        file_bytes: part("cgroup_file_bytes")?,
        shmem_bytes: part("cgroup_shmem_bytes")?,
        kernel_bytes: part("cgroup_kernel_bytes")?,
        huge_pages_bytes: part("cgroup_huge_pages_bytes")?,
    }))
}

/// The breakdown's columns of a row: `None` when they are NULL (the
/// unknown part alone may be: a row stored before it existed).
fn breakdown_at(r: &Row<'_>) -> rusqlite::Result<Option<Breakdown>> {
    let mut parts = [0u64; Breakdown::COUNT];
    for (part, column) in parts.iter_mut().zip(BREAKDOWN) {
        match opt_u64_at(r, column)? {
            Some(v) => *part = v,
            None if column == "breakdown_unknown_bytes" => *part = 0,
            None => return Ok(None),
        }
    }
    let kernel = opt_u64_at(r, "cgroup_kernel_bytes")?.unwrap_or(0);
    Ok(Some(Breakdown {
        kernel_bytes: kernel,
        ..Breakdown::from_parts(parts)
    }))
}

/// A row selected with `COLUMNS`, by column name.
pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Sample> {
    Ok(Sample {
        t_s: r.get("t_s")?,
        rss_bytes: u64_at(r, "rss_bytes")?,
        pss_bytes: opt_u64_at(r, "pss_bytes")?,
        uss_bytes: opt_u64_at(r, "uss_bytes")?,
        swap_bytes: opt_u64_at(r, "swap_bytes")?,
        vsz_bytes: u64_at(r, "vsz_bytes")?,
        processes: r.get("processes")?,
        threads: r.get("threads")?,
        minor_faults: u64_at(r, "minor_faults")?,
        major_faults: u64_at(r, "major_faults")?,
        cpu_s: r.get("cpu_s")?,
        live_heap_bytes: opt_u64_at(r, "live_heap_bytes")?,
        allocator_resident_bytes: opt_u64_at(r, "allocator_resident_bytes")?,
        allocator_retained_bytes: opt_u64_at(r, "allocator_retained_bytes")?,
        arenas: r.get("arenas")?,
        pss_estimated_processes: r.get("pss_estimated_processes")?,
        arenas_pid: r.get("arenas_pid")?,
        arenas_process: r
            .get::<_, Option<String>>("arenas_process")?
            .map(|n| ProcessName::new(&n)),
        breakdown: breakdown_at(r)?,
        heapless_processes: r.get("heapless_processes")?,
        heap_stale_processes: r.get("heap_stale_processes")?,
        cgroup: cgroup_from_row(r)?,
    })
}
