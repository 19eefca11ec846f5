//! `server` scenario: the threaded Ruby web app (a Puma-style pool). A
//! threaded HTTP/1.1 server on 127.0.0.1 that allocates per request and
//! exits cleanly, with code 0, on SIGTERM or SIGINT.
//!
//! This file owns the process side: the listener, the fixed pool of workers
//! fed from a shared queue, keep-alive connections and shutdown. Parsing is
//! in `server_http`, routes and the shared cache in `server_app`.
//!
//! Readiness: once bound it prints `allocscope:mark listening` and
//! `server: listening on http://127.0.0.1:PORT/`; at exit
//! `server: requests=N bytes_out=M`, where N counts every response (400s
//! and 404s included; one whose client vanished mid-write too) and M every
//! byte written.

use super::marker::mark;
use super::server_app::{App, AppConfig};
use super::server_http::{self, ParseError, Request, Response, MAX_BODY_BYTES, MAX_HEAD_BYTES};
use anyhow::Context;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// TCP port on 127.0.0.1; 0 picks a free one (read it from the
    /// `listening on` line).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Worker threads, like a Puma pool; with glibc each may get its own
    /// arena. A keep-alive connection holds its worker until it closes or
    /// idles out, so clients beyond this number wait in the queue.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: u32,
    /// Pages kept in the cache shared by the workers (0 disables it).
    #[arg(long, default_value_t = 2000)]
    cache_entries: usize,
    /// Largest `/item/ID` page, in KiB; sizes run from 1 KiB up, skewed small.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65536))]
    response_kib: u32,
    /// Seed for page sizes and contents: the same requests allocate the
    /// same way under every allocator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Exit (code 0) after this many responses; 0 serves until SIGTERM.
    /// Responses already in progress on other connections still complete.
    #[arg(long, default_value_t = 0)]
    max_requests: u64,
    /// Close a keep-alive connection idle this long, in milliseconds, so
    /// idle clients do not pin workers forever.
    #[arg(long, default_value_t = 5000)]
    idle_timeout_ms: u64,
}

/// How often blocked accepts and reads wake to check for shutdown: bounds
/// how long SIGTERM waits for an idle connection.
const POLL_TICK: Duration = Duration::from_millis(100);
/// A request whose head or body has not fully arrived by then is dropped.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// State shared by the accept loop and the workers.
struct Shared {
    app: App,
    queue: Mutex<VecDeque<TcpStream>>,
    ready: Condvar,
    stop: Arc<AtomicBool>,
    requests: AtomicU64,
    bytes_out: AtomicU64,
    max_requests: u64,
    idle_timeout: Duration,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<TcpStream>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a response about to be sent, before its headers are written,
    /// so the one that reaches `--max-requests` can say `Connection: close`.
    /// Returns whether the server is now stopping.
    fn count_response(&self) -> bool {
        let n = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        if self.max_requests > 0 && n >= self.max_requests {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.stopping()
    }
}

pub fn run(args: &ServerArgs) -> anyhow::Result<i32> {
    // One flag for both signals: either means "finish up and exit 0". It is
    // registered before binding so that a signal sent as soon as the
    // listening line appears is never lost to the default action.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .with_context(|| format!("installing a handler for signal {signal}"))?;
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, args.port))
        .with_context(|| format!("binding 127.0.0.1:{}", args.port))?;
    let port = listener
        .local_addr()
        .context("reading the bound address")?
        .port();
    listener
        .set_nonblocking(true)
        .context("making the listener non-blocking")?;

    let config = AppConfig {
        seed: args.seed,
        response_max_bytes: args.response_kib as usize * 1024,
    };
    let shared = Arc::new(Shared {
        app: App::new(config, args.cache_entries),
        queue: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
        stop,
        requests: AtomicU64::new(0),
        bytes_out: AtomicU64::new(0),
        max_requests: args.max_requests,
        idle_timeout: Duration::from_millis(args.idle_timeout_ms),
    });
    let mut workers = Vec::new();
    for i in 0..args.threads {
        let for_worker = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name(format!("server-{i}"))
            .spawn(move || worker(&for_worker))
            .with_context(|| format!("starting worker thread {i}"));
        match handle {
            Ok(handle) => workers.push(handle),
            Err(e) => {
                shutdown(&shared, workers);
                return Err(e);
            }
        }
    }

    mark("listening");
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "server: listening on http://127.0.0.1:{port}/");
        let _ = out.flush();
    }

    let accepted = accept_loop(&listener, &shared);
    drop(listener);
    shutdown(&shared, workers);
    accepted?;

    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "server: requests={} bytes_out={}",
        shared.requests.load(Ordering::Relaxed),
        shared.bytes_out.load(Ordering::Relaxed)
    );
    let _ = out.flush();
    Ok(0)
}

/// Accepts until told to stop. Waits in poll(2) with a timeout rather than
/// in accept(2): a new connection is taken at once, and the stop flag is
/// seen within one tick.
fn accept_loop(listener: &TcpListener, shared: &Shared) -> anyhow::Result<()> {
    let mut pollfd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    while !shared.stopping() {
        // SAFETY: one valid pollfd for a socket that outlives the call.
        let rc = unsafe { libc::poll(&mut pollfd, 1, POLL_TICK.as_millis() as libc::c_int) };
        if rc < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == ErrorKind::Interrupted {
                continue; // the signal itself; the loop condition decides
            }
            return Err(error).context("waiting for connections");
        }
        // Drain every pending connection: the listener is non-blocking.
        loop {
            match listener.accept() {
                Ok((stream, _)) => enqueue(shared, stream),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // ECONNABORTED and friends concern one client; EMFILE
                // clears as connections close. Neither ends the server.
                Err(e) if is_transient_accept_error(&e) => {
                    std::thread::sleep(Duration::from_millis(10));
                    break;
                }
                Err(e) => return Err(e).context("accepting a connection"),
            }
        }
    }
    Ok(())
}

