//! HTTP/1.1 for the `server` scenario: finding the end of a request head in
//! the bytes read so far, parsing it into owned values, and serialising a
//! response. No I/O here, so the parser is tested on captured request text.
//!
//! The parser allocates on purpose (owned `String`s, a `HashMap` of headers):
//! the scenario models a web framework, whose per-request garbage is part of
//! the allocation pattern being measured.

use std::collections::HashMap;
use std::fmt::Write as _;

/// A request head larger than this is refused (431-like, answered as 400):
/// it bounds what one connection can make the worker buffer.
pub(crate) const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Bodies are read and thrown away to keep the connection in step; a larger
/// one closes the connection instead of being read.
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;
const MAX_HEADERS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
}

#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The path without the query string.
    pub path: String,
    pub query: Option<String>,
    pub version: Version,
    /// Names lower-cased; a repeated header keeps its values joined by ", ".
    pub headers: HashMap<String, String>,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    RequestLine,
    Method,
    Target,
    Version,
    Header,
    TooManyHeaders,
    ContentLength,
    /// Chunked bodies are not needed by any load generator we drive.
    TransferEncoding,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// Whether the connection stays open after the response: HTTP/1.1
    /// unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    pub fn keep_alive(&self) -> bool {
        let tokens = self.header("connection").unwrap_or("");
        let has = |word: &str| {
            tokens
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case(word))
        };
        match self.version {
            Version::Http11 => !has("close"),
            Version::Http10 => has("keep-alive"),
        }
    }

    /// The body length to read and discard (0 when absent).
    pub(crate) fn content_length(&self) -> Result<usize, ParseError> {
        match self.header("content-length") {
            None => Ok(0),
            Some(value) => value
                .trim()
                .parse::<usize>()
                .map_err(|_| ParseError::ContentLength),
        }
    }
}

/// The length of the head (through the blank line) if `buf` holds a whole
/// one. Bare `\n` line ends are accepted, as RFC 9112 allows a server to.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(offset) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + offset;
        let rest = &buf[nl + 1..];
        if rest.starts_with(b"\n") {
            return Some(nl + 2);
        }
        if rest.starts_with(b"\r\n") {
            return Some(nl + 3);
        }
        i = nl + 1;
    }
    None
}

