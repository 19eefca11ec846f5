//! Parsers for the per-process files of /proc (`stat`, `status`,
//! `smaps_rollup`, `task/TID/children`) and one-line wrappers that read them.
//! Parsers take the text and return `None` on anything unexpected; the
//! wrappers return `None` when the process is gone, which is normal.
//! Sizes leave this module in bytes: kB is converted here and nowhere else.

use std::fs;

/// The memory figures of /proc/PID/status the sampler reads every tick:
/// the same sizes as `statm` (VmSize, VmRSS) plus the RSS split, so one
/// file per process and tick gives both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatusMemory {
    pub vsz_bytes: u64,
    pub rss_bytes: u64,
    /// `RssAnon`, `RssFile`, `RssShmem` (Linux 4.5+).
    pub rss_parts: Option<RssParts>,
}

/// The fields of /proc/PID/stat the sampler uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub ppid: i32,
    pub state: char,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub threads: u32,
    /// Start time after boot, in clock ticks (`_SC_CLK_TCK`).
    pub start_ticks: u64,
    /// CPU time in clock ticks: its own user and system time and that of
    /// the children it has waited for (`utime + stime + cutime + cstime`).
    pub cpu_ticks: u64,
    /// A hash of the comm (the program's name, changed by exec and kept by
    /// fork): processes with equal hashes are likely forks of one program
    /// that share pages.
    pub comm_hash: u64,
}

/// Totals from /proc/PID/smaps_rollup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollup {
    pub pss_bytes: u64,
    /// Private_Clean + Private_Dirty: what freeing the process would return.
    pub uss_bytes: u64,
    pub swap_bytes: u64,
    pub rss_bytes: u64,
    /// `Pss_Anon`, `Pss_File`, `Pss_Shmem`: absent before Linux 5.14.
    pub pss_parts: Option<RssParts>,
}

/// Resident memory split by kind: `RssAnon`/`RssFile`/`RssShmem` of
/// /proc/PID/status, or the matching `Pss_*` of smaps_rollup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RssParts {
    pub anon_bytes: u64,
    pub file_bytes: u64,
    pub shmem_bytes: u64,
}

impl RssParts {
    pub fn total_bytes(&self) -> u64 {
        self.anon_bytes
            .saturating_add(self.file_bytes)
            .saturating_add(self.shmem_bytes)
    }
}

/// `pid (comm) state ppid ...`. The comm may contain spaces and `)`, so the
/// fields start after the LAST `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let close = text.rfind(')')?;
    let comm = text.get(text.find('(')? + 1..close)?;
    let after_comm = &text[close + 1..];
    // Field numbers below are those of proc(5); `fields[0]` is field 3 (state).
    let fields: Vec<&str> = after_comm.split_ascii_whitespace().collect();
    let field = |number: usize| fields.get(number.checked_sub(3)?).copied();
    let mut state_chars = field(3)?.chars();
    let state = state_chars.next()?;
    if state_chars.next().is_some() {
        return None;
    }
    Some(Stat {
        state,
        ppid: field(4)?.parse().ok()?,
        minor_faults: field(10)?.parse().ok()?,
        major_faults: field(12)?.parse().ok()?,
        threads: field(20)?.parse().ok()?,
        start_ticks: field(22)?.parse().ok()?,
        cpu_ticks: (14..=17)
            .map(|n| field(n)?.parse::<u64>().ok())
            .sum::<Option<u64>>()?,
        comm_hash: fnv1a(comm.as_bytes()),
    })
}

/// FNV-1a: a stable, dependency-free hash for short names.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Value of a `Key:   123 kB` line, in bytes.
fn kb_field(line: &str, key: &str) -> Option<u64> {
    let rest = line.strip_prefix(key)?.strip_prefix(':')?;
    let mut parts = rest.split_ascii_whitespace();
    let kb: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") => kb.checked_mul(1024),
        _ => None,
    }
}

