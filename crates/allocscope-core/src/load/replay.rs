//! Access-log replay: parsing Common and Combined Log Format lines (Apache,
//! nginx) into the requests to send again and when, relative to the first
//! usable line. Takes text, never opens files; never fails: a line it cannot
//! use is counted under a reason and the rest of the log still replays.
//!
//! Hand-written rather than a regex: a million-line log parses in a fraction
//! of a second (see the test `parses_a_large_log_quickly`).

use super::http::Method;
use std::time::Duration;

/// A rejected line's example is cut to this many characters.
const EXAMPLE_CHARS: usize = 200;

/// One request to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Since the first usable line's timestamp; lines logged earlier than
    /// it (logs are written out of order by a few ms) are clamped to 0.
    pub offset: Duration,
    pub method: Method,
    /// Path and query, as sent: starts with `/`.
    pub path: String,
}

/// What was left out, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rejected {
    pub count: u64,
    /// The first rejected line, cut to 200 characters.
    pub example: Option<String>,
    /// Reasons with their counts, most frequent first.
    pub by_reason: Vec<(String, u64)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayLog {
    pub entries: Vec<LogEntry>,
    pub rejected: Rejected,
}

/// Why a line was not replayed. The texts are the user-facing reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Format,
    Timestamp,
    EmptyRequest,
    RequestLine,
    Method,
    Target,
    PathChars,
}

impl Reason {
    fn text(self) -> &'static str {
        match self {
            Reason::Format => "not a Common/Combined Log Format line",
            Reason::Timestamp => "bad timestamp",
            Reason::EmptyRequest => "empty request (\"-\")",
            Reason::RequestLine => "malformed request line",
            Reason::Method => "method other than GET or HEAD",
            Reason::Target => "request target is neither a path nor an http(s) URL",
            Reason::PathChars => "path has escaped or non-ASCII bytes",
        }
    }
}

/// Parses a whole log. Blank lines are skipped silently; every other line
/// is either an entry or counted in `rejected`.
pub fn parse_log(text: &str) -> ReplayLog {
    let mut entries = Vec::new();
    let mut first_ms: Option<i64> = None;
    let mut reasons: Vec<(Reason, u64)> = Vec::new();
    let mut rejected = Rejected::default();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok((time_ms, method, path)) => {
                let first = *first_ms.get_or_insert(time_ms);
                let offset_ms = u64::try_from(time_ms.saturating_sub(first)).unwrap_or(0);
                entries.push(LogEntry {
                    offset: Duration::from_millis(offset_ms),
                    method,
                    path,
                });
            }
            Err(reason) => {
                rejected.count += 1;
                if rejected.example.is_none() {
                    rejected.example = Some(line.chars().take(EXAMPLE_CHARS).collect());
                }
                match reasons.iter_mut().find(|(r, _)| *r == reason) {
                    Some((_, n)) => *n += 1,
                    None => reasons.push((reason, 1)),
                }
            }
        }
    }
    // Stable: equal counts stay in order of first appearance.
    reasons.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    rejected.by_reason = reasons
        .into_iter()
        .map(|(r, n)| (r.text().to_string(), n))
        .collect();
    ReplayLog { entries, rejected }
}

/// `host ident user [time] "request" status bytes ...`: anything after the
/// size (referer, user agent, nginx extras) is ignored.
fn parse_line(line: &str) -> Result<(i64, Method, String), Reason> {
    let (client, rest) = line.split_once(' ').ok_or(Reason::Format)?;
    if client.is_empty() {
        return Err(Reason::Format);
    }
    // ident and user sit between the client and the '['; a user name with
    // spaces in it would still land there.
    let open = rest.find(" [").ok_or(Reason::Format)?;
    if rest[..open].trim().is_empty() {
        return Err(Reason::Format);
    }
    let rest = &rest[open + 2..];
    let close = rest.find(']').ok_or(Reason::Format)?;
    let time_ms = parse_time(&rest[..close]).ok_or(Reason::Timestamp)?;
    let rest = rest[close + 1..]
        .strip_prefix(" \"")
        .ok_or(Reason::Format)?;
    let end = closing_quote(rest).ok_or(Reason::Format)?;
    let request = &rest[..end];
    let mut tail = rest[end + 1..]
        .strip_prefix(' ')
        .ok_or(Reason::Format)?
        .split(' ');
    let status = tail.next().ok_or(Reason::Format)?;
    let bytes = tail.next().ok_or(Reason::Format)?;
    if status.len() != 3 || !status.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Reason::Format);
    }
    if bytes != "-" && (bytes.is_empty() || !bytes.bytes().all(|b| b.is_ascii_digit())) {
        return Err(Reason::Format);
    }
    let (method, path) = parse_request(request)?;
    Ok((time_ms, method, path))
}

