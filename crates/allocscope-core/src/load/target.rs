//! The load generator's target: parsing `http://host:port/path` URLs and the
//! path templates (`{seq}`, `{rand:MAX}`) that make each request's path.
//!
//! Random placeholders draw from one seeded SplitMix64 stream indexed by the
//! request's sequence number, so request `i` gets the same path whichever
//! worker thread sends it and in whatever order: runs are reproducible.

use crate::rng::SplitMix64;
use std::fmt::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};

/// SplitMix64's increment: seeding at `seed + k * GAMMA` and drawing once
/// yields the `k`-th value of the stream seeded at `seed`.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A user mistake in a target URL or path template; each message says how
/// to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("'{url}' uses https, which the load generator does not speak: give an http:// URL (put the server on a plain-HTTP port, or use a TLS-terminating proxy in front of it)")]
    Https { url: String },
    #[error("'{url}' is not an http:// URL: write it as http://HOST[:PORT]/PATH")]
    Scheme { url: String },
    #[error("'{url}' has no host: write it as http://HOST[:PORT]/PATH")]
    MissingHost { url: String },
    #[error("'{url}' has an invalid host '{host}': use a name, an IPv4 address or a bracketed IPv6 address such as [::1]")]
    Host { url: String, host: String },
    #[error("'{url}' has user credentials, which the load generator does not send: remove the 'user@' part")]
    Credentials { url: String },
    #[error("'{url}' has an invalid port '{port}': use a number from 1 to 65535")]
    Port { url: String, port: String },
    #[error("path '{path}' contains {what}, which cannot go in a request line: percent-encode it (e.g. %20 for a space)")]
    PathChar { path: String, what: String },
    #[error("path template '{template}' has an unknown placeholder '{{{placeholder}}}': use {{seq}} (request number from 0) or {{rand:MAX}} (uniform 1..=MAX)")]
    UnknownPlaceholder {
        template: String,
        placeholder: String,
    },
    #[error(
        "path template '{template}' has '{{rand:{max}}}': MAX must be a whole number from 1 up"
    )]
    RandMax { template: String, max: String },
    #[error("path template '{template}' has an unmatched '{brace}': placeholders look like {{seq}} or {{rand:MAX}}")]
    Brace { template: String, brace: char },
}

/// A parsed `http://` target. `path_template` starts with `/` and may hold
/// placeholders; it already passed [`PathTemplate::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub path_template: String,
}

impl Target {
    /// Parses `http://HOST[:PORT][/PATH]`; HOST is a name, an IPv4 address
    /// or a bracketed IPv6 address; PORT defaults to 80, PATH to `/`. A
    /// `#fragment` is dropped, as browsers and curl do.
    pub fn parse(url: &str) -> Result<Target, TargetError> {
        let url_owned = || url.to_string();
        let trimmed = url.trim();
        let Some((scheme, rest)) = trimmed.split_once("://") else {
            return Err(TargetError::Scheme { url: url_owned() });
        };
        if scheme.eq_ignore_ascii_case("https") {
            return Err(TargetError::Https { url: url_owned() });
        }
        if !scheme.eq_ignore_ascii_case("http") {
            return Err(TargetError::Scheme { url: url_owned() });
        }
        let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(split);
        if authority.contains('@') {
            return Err(TargetError::Credentials { url: url_owned() });
        }
        let (host, port_text) = split_host_port(authority);
        if host.is_empty() {
            return Err(TargetError::MissingHost { url: url_owned() });
        }
        // Names and IPv4 take letters, digits, '.', '-' and '_'; only a
        // bracketed IPv6 address adds ':' and a '%' zone.
        let v6 = authority.starts_with('[');
        let host_char = |c: char| {
            c.is_ascii_alphanumeric()
                || matches!(c, '.' | '-' | '_')
                || (v6 && matches!(c, ':' | '%'))
        };
        if !host.chars().all(host_char) {
            return Err(TargetError::Host {
                url: url_owned(),
                host: host.to_string(),
            });
        }
        let port = match port_text {
            None => 80,
            Some(text) => match text.parse::<u16>() {
                Ok(port) if port > 0 && text.bytes().all(|b| b.is_ascii_digit()) => port,
                _ => {
                    return Err(TargetError::Port {
                        url: url_owned(),
                        port: text.to_string(),
                    })
                }
            },
        };
        let path_template = match path {
            "" => "/".to_string(),
            p if p.starts_with('?') => format!("/{p}"),
            p => p.to_string(),
        };
        PathTemplate::parse(&path_template)?;
        Ok(Target {
            host: host.to_string(),
            port,
            path_template,
        })
    }

