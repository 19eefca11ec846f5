//! `soak -- COMMAND`: one instance started the way a `compare` run is (its
//! own process group with a parent-death signal, its own memory cgroup, the
//! heap probe preloaded before the allocator, stdout through the tap into a
//! log file), with a sampling loop of its own whose sampler reads its probe
//! files and its cgroup. `{port}` (a free loopback port, fresh at each
//! start) and `{instance}` (its directory under the soak's) are filled in
//! the command, the readiness address and the load command.
//!
//! The process is started by the core's `run::start`, as a `compare` run's
//! is, without the reaper: several instances run at once, so each is
//! waited for by its pid (`run::Started`).

use crate::load_figures::LoadTail;
use allocscope_core::cgroup::Parent;
use allocscope_core::model::Config;
use allocscope_core::probe::ProbeLaunch;
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{self, Event, Start, Started};
use allocscope_core::user_metric::UserMetric;
use anyhow::Context;
use std::ffi::OsString;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// The CPU budget (of one core) of all the soak's samplers together: with
/// the loop's own work (a commit a tick, exits looked at) the soak stays
/// under 1% of a core (`benches/soak_sampler_cpu.rs`). Below the 0.8% a
/// `compare` run's sampler has, smaps_rollup is read less often and PSS
/// estimated between reads; the cgroup's figures are read every tick.
pub const SOAK_BUDGET: f64 = 0.005;

/// One instance's sampling loop, one of `instances`: its share of
/// `SOAK_BUDGET`, and its walks sharing the others' listing of /proc.
pub fn soak_sampling(pid: i32, interval: Duration, instances: usize) -> SamplingLoop {
    let mut sampling = SamplingLoop::new(pid, interval);
    sampling.sampler_mut().share_budget(SOAK_BUDGET, instances);
    sampling.share_listing();
    sampling
}

pub const PORT: &str = "{port}";
pub const INSTANCE: &str = "{instance}";

/// A server instance is ready once its address accepts a connection.
pub struct Server {
    /// `HOST:PORT`, placeholders allowed.
    pub ready: String,
    pub ready_timeout: Duration,
    /// `--load`, run with `sh -c` once the instance is ready.
    pub load: Option<String>,
    /// `--metric`s read from the load's output as it runs.
    pub metrics: Vec<UserMetric>,
}

/// One configuration of the soak: what its instances preload.
pub struct Flavour {
    pub config: Config,
    pub probe: Option<ProbeLaunch>,
}

/// What every instance of the soak is started with.
pub struct Recipe {
    pub program: PathBuf,
    /// The command's arguments, placeholders unfilled.
    pub args: Vec<String>,
    pub flavours: Vec<Flavour>,
    /// Each configuration's replicas, numbered from 1 (a cluster job runs
    /// one, `r..=r`).
    pub replicas: std::ops::RangeInclusive<usize>,
    /// An instance that ends is started again.
    pub restart: bool,
    pub interval: Duration,
    /// The soak's directory (`soak-ID` beside the store): each instance's
    /// is under it.
    pub dir: PathBuf,
    pub cgroup: Option<Parent>,
    pub server: Option<Server>,
}

/// An instance while its process runs.
pub struct Running {
    pub started: Started,
    pub port: Option<u16>,
    /// The command as started, placeholders filled.
    pub command: Vec<String>,
    /// A server not ready yet: where to connect, and until when.
    pub awaiting: Option<(SocketAddr, Instant)>,
    /// Its load's output, read as it grows, once the load runs with a
    /// `--metric` to read.
    pub load_tail: Option<LoadTail>,
}

/// A port nothing listens on now: bound on loopback and released.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

fn fill(text: &str, port: Option<u16>, dir: &Path) -> String {
    let text = text.replace(INSTANCE, &dir.to_string_lossy());
    match port {
        Some(port) => text.replace(PORT, &port.to_string()),
        None => text,
    }
}

/// Starts instance `name` of `flavour` (its `start`-th start); the tap
/// sends into `events`. Returns it with its sampling loop.
pub fn start(
    recipe: &Recipe,
    flavour: &Flavour,
    name: &str,
    start: u32,
    events: &Sender<Event>,
) -> anyhow::Result<(Running, SamplingLoop)> {
    let dir = recipe.dir.join(name);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating '{}'", dir.display()))?;
    let uses_port = recipe.args.iter().any(|a| a.contains(PORT)) || recipe.server.is_some();
    let port = uses_port.then(free_port).transpose()?;
    let args: Vec<String> = recipe.args.iter().map(|a| fill(a, port, &dir)).collect();
    let os_args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let spec = Start {
        program: &recipe.program,
        args: &os_args,
        env: &flavour.config.env,
        stdout_path: &dir.join(format!("stdout.{start}")),
        stderr_path: &dir.join(format!("stderr.{start}")),
        cgroup: recipe.cgroup.as_ref(),
        memory_limit: None,
        probe: flavour.probe.as_ref(),
        reclaim_at_exit: false,
        interval: recipe.interval,
        marks: &[],
        child_steps: Vec::new(),
        reaper: false,
    };
    let instances = recipe.flavours.len() * recipe.replicas.clone().count();
    let started = run::start(spec, events)?;
    let mut sampling = soak_sampling(started.pid(), recipe.interval, instances);
    started.feed(&mut sampling);
    let awaiting = match &recipe.server {
        Some(server) => {
            let text = fill(&server.ready, port, &dir);
            let addr = std::net::ToSocketAddrs::to_socket_addrs(&text)
                .ok()
                .and_then(|mut a| a.next())
                .with_context(|| format!("the readiness address '{text}' does not resolve"))?;
            Some((addr, Instant::now() + server.ready_timeout))
        }
        None => None,
    };
    let mut command = vec![recipe.program.to_string_lossy().into_owned()];
    command.extend(args);
    let running = Running {
        started,
        port,
        command,
        awaiting,
        load_tail: None,
    };
    Ok((running, sampling))
}

impl Running {
    /// A server's readiness looked at, its load started once it accepts a
    /// connection; `true` when its time to get ready ran out.
    pub fn ready_too_late(&mut self, recipe: &Recipe, name: &str) -> bool {
        let Some((addr, deadline)) = self.awaiting else {
            return false;
        };
        if TcpStream::connect_timeout(&addr, Duration::from_millis(20)).is_err() {
            return Instant::now() > deadline;
        }
        self.awaiting = None;
        let load = recipe.server.as_ref().and_then(|s| s.load.as_deref());
        if let Some(load) = load {
            let dir = recipe.dir.join(name);
            let command = fill(load, self.port, &dir);
            let (stdout, stderr) = (dir.join("load.stdout"), dir.join("load.stderr"));
            (self.started).start_load(&command, &stdout, &stderr);
            let metrics = recipe
                .server
                .as_ref()
                .is_some_and(|s| !s.metrics.is_empty());
            self.load_tail = metrics.then(|| LoadTail::new([stdout, stderr]));
        }
        false
    }
}
