//! How to deploy the recommended configuration: a shell line, systemd
//! `Environment=` lines, Dockerfile lines (the Debian package and `ENV`) and
//! a Kubernetes container `env:` block, each quoted for its target. A
//! `thp=never` setting is no variable outside allocscope: each target gets
//! what really turns huge pages off for a process tree there. Each target
//! also gets the memory limit the configuration needs (`analyze::limit`):
//! Kubernetes `resources.requests.memory` and `resources.limits.memory`,
//! systemd `MemoryMax=`, Docker `--memory` (`LimitLines`; the reports add
//! them, under a comment in words, `report::verdict_words::deploy_snippets`).

use super::limit::LimitNeed;
use allocscope_core::alloc::keys::THP_DISABLE_ENV;
use allocscope_core::alloc::{install_of, Install};
use allocscope_core::model::Config;
use serde::Serialize;

/// How to deploy the winner, one snippet per target, and the memory limit
/// it needs, when known, as data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deploy {
    pub shell: String,
    pub systemd: String,
    pub dockerfile: String,
    pub kubernetes: String,
    pub memory_limit: Option<LimitNeed>,
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

/// The snippets that give a process `config`'s environment, with `limit`,
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
    Deploy {
        shell: shell(&env, thp_never, command),
        systemd: systemd(&env, thp_never),
        dockerfile: note(dockerfile(config, &env)),
        kubernetes: note(kubernetes(&env)),
        memory_limit: limit.cloned(),
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

    /// The targets and their lines, for the reports.
    pub fn targets(&self) -> [(&'static str, &str); 3] {
        [
            ("systemd", &self.systemd),
            ("Docker", &self.docker),
            ("Kubernetes", &self.kubernetes),
        ]
    }
}

/// The memory limit of the configuration that stays, when nothing is
/// recommended instead: the default the verdict keeps, or, while it is
/// inconclusive, the baseline that runs now. It recommends nothing; it says
/// what the configuration already in use needs under a limit.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptLimit {
    pub config: String,
    pub memory_limit: LimitNeed,
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
        if !allocscope_core::alloc::test_deps::require(
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
}