/// Index of the quote ending a logged request: Apache escapes quotes inside
/// it as `\"`, nginx as `\x22`, so a quote after a backslash does not count.
fn closing_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// `METHOD TARGET [PROTOCOL]`. An absolute `http(s)://host/path` target
/// (proxy-style requests) keeps only its path and query: the replay goes
/// to the target the user chose, whatever host the log names.
fn parse_request(request: &str) -> Result<(Method, String), Reason> {
    if request == "-" || request.is_empty() {
        return Err(Reason::EmptyRequest);
    }
    let mut words = request.split(' ');
    let method = words.next().unwrap_or_default();
    let target = words.next().ok_or(Reason::RequestLine)?;
    match words.next() {
        Some(protocol) if !protocol.starts_with("HTTP/") => return Err(Reason::RequestLine),
        _ => {}
    }
    if words.next().is_some() || method.is_empty() || target.is_empty() {
        return Err(Reason::RequestLine);
    }
    let method = match method {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        m if m.bytes().all(|b| b.is_ascii_uppercase()) => return Err(Reason::Method),
        _ => return Err(Reason::RequestLine),
    };
    let path = if target.starts_with('/') {
        target.to_string()
    } else {
        let lower = target.get(..8).unwrap_or(target).to_ascii_lowercase();
        let after = if lower.starts_with("http://") {
            &target[7..]
        } else if lower.starts_with("https://") {
            &target[8..]
        } else {
            return Err(Reason::Target);
        };
        match after.find(['/', '?']) {
            Some(i) if after.as_bytes()[i] == b'/' => after[i..].to_string(),
            Some(i) => format!("/{}", &after[i..]),
            None => "/".to_string(),
        }
    };
    let path = path.split_once('#').map_or(path.as_str(), |(p, _)| p);
    if path
        .bytes()
        .any(|b| b == b'\\' || b == b'"' || !b.is_ascii_graphic())
    {
        return Err(Reason::PathChars);
    }
    Ok((method, path.to_string()))
}

/// `10/Oct/2000:13:55:36 -0700`, optionally with `.123` after the seconds,
/// to milliseconds since the Unix epoch in UTC.
fn parse_time(text: &str) -> Option<i64> {
    // Fixed byte positions below are char boundaries only in ASCII text.
    if !text.is_ascii() {
        return None;
    }
    let (local, zone) = text.split_once(' ')?;
    let b = local.as_bytes();
    if b.len() < 20 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' {
        return None;
    }
    if b[14] != b':' || b[17] != b':' {
        return None;
    }
    let day = digits(&local[0..2])?;
    let month = month_number(&local[3..6])?;
    let year = digits(&local[7..11])?;
    let hour = digits(&local[12..14])?;
    let minute = digits(&local[15..17])?;
    let second = digits(&local[18..20])?;
    let millis = match &local[20..] {
        "" => 0,
        frac => {
            let frac = frac.strip_prefix('.')?;
            let ms: String = frac.chars().chain("000".chars()).take(3).collect();
            if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits(&ms)?
        }
    };
    if day == 0 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let zb = zone.as_bytes();
    if zb.len() != 5 || !(zb[0] == b'+' || zb[0] == b'-') {
        return None;
    }
    let (zh, zm) = (digits(&zone[1..3])?, digits(&zone[3..5])?);
    if zh > 14 || zm > 59 {
        return None;
    }
    let zone_s = (zh * 3600 + zm * 60) * if zb[0] == b'-' { -1 } else { 1 };
    let days = days_from_civil(year, month, day);
    let local_s = days * 86_400 + hour * 3600 + minute * 60 + second;
    Some((local_s - zone_s) * 1000 + millis)
}

fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn month_number(name: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    MONTHS.iter().position(|m| *m == name).map(|i| i as i64 + 1)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard
/// Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests;
