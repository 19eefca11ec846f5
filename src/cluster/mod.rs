//! Running the experiment matrix on a cluster: the plan file the nodes read
//! (`plan_file`), what a node records about itself (`facts`), shards in and
//! out (`shard`), merging them into one experiment (`merge`), and the two
//! engines that run the rounds (`slurm`, `k8s`). A round runs every
//! configuration once, interleaved, on one node, so that the within-round
//! pairs behind the ratios always share a machine; see docs/cluster.md.

pub mod facts;
pub mod k8s;
pub mod merge;
pub mod plan_file;
pub mod shard;
pub mod slurm;