/// Needs Rss, Pss, Private_Clean and Private_Dirty; Swap is 0 when absent
/// (kernels without swap support omit it).
pub fn parse_smaps_rollup(text: &str) -> Option<Rollup> {
    let (mut rss, mut pss, mut clean, mut dirty, mut swap) = (None, None, None, None, None);
    let (mut anon, mut file, mut shmem) = (None, None, None);
    for line in text.lines() {
        let slot = match line.split(':').next() {
            Some("Rss") => (&mut rss, "Rss"),
            Some("Pss") => (&mut pss, "Pss"),
            Some("Pss_Anon") => (&mut anon, "Pss_Anon"),
            Some("Pss_File") => (&mut file, "Pss_File"),
            Some("Pss_Shmem") => (&mut shmem, "Pss_Shmem"),
            Some("Private_Clean") => (&mut clean, "Private_Clean"),
            Some("Private_Dirty") => (&mut dirty, "Private_Dirty"),
            Some("Swap") => (&mut swap, "Swap"),
            _ => continue,
        };
        *slot.0 = Some(kb_field(line, slot.1)?);
    }
    Some(Rollup {
        pss_bytes: pss?,
        uss_bytes: clean?.checked_add(dirty?)?,
        swap_bytes: swap.unwrap_or(0),
        rss_bytes: rss?,
        pss_parts: parts(anon, file, shmem),
    })
}

/// The anonymous pages of smaps_rollup the memory breakdown needs beside
/// the status split: `LazyFree` (freed with MADV_FREE, not yet reclaimed)
/// and `AnonHugePages` (in transparent huge pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnonPages {
    pub lazy_free_bytes: u64,
    pub huge_pages_bytes: u64,
}

/// `LazyFree` and `AnonHugePages` of smaps_rollup; a line the kernel does
/// not print (`LazyFree` before 4.12, `AnonHugePages` without THP) is 0,
/// since such a kernel has none of those pages. `None` on a malformed value.
pub fn parse_anon_pages(text: &str) -> Option<AnonPages> {
    let mut pages = AnonPages::default();
    for line in text.lines() {
        let (slot, key) = match line.split(':').next() {
            Some("LazyFree") => (&mut pages.lazy_free_bytes, "LazyFree"),
            Some("AnonHugePages") => (&mut pages.huge_pages_bytes, "AnonHugePages"),
            _ => continue,
        };
        *slot = kb_field(line, key)?;
    }
    Some(pages)
}

fn parts(anon: Option<u64>, file: Option<u64>, shmem: Option<u64>) -> Option<RssParts> {
    Some(RssParts {
        anon_bytes: anon?,
        file_bytes: file?,
        shmem_bytes: shmem?,
    })
}

/// `VmSize`, `VmRSS`, `RssAnon`, `RssFile` and `RssShmem` of
/// /proc/PID/status. Kernel threads and zombies have none of these lines:
/// sizes 0 (what `statm` gives them) and no parts. `None` on a malformed
/// value. Stops after `RssShmem`, the last of them in every kernel's order,
/// since the sampler parses this for every process on every tick.
pub fn parse_status_memory(text: &str) -> Option<StatusMemory> {
    let (mut vsz, mut rss) = (None, None);
    let (mut anon, mut file, mut shmem) = (None, None, None);
    for line in text.lines() {
        let slot = match line.split(':').next() {
            Some("VmSize") => (&mut vsz, "VmSize"),
            Some("VmRSS") => (&mut rss, "VmRSS"),
            Some("RssAnon") => (&mut anon, "RssAnon"),
            Some("RssFile") => (&mut file, "RssFile"),
            Some("RssShmem") => (&mut shmem, "RssShmem"),
            _ => continue,
        };
        *slot.0 = Some(kb_field(line, slot.1)?);
        if slot.1 == "RssShmem" {
            break;
        }
    }
    Some(StatusMemory {
        vsz_bytes: vsz.unwrap_or(0),
        rss_bytes: rss.unwrap_or(0),
        rss_parts: parts(anon, file, shmem),
    })
}

/// VmHWM (peak resident set) from /proc/PID/status, in bytes. Kernel
/// threads and zombies have no VmHWM line.
pub fn parse_status_hwm(text: &str) -> Option<u64> {
    text.lines().find_map(|line| kb_field(line, "VmHWM"))
}

/// /proc/PID/task/TID/children: pids separated by spaces (with a trailing
/// space). Anything that is not a positive pid is skipped.
pub fn parse_children(text: &str) -> Vec<i32> {
    text.split_ascii_whitespace()
        .filter_map(|word| word.parse::<i32>().ok())
        .filter(|pid| *pid > 0)
        .collect()
}

fn read(pid: i32, file: &str) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/{file}")).ok()
}

pub fn read_status_memory(pid: i32) -> Option<StatusMemory> {
    parse_status_memory(&read(pid, "status")?)
}

pub fn read_stat(pid: i32) -> Option<Stat> {
    parse_stat(&read(pid, "stat")?)
}

/// True while `pid` is still the process that started at `start_ticks`:
/// neither gone, a zombie, nor the pid reused (`record --pid`, `soak --pid`).
pub fn same_process(pid: i32, start_ticks: u64) -> bool {
    read_stat(pid).is_some_and(|s| s.start_ticks == start_ticks && !matches!(s.state, 'Z' | 'X'))
}

