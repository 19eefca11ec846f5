//! A run group's per-tick reads: the charge, `memory.stat` and (v1) kernel
//! memory, each file opened once and re-read from offset 0 with `pread`
//! (cgroupfs regenerates it), two or three system calls a tick whatever the
//! size of the tree.

use super::stat::{parse_number, parse_v1_stat, parse_v2_stat, sample_of};
use super::version::Version;
use crate::model::CgroupSample;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

#[derive(Debug)]
pub struct Reader {
    version: Version,
    charge: File,
    stat: File,
    kernel: Option<File>,
    buffer: Vec<u8>,
}

impl Reader {
    pub fn open(version: Version, dir: &Path) -> std::io::Result<Reader> {
        let open = |name: &str| File::open(dir.join(name));
        Ok(Reader {
            version,
            charge: open(version.charge_file())?,
            stat: open("memory.stat")?,
            // Absent when the kernel does not account kernel memory apart.
            kernel: version.kernel_file().and_then(|name| open(name).ok()),
            buffer: vec![0; 8192],
        })
    }

    /// The group now; `None` if a file cannot be read.
    pub fn read(&mut self) -> Option<CgroupSample> {
        let charge = parse_number(read_whole(&self.charge, &mut self.buffer)?)?;
        let kernel = match &self.kernel {
            Some(file) => read_whole(file, &mut self.buffer).and_then(parse_number),
            None => None,
        };
        let text = read_whole(&self.stat, &mut self.buffer)?;
        let parts = match self.version {
            Version::V1 => parse_v1_stat(text),
            Version::V2 => parse_v2_stat(text),
        };
        Some(sample_of(charge, parts, kernel))
    }
}

/// The file's text from offset 0, the buffer grown if it is longer.
fn read_whole<'b>(file: &File, buffer: &'b mut Vec<u8>) -> Option<&'b str> {
    let mut len = 0;
    loop {
        if len == buffer.len() {
            buffer.resize(buffer.len() * 2, 0);
        }
        match file.read_at(&mut buffer[len..], len as u64) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(_) => return None,
        }
    }
    std::str::from_utf8(&buffer[..len]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pread at offset 0 of a kept file gives fresh text each time: a
    /// regular file stands in for cgroupfs, whose files the group test and
    /// the e2e tests read for real.
    #[test]
    fn rereads_kept_files_from_the_start() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("memory.current"), "4096\n")?;
        std::fs::write(
            dir.path().join("memory.stat"),
            "anon 1000\nfile 3000\ninactive_file 1024\n",
        )?;
        let mut reader = Reader::open(Version::V2, dir.path())?;
        let first = reader.read();
        assert_eq!(first.map(|s| s.working_set_bytes), Some(2976));
        std::fs::write(dir.path().join("memory.current"), "8192\n")?;
        let second = reader.read();
        assert_eq!(
            second.map(|s| (s.charge_bytes, s.anon_bytes)),
            Some((8192, 1000))
        );
        Ok(())
    }
}