fn is_transient_accept_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    ) || matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM | libc::EPROTO)
    )
}

fn enqueue(shared: &Shared, stream: TcpStream) {
    // Accepted sockets inherit nothing useful here: make them blocking with
    // a read timeout (the tick at which a worker checks for shutdown).
    let setup = stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_read_timeout(Some(POLL_TICK)))
        .and_then(|()| stream.set_write_timeout(Some(REQUEST_TIMEOUT)))
        .and_then(|()| stream.set_nodelay(true));
    if setup.is_err() {
        return; // the client went away already
    }
    shared.queue().push_back(stream);
    shared.ready.notify_one();
}

/// Stops the workers after their current request and joins them.
fn shutdown(shared: &Shared, workers: Vec<std::thread::JoinHandle<()>>) {
    shared.stop.store(true, Ordering::Relaxed);
    {
        // Taking the lock orders the store before any waiter's re-check.
        let _queue = shared.queue();
        shared.ready.notify_all();
    }
    for worker in workers {
        let _ = worker.join();
    }
    // Connections accepted but never served are closed unanswered.
    shared.queue().clear();
}

fn worker(shared: &Shared) {
    loop {
        let stream = {
            let mut queue = shared.queue();
            loop {
                if shared.stopping() {
                    return;
                }
                if let Some(stream) = queue.pop_front() {
                    break stream;
                }
                queue = shared
                    .ready
                    .wait_timeout(queue, POLL_TICK)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        };
        serve_connection(shared, stream);
    }
}

/// What reading the next request produced.
enum Next {
    Request(Request),
    /// A malformed request: answer 400 and close.
    Bad(ParseError),
    /// Closed by the client, idle too long, an I/O error, or shutting down.
    Close,
}

/// Serves requests on one connection until it closes, goes idle, or the
/// server stops. The buffer lives as long as the connection and keeps any
/// pipelined bytes that arrived after a request.
fn serve_connection(shared: &Shared, mut stream: TcpStream) {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    loop {
        let (response, keep_alive, head_only) = match read_request(shared, &mut stream, &mut buf) {
            Next::Close => return,
            Next::Bad(e) => (
                Response::text(400, &format!("bad request: {e:?}\n")),
                false,
                false,
            ),
            Next::Request(request) => {
                let response = shared.app.handle(&request);
                (response, request.keep_alive(), request.method == "HEAD")
            }
        };
        // When stopping, finish this request but tell the client not to
        // send more.
        let stopping = shared.count_response();
        let keep_alive = keep_alive && !stopping;
        let bytes = response.to_bytes(keep_alive, head_only);
        if stream.write_all(&bytes).is_err() {
            return;
        }
        shared
            .bytes_out
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if !keep_alive {
            lingering_close(&mut stream);
            return;
        }
    }
}

/// Reads one request head (and discards its body) from `buf` plus the socket.
fn read_request(shared: &Shared, stream: &mut TcpStream, buf: &mut Vec<u8>) -> Next {
    let started = Instant::now();
    let head_len = loop {
        if let Some(end) = server_http::head_end(buf) {
            break end;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Next::Bad(ParseError::RequestLine);
        }
        // Idle (nothing of the next request yet) and partial requests time
        // out differently: an idle keep-alive connection may wait a while.
        let limit = if buf.is_empty() {
            shared.idle_timeout
        } else {
            REQUEST_TIMEOUT
        };
        match fill(stream, buf) {
            Fill::Data => {}
            Fill::Eof | Fill::Error => return Next::Close,
            // On shutdown a half-received request is dropped too: waiting
            // for a slow client would hold up the exit.
            Fill::Tick if shared.stopping() || started.elapsed() > limit => return Next::Close,
            Fill::Tick => {}
        }
    };
    let parsed = std::str::from_utf8(&buf[..head_len])
        .map_err(|_| ParseError::RequestLine)
        .and_then(server_http::parse_head);
    buf.drain(..head_len);
    let request = match parsed {
        Ok(request) => request,
        Err(e) => return Next::Bad(e),
    };
    let body_len = match request.content_length() {
        Ok(n) if n <= MAX_BODY_BYTES => n,
        _ => return Next::Bad(ParseError::ContentLength),
    };
    while buf.len() < body_len {
        match fill(stream, buf) {
            Fill::Data => {}
            Fill::Eof | Fill::Error => return Next::Close,
            Fill::Tick if started.elapsed() > REQUEST_TIMEOUT => return Next::Close,
            Fill::Tick => {}
        }
    }
    buf.drain(..body_len);
    Next::Request(request)
}

/// Closes our side, then reads briefly until the client closes: closing a
/// socket with unread input sends RST, which can destroy the response (a 400
/// especially) before the client has read it.
fn lingering_close(stream: &mut TcpStream) {
    if stream.shutdown(std::net::Shutdown::Write).is_err() {
        return;
    }
    let mut chunk = [0u8; 4096];
    let mut drained = 0usize;
    let started = Instant::now();
    while drained < 64 * 1024 && started.elapsed() < Duration::from_millis(500) {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

enum Fill {
    Data,
    Eof,
    /// The read timed out: nothing arrived within one tick.
    Tick,
    Error,
}

fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Fill {
    let mut chunk = [0u8; 4096];
    match stream.read(&mut chunk) {
        Ok(0) => Fill::Eof,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            Fill::Data
        }
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Fill::Tick,
        Err(e) if e.kind() == ErrorKind::Interrupted => Fill::Data,
        Err(_) => Fill::Error,
    }
}
