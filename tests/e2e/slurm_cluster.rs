//! A real single-node Slurm cluster for the cluster tests: munged, slurmctld
//! and slurmd from Debian's packages (`scripts/bootstrap --test` installs
//! slurm-wlm and munge), with a slurm.conf, munge key, state and spool
//! directories of its own in a temporary directory and free ports on
//! 127.0.0.1. The daemons run in the foreground as children of the test and
//! are stopped by their pids when the guard drops, however the test ends.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

static ONE_CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub struct SlurmCluster {
    daemons: Vec<Child>,
    pub conf: PathBuf,
    pub dir: tempfile::TempDir,
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

impl SlurmCluster {
    /// Starts the daemons and waits until the node is idle; `None`, with
    /// the reason, where Slurm is not installed or we are not root.
    pub fn start() -> Option<SlurmCluster> {
        use crate::common::{require_program, require_root};
        for (daemon, package) in [
            ("munged", "munge"),
            ("slurmctld", "slurm-wlm"),
            ("slurmd", "slurm-wlm"),
            ("sbatch", "slurm-wlm"),
        ] {
            if !require_program(daemon, package) {
                return None;
            }
        }
        if !require_root("the test Slurm cluster runs its daemons as root") {
            return None;
        }
        // The rounds run one at a time on the single node; two clusters
        // at once would only slow each other down.
        let guard = ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = write_config(dir.path());
        let mut cluster = SlurmCluster {
            daemons: Vec::new(),
            conf,
            dir,
            _one_at_a_time: guard,
        };
        let d = cluster.dir.path().to_path_buf();
        let socket = d.join("munge.socket");
        cluster.spawn(
            "munged",
            &[
                "-F".as_ref(),
                "--key-file".as_ref(),
                d.join("munge.key").as_os_str(),
                "--socket".as_ref(),
                socket.as_os_str(),
                "--pid-file".as_ref(),
                d.join("munged.pid").as_os_str(),
                "--log-file".as_ref(),
                d.join("munged.log").as_os_str(),
                "--seed-file".as_ref(),
                d.join("munge.seed").as_os_str(),
            ],
        );
        assert!(
            crate::common::wait_until(Duration::from_secs(10), || socket.exists()),
            "munged did not start: {}",
            std::fs::read_to_string(d.join("munged.log")).unwrap_or_default()
        );
        cluster.spawn("slurmctld", &["-D".as_ref()]);
        cluster.spawn("slurmd", &["-D".as_ref()]);
        let idle = crate::common::wait_until(Duration::from_secs(30), || {
            cluster
                .command("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        assert!(
            idle,
            "the Slurm node did not become idle; logs in {}",
            d.display()
        );
        Some(cluster)
    }

    fn spawn(&mut self, program: &str, args: &[&std::ffi::OsStr]) {
        let log = std::fs::File::create(self.dir.path().join(format!("{program}.out")))
            .expect("log file");
        let mut command = self.command(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log);
        // SAFETY: prctl is async-signal-safe. Should the test process die
        // before the guard drops, the daemons die with it (the signal comes
        // when the spawning thread ends, which is after the guard anyway).
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program}: {e}"));
        self.daemons.push(child);
    }

    /// A command that talks to this cluster (SLURM_CONF points at it).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command.env("SLURM_CONF", &self.conf);
        command
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        // slurmd first (it ends the job steps it runs), munged last.
        for child in self.daemons.iter_mut().rev() {
            let pid = child.id() as i32;
            // SAFETY: signalling a child we spawned and have not reaped.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let gone = crate::common::wait_until(Duration::from_secs(5), || {
                child.try_wait().is_ok_and(|s| s.is_some())
            });
            if !gone {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn hostname() -> String {
    let output = Command::new("hostname").output().expect("hostname runs");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// slurm.conf for one node named after this host, with its CPUs and most
/// of its memory, shared by up to 4 jobs that ask (`--shared-node`); plus
/// the munge key.
fn write_config(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let key = dir.join("munge.key");
    let mut bytes = vec![0u8; 1024];
    let mut urandom = std::fs::File::open("/dev/urandom").expect("urandom");
    std::io::Read::read_exact(&mut urandom, &mut bytes).expect("random key");
    std::fs::write(&key, bytes).expect("munge key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).expect("chmod key");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").expect("meminfo");
    let total_mib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(1024, |kib| kib / 1024);
    let host = hostname();
    let d = dir.display();
    let conf = format!(
        "ClusterName=allocscope-test\n\
         SlurmctldHost={host}(127.0.0.1)\n\
         SlurmctldPort={ctld}\n\
         SlurmdPort={slurmd}\n\
         AuthType=auth/munge\n\
         CredType=cred/munge\n\
         AuthInfo=socket={d}/munge.socket\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         SelectType=select/linear\n\
         SchedulerType=sched/builtin\n\
         MpiDefault=none\n\
         StateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/slurmctld.log\n\
         SlurmdLogFile={d}/slurmd.log\n\
         ReturnToService=2\n\
         JobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\n\
         JobCompType=jobcomp/none\n\
         MinJobAge=600\n\
         KillWait=5\n\
         NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN\n\
         PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES:4\n",
        ctld = free_port(),
        slurmd = free_port(),
        mem = total_mib.saturating_sub(512).max(256),
    );
    for sub in ["state", "spool"] {
        std::fs::create_dir_all(dir.join(sub)).expect("state directories");
    }
    let path = dir.join("slurm.conf");
    std::fs::write(&path, conf).expect("slurm.conf");
    path
}
