//! Just enough HTTP/1.1 for a Prometheus scrape: read the request head, answer
//! `GET /metrics` with the exposition and anything else with 404, close.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A client gets this long to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Larger request heads are cut off; a scrape sends a few hundred bytes.
const MAX_HEAD: usize = 8192;

pub fn answer(mut stream: TcpStream, body: &str) -> std::io::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    stream.set_write_timeout(Some(READ_TIMEOUT))?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let response = respond(&String::from_utf8_lossy(&head), body);
    stream.write_all(response.as_bytes())?;
    stream.flush()
}

/// The whole response to a request head.
fn respond(head: &str, body: &str) -> String {
    let mut words = head.lines().next().unwrap_or_default().split_whitespace();
    let (method, target) = (words.next(), words.next());
    let path = target.map(|t| t.split('?').next().unwrap_or_default());
    let (status, kind, body) = match (method, path) {
        (Some("GET" | "HEAD"), Some("/metrics")) => {
            ("200 OK", "text/plain; version=0.0.4; charset=utf-8", body)
        }
        _ => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "allocscope serves /metrics only\n",
        ),
    };
    let body = if method == Some("HEAD") { "" } else { body };
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::respond;

    #[test]
    fn serves_metrics_and_nothing_else() {
        let ok = respond("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "a 1\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("version=0.0.4") && ok.ends_with("\r\n\r\na 1\n"));
        assert!(ok.contains("Content-Length: 4\r\n"));
        let other = respond("GET / HTTP/1.1\r\n\r\n", "a 1\n");
        assert!(other.starts_with("HTTP/1.1 404"));
        assert!(respond("", "a 1\n").starts_with("HTTP/1.1 404"));
    }
}
