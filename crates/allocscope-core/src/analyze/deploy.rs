//! How to deploy the recommended configuration: a shell line, systemd
//! `Environment=` lines, Dockerfile lines (the Debian package and `ENV`) and
//! a Kubernetes container `env:` block, each quoted for its target. A
//! `thp=never` setting is no variable outside allocscope: each target gets
//! what really turns huge pages off for a process tree there. Each target
//! also gets the memory limit the configuration needs (`analyze::limit`):
//! Kubernetes `resources.requests.memory` and `resources.limits.memory`,
//! systemd `MemoryMax=`, Docker `--memory`.

use super::limit::LimitNeed;
use crate::alloc::keys::THP_DISABLE_ENV;
use crate::alloc::{install_of, Install};
use crate::model::Config;
use serde::Serialize;

/// How to deploy the winner, one snippet per target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deploy {
    pub shell: String,
    pub systemd: String,
    pub dockerfile: String,
    pub kubernetes: String,
}

pub fn sh_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A double-quoted string valid in JSON, YAML, systemd and Dockerfile `ENV`.
fn dq(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

/// A wrapper that calls `prctl(PR_SET_THP_DISABLE, 1)` (41) and execs the
/// program: no variable, tunable or common tool does it, and python3 is the
/// one interpreter with a C call at hand that Debian images usually have.
const THP_WRAPPER: &str = "python3 -c 'import ctypes,os,sys; ctypes.CDLL(None).prctl(41,1,0,0,0) \
                           and sys.exit(\"prctl failed\"); os.execvp(sys.argv[1],sys.argv[1:])'";

/// Where a wrapper cannot go, the host-wide switch (root, every process).
const THP_HOST: &str =
    "or, host-wide as root: echo never > /sys/kernel/mm/transparent_hugepage/enabled";

/// The snippets that give a process `config`'s environment, and `limit`,
/// the memory limit it needs, when known.
pub fn deploy(config: &Config, command: &[String], limit: Option<&LimitNeed>) -> Deploy {
    let thp_never = config.env.iter().any(|(k, _)| k == THP_DISABLE_ENV);
    let env: Vec<(String, String)> = config
        .env
        .iter()
        .filter(|(k, _)| k != THP_DISABLE_ENV)
        .cloned()
        .collect();
    let thp_note = format!(
        "# thp=never: no variable does it; start the program through the shell line's \
         python3 wrapper ({THP_HOST} on the node)\n"
    );
    let note = |mut text: String| {
        if thp_never {
            text.push_str(&thp_note);
        }
        text
    };
    let why = limit.map(|l| format!("# memory limit: {}\n", l.words()));
    let why = why.as_deref().unwrap_or_default();
    let lines = limit.map(LimitLines::of);
    let with_limit = |text: String, line: Option<&String>| match line {
        Some(line) => format!("{text}{why}{line}"),
        None => text,
    };
    Deploy {
        shell: shell(&env, thp_never, command),
        systemd: with_limit(systemd(&env, thp_never), lines.as_ref().map(|l| &l.systemd)),
        dockerfile: with_limit(
            note(dockerfile(config, &env)),
            lines.as_ref().map(|l| &l.docker),
        ),
        kubernetes: with_limit(
            note(kubernetes(&env)),
            lines.as_ref().map(|l| &l.kubernetes),
        ),
    }
}

/// A memory limit as each container target writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitLines {
    pub systemd: String,
    pub docker: String,
    pub kubernetes: String,
}

impl LimitLines {
    pub fn of(limit: &LimitNeed) -> LimitLines {
        let m = limit.mib();
        LimitLines {
            systemd: format!("MemoryMax={m}M\n"),
            docker: format!("# run with: docker run --memory={m}m IMAGE\n"),
            kubernetes: format!(
                "resources:\n  requests:\n    memory: {m}Mi\n  limits:\n    memory: {m}Mi\n"
            ),
        }
    }
}

