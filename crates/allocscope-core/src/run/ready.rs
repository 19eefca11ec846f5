//! The readiness check of a service run, on a thread of its own: it tries
//! the check every `RETRY` (a TCP connect, an HTTP GET answered 2xx, or a
//! regex over the new lines of the server's stdout and stderr files) and
//! sends `Event::Ready` once it passes. The deadline is the main loop's.

use super::event::Event;
use super::service_spec::Readiness;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RETRY: Duration = Duration::from_millis(20);
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

pub(super) fn spawn_readiness(
    check: Readiness,
    stdout: PathBuf,
    stderr: PathBuf,
    stop: Arc<AtomicBool>,
    events: Sender<Event>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("readiness".into())
        .spawn(move || {
            let mut logs = [LogFollower::new(stdout), LogFollower::new(stderr)];
            while !stop.load(Ordering::Relaxed) {
                let ready = match &check {
                    Readiness::Tcp(addr) => {
                        TcpStream::connect_timeout(addr, CONNECT_TIMEOUT).is_ok()
                    }
                    Readiness::Http {
                        addr,
                        host_header,
                        path,
                    } => http_ok(*addr, host_header, path),
                    Readiness::Log(regex) => logs.iter_mut().any(|log| log.matches(regex)),
                };
                if ready {
                    let _ = events.send(Event::Ready(Instant::now()));
                    return;
                }
                std::thread::sleep(RETRY);
            }
        })?;
    Ok(())
}

/// A GET answered with a 2xx status line.
fn http_ok(addr: SocketAddr, host_header: &str, path: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(CONNECT_TIMEOUT));
    let _ = stream.set_write_timeout(Some(CONNECT_TIMEOUT));
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host_header}\r\nUser-Agent: allocscope\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match stream.read(&mut head[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    status_is_2xx(&head[..got])
}

/// `HTTP/1.x 2xx` at the start of a response.
fn status_is_2xx(head: &[u8]) -> bool {
    head.starts_with(b"HTTP/1.") && head.get(9) == Some(&b'2') && head.len() >= 12
}

/// Reads what was appended to a file since the last call, line by line.
struct LogFollower {
    path: PathBuf,
    offset: u64,
    partial: String,
}

impl LogFollower {
    fn new(path: PathBuf) -> LogFollower {
        LogFollower {
            path,
            offset: 0,
            partial: String::new(),
        }
    }

    /// Whether a line written since the last call (or the unfinished last
    /// line) matches.
    fn matches(&mut self, regex: &regex::Regex) -> bool {
        let Ok(mut file) = File::open(&self.path) else {
            return false;
        };
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return false;
        }
        let mut fresh = Vec::new();
        let Ok(read) = file.read_to_end(&mut fresh) else {
            return false;
        };
        self.offset += read as u64;
        self.partial.push_str(&String::from_utf8_lossy(&fresh));
        let found = self.partial.lines().any(|line| regex.is_match(line));
        // Keep only the unfinished last line for the next call.
        match self.partial.rfind('\n') {
            Some(end) => {
                self.partial.drain(..=end);
            }
            None if self.partial.len() > 64 * 1024 => self.partial.clear(),
            None => {}
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_2xx_status_lines_only() {
        assert!(status_is_2xx(b"HTTP/1.1 200 OK\r\n"));
        assert!(status_is_2xx(b"HTTP/1.0 204 No"));
        assert!(!status_is_2xx(b"HTTP/1.1 503 Busy"));
        assert!(!status_is_2xx(b"HTTP/1.1 2"));
        assert!(!status_is_2xx(b"SSH-2.0-OpenSSH"));
    }

    #[test]
    fn follows_a_growing_log_across_partial_lines() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        let regex = regex::Regex::new("^Ready to accept")?;
        let mut follower = LogFollower::new(path.clone());
        assert!(!follower.matches(&regex), "no file yet");
        let mut file = File::create(&path)?;
        file.write_all(b"starting\nRead")?;
        assert!(!follower.matches(&regex));
        file.write_all(b"y to accept connections\n")?;
        assert!(follower.matches(&regex));
        assert!(!follower.matches(&regex), "an old line matches only once");
        Ok(())
    }
}
