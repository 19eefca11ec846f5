//! The Kubernetes engine: an Indexed Job (`completionMode: Indexed`, one
//! completion per round; each pod's round is its completion index) and a
//! ConfigMap holding the plan, as one JSON `List` that `kubectl apply -f`
//! accepts. The pods write their shards to a volume the user names (a
//! PersistentVolumeClaim), from which `allocscope merge` reads them.

use super::plan_file::ClusterPlan;
use serde_json::{json, Value};

/// Where the pods see the plan and the shards volume.
pub const PLAN_MOUNT: &str = "/allocscope-plan";
pub const SHARDS_MOUNT: &str = "/allocscope-shards";

pub struct IndexedJob<'a> {
    pub plan: &'a ClusterPlan,
    pub image: &'a str,
    pub volume_claim: &'a str,
}

impl IndexedJob<'_> {
    /// `allocscope-<plan id>`: a valid Job and ConfigMap name.
    pub fn name(&self) -> String {
        format!("allocscope-{}", self.plan.short_id())
    }

    /// The shards' directory inside the volume.
    pub fn shard_dir(&self) -> String {
        format!("{SHARDS_MOUNT}/{}", self.plan.short_id())
    }

    pub fn manifest(&self) -> anyhow::Result<Value> {
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
pub fn reaches_a_cluster() -> bool {
    std::process::Command::new("kubectl")
        .args(["cluster-info", "--request-timeout=5s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub fn kubectl(args: &[&str]) -> anyhow::Result<()> {
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
        let plan = ClusterPlan::new("now".into(), 4, vec!["glibc".into()], vec![]);
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
