//! Counting glibc's arenas from inside the process, through `malloc_info`,
//! and only when glibc really serves malloc.

extern "C" {
    /// glibc's heap report (XML, one `<heap nr=...>` element per arena).
    fn malloc_info(options: libc::c_int, stream: *mut libc::FILE) -> libc::c_int;
}

/// Number of glibc arenas, or None when another allocator serves malloc
/// (its `malloc_info`, if any, would not describe glibc's arenas; and
/// glibc's own would describe an unused heap). An interposing probe in
/// LD_PRELOAD leaves glibc serving, so the test is the maps, not LD_PRELOAD.
pub fn arenas() -> Option<usize> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    if foreign_allocator(&maps) {
        return None;
    }
    let xml = malloc_info_text()?;
    Some(count_heaps(&xml))
}

/// A known allocator other than glibc among the mapped files.
fn foreign_allocator(maps: &str) -> bool {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .any(|path| {
            allocscope_core::alloc::allocator_of_library(std::path::Path::new(path)).is_some()
        })
}

fn count_heaps(xml: &str) -> usize {
    xml.matches("<heap nr=").count()
}

fn malloc_info_text() -> Option<String> {
    let mut buf: *mut libc::c_char = std::ptr::null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: open_memstream gets valid out-pointers; the stream is closed
    // before the buffer is read, and the buffer (malloc'd by glibc) is freed
    // once, after copying it out.
    unsafe {
        let stream = libc::open_memstream(&mut buf, &mut len);
        if stream.is_null() {
            return None;
        }
        let rc = malloc_info(0, stream);
        libc::fclose(stream);
        if buf.is_null() {
            return None;
        }
        let text =
            String::from_utf8_lossy(std::slice::from_raw_parts(buf.cast::<u8>(), len)).into_owned();
        libc::free(buf.cast());
        (rc == 0).then_some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_heaps_and_spots_foreign_allocators() {
        assert_eq!(
            count_heaps(
                "<malloc version=\"1\">\n<heap nr=\"0\">\n</heap>\n<heap nr=\"1\">\n</heap>"
            ),
            2
        );
        assert!(foreign_allocator(
            "7f00-7f10 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
        ));
        assert!(!foreign_allocator(
            "7f00-7f10 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6"
        ));
    }
}
