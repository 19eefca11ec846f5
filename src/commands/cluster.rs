//! `compare --executor slurm|k8s`: check the engine flags, write the plan
//! beside the store and hand the rounds to the engine (Slurm's driver is
//! `cluster_slurm.rs`; Kubernetes gets a manifest). See docs/cluster.md.

use crate::cli::{ClusterArgs, CompareArgs};
use crate::cluster::k8s::IndexedJob;
use crate::cluster::plan_file::{node_arguments, ClusterPlan};
use crate::options::CompareSettings;
use crate::usage_error::UsageError;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Whether `--executor` sends the rounds to a cluster (`local` does not).
pub fn is_remote(args: &ClusterArgs) -> anyhow::Result<bool> {
    match args.executor.as_deref() {
        None | Some("local") => {
            // A local run would ignore them, and a --dry-run that runs the
            // whole matrix would surprise.
            let given = [
                ("--dry-run", args.dry_run),
                ("--slurm-arg", !args.slurm_arg.is_empty()),
                ("--shared-node", args.shared_node),
                ("--image", args.image.is_some()),
                ("--k8s-volume-claim", args.k8s_volume_claim.is_some()),
                ("--shards", args.shards.is_some()),
            ];
            match given.iter().find(|(_, set)| *set) {
                Some((flag, _)) => Err(UsageError::Cluster(format!(
                    "{flag} applies only with --executor slurm or k8s"
                ))
                .into()),
                None => Ok(false),
            }
        }
        Some("slurm" | "k8s") => Ok(true),
        Some(other) => Err(UsageError::Cluster(format!(
            "--executor {other} is not an engine; use local, slurm or k8s"
        ))
        .into()),
    }
}

pub fn compare(args: &CompareArgs, settings: &CompareSettings) -> anyhow::Result<i32> {
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    let k8s = args.cluster.executor.as_deref() == Some("k8s");
    if k8s && (args.cluster.image.is_none() || args.cluster.k8s_volume_claim.is_none()) {
        return Err(UsageError::Cluster(K8S_NEEDS.to_string()).into());
    }
    if let crate::options::rounds::Schedule::Auto { .. } = settings.rounds.schedule {
        return Err(UsageError::Cluster(
            "--executor runs a fixed number of rounds, one job per round; give --runs N (e.g. -r 5)"
                .to_string(),
        )
        .into());
    }
    let argv: Vec<_> = std::env::args_os().collect();
    let plan = ClusterPlan::new(
        humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        settings.runs,
        settings.configs.iter().map(|c| c.name.clone()).collect(),
        node_arguments(&argv)?,
    );
    let base = match &args.cluster.shards {
        Some(dir) => dir.clone(),
        None => beside(&settings.db).join("allocscope-cluster"),
    };
    let dir = base.join(plan.short_id());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating '{}'", dir.display()))?;
    let dir = dir.canonicalize()?;
    let plan_path = dir.join("plan.json");
    plan.write(&plan_path)?;
    if args.cluster.executor.as_deref() == Some("k8s") {
        return kubernetes(&args.cluster, &plan, &dir, &settings.db);
    }
    super::cluster_slurm::run(args, settings, &plan, &plan_path, &dir)
}

const K8S_NEEDS: &str = "--executor k8s needs --image IMAGE (holding allocscope and the program) \
     and --k8s-volume-claim NAME (the PersistentVolumeClaim the pods write shards to)";

/// `--executor k8s`: the manifest, applied when kubectl reaches a cluster.
fn kubernetes(
    args: &ClusterArgs,
    plan: &ClusterPlan,
    dir: &Path,
    db: &Path,
) -> anyhow::Result<i32> {
    let (Some(image), Some(claim)) = (&args.image, &args.k8s_volume_claim) else {
        return Err(UsageError::Cluster(K8S_NEEDS.to_string()).into());
    };
    let job = IndexedJob {
        plan,
        image,
        volume_claim: claim,
    };
    let manifest = serde_json::to_string_pretty(&job.manifest()?)?;
    let path = dir.join("job.json");
    std::fs::write(&path, format!("{manifest}\n"))
        .with_context(|| format!("writing '{}'", path.display()))?;
    let name = job.name();
    let merge_step = format!(
        "copy the shards of volume claim {claim} (directory {}/) here, then: \
         allocscope merge round-*.db --db {}",
        plan.short_id(),
        db.display()
    );
    if args.dry_run {
        println!("{manifest}");
        eprintln!(
            "allocscope: dry run: manifest {}; {merge_step}",
            path.display()
        );
        return Ok(0);
    }
    if !crate::cluster::k8s::reaches_a_cluster() {
        eprintln!(
            "allocscope: no reachable Kubernetes cluster (kubectl missing, or `kubectl \
             cluster-info` failed); wrote {}. To run it:\n  kubectl apply -f {}\n  kubectl \
             wait --for=condition=complete --timeout=24h job/{name}\n  then {merge_step}",
            path.display(),
            path.display()
        );
        return Ok(0);
    }
    let path_text = path.to_string_lossy().into_owned();
    crate::cluster::k8s::kubectl(&["apply", "-f", &path_text])?;
    eprintln!(
        "allocscope: Job {name} applied; waiting for its {} rounds",
        plan.rounds
    );
    let waited = crate::cluster::k8s::kubectl(&[
        "wait",
        "--for=condition=complete",
        "--timeout=-1s",
        &format!("job/{name}"),
    ]);
    eprintln!("allocscope: {merge_step}");
    Ok(if waited.is_ok() { 0 } else { 1 })
}

/// The store's directory (`.` for a bare file name).
fn beside(db: &Path) -> PathBuf {
    match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