/// The process's name (comm), without the trailing newline.
pub fn read_comm(pid: i32) -> Option<String> {
    read(pid, "comm").map(|c| c.trim_end_matches('\n').to_string())
}

pub fn read_smaps_rollup(pid: i32) -> Option<Rollup> {
    parse_smaps_rollup(&read(pid, "smaps_rollup")?)
}

/// smaps_rollup's totals and its anonymous pages, from one read.
pub fn read_smaps_rollup_with_anon(pid: i32) -> Option<(Rollup, AnonPages)> {
    let text = read(pid, "smaps_rollup")?;
    Some((parse_smaps_rollup(&text)?, parse_anon_pages(&text)?))
}

pub fn read_status_hwm(pid: i32) -> Option<u64> {
    parse_status_hwm(&read(pid, "status")?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KIB: u64 = 1024;

    #[test]
    fn a_process_is_the_same_only_with_its_own_start_time() {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        let start = read_stat(parent).expect("our parent").start_ticks;
        assert!(same_process(parent, start));
        assert!(!same_process(parent, start + 1));
    }

    #[test]
    fn stat_splits_at_last_paren_when_comm_has_spaces_and_parens() {
        let stat = parse_stat(include_str!("fixtures/stat_comm_paren.txt"));
        assert_eq!(
            stat,
            Some(Stat {
                ppid: 1,
                state: 'S',
                minor_faults: 129,
                major_faults: 0,
                threads: 1,
                start_ticks: 33356,
                cpu_ticks: 0,
                comm_hash: fnv1a(b"a b)c"),
            })
        );
    }

    #[test]
    fn stat_reads_faults_and_threads_of_multithreaded_process() {
        let stat = parse_stat(include_str!("fixtures/stat_python_threads.txt"));
        assert_eq!(
            stat,
            Some(Stat {
                ppid: 5830,
                state: 'S',
                minor_faults: 15706,
                major_faults: 13,
                threads: 4,
                start_ticks: 33826,
                // utime 4 + stime 3 + cutime 5 + cstime 1.
                cpu_ticks: 13,
                comm_hash: fnv1a(b"python3"),
            })
        );
    }

    #[test]
    fn stat_parses_kernel_thread() {
        let stat = parse_stat(include_str!("fixtures/stat_kthread.txt"));
        assert_eq!(stat.map(|s| (s.ppid, s.threads)), Some((0, 1)));
    }

    #[test]
    fn stat_rejects_missing_paren_and_short_text() {
        assert_eq!(parse_stat("5762 a b c S 1 2 3"), None);
        assert_eq!(parse_stat("5762 (x) S 1 5754"), None);
    }

    #[test]
    fn smaps_rollup_sums_private_into_uss() {
        let rollup = parse_smaps_rollup(include_str!("fixtures/smaps_rollup_sleep.txt"));
        assert_eq!(
            rollup,
            Some(Rollup {
                pss_bytes: 269 * KIB,
                uss_bytes: 148 * KIB,
                swap_bytes: 0,
                rss_bytes: 1796 * KIB,
                pss_parts: Some(RssParts {
                    anon_bytes: 112 * KIB,
                    file_bytes: 157 * KIB,
                    shmem_bytes: 0,
                }),
            })
        );
    }

    #[test]
    fn smaps_rollup_of_process_with_touched_heap() {
        let rollup = parse_smaps_rollup(include_str!("fixtures/smaps_rollup_python.txt"));
        assert_eq!(
            rollup,
            Some(Rollup {
                pss_bytes: 63001 * KIB,
                uss_bytes: (4632 + 58136) * KIB,
                swap_bytes: 0,
                rss_bytes: 64796 * KIB,
                pss_parts: Some(RssParts {
                    anon_bytes: 58136 * KIB,
                    file_bytes: 4865 * KIB,
                    shmem_bytes: 0,
                }),
            })
        );
    }

    #[test]
    fn smaps_rollup_anon_pages_of_huge_and_lazily_freed_memory() {
        // A process that touched 16 MiB under MADV_HUGEPAGE and 8 MiB it
        // then gave back with MADV_FREE.
        let text = include_str!("fixtures/smaps_rollup_thp_lazyfree.txt");
        assert_eq!(
            parse_anon_pages(text),
            Some(AnonPages {
                lazy_free_bytes: 8184 * KIB,
                huge_pages_bytes: 16384 * KIB,
            })
        );
        assert_eq!(
            parse_smaps_rollup(text).map(|r| r.rss_bytes),
            Some(25808 * KIB)
        );
        // Kernels without the lines have none of those pages.
        assert_eq!(
            parse_anon_pages(include_str!("fixtures/smaps_rollup_sleep.txt"))
                .map(|p| p.lazy_free_bytes),
            Some(0)
        );
        assert_eq!(parse_anon_pages("Rss: 4 kB\n"), Some(AnonPages::default()));
        assert_eq!(parse_anon_pages("LazyFree: 4 MB\n"), None);
    }

    #[test]
    fn status_memory_in_bytes() {
        let memory = parse_status_memory(include_str!("fixtures/status_sleep.txt"));
        assert_eq!(
            memory,
            Some(StatusMemory {
                vsz_bytes: 2920 * KIB,
                rss_bytes: 1796 * KIB,
                rss_parts: Some(RssParts {
                    anon_bytes: 112 * KIB,
                    file_bytes: 1684 * KIB,
                    shmem_bytes: 0,
                }),
            })
        );
        let python = parse_status_memory(include_str!("fixtures/status_python.txt"));
        assert_eq!(python.map(|m| m.vsz_bytes), Some(289032 * KIB));
        assert_eq!(python.map(|m| m.rss_bytes), Some(64796 * KIB));
    }

    #[test]
    fn status_memory_of_kernel_thread_is_empty() {
        assert_eq!(
            parse_status_memory("Name:\tkthreadd\nState:\tS\n"),
            Some(StatusMemory::default())
        );
        assert_eq!(
            parse_status_memory("RssAnon:\t12 MB\nRssFile: 1 kB\n"),
            None
        );
        assert_eq!(parse_status_memory("VmRSS:\tlots kB\n"), None);
    }

    #[test]
    fn smaps_rollup_does_not_confuse_pss_with_pss_anon() {
        let text =
            "Rss: 10 kB\nPss_Anon: 7 kB\nPss: 5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\n";
        let rollup = parse_smaps_rollup(text).expect("parses");
        assert_eq!(rollup.pss_bytes, 5 * KIB);
        assert_eq!(rollup.swap_bytes, 0);
        // Without Pss_File and Pss_Shmem (kernels before 5.14), no parts.
        assert_eq!(rollup.pss_parts, None);
    }

    #[test]
    fn smaps_rollup_of_empty_text_is_none() {
        assert_eq!(parse_smaps_rollup(""), None);
    }

    #[test]
    fn status_hwm_in_bytes() {
        assert_eq!(
            parse_status_hwm(include_str!("fixtures/status_python.txt")),
            Some(64796 * KIB)
        );
        assert!(parse_status_hwm(include_str!("fixtures/status_sleep.txt")).is_some());
        assert_eq!(parse_status_hwm("Name:\tkthreadd\nState:\tS\n"), None);
    }

    #[test]
    fn children_with_trailing_space() {
        // A shell with two `sleep`s and the `cat` that read the file.
        assert_eq!(
            parse_children(include_str!("fixtures/children.txt")),
            vec![19641, 19642, 19644]
        );
        assert_eq!(parse_children(""), Vec::<i32>::new());
        assert_eq!(parse_children("12 x -3 0 7\n"), vec![12, 7]);
    }

    #[test]
    fn reads_own_process() {
        let pid = std::process::id() as i32;
        assert!(read_status_memory(pid).is_some_and(|s| s.rss_bytes > 0 && s.vsz_bytes > 0));
        assert!(read_stat(pid).is_some_and(|s| s.threads >= 1));
        assert!(read_status_hwm(pid).is_some());
    }

    #[test]
    fn vanished_process_reads_as_none() {
        assert_eq!(read_stat(i32::MAX), None);
        assert_eq!(read_smaps_rollup(i32::MAX), None);
    }

    proptest! {
        #[test]
        fn parsers_never_panic(text in "\\PC*") {
            let _ = parse_stat(&text);
            let _ = parse_smaps_rollup(&text);
            let _ = parse_anon_pages(&text);
            let _ = parse_status_hwm(&text);
            let _ = parse_status_memory(&text);
            let _ = parse_children(&text);
        }

        #[test]
        fn parsers_never_panic_on_proc_like_text(
            text in "[0-9 ()a-zA-Z:\\n]{0,200}kB[0-9 ()SR:\\n]{0,50}",
        ) {
            let _ = parse_status_memory(&text);
            let _ = parse_stat(&text);
            let _ = parse_smaps_rollup(&text);
            let _ = parse_status_hwm(&text);
        }
    }
}