    /// Resolves the host (DNS for names) to the first address it has.
    pub fn addr(&self) -> std::io::Result<SocketAddr> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("'{}' resolved to no address", self.host),
                )
            })
    }

    /// The `Host` header: the port is left out when it is 80, IPv6
    /// addresses get their brackets back.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == 80 {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// Splits `host[:port]` or `[v6]:port`; the port is `None` when absent.
fn split_host_port(authority: &str) -> (&str, Option<&str>) {
    if let Some(inner) = authority.strip_prefix('[') {
        return match inner.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, tail)) => match tail.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => ("", None),
            },
            None => ("", None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    }
}

/// One piece of a compiled template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Sequence,
    Rand(u64),
}

/// A compiled path template, rendered once per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathTemplate {
    parts: Vec<Part>,
    rand_per_request: u64,
}

impl PathTemplate {
    /// Compiles a template, rejecting unknown placeholders, unmatched
    /// braces and characters that would break the request line.
    pub fn parse(template: &str) -> Result<PathTemplate, TargetError> {
        if let Some(bad) = template
            .chars()
            .find(|c| c.is_whitespace() || c.is_control())
        {
            return Err(TargetError::PathChar {
                path: template.to_string(),
                what: format!("{bad:?}"),
            });
        }
        if let Some(bad) = template.chars().find(|c| !c.is_ascii()) {
            return Err(TargetError::PathChar {
                path: template.to_string(),
                what: format!("the non-ASCII character {bad:?}"),
            });
        }
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            let open = rest.find('{');
            // A '}' before the next '{' closes nothing.
            if rest.find('}').is_some_and(|c| open.is_none_or(|o| c < o)) {
                return Err(brace(template, '}'));
            }
            let Some(o) = open else {
                parts.push(Part::Literal(rest.to_string()));
                break;
            };
            if o > 0 {
                parts.push(Part::Literal(rest[..o].to_string()));
            }
            let after = &rest[o + 1..];
            let end = after.find('}').ok_or_else(|| brace(template, '{'))?;
            let inner = &after[..end];
            if inner.contains('{') {
                return Err(brace(template, '{'));
            }
            parts.push(placeholder(template, inner)?);
            rest = &after[end + 1..];
        }
        let rand_per_request = parts.iter().filter(|p| matches!(p, Part::Rand(_))).count() as u64;
        Ok(PathTemplate {
            parts,
            rand_per_request,
        })
    }

    /// Appends request `index`'s path to `out`. Its `k`-th random draw is
    /// value `index * rand_per_request + k` of the stream seeded by `seed`:
    /// the same as drawing in request order from one generator.
    pub fn render(&self, index: u64, seed: u64, out: &mut String) {
        let mut draw = index.wrapping_mul(self.rand_per_request);
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Sequence => {
                    let _ = write!(out, "{index}");
                }
                Part::Rand(max) => {
                    let value =
                        SplitMix64::new(seed.wrapping_add(draw.wrapping_mul(GAMMA))).next_u64();
                    draw = draw.wrapping_add(1);
                    // Multiply-high maps 64 random bits onto 0..max without
                    // the modulo's bias towards small values.
                    let pick = ((u128::from(value) * u128::from(*max)) >> 64) as u64;
                    let _ = write!(out, "{}", pick + 1);
                }
            }
        }
    }
}

fn brace(template: &str, brace: char) -> TargetError {
    TargetError::Brace {
        template: template.to_string(),
        brace,
    }
}

fn placeholder(template: &str, inner: &str) -> Result<Part, TargetError> {
    if inner == "seq" {
        return Ok(Part::Sequence);
    }
    if let Some(max) = inner.strip_prefix("rand:") {
        return match max.parse::<u64>() {
            Ok(m) if m >= 1 && max.bytes().all(|b| b.is_ascii_digit()) => Ok(Part::Rand(m)),
            _ => Err(TargetError::RandMax {
                template: template.to_string(),
                max: max.to_string(),
            }),
        };
    }
    Err(TargetError::UnknownPlaceholder {
        template: template.to_string(),
        placeholder: inner.to_string(),
    })
}

#[cfg(test)]
mod tests;
