//! `--metrics ADDR:PORT`: the current values of a recording in Prometheus's
//! text exposition format (0.0.4), served at `/metrics` by one small thread
//! on a std `TcpListener`, so recordings show up in the dashboards users
//! already run. The address is bound before recording starts, so a port in
//! use is an error then, not hours later; a non-loopback address must be
//! asked for with `--metrics-public`, since the values describe the host.

mod http;
mod publisher;

pub use publisher::{Current, Publisher, Shared};

use crate::error::RecordError;
use allocscope_core::usage_error::UsageError;
use allocscope_rounds::session::PerRun;
use anyhow::Context;
use std::fmt::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;

/// Parses `ADDR:PORT` (or `:PORT`, `PORT`: loopback) and refuses a
/// non-loopback address unless `public`.
pub fn parse_address(text: &str, public: bool) -> Result<SocketAddr, UsageError> {
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let bad = || UsageError::from(RecordError::NotAnAddress(text.to_string()));
    let trimmed = text.trim();
    let address = if let Ok(port) = trimmed.trim_start_matches(':').parse::<u16>() {
        SocketAddr::new(loopback, port)
    } else if let Some(port) = trimmed.strip_prefix("localhost:") {
        SocketAddr::new(loopback, port.parse().map_err(|_| bad())?)
    } else {
        trimmed.parse::<SocketAddr>().map_err(|_| bad())?
    };
    if !address.ip().is_loopback() && !public {
        return Err(RecordError::NotLoopback(address).into());
    }
    Ok(address)
}

/// `--metrics ADDRESS`: bound now, so that a port in use stops allocscope
/// before anything is measured, then served for the rest of the process's
/// life; said on stderr unless `quiet`.
pub fn start(address: SocketAddr, quiet: bool) -> anyhow::Result<Shared> {
    let listener = bind(address)?;
    let shared = Shared::default();
    serve(listener, Arc::clone(&shared)).context("starting the metrics server")?;
    if !quiet {
        eprintln!("allocscope: metrics at http://{address}/metrics");
    }
    Ok(shared)
}

fn bind(address: SocketAddr) -> Result<TcpListener, UsageError> {
    TcpListener::bind(address).map_err(|error| {
        if error.kind() == std::io::ErrorKind::AddrInUse {
            RecordError::AddressInUse(address).into()
        } else {
            RecordError::CannotListen {
                address,
                reason: error.to_string(),
            }
            .into()
        }
    })
}

/// `compare --metrics`: serves from now on, and makes each run's
/// extension (`rounds::session::PerRun`) publish under the experiment and
/// the configuration.
pub fn serve_runs(address: SocketAddr) -> anyhow::Result<PerRun> {
    let shared = start(address, false)?;
    Ok(Box::new(move |experiment, config| {
        Box::new(Publisher::new(&shared, experiment, config))
    }))
}

/// Serves `GET /metrics` from `shared` on a background thread.
fn serve(listener: TcpListener, shared: Shared) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let body = match shared.lock() {
                    Ok(values) => render(&values),
                    Err(poisoned) => render(&poisoned.into_inner()),
                };
                // A client that hangs up or stalls is its own problem.
                let _ = http::answer(stream, &body);
            }
        })?;
    Ok(())
}

/// One metric family: name, help, type, and how to read it from a series.
struct Family {
    name: &'static str,
    help: &'static str,
    kind: &'static str,
    value: Read,
}

/// How a family reads its value from a series; `None` leaves it out.
type Read = fn(&Current) -> Option<f64>;

/// The families in the order they are served.
#[rustfmt::skip]
const FAMILIES: &[Family] = &[
    gauge("allocscope_rss_bytes", "Resident set size of the recorded process tree.",
        |c| c.sample.map(|s| s.rss_bytes as f64)),
    gauge("allocscope_pss_bytes", "Proportional set size of the tree (read within the sampler's CPU budget).",
        |c| c.sample.and_then(|s| s.pss_bytes).map(|b| b as f64)),
    gauge("allocscope_uss_bytes", "Unique set size of the tree.",
        |c| c.sample.and_then(|s| s.uss_bytes).map(|b| b as f64)),
    gauge("allocscope_swap_bytes", "Swapped-out memory of the tree.",
        |c| c.sample.and_then(|s| s.swap_bytes).map(|b| b as f64)),
    gauge("allocscope_vsz_bytes", "Virtual size of the tree.",
        |c| c.sample.map(|s| s.vsz_bytes as f64)),
    gauge("allocscope_live_heap_bytes", "Live heap reported by the heap probe.",
        |c| c.sample.and_then(|s| s.live_heap_bytes).map(|b| b as f64)),
    gauge("allocscope_processes", "Live processes in the tree.",
        |c| c.sample.map(|s| f64::from(s.processes))),
    gauge("allocscope_threads", "Threads in the tree.",
        |c| c.sample.map(|s| f64::from(s.threads))),
    gauge("allocscope_minor_faults", "Minor page faults of the tree's live processes (drops when one exits).",
        |c| c.sample.map(|s| s.minor_faults as f64)),
    gauge("allocscope_major_faults", "Major page faults of the tree's live processes (drops when one exits).",
        |c| c.sample.map(|s| s.major_faults as f64)),
    gauge("allocscope_elapsed_seconds", "Seconds since the recording started.",
        |c| Some(c.elapsed_s)),
    counter("allocscope_samples_total", "Samples taken by this allocscope process.",
        |c| Some(c.samples_total as f64)),
    counter("allocscope_sampler_cpu_seconds_total", "CPU time allocscope's sampler used.",
        |c| Some(c.sampler_cpu_s)),
];