/// The memory limit of the configuration that stays, when nothing is
/// recommended instead: the default the verdict keeps, or, while it is
/// inconclusive, the baseline that runs now. It recommends nothing; it says
/// what the configuration already in use needs under a limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeptLimit {
    pub config: String,
    pub memory_limit_bytes: u64,
    /// `if you keep glibc: memory limit 70 MiB (peak working set 57.6 MiB + 20%)`.
    pub words: String,
    #[serde(flatten)]
    pub lines: LimitLines,
}

impl KeptLimit {
    pub fn new(config: &str, limit: &LimitNeed) -> KeptLimit {
        KeptLimit {
            config: config.to_string(),
            memory_limit_bytes: limit.bytes,
            words: format!("if you keep {config}: memory limit {}", limit.words()),
            lines: LimitLines::of(limit),
        }
    }

    /// The targets and their lines, for the reports.
    pub fn targets(&self) -> [(&'static str, &str); 3] {
        [
            ("systemd", &self.lines.systemd),
            ("Docker", &self.lines.docker),
            ("Kubernetes", &self.lines.kubernetes),
        ]
    }
}

fn shell(env: &[(String, String)], thp_never: bool, command: &[String]) -> String {
    let mut words: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", sh_quote(v)))
        .collect();
    if thp_never {
        words.push(THP_WRAPPER.to_string());
    }
    let program = command
        .iter()
        .map(|w| sh_quote(w))
        .collect::<Vec<_>>()
        .join(" ");
    words.push(program);
    let one_line = format!("env {}", words.join(" "));
    // Long lines get one variable per line, so they can be read and pasted.
    let shell = if one_line.chars().count() <= 80 {
        one_line
    } else {
        format!("env \\\n  {}", words.join(" \\\n  "))
    };
    match thp_never {
        true => format!("# thp=never through prctl(PR_SET_THP_DISABLE); {THP_HOST}\n{shell}\n"),
        false => shell + "\n",
    }
}

fn systemd(env: &[(String, String)], thp_never: bool) -> String {
    let mut systemd = env
        .iter()
        .map(|(k, v)| format!("Environment={}\n", dq(&format!("{k}={v}"))))
        .collect::<String>();
    if thp_never {
        systemd.push_str(
            "# thp=never: systemd 260 or later; older versions have no per-unit switch:\n\
             # start ExecStart= through the shell line's python3 wrapper instead\n\
             MemoryTHP=disable\n",
        );
    }
    systemd
}

fn dockerfile(config: &Config, env: &[(String, String)]) -> String {
    let mut dockerfile = String::new();
    match install_of(config) {
        Install::Package(pkg) => dockerfile.push_str(&format!(
            "RUN apt-get update \\\n && apt-get install -y --no-install-recommends {pkg} \\\n \
             && rm -rf /var/lib/apt/lists/*\n"
        )),
        Install::Copy(lib) => {
            let path = lib.to_string_lossy();
            dockerfile.push_str(&format!("COPY {} {}\n", dq(&path), dq(&path)));
        }
        Install::Nothing => {}
    }
    for (k, v) in env {
        dockerfile.push_str(&format!("ENV {k}={}\n", dq(v)));
    }
    dockerfile
}

fn kubernetes(env: &[(String, String)]) -> String {
    let mut kubernetes = String::from(if env.is_empty() {
        "env: []\n"
    } else {
        "env:\n"
    });
    for (k, v) in env {
        kubernetes.push_str(&format!("  - name: {k}\n    value: {}\n", dq(v)));
    }
    kubernetes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(env: &[(&str, &str)]) -> Config {
        Config {
            name: "glibc:thp=never".into(),
            allocator: "glibc".into(),
            library: None,
            version: None,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            command: None,
        }
    }

    #[test]
    fn thp_never_deploys_as_what_really_turns_huge_pages_off() {
        let d = deploy(
            &config(&[
                ("GLIBC_TUNABLES", "glibc.malloc.arena_max=2"),
                (THP_DISABLE_ENV, "1"),
            ]),
            &[
                "sh".into(),
                "-c".into(),
                "grep THP_enabled /proc/self/status".into(),
            ],
            None,
        );
        for text in [&d.shell, &d.systemd, &d.dockerfile, &d.kubernetes] {
            assert!(!text.contains(THP_DISABLE_ENV), "{text}");
        }
        assert!(d.systemd.contains("\nMemoryTHP=disable\n"), "{}", d.systemd);
        assert!(d.kubernetes.contains("# thp=never"), "{}", d.kubernetes);
        // The shell line works as given: its program sees THP disabled.
        if !crate::alloc::test_deps::require(
            std::process::Command::new("python3")
                .arg("-V")
                .output()
                .is_ok(),
            "python3",
            "python3",
        ) {
            return;
        }
        let out = std::process::Command::new("sh")
            .args(["-c", &d.shell])
            .output()
            .expect("sh runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("THP_enabled:\t0"), "{text} {:?}", out.stderr);
    }

    #[test]
    fn without_thp_never_there_is_no_wrapper_and_no_note() {
        let d = deploy(&config(&[]), &["app".into()], None);
        assert_eq!(d.shell, "env app\n");
        assert_eq!(d.systemd, "");
        assert_eq!(d.kubernetes, "env: []\n");
    }

    #[test]
    fn the_limit_the_configuration_needs_is_in_every_container_target() {
        let limit = LimitNeed {
            bytes: 123 << 20,
            peak_bytes: 102 << 20,
            basis: "peak_working_set_bytes".into(),
            basis_label: "peak working set".into(),
            headroom_pct: 20.0,
            runs: 3,
        };
        let d = deploy(&config(&[]), &["app".into()], Some(&limit));
        assert_eq!(
            d.kubernetes,
            "env: []\n# memory limit: 123 MiB (peak working set 102 MiB + 20%)\nresources:\n  \
             requests:\n    memory: 123Mi\n  limits:\n    memory: 123Mi\n"
        );
        assert!(d.systemd.ends_with("\nMemoryMax=123M\n"), "{}", d.systemd);
        assert!(
            d.dockerfile.contains("docker run --memory=123m"),
            "{}",
            d.dockerfile
        );
        // The Kubernetes snippet is YAML whose resources say the same.
        let yaml: serde_json::Value = serde_yaml_like(&d.kubernetes);
        assert_eq!(yaml["resources"]["limits"]["memory"], "123Mi");
    }

    #[test]
    fn a_kept_configuration_gets_its_limit_lines_and_no_recommendation() {
        let limit = LimitNeed {
            bytes: 70 << 20,
            peak_bytes: 58 << 20,
            basis: "peak_working_set_bytes".into(),
            basis_label: "peak working set".into(),
            headroom_pct: 20.0,
            runs: 1,
        };
        let kept = KeptLimit::new("glibc", &limit);
        assert_eq!(
            kept.words,
            "if you keep glibc: memory limit 70 MiB (peak working set 58.0 MiB + 20%)"
        );
        assert_eq!(kept.lines.systemd, "MemoryMax=70M\n");
        assert!(kept.lines.docker.contains("docker run --memory=70m"));
        let yaml = serde_yaml_like(&kept.lines.kubernetes);
        assert_eq!(yaml["resources"]["requests"]["memory"], "70Mi");
        // The same lines the recommendation's snippets end with.
        let d = deploy(&config(&[]), &["app".into()], Some(&limit));
        assert!(d.kubernetes.ends_with(&kept.lines.kubernetes));
        assert!(d.systemd.ends_with(&kept.lines.systemd));
    }

    /// The snippet's two-level mappings read as JSON: enough YAML to check
    /// the keys sit where Kubernetes looks for them.
    fn serde_yaml_like(text: &str) -> serde_json::Value {
        let mut root = serde_json::Map::new();
        let mut path: Vec<String> = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let depth = (line.len() - line.trim_start().len()) / 2;
            let Some((key, value)) = line.trim().split_once(':') else {
                continue;
            };
            path.truncate(depth);
            let mut node = &mut root;
            for p in &path {
                node = node
                    .entry(p.clone())
                    .or_insert_with(|| serde_json::Value::Object(Default::default()))
                    .as_object_mut()
                    .expect("a mapping");
            }
            match value.trim() {
                "" => path.push(key.to_string()),
                v => {
                    node.insert(key.to_string(), v.into());
                }
            }
        }
        serde_json::Value::Object(root)
    }
}
