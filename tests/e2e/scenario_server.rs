//! The `server` scenario end to end: the real binary serving real HTTP/1.1
//! over 127.0.0.1 (keep-alive, pipelining, HEAD, 404, 400, concurrency),
//! under glibc and a preloaded jemalloc, and exiting 0 on SIGTERM with a
//! summary whose request count matches what the clients sent.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

const JEMALLOC: &str = "/lib/x86_64-linux-gnu/libjemalloc.so.2";

/// A running `allocscope workload server`; killed on drop if still running.
struct Server {
    child: Child,
    port: u16,
    lines: Receiver<String>,
}

impl Server {
    fn start(env: &[(&str, &str)], extra: &[&str]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_allocscope"));
        command
            .args(["workload", "server", "--port", "0", "--threads", "4"])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        let mut child = command.spawn().expect("allocscope starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            port: 0,
            lines,
        };
        let first = server.line();
        assert_eq!(first, "allocscope:mark listening");
        let listening = server.line();
        let port = listening
            .strip_prefix("server: listening on http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix('/'))
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("unexpected line {listening:?}"));
        server.port = port;
        server
    }

    fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a line from the server within 10 s")
    }

    fn connect(&self) -> Client {
        Client::connect(self.port)
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        let rc = unsafe { libc::kill(self.pid(), signal) };
        assert_eq!(rc, 0, "kill");
    }

    /// Waits for exit; returns the exit code and the requests= count.
    fn wait_with_summary(mut self, limit: Duration) -> (Option<i32>, u64) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "server still running after {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let summary = self.line();
        let requests = summary
            .strip_prefix("server: requests=")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected summary {summary:?}"));
        assert!(summary.contains(" bytes_out="), "{summary}");
        (status.code(), requests)
    }

    fn vm_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("/proc/PID/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Reply {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or("")
    }
}

struct Client {
    reader: BufReader<TcpStream>,
    /// Responses read, to compare with the server's summary.
    replies: u64,
}

impl Client {
    fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        Client {
            reader: BufReader::new(stream),
            replies: 0,
        }
    }

    fn send(&mut self, raw: &str) {
        self.reader
            .get_mut()
            .write_all(raw.as_bytes())
            .expect("sends");
    }

    fn get(&mut self, path: &str) -> Reply {
        self.send(&format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n"));
        self.reply(false)
    }

    fn reply(&mut self, head_only: bool) -> Reply {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        let status = line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = HashMap::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("header line");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("header");
            headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
        }
        let length: usize = headers["content-length"].parse().expect("length");
        let mut body = vec![0; if head_only { 0 } else { length }];
        self.reader.read_exact(&mut body).expect("body");
        self.replies += 1;
        Reply {
            status,
            headers,
            body,
        }
    }

    /// True when the server has closed the connection.
    fn closed(&mut self) -> bool {
        let mut rest = Vec::new();
        matches!(self.reader.read_to_end(&mut rest), Ok(0))
    }
}

