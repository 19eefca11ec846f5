//! The Kubernetes engine: an Indexed Job (`completionMode: Indexed`, one
//! completion per round; each pod's round is its completion index) and a
//! ConfigMap holding the plan, as one JSON `List` that `kubectl apply -f`
//! accepts. The pods write their shards to a volume the user names (a
//! PersistentVolumeClaim), from which `allocscope merge` reads them: the
//! engine applies the Job, waits for it and hands the merge over to the
//! user (or, without a reachable cluster, says how to apply it).

use crate::batch::BatchPlan;
use crate::error::ClusterError;
use crate::plan_file::ClusterPlan;
use allocscope_core::store::Store;
use allocscope_rounds::engine::{Engine, Round, RoundEnd, Started};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use serde_json::{json, Value};

/// `--executor k8s`'s own flags.
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct K8sFlags {
    /// k8s: the container image holding allocscope and the program.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// k8s: the PersistentVolumeClaim the pods write their shards to.
    #[arg(long, value_name = "NAME")]
    pub k8s_volume_claim: Option<String>,
}

impl K8sFlags {
    /// Both are needed: nothing runs without them.
    pub fn check(&self) -> Result<(), ClusterError> {
        if self.image.is_none() || self.k8s_volume_claim.is_none() {
            return Err(ClusterError::K8sFlagsMissing);
        }
        Ok(())
    }
}

/// A plan's rounds as one Indexed Job.
pub struct K8s {
    plan: BatchPlan,
    /// The Job's name (`IndexedJob::name`).
    name: String,
    volume_claim: String,
    manifest: String,
    path: std::path::PathBuf,
}

impl K8s {
    /// Writes the manifest beside the plan.
    pub fn new(flags: &K8sFlags, plan: BatchPlan) -> anyhow::Result<K8s> {
        flags.check()?;
        let volume_claim = flags.k8s_volume_claim.clone().unwrap_or_default();
        let job = IndexedJob {
            plan: &plan.plan,
            image: flags.image.as_deref().unwrap_or_default(),
            volume_claim: &volume_claim,
        };
        let manifest = serde_json::to_string_pretty(&job.manifest()?)?;
        let name = job.name();
        let path = plan.dir.join("job.json");
        std::fs::write(&path, format!("{manifest}\n"))
            .with_context(|| format!("writing '{}'", path.display()))?;
        Ok(K8s {
            plan,
            name,
            volume_claim,
            manifest,
            path,
        })
    }

    fn merge_step(&self) -> String {
        format!(
            "copy the shards of volume claim {} (directory {}/) here, then: {}",
            self.volume_claim,
            self.plan.plan.short_id(),
            self.plan.merge_command("round-*.db")
        )
    }
}

impl Engine for K8s {
    fn rounds_at_once(&self) -> usize {
        self.plan.plan.rounds as usize
    }

    fn dry_run(&self) -> anyhow::Result<()> {
        println!("{}", self.manifest);
        eprintln!(
            "allocscope: dry run: manifest {}; {}",
            self.path.display(),
            self.merge_step()
        );
        Ok(())
    }

    /// Applies the Job when kubectl reaches a cluster and waits for it; the
    /// shards stay on the volume, so the merge is handed over.
    fn start(&mut self, _: &mut Store, _: &[Round]) -> anyhow::Result<Started> {
        let name = &self.name;
        let path = self.path.display();
        if !reaches_a_cluster() {
            eprintln!(
                "allocscope: no reachable Kubernetes cluster (kubectl missing, or `kubectl \
                 cluster-info` failed); wrote {path}. To run it:\n  kubectl apply -f {path}\n  \
                 kubectl wait --for=condition=complete --timeout=24h job/{name}\n  then {}",
                self.merge_step()
            );
            return Ok(Started::HandedOver { ok: true });
        }
        kubectl(&["apply", "-f", &self.path.to_string_lossy()])?;
        eprintln!(
            "allocscope: Job {name} applied; waiting for its {} rounds",
            self.plan.plan.rounds
        );
        let waited = kubectl(&[
            "wait",
            "--for=condition=complete",
            "--timeout=-1s",
            &format!("job/{name}"),
        ]);
        eprintln!("allocscope: {}", self.merge_step());
        Ok(Started::HandedOver { ok: waited.is_ok() })
    }

