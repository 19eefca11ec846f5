//! How to deploy the recommended configuration: a shell line, systemd
//! `Environment=` lines, Dockerfile lines (the Debian package and `ENV`) and
//! a Kubernetes container `env:` block, each quoted for its target.

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

/// The snippets that give a process `config`'s environment.
pub fn deploy(config: &Config, command: &[String]) -> Deploy {
    let env = &config.env;
    let mut words: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", sh_quote(v)))
        .collect();
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
    let systemd = env
        .iter()
        .map(|(k, v)| format!("Environment={}\n", dq(&format!("{k}={v}"))))
        .collect::<String>();
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
    let mut kubernetes = String::from(if env.is_empty() {
        "env: []\n"
    } else {
        "env:\n"
    });
    for (k, v) in env {
        kubernetes.push_str(&format!("  - name: {k}\n    value: {}\n", dq(v)));
    }
    Deploy {
        shell: shell + "\n",
        systemd,
        dockerfile,
        kubernetes,
    }
}