/// Everything the issue asks of the protocol; returns the requests sent.
fn exercise_protocol(server: &Server) -> u64 {
    let mut c = server.connect();
    let index = c.get("/?from=test");
    assert_eq!(index.status, 200);
    assert!(String::from_utf8_lossy(&index.body).contains("allocscope server"));
    assert_eq!(c.get("/health").body, b"ok");
    let item = c.get("/item/7");
    assert_eq!(item.status, 200);
    assert!(item.body.len() >= 1024, "{}", item.body.len());
    assert_eq!(c.get("/item/7").body, item.body, "cached page is the same");
    c.send("HEAD /item/7 HTTP/1.1\r\nHost: test\r\n\r\n");
    let head = c.reply(true);
    assert_eq!(head.header("content-length"), item.body.len().to_string());
    assert_eq!(c.get("/nowhere").status, 404);
    assert_eq!(c.get("/item/x").status, 404);
    // Two pipelined requests in one write: both answered, in order.
    c.send("GET /health HTTP/1.1\r\n\r\nGET /item/8 HTTP/1.1\r\n\r\n");
    assert_eq!(c.reply(false).body, b"ok");
    assert!(c
        .reply(false)
        .body
        .starts_with(b"<!doctype html>\n<html><body><h1>item 8</h1>"));
    c.send("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
    let last = c.reply(false);
    assert_eq!(last.header("connection"), "close");
    assert!(c.closed(), "closed after Connection: close");

    let mut old = server.connect();
    old.send("GET /health HTTP/1.0\r\n\r\n");
    assert_eq!(old.reply(false).header("connection"), "close");
    assert!(old.closed(), "HTTP/1.0 closes by default");

    let mut bad = server.connect();
    bad.send("this is not http\r\n\r\n");
    assert_eq!(bad.reply(false).status, 400);
    assert!(bad.closed(), "closed after 400");
    c.replies + old.replies + bad.replies
}

/// Clients on several threads, each with a keep-alive connection (and a
/// new connection now and then); returns the requests sent.
fn exercise_concurrency(server: &Server, clients: u64, per_client: u64) -> u64 {
    let port = server.port;
    let threads: Vec<_> = (0..clients)
        .map(|t| {
            std::thread::spawn(move || {
                let connect = || Client::connect(port);
                let mut client = connect();
                let mut replies = 0;
                for i in 0..per_client {
                    if i % 100 == 99 {
                        replies += client.replies;
                        client = connect();
                    }
                    let id = (t * 7919 + i * 31) % 5000;
                    let reply = client.get(&format!("/item/{id}"));
                    assert_eq!(reply.status, 200);
                    assert_eq!(reply.header("content-length"), reply.body.len().to_string());
                }
                replies + client.replies
            })
        })
        .collect();
    let replies: u64 = threads
        .into_iter()
        .map(|thread| thread.join().expect("client thread"))
        .sum();
    assert_eq!(replies, clients * per_client);
    replies
}

fn serves_and_stops_cleanly(env: &[(&str, &str)]) {
    let server = Server::start(env, &["--cache-entries", "100"]);
    let mut sent = exercise_protocol(&server);
    sent += exercise_concurrency(&server, 4, 250);
    server.signal(libc::SIGTERM);
    let (code, requests) = server.wait_with_summary(Duration::from_secs(5));
    assert_eq!(code, Some(0));
    assert_eq!(requests, sent);
}

#[test]
fn server_serves_http11_and_exits_zero_on_sigterm() {
    serves_and_stops_cleanly(&[]);
}

#[test]
fn server_works_under_preloaded_jemalloc() {
    if !crate::common::require(
        std::path::Path::new(JEMALLOC).exists(),
        JEMALLOC,
        "apt-get install libjemalloc2",
    ) {
        return;
    }
    let server = Server::start(&[("LD_PRELOAD", JEMALLOC)], &[]);
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", server.pid())).expect("maps");
    assert!(maps.contains("libjemalloc.so.2"), "jemalloc is not mapped");
    drop(server);
    serves_and_stops_cleanly(&[("LD_PRELOAD", JEMALLOC)]);
}

#[test]
fn server_exits_on_its_own_after_max_requests() {
    let server = Server::start(&[], &["--max-requests", "5"]);
    let mut c = server.connect();
    for _ in 0..4 {
        assert_eq!(c.get("/health").header("connection"), "keep-alive");
    }
    assert_eq!(c.get("/health").header("connection"), "close");
    let (code, requests) = server.wait_with_summary(Duration::from_secs(5));
    assert_eq!((code, requests), (Some(0), 5));
}

#[test]
fn idle_keep_alive_connection_does_not_delay_sigint_exit() {
    let server = Server::start(&[], &["--idle-timeout-ms", "60000"]);
    let mut idle = server.connect();
    assert_eq!(idle.get("/health").status, 200);
    let started = Instant::now();
    server.signal(libc::SIGINT);
    let (code, requests) = server.wait_with_summary(Duration::from_secs(5));
    assert_eq!((code, requests), (Some(0), 1));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(idle.closed());
}

#[test]
fn idle_connection_is_closed_after_idle_timeout() {
    let server = Server::start(&[], &["--idle-timeout-ms", "300"]);
    let mut idle = server.connect();
    assert_eq!(idle.get("/health").status, 200);
    let started = Instant::now();
    assert!(idle.closed());
    // Not before the timeout (its clock started a moment before ours, at
    // the response), and not long after it.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert!(server.vm_rss_kib() > 0);
}