/// Parses a request head (request line, header lines, blank line).
pub fn parse_head(head: &str) -> Result<Request, ParseError> {
    // Leading blank lines before a request line are allowed (RFC 9112 2.2).
    let mut lines = head
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .skip_while(|l| l.is_empty());
    let request_line = lines.next().ok_or(ParseError::RequestLine)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ParseError::RequestLine);
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(ParseError::Method);
    }
    if !target.starts_with('/') || target.bytes().any(|b| b.is_ascii_control()) {
        return Err(ParseError::Target);
    }
    let version = match version {
        "HTTP/1.1" => Version::Http11,
        "HTTP/1.0" => Version::Http10,
        _ => return Err(ParseError::Version),
    };
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
        None => (target.to_owned(), None),
    };
    let mut headers: HashMap<String, String> = HashMap::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        // Obsolete line folding (a line starting with white space) is
        // rejected, as RFC 9112 5.2 lets a server do.
        if line.starts_with([' ', '\t']) {
            return Err(ParseError::Header);
        }
        let (name, value) = line.split_once(':').ok_or(ParseError::Header)?;
        if name.is_empty() || name.bytes().any(|b| !is_token_byte(b)) {
            return Err(ParseError::Header);
        }
        if headers.len() >= MAX_HEADERS {
            return Err(ParseError::TooManyHeaders);
        }
        let value = value.trim_matches([' ', '\t']);
        headers
            .entry(name.to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(value);
            })
            .or_insert_with(|| value.to_owned());
    }
    let request = Request {
        method: method.to_owned(),
        path,
        query,
        version,
        headers,
    };
    if request.header("transfer-encoding").is_some() {
        return Err(ParseError::TransferEncoding);
    }
    request.content_length()?;
    Ok(request)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
        }
    }

    pub fn text(status: u16, body: &str) -> Response {
        Response::new(status, "text/plain; charset=utf-8", body)
    }

    /// Head and body in one buffer, so one `write` sends a small response
    /// (two writes would meet Nagle's algorithm and delayed ACKs).
    pub(crate) fn to_bytes(&self, keep_alive: bool, head_only: bool) -> Vec<u8> {
        let mut head = String::with_capacity(160);
        let _ = write!(
            head,
            "HTTP/1.1 {} {}\r\nServer: allocscope\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len(),
            if keep_alive { "keep-alive" } else { "close" },
        );
        let mut out = head.into_bytes();
        if !head_only {
            out.extend_from_slice(&self.body);
        }
        out
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from `curl http://127.0.0.1:8080/item/42?x=1`.
    const CURL: &str = "GET /item/42?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n";
    // Captured from `ab -n 1 http://127.0.0.1:8080/`.
    const AB: &str = "GET / HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n";
    // Captured from wrk, whose requests carry only Host.
    const WRK: &str = "GET /health HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";

    fn parse(text: &str) -> Request {
        let end = head_end(text.as_bytes()).expect("a whole head");
        parse_head(&text[..end]).expect("parses")
    }

    #[test]
    fn parses_curl_request_with_query() {
        let r = parse(CURL);
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/item/42");
        assert_eq!(r.query.as_deref(), Some("x=1"));
        assert_eq!(r.version, Version::Http11);
        assert_eq!(r.header("user-agent"), Some("curl/7.88.1"));
        assert_eq!(r.header("host"), Some("127.0.0.1:8080"));
        assert!(r.keep_alive());
    }

    #[test]
    fn http10_closes_unless_keep_alive_is_asked_for() {
        assert!(!parse(AB).keep_alive());
        let asked = AB.replace("Accept:", "Connection: Keep-Alive\r\nAccept:");
        assert!(parse(&asked).keep_alive());
    }

    #[test]
    fn http11_honours_connection_close_among_tokens() {
        assert!(parse(WRK).keep_alive());
        let closing = WRK.replace("\r\n\r\n", "\r\nConnection: TE, close\r\n\r\n");
        assert!(!parse(&closing).keep_alive());
    }

    #[test]
    fn finds_head_end_with_pipelined_bytes_after_it() {
        let two = format!("{WRK}{CURL}");
        assert_eq!(head_end(two.as_bytes()), Some(WRK.len()));
        assert_eq!(head_end(&WRK.as_bytes()[..WRK.len() - 1]), None);
        assert_eq!(head_end(b"GET / HTTP/1.1\nHost: x\n\nrest"), Some(24));
    }

    #[test]
    fn repeated_headers_are_joined_and_names_lower_cased() {
        let r = parse("GET / HTTP/1.1\r\nX-A: 1\r\nx-a: 2\r\n\r\n");
        assert_eq!(r.header("x-a"), Some("1, 2"));
    }

    #[test]
    fn content_length_is_read_for_discarding() {
        let r = parse("POST /item/1 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(r.content_length(), Ok(5));
    }

    #[test]
    fn rejects_malformed_heads() {
        let cases = [
            ("garbage\r\n\r\n", ParseError::RequestLine),
            ("GET /\r\n\r\n", ParseError::RequestLine),
            ("GET  / HTTP/1.1\r\n\r\n", ParseError::RequestLine),
            ("get / HTTP/1.1\r\n\r\n", ParseError::Method),
            ("GET item HTTP/1.1\r\n\r\n", ParseError::Target),
            ("GET / HTTP/2.0\r\n\r\n", ParseError::Version),
            ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", ParseError::Header),
            ("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", ParseError::Header),
            (
                "GET / HTTP/1.1\r\nA: 1\r\n folded\r\n\r\n",
                ParseError::Header,
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                ParseError::ContentLength,
            ),
            (
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                ParseError::TransferEncoding,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_head(text).err(), Some(expected), "{text:?}");
        }
    }

    #[test]
    fn rejects_too_many_headers() {
        let mut text = String::from("GET / HTTP/1.1\r\n");
        for i in 0..=MAX_HEADERS {
            text.push_str(&format!("X-{i}: v\r\n"));
        }
        text.push_str("\r\n");
        assert_eq!(parse_head(&text).err(), Some(ParseError::TooManyHeaders));
    }

    #[test]
    fn response_has_content_length_and_head_omits_body() {
        let response = Response::text(200, "ok");
        let full = String::from_utf8(response.to_bytes(true, false)).expect("utf-8");
        assert!(full.starts_with("HTTP/1.1 200 OK\r\n"), "{full}");
        assert!(full.contains("Content-Length: 2\r\n"), "{full}");
        assert!(full.contains("Connection: keep-alive\r\n"), "{full}");
        assert!(full.ends_with("\r\n\r\nok"), "{full}");
        let head = String::from_utf8(response.to_bytes(false, true)).expect("utf-8");
        assert!(head.contains("Content-Length: 2\r\n"), "{head}");
        assert!(head.contains("Connection: close\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
    }
}
