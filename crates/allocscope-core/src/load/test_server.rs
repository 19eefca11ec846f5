//! A small real HTTP/1.1 server for the load generator's tests: std
//! threads, keep-alive, and routes that misbehave on purpose (404, chunked,
//! close, a response cut short, garbage, slow answers). It logs every
//! request line it received, so tests can check what was actually sent.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(super) struct TestServer {
    pub addr: SocketAddr,
    /// `METHOD PATH` of every request received, in arrival order.
    pub log: Arc<Mutex<Vec<String>>>,
    pub connections: Arc<AtomicU64>,
}

impl TestServer {
    /// Listens on 127.0.0.1:0; the accept thread lives until the test
    /// process ends.
    pub fn start() -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a test port");
        let addr = listener.local_addr().expect("local address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicU64::new(0));
        let (for_log, for_count) = (Arc::clone(&log), Arc::clone(&connections));
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                for_count.fetch_add(1, Ordering::Relaxed);
                let log = Arc::clone(&for_log);
                std::thread::spawn(move || serve(stream, &log));
            }
        });
        TestServer {
            addr,
            log,
            connections,
        }
    }

    pub fn received(&self) -> Vec<String> {
        self.log.lock().expect("log lock").clone()
    }
}

/// Serves one connection until the client closes or a route closes it.
fn serve(mut stream: TcpStream, log: &Mutex<Vec<String>>) {
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let head_end = loop {
            if let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
            }
        };
        let head = String::from_utf8_lossy(&pending[..head_end]).into_owned();
        pending.drain(..head_end);
        let mut words = head.split_whitespace();
        let method = words.next().unwrap_or("").to_string();
        let path = words.next().unwrap_or("").to_string();
        log.lock()
            .expect("log lock")
            .push(format!("{method} {path}"));
        if !respond(&mut stream, &method, &path) {
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// Writes the route's response; false when the connection must close.
fn respond(stream: &mut TcpStream, method: &str, path: &str) -> bool {
    let head_only = method == "HEAD";
    let simple = |status: &str, body: &str, extra: &str| {
        let mut text = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{extra}\r\n",
            body.len()
        );
        if !head_only {
            text.push_str(body);
        }
        text
    };
    let (text, keep) = match path {
        "/missing" => (simple("404 Not Found", "no such page", ""), true),
        "/close" => (simple("200 OK", "bye", "Connection: close\r\n"), false),
        "/partial" => (
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..".to_string(),
            false,
        ),
        "/garbage" => ("SPDY/9 what\r\n\r\n".to_string(), false),
        "/continue" => (
            format!(
                "HTTP/1.1 100 Continue\r\n\r\n{}",
                simple("200 OK", "ok", "")
            ),
            true,
        ),
        "/until-close" => (
            "HTTP/1.1 200 OK\r\n\r\nstreamed until close".to_string(),
            false,
        ),
        "/chunked" => {
            let body = if head_only {
                ""
            } else {
                "6;ext=1\r\nhello \r\n5\r\nworld\r\n0\r\nX-Trailer: yes\r\n\r\n"
            };
            (
                format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{body}"),
                true,
            )
        }
        "/big" => (simple("200 OK", &"x".repeat(1 << 20), ""), true),
        p if p.starts_with("/slow/") => {
            let ms = p["/slow/".len()..].parse().unwrap_or(0);
            std::thread::sleep(Duration::from_millis(ms));
            (simple("200 OK", "late", ""), true)
        }
        _ => (simple("200 OK", "hello", ""), true),
    };
    stream.write_all(text.as_bytes()).is_ok() && keep
}
