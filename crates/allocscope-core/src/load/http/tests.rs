//! Response-head parsing on captured server responses; the I/O paths are
//! covered against a real server in `run_tests`, except the read count of a
//! small response, which needs the connection's own counter.

use super::*;

fn head(text: &str) -> Result<Head, Failure> {
    parse_head(text.as_bytes())
}

#[test]
fn reads_status_framing_and_keep_alive_from_real_heads() {
    // nginx 1.24, a static file.
    let nginx = head(
        "HTTP/1.1 200 OK\r\nServer: nginx/1.24.0\r\nDate: Mon, 02 Jun 2025 10:00:00 GMT\r\n\
         Content-Type: text/html\r\nContent-Length: 615\r\nConnection: keep-alive\r\n\
         ETag: \"64dbafc8-267\"\r\nAccept-Ranges: bytes\r\n\r\n",
    )
    .expect("nginx head");
    assert_eq!(nginx.status, 200);
    assert!(nginx.keep_alive);
    assert!(matches!(nginx.framing, Framing::Length(615)));
    // allocscope's own server scenario, closing.
    let own = head(
        "HTTP/1.1 404 Not Found\r\nServer: allocscope\r\nContent-Type: text/plain\r\n\
         Content-Length: 10\r\nConnection: close\r\n\r\n",
    )
    .expect("own head");
    assert_eq!(own.status, 404);
    assert!(!own.keep_alive);
    let chunked = head(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nConnection: Keep-Alive, TE\r\n\r\n",
    )
    .expect("chunked head");
    assert!(matches!(chunked.framing, Framing::Chunked));
    assert!(chunked.keep_alive);
}

#[test]
fn http10_closes_unless_kept_alive_and_lengthless_bodies_run_to_close() {
    let old = head("HTTP/1.0 200 OK\r\n\r\n").expect("1.0 head");
    assert!(!old.keep_alive);
    assert!(matches!(old.framing, Framing::UntilClose));
    let kept = head("HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n")
        .expect("1.0 keep-alive");
    assert!(kept.keep_alive);
}

#[test]
fn refuses_heads_that_are_not_http() {
    for bad in [
        "SPDY/9 200 OK\r\n\r\n",
        "HTTP/1.1 2x0 OK\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    ] {
        assert_eq!(head(bad).err(), Some(Failure::Protocol), "{bad:?}");
    }
}

#[test]
fn chunk_sizes_are_hex_and_bounded() {
    assert_eq!(parse_hex(b"1a"), Some(26));
    assert_eq!(parse_hex(b"FFFF"), Some(65535));
    assert_eq!(parse_hex(b""), None);
    assert_eq!(parse_hex(b"-1"), None);
    assert_eq!(parse_hex(b"1000000000000000"), None);
}

/// A keep-alive client against the test server: each small response must
/// take one write and one read (a read that waited for more bytes, or a
/// second read per response, would show here), and a closed loop on one
/// connection must not stall on timers (a read timeout, or Nagle's
/// algorithm meeting delayed ACKs, costs 40-50 ms per request).
#[test]
fn a_small_response_takes_one_read_and_no_timer() {
    let server = crate::load::test_server::TestServer::start();
    let stop = AtomicBool::new(false);
    let host = server.addr.to_string();
    let mut client = Client::new(server.addr, &host, Duration::from_secs(2), &stop);
    let started = Instant::now();
    for i in 0..500 {
        assert_eq!(client.send(Method::Get, &format!("/tiny/{i}")), Ok(200));
    }
    let elapsed = started.elapsed();
    let conn = client.conn.as_ref().expect("the connection stays open");
    assert_eq!(conn.reads, 500, "reads for 500 small responses");
    assert_eq!(server.connections.load(Ordering::Relaxed), 1);
    // Measured: 0.01-0.1 s; one 40 ms stall in ten requests would take 2 s.
    assert!(
        elapsed < Duration::from_secs(1),
        "500 requests took {elapsed:?}"
    );
}