    /// Never called: `start` hands every round over.
    fn wait(&mut self, _: &mut Store) -> anyhow::Result<Vec<RoundEnd>> {
        Ok(Vec::new())
    }

    /// Ctrl-C ends the waiting kubectl with this process; the Job runs on.
    fn cancel(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn say(&self, line: &str) {
        if !self.plan.quiet {
            eprintln!("{line}");
        }
    }
}

/// Where the pods see the plan and the shards volume.
const PLAN_MOUNT: &str = "/allocscope-plan";
const SHARDS_MOUNT: &str = "/allocscope-shards";

struct IndexedJob<'a> {
    plan: &'a ClusterPlan,
    image: &'a str,
    volume_claim: &'a str,
}

impl IndexedJob<'_> {
    /// `allocscope-<plan id>`: a valid Job and ConfigMap name.
    fn name(&self) -> String {
        format!("allocscope-{}", self.plan.short_id())
    }

    /// The shards' directory inside the volume.
    fn shard_dir(&self) -> String {
        format!("{SHARDS_MOUNT}/{}", self.plan.short_id())
    }

    fn manifest(&self) -> anyhow::Result<Value> {
        let name = self.name();
        let rounds = self.plan.rounds;
        let shard_dir = self.shard_dir();
        Ok(json!({
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": { "name": name, "labels": { "app": "allocscope" } },
                    "data": { "plan.json": serde_json::to_string_pretty(self.plan)? }
                },
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": { "name": name, "labels": { "app": "allocscope" } },
                    "spec": {
                        "completionMode": "Indexed",
                        "completions": rounds,
                        "parallelism": rounds,
                        // A failed round is reported, not retried on another node.
                        "backoffLimit": 0,
                        "template": {
                            "metadata": { "labels": { "app": "allocscope", "allocscope-plan": self.plan.short_id() } },
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{
                                    "name": "round",
                                    "image": self.image,
                                    "command": ["allocscope"],
                                    "args": [
                                        "cell",
                                        "--plan", format!("{PLAN_MOUNT}/plan.json"),
                                        "--round", "$(JOB_COMPLETION_INDEX)",
                                        "--out", format!("{shard_dir}/round-$(JOB_COMPLETION_INDEX).db"),
                                    ],
                                    // Set by the Job controller in every pod of an
                                    // Indexed Job; declared so that $(...) expands.
                                    "env": [{
                                        "name": "JOB_COMPLETION_INDEX",
                                        "valueFrom": { "fieldRef": {
                                            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                                        } }
                                    }],
                                    "volumeMounts": [
                                        { "name": "plan", "mountPath": PLAN_MOUNT, "readOnly": true },
                                        { "name": "shards", "mountPath": SHARDS_MOUNT }
                                    ]
                                }],
                                "volumes": [
                                    { "name": "plan", "configMap": { "name": name } },
                                    { "name": "shards", "persistentVolumeClaim": { "claimName": self.volume_claim } }
                                ]
                            }
                        }
                    }
                }
            ]
        }))
    }
}

/// kubectl's own complaints about an unreachable cluster are not shown:
/// the message that follows says what to do.
fn reaches_a_cluster() -> bool {
    std::process::Command::new("kubectl")
        .args(["cluster-info", "--request-timeout=5s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn kubectl(args: &[&str]) -> anyhow::Result<()> {
    let status = std::process::Command::new("kubectl")
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| anyhow::anyhow!("running kubectl: {e}"))?;
    anyhow::ensure!(status.success(), "kubectl {} failed", args.join(" "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_is_indexed_with_one_completion_per_round() {
        let plan = ClusterPlan::new("now".into(), 4, vec!["glibc".into()], vec![], "compare");
        let job = IndexedJob {
            plan: &plan,
            image: "registry/allocscope:1",
            volume_claim: "shards",
        };
        let manifest = job.manifest().expect("manifest");
        let spec = &manifest["items"][1]["spec"];
        assert_eq!(spec["completionMode"], "Indexed");
        assert_eq!(spec["completions"], 4);
        let container = &spec["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "registry/allocscope:1");
        assert_eq!(container["args"][4], "$(JOB_COMPLETION_INDEX)");
        let stored: ClusterPlan = serde_json::from_str(
            manifest["items"][0]["data"]["plan.json"]
                .as_str()
                .expect("plan text"),
        )
        .expect("plan parses");
        assert_eq!(stored, plan);
    }
}
