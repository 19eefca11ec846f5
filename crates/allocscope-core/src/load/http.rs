//! One keep-alive HTTP/1.1 client connection over a std `TcpStream`: writes
//! a request, reads the response to its end (Content-Length, chunked, or
//! until close; none for HEAD, 204 and 304; 1xx skipped), and classifies
//! every failure. Reconnects lazily after an error or `Connection: close`.
//!
//! Blocking reads wake every `TICK` to check the stop flag and the request's
//! deadline, so a run never hangs on a silent server and stops promptly.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The request methods the generator sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
        }
    }
}

/// How often a blocked read looks at the stop flag and the deadline.
const TICK: Duration = Duration::from_millis(50);
/// Read buffer; a response head must fit in it.
const BUF_BYTES: usize = 64 * 1024;
/// A chunk-size or trailer line longer than this is not HTTP.
const MAX_LINE: usize = 8 * 1024;

/// Why a request did not get a complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    Reset,
    Timeout,
    Connect,
    Protocol,
    /// The stop flag was raised while waiting: not a failure of the server.
    Stopped,
}

/// How a response body ends.
enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Whether this response has received any byte (see `send`'s retry).
    received: bool,
    /// Read calls made, so tests can check a small response takes one.
    #[cfg(test)]
    reads: u64,
}

pub(super) struct Client<'a> {
    addr: SocketAddr,
    host_header: &'a str,
    timeout: Duration,
    stop: &'a AtomicBool,
    conn: Option<Conn>,
    request: Vec<u8>,
}

impl<'a> Client<'a> {
    pub(super) fn new(
        addr: SocketAddr,
        host_header: &'a str,
        timeout: Duration,
        stop: &'a AtomicBool,
    ) -> Client<'a> {
        Client {
            addr,
            host_header,
            timeout,
            stop,
            conn: None,
            request: Vec::with_capacity(256),
        }
    }

    /// Sends one request and reads its response; returns the status.
    ///
    /// A reused connection the server closed while idle fails on the first
    /// read with no byte received; that request is retried once on a fresh
    /// connection, as HTTP clients do for idempotent methods (RFC 9112
    /// §9.3.1). Any other failure is returned and the connection dropped.
    pub(super) fn send(&mut self, method: Method, path: &str) -> Result<u16, Failure> {
        self.request.clear();
        for part in [
            method.as_str(),
            " ",
            path,
            " HTTP/1.1\r\nHost: ",
            self.host_header,
        ] {
            self.request.extend_from_slice(part.as_bytes());
        }
        self.request
            .extend_from_slice(b"\r\nUser-Agent: allocscope\r\nAccept: */*\r\n\r\n");
        let mut retried = false;
        loop {
            let reused = self.conn.is_some();
            let result = self.attempt(method);
            match result {
                Ok((status, keep_alive)) => {
                    if !keep_alive {
                        self.conn = None;
                    }
                    return Ok(status);
                }
                Err((failure, received)) => {
                    self.conn = None;
                    if failure == Failure::Reset && reused && !received && !retried {
                        retried = true;
                        continue;
                    }
                    return Err(failure);
                }
            }
        }
    }

    /// One try on the current (or a new) connection. The error carries
    /// whether any response byte had arrived.
    fn attempt(&mut self, method: Method) -> Result<(u16, bool), (Failure, bool)> {
        let deadline = Instant::now() + self.timeout;
        let conn = match &mut self.conn {
            Some(conn) => conn,
            None => self
                .conn
                .insert(connect(self.addr, self.timeout).map_err(|f| (f, false))?),
        };
        conn.received = false;
        if let Err(e) = conn.stream.write_all(&self.request) {
            return Err((io_failure(&e), false));
        }
        let result = conn.read_response(method, deadline, self.stop);
        result.map_err(|f| (f, conn.received))
    }
}

fn connect(addr: SocketAddr, timeout: Duration) -> Result<Conn, Failure> {
    let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|_| Failure::Connect)?;
    // Small requests must leave at once, not wait for Nagle's timer.
    let configured = stream
        .set_nodelay(true)
        .and_then(|()| stream.set_read_timeout(Some(TICK.min(timeout))))
        .and_then(|()| stream.set_write_timeout(Some(timeout)));
    configured.map_err(|_| Failure::Connect)?;
    Ok(Conn {
        stream,
        buf: vec![0; BUF_BYTES],
        start: 0,
        end: 0,
        received: false,
        #[cfg(test)]
        reads: 0,
    })
}

fn io_failure(error: &std::io::Error) -> Failure {
    match error.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Failure::Timeout,
        _ => Failure::Reset,
    }
}

