//! Target URLs and path templates: accepted forms, each refusal's message,
//! reproducible rendering, and round trips of generated URLs.

use super::*;
use proptest::prelude::*;

fn target(host: &str, port: u16, path: &str) -> Target {
    Target {
        host: host.to_string(),
        port,
        path_template: path.to_string(),
    }
}

fn render(template: &str, index: u64, seed: u64) -> String {
    let mut out = String::new();
    PathTemplate::parse(template)
        .expect("valid template")
        .render(index, seed, &mut out);
    out
}

#[test]
fn parses_hosts_ports_and_paths() {
    let ok = |url: &str| Target::parse(url).expect(url);
    assert_eq!(
        ok("http://127.0.0.1:8080/item/{rand:500}"),
        target("127.0.0.1", 8080, "/item/{rand:500}")
    );
    assert_eq!(ok("http://example.com"), target("example.com", 80, "/"));
    assert_eq!(
        ok("HTTP://Example.com?q=1"),
        target("Example.com", 80, "/?q=1")
    );
    assert_eq!(ok("http://[::1]:81/x#frag"), target("::1", 81, "/x"));
    assert_eq!(ok("http://[::1]/"), target("::1", 80, "/"));
    assert_eq!(ok(" http://h:1/a?b={seq} "), target("h", 1, "/a?b={seq}"));
}

#[test]
fn host_header_omits_port_80_and_brackets_ipv6() {
    assert_eq!(target("example.com", 80, "/").host_header(), "example.com");
    assert_eq!(
        target("127.0.0.1", 8080, "/").host_header(),
        "127.0.0.1:8080"
    );
    assert_eq!(target("::1", 81, "/").host_header(), "[::1]:81");
}

#[test]
fn resolves_names_and_addresses() {
    let addr = target("127.0.0.1", 8080, "/")
        .addr()
        .expect("an IP resolves");
    assert_eq!(addr, "127.0.0.1:8080".parse().expect("addr"));
    let local = target("localhost", 80, "/")
        .addr()
        .expect("localhost resolves");
    assert!(local.ip().is_loopback());
}

#[test]
fn https_is_refused_with_the_fix() {
    let err = Target::parse("https://example.com/").expect_err("https");
    assert!(matches!(err, TargetError::Https { .. }));
    let message = err.to_string();
    assert!(message.contains("does not speak"), "{message}");
    assert!(message.contains("give an http:// URL"), "{message}");
}

#[test]
fn refuses_malformed_urls_with_reasons() {
    let err = |url: &str| Target::parse(url).expect_err(url);
    assert!(matches!(err("example.com/x"), TargetError::Scheme { .. }));
    assert!(matches!(
        err("ftp://example.com/"),
        TargetError::Scheme { .. }
    ));
    assert!(matches!(err("http:///x"), TargetError::MissingHost { .. }));
    assert!(matches!(
        err("http://:80/"),
        TargetError::MissingHost { .. }
    ));
    assert!(matches!(
        err("http://[::1/"),
        TargetError::MissingHost { .. }
    ));
    assert!(matches!(
        err("http://u:p@h/"),
        TargetError::Credentials { .. }
    ));
    for port in ["0", "65536", "http", "+80", ""] {
        let e = err(&format!("http://h:{port}/"));
        assert!(matches!(e, TargetError::Port { .. }), "{port}: {e}");
    }
    assert!(matches!(err("http://h/a b"), TargetError::PathChar { .. }));
    assert!(matches!(err("http://h/café"), TargetError::PathChar { .. }));
}

#[test]
fn refuses_bad_placeholders() {
    let err = |t: &str| PathTemplate::parse(t).expect_err(t);
    let unknown = err("/x/{id}");
    assert!(
        unknown.to_string().contains("unknown placeholder '{id}'"),
        "{unknown}"
    );
    assert!(matches!(err("/{rand:0}"), TargetError::RandMax { .. }));
    assert!(matches!(err("/{rand:}"), TargetError::RandMax { .. }));
    assert!(matches!(err("/{rand:-3}"), TargetError::RandMax { .. }));
    assert!(matches!(err("/{n"), TargetError::Brace { brace: '{', .. }));
    assert!(matches!(err("/n}"), TargetError::Brace { brace: '}', .. }));
    assert!(matches!(
        err("/{{seq}}"),
        TargetError::Brace { brace: '{', .. }
    ));
}

#[test]
fn renders_sequence_numbers_and_seeded_draws() {
    assert_eq!(render("/plain", 5, 1), "/plain");
    assert_eq!(render("/{seq}/x{seq}", 42, 1), "/42/x42");
    let draws: Vec<u64> = (0..2000)
        .map(|i| render("{rand:10}", i, 9).parse().expect("number"))
        .collect();
    assert!(draws.iter().all(|d| (1..=10).contains(d)));
    for value in 1..=10 {
        let hits = draws.iter().filter(|&&d| d == value).count();
        assert!((140..=260).contains(&hits), "{value}: {hits}");
    }
    assert_eq!(render("/{rand:1}", 3, 0), "/1");
}

#[test]
fn draws_follow_one_seeded_stream_in_request_order() {
    // Two draws per request: request i takes values 2i and 2i+1.
    let mut rng = SplitMix64::new(11);
    let max = 1_000_000u64;
    let pick = |v: u64| ((u128::from(v) * u128::from(max)) >> 64) as u64 + 1;
    for index in 0..5 {
        let expected = format!("/{}/{}", pick(rng.next_u64()), pick(rng.next_u64()));
        assert_eq!(
            render("/{rand:1000000}/{rand:1000000}", index, 11),
            expected
        );
    }
    assert_ne!(
        render("/{rand:1000000}", 0, 11),
        render("/{rand:1000000}", 0, 12)
    );
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_urls(url in "\\PC*") {
        let _ = Target::parse(&url);
    }

    #[test]
    fn never_panics_on_url_shaped_input(url in "(https?|HTTP)://[\\[\\]:@a-z0-9.{}/?#%]{0,30}") {
        if let Ok(target) = Target::parse(&url) {
            prop_assert!(target.path_template.starts_with('/'));
            let mut out = String::new();
            PathTemplate::parse(&target.path_template).expect("parse validated it").render(3, 4, &mut out);
        }
    }

    #[test]
    fn formatted_urls_round_trip(
        host in "[a-z][a-z0-9-]{0,20}(\\.[a-z][a-z0-9-]{0,10}){0,3}|[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
        port in 1u16..,
        path in "/([A-Za-z0-9._~%=&?-]|\\{seq\\}|\\{rand:[1-9][0-9]{0,5}\\}){0,30}",
    ) {
        let parsed = Target::parse(&format!("http://{host}:{port}{path}")).expect("valid URL");
        prop_assert_eq!(parsed, target(&host, port, &path));
    }
}