const fn gauge(name: &'static str, help: &'static str, value: Read) -> Family {
    Family {
        name,
        help,
        kind: "gauge",
        value,
    }
}

const fn counter(name: &'static str, help: &'static str, value: Read) -> Family {
    Family {
        name,
        help,
        kind: "counter",
        value,
    }
}

/// The text exposition of `values`: families with no value are left out.
pub fn render(values: &[Current]) -> String {
    let mut out = String::new();
    for family in FAMILIES {
        let lines: Vec<String> = values
            .iter()
            .filter_map(|c| {
                let v = (family.value)(c)?;
                let replica = (c.replica.as_deref())
                    .map(|r| format!(",replica=\"{}\"", escape(r)))
                    .unwrap_or_default();
                Some(format!(
                    "{}{{recording=\"{}\",config=\"{}\"{replica}}} {}\n",
                    family.name,
                    escape(&c.recording),
                    escape(&c.config),
                    number(v)
                ))
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind);
        out.extend(lines);
    }
    out
}

/// A label value as the format wants it: backslash, quote and newline escaped.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Whole numbers without a fraction; others with what they need.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::model::Sample;

    #[test]
    fn renders_families_with_help_type_and_escaped_labels() {
        let current = Current {
            recording: "web \"a\"\\b".into(),
            config: "glibc:arena_max=2".into(),
            replica: None,
            sample: Some(Sample {
                rss_bytes: 1024,
                pss_bytes: None,
                processes: 3,
                ..Sample::default()
            }),
            elapsed_s: 1.5,
            samples_total: 2,
            sampler_cpu_s: 0.25,
        };
        let text = render(&[current]);
        assert!(text.contains("# HELP allocscope_rss_bytes "), "{text}");
        assert!(text.contains("# TYPE allocscope_rss_bytes gauge\n"));
        assert!(text.contains(
            "allocscope_rss_bytes{recording=\"web \\\"a\\\"\\\\b\",config=\"glibc:arena_max=2\"} 1024\n"
        ));
        assert!(!text.contains("allocscope_pss_bytes"), "no PSS yet");
        assert!(text.contains("allocscope_elapsed_seconds{") && text.contains("} 1.5\n"));
        assert!(text.contains("# TYPE allocscope_samples_total counter\n"));
    }

    #[test]
    fn a_soak_instance_carries_its_replica_beside_its_configuration() {
        let instance = |replica: &str, rss_bytes| Current {
            recording: format!("jemalloc#{replica}"),
            config: "jemalloc".into(),
            replica: Some(replica.into()),
            sample: Some(Sample {
                rss_bytes,
                ..Sample::default()
            }),
            ..Current::default()
        };
        let text = render(&[instance("1", 4096), instance("2", 8192)]);
        assert!(text.contains(
            "allocscope_rss_bytes{recording=\"jemalloc#1\",config=\"jemalloc\",replica=\"1\"} 4096\n"
        ), "{text}");
        assert!(text.contains(",replica=\"2\"} 8192\n"), "{text}");
        assert_eq!(
            text.matches("# TYPE allocscope_rss_bytes").count(),
            1,
            "{text}"
        );
    }

    #[test]
    fn nothing_recorded_yet_is_an_empty_page() {
        assert_eq!(render(&[]), "");
    }

    #[test]
    fn addresses_default_to_loopback_and_public_needs_consent() {
        assert_eq!(
            parse_address("9464", false).ok(),
            "127.0.0.1:9464".parse().ok()
        );
        assert_eq!(
            parse_address("localhost:80", false).ok(),
            "127.0.0.1:80".parse().ok()
        );
        assert!(parse_address("[::1]:9464", false).is_ok());
        let refused = parse_address("0.0.0.0:9464", false).expect_err("public");
        assert!(refused.to_string().contains("--metrics-public"));
        assert!(parse_address("0.0.0.0:9464", true).is_ok());
        assert!(parse_address("here", false).is_err());
    }

    #[test]
    fn a_port_in_use_is_refused_at_once() -> anyhow::Result<()> {
        let taken = TcpListener::bind("127.0.0.1:0")?;
        let error = bind(taken.local_addr()?).expect_err("in use");
        assert!(error.to_string().contains("already in use"), "{error}");
        Ok(())
    }
}