impl Conn {
    /// Reads more bytes after `end`, compacting first; returns how many
    /// (0 at EOF). Waits in `TICK` slices until the deadline.
    fn fill(&mut self, deadline: Instant, stop: &AtomicBool) -> Result<usize, Failure> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            return Err(Failure::Protocol); // a head or line larger than the buffer
        }
        loop {
            #[cfg(test)]
            {
                self.reads += 1;
            }
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    self.received |= n > 0;
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if io_failure(&e) == Failure::Timeout => {
                    if stop.load(Ordering::Relaxed) {
                        return Err(Failure::Stopped);
                    }
                    if Instant::now() >= deadline {
                        return Err(Failure::Timeout);
                    }
                }
                Err(_) => return Err(Failure::Reset),
            }
        }
    }

    /// Like `fill`, but EOF before the response is complete is a reset.
    fn fill_more(&mut self, deadline: Instant, stop: &AtomicBool) -> Result<(), Failure> {
        match self.fill(deadline, stop)? {
            0 => Err(Failure::Reset),
            _ => Ok(()),
        }
    }

    /// Returns the status and whether the connection may be reused.
    fn read_response(
        &mut self,
        method: Method,
        deadline: Instant,
        stop: &AtomicBool,
    ) -> Result<(u16, bool), Failure> {
        loop {
            let head_len = self.head_len(deadline, stop)?;
            let head = parse_head(&self.buf[self.start..self.start + head_len])?;
            self.start += head_len;
            match head.status {
                101 => return Err(Failure::Protocol), // an upgrade nobody asked for
                100..=199 => continue,
                _ => {}
            }
            let framing = if method == Method::Head || head.status == 204 || head.status == 304 {
                Framing::None
            } else {
                head.framing
            };
            match framing {
                Framing::None => {}
                Framing::Length(n) => self.skip(n, deadline, stop)?,
                Framing::Chunked => self.skip_chunked(deadline, stop)?,
                Framing::UntilClose => {
                    while self.fill(deadline, stop)? > 0 {
                        self.start = self.end;
                    }
                }
            }
            let reusable = head.keep_alive && !matches!(framing, Framing::UntilClose);
            return Ok((head.status, reusable));
        }
    }

    /// Length of the head (through the blank line), reading until it is in.
    fn head_len(&mut self, deadline: Instant, stop: &AtomicBool) -> Result<usize, Failure> {
        let mut scanned = 0;
        loop {
            let window = &self.buf[self.start..self.end];
            if let Some(i) = find(&window[scanned..], b"\r\n\r\n") {
                return Ok(scanned + i + 4);
            }
            // Compaction in `fill` moves the window but not its contents
            // relative to `start`, so what was scanned stays scanned.
            scanned = window.len().saturating_sub(3);
            self.fill_more(deadline, stop)?;
        }
    }

    fn skip(&mut self, mut n: u64, deadline: Instant, stop: &AtomicBool) -> Result<(), Failure> {
        loop {
            let take = n.min((self.end - self.start) as u64);
            self.start += take as usize;
            n -= take;
            if n == 0 {
                return Ok(());
            }
            self.fill_more(deadline, stop)?;
        }
    }

    /// Next line without its CRLF, as a `start..end` range into `buf`.
    fn line(&mut self, deadline: Instant, stop: &AtomicBool) -> Result<(usize, usize), Failure> {
        loop {
            if let Some(i) = self.buf[self.start..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                let (from, to) = (self.start, self.start + i);
                self.start = to + 1;
                let to = if to > from && self.buf[to - 1] == b'\r' {
                    to - 1
                } else {
                    to
                };
                return Ok((from, to));
            }
            if self.end - self.start > MAX_LINE {
                return Err(Failure::Protocol);
            }
            self.fill_more(deadline, stop)?;
        }
    }

    fn skip_chunked(&mut self, deadline: Instant, stop: &AtomicBool) -> Result<(), Failure> {
        loop {
            let (from, to) = self.line(deadline, stop)?;
            let size_text = self.buf[from..to]
                .split(|&b| b == b';')
                .next()
                .unwrap_or(&[]);
            let size = parse_hex(size_text.trim_ascii()).ok_or(Failure::Protocol)?;
            if size == 0 {
                // Trailer fields, then the blank line.
                loop {
                    let (from, to) = self.line(deadline, stop)?;
                    if from == to {
                        return Ok(());
                    }
                }
            }
            self.skip(size, deadline, stop)?;
            let (from, to) = self.line(deadline, stop)?;
            if from != to {
                return Err(Failure::Protocol);
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse_hex(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 15 || !text.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let text = std::str::from_utf8(text).ok()?;
    u64::from_str_radix(text, 16).ok()
}

struct Head {
    status: u16,
    keep_alive: bool,
    framing: Framing,
}

/// Parses a response head (status line and headers, through the blank
/// line).
fn parse_head(head: &[u8]) -> Result<Head, Failure> {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next().ok_or(Failure::Protocol)?;
    let http11 = match status_line.get(..9) {
        Some(b"HTTP/1.1 ") => true,
        Some(b"HTTP/1.0 ") => false,
        _ => return Err(Failure::Protocol),
    };
    let code = status_line.get(9..12).ok_or(Failure::Protocol)?;
    if !code.iter().all(u8::is_ascii_digit) || status_line.get(12).is_some_and(|&b| b != b' ') {
        return Err(Failure::Protocol);
    }
    let status = code.iter().fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
    let mut keep_alive = http11;
    let mut length: Option<u64> = None;
    let mut chunked = false;
    for line in lines.filter(|l| !l.is_empty()) {
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(Failure::Protocol)?;
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-length") {
            let text = std::str::from_utf8(value).map_err(|_| Failure::Protocol)?;
            let n: u64 = text.parse().map_err(|_| Failure::Protocol)?;
            if length.is_some_and(|old| old != n) {
                return Err(Failure::Protocol); // conflicting lengths: unsafe to read on
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            let last = value.rsplit(|&b| b == b',').next().unwrap_or(&[]);
            chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            if !chunked {
                return Err(Failure::Protocol); // e.g. gzip alone: no way to find the end
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    let framing = match (chunked, length) {
        (true, _) => Framing::Chunked,
        (false, Some(n)) => Framing::Length(n),
        (false, None) => Framing::UntilClose,
    };
    Ok(Head {
        status,
        keep_alive,
        framing,
    })
}

#[cfg(test)]
mod tests;
