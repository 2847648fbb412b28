//! Host names out of network destinations: for `exec.hosts`, and the canonical form of a
//! `net` request (host, port, scheme) that `net` rules match. Pure string work: nothing
//! here resolves a name.

use crate::request::{NetOp, NetRequest};

/// The host of a destination written as a URL (`https://user@Host:443/x`), an scp-style
/// `user@host:path`, `host:port` or a bare host; lower-cased, without the trailing dot.
/// `None` when there is no host to speak of (an empty word, a local path).
pub fn host_of(dest: &str) -> Option<String> {
    let d = dest.trim();
    let rest = match d.split_once("://") {
        Some((_, r)) => r,
        None => d,
    };
    // Authority ends at the first `/`, `?` or `#`.
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = hostport.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        hostport.split(':').next().unwrap_or("")
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() || host.starts_with(['.', '~', '$']) {
        return None;
    }
    Some(host)
}

/// Why a `net` request cannot be decided as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetError {
    /// Stable code (`net.bad-target`).
    pub code: &'static str,
    /// What is wrong, for the agent.
    pub message: String,
}

/// The port a scheme uses when none is given; `0` for schemes without one.
fn default_port(scheme: &str) -> u16 {
    match scheme {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        "ssh" | "sftp" | "scp" | "git+ssh" | "ssh+git" => 22,
        "git" => 9418,
        "ftp" => 21,
        "ftps" => 990,
        "rsync" => 873,
        "dns" => 53,
        _ => 0,
    }
}

/// Whether a destination is built at run time: a command substitution, a variable or a
/// backquote anywhere in it.
pub fn is_dynamic(target: &str) -> bool {
    target.contains(['$', '`'])
}

/// The literal tail of a name built at run time: `$(cat .env | base64).attacker.example`
/// reaches (a sub-domain of) `attacker.example`, whoever chose the label in front.
fn static_tail(target: &str) -> &str {
    let cut = target
        .rfind([')', '}', '`'])
        .map(|i| i + 1)
        .or_else(|| {
            // `$VAR.attacker.example`: the variable name ends at the first non-name byte.
            target.rfind('$').map(|i| {
                let rest = &target[i + 1..];
                i + 1
                    + rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len())
            })
        })
        .unwrap_or(0);
    target[cut..].trim_start_matches('.')
}

/// Fills in `host`, `port` and `scheme` of a `net` request from its `target`, and marks
/// a destination built at run time as `dynamic`. Host names are lower-cased without a
/// trailing dot; international names become their ASCII (punycode) form, the form DNS
/// resolves, so `ЕХАМРLЕ.com` spelled with Cyrillic letters is not `example.com`.
pub fn canonicalise(req: &mut NetRequest) -> Result<(), NetError> {
    let target = req.target.trim();
    if target.is_empty() {
        return Err(NetError {
            code: "net.bad-target",
            message: "the network destination is empty".into(),
        });
    }
    if is_dynamic(target) {
        req.dynamic = true;
    }
    let bad = |why: String| NetError {
        code: "net.bad-target",
        message: format!("`{target}` is not a destination ContextOS can read: {why}"),
    };
    // A URL with a scheme (and not the scp form `user@host:path`).
    if let Some((scheme, _)) = target.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if req.dynamic {
            req.scheme = scheme.clone();
            let after = &target[scheme.len() + 3..];
            let authority = after.split(['/', '?', '#']).next().unwrap_or("");
            req.host = host_part(static_tail(authority));
            req.port = port_part(authority).unwrap_or_else(|| default_port(&scheme));
            return Ok(());
        }
        let url = match url::Url::parse(target) {
            Ok(u) => u,
            // Tools accept spellings the URL standard does not (`git+ssh://git@host:org/x`):
            // the authority is read by hand, and only a missing host is refused.
            Err(e) => {
                req.scheme = scheme.clone();
                let after = &target[scheme.len() + 3..];
                let authority = after.split(['/', '?', '#']).next().unwrap_or("");
                let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                req.host = host_part(hostport);
                req.port = port_part(hostport).unwrap_or_else(|| default_port(&scheme));
                if req.host.is_empty() {
                    return Err(bad(e.to_string()));
                }
                return Ok(());
            }
        };
        req.scheme = url.scheme().to_string();
        req.host = match url.host() {
            Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_ascii_lowercase(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => String::new(),
        };
        req.port = url
            .port_or_known_default()
            .unwrap_or_else(|| default_port(url.scheme()));
        return Ok(());
    }
    // scp-style `user@host:path` (git over ssh).
    if let Some((user_host, path)) = target.split_once(':') {
        if user_host.contains('@') && !path.starts_with("//") && path.parse::<u16>().is_err() {
            req.scheme = "ssh".into();
            req.port = 22;
            req.host = host_part(static_tail(
                user_host.rsplit_once('@').map_or(user_host, |(_, h)| h),
            ));
            return Ok(());
        }
    }
    // `HOST`, `HOST:PORT`, `[V6]:PORT`, `user@HOST`.
    let hostport = target.rsplit_once('@').map_or(target, |(_, h)| h);
    let hostport = hostport.split('/').next().unwrap_or("");
    let tail = if req.dynamic {
        static_tail(hostport)
    } else {
        hostport
    };
    req.host = host_part(tail);
    req.port = port_part(hostport).unwrap_or(match req.op {
        NetOp::Fetch => 443,
        NetOp::Connect => 0,
    });
    if req.op == NetOp::Fetch && req.scheme.is_empty() {
        req.scheme = "https".into();
    }
    if req.host.is_empty() && !req.dynamic {
        return Err(bad("it names no host".into()));
    }
    Ok(())
}

/// The host of `host[:port]` or `[v6]:port`, canonical.
fn host_part(hostport: &str) -> String {
    let host = if let Some(v6) = hostport.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else if hostport.matches(':').count() > 1 {
        // A bare IPv6 address.
        hostport
    } else {
        hostport.split(':').next().unwrap_or("")
    };
    let host = host.trim_end_matches('.');
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return ip.to_string();
    }
    match url::Host::parse(host) {
        Ok(url::Host::Domain(d)) => d.to_ascii_lowercase(),
        Ok(url::Host::Ipv4(ip)) => ip.to_string(),
        Ok(url::Host::Ipv6(ip)) => ip.to_string(),
        Err(_) => host.to_ascii_lowercase(),
    }
}

/// The port of `host:port` or `[v6]:port`, if one is written.
fn port_part(hostport: &str) -> Option<u16> {
    let after = if hostport.starts_with('[') {
        hostport.split_once("]:").map(|(_, p)| p)?
    } else if hostport.matches(':').count() == 1 {
        hostport.rsplit_once(':').map(|(_, p)| p)?
    } else {
        return None;
    };
    after.parse().ok()
}

/// Whether the host is an IP address literal rather than a name (`net.ip`).
pub fn is_ip(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
}

/// A `net` rule pattern that is an address range (`10.0.0.0/8`, `fd00::/8`), matched
/// against IP hosts by containment instead of as a glob.
pub fn cidr(pattern: &str) -> Option<ipnet::IpNet> {
    pattern.parse().ok()
}

/// Why a `net` rule pattern cannot match any canonical host, for the checker; `None` when
/// it is a valid host glob or address range.
pub fn pattern_problem(pattern: &str) -> Option<String> {
    if pattern.contains("://") {
        return Some(
            "a `net` pattern is a host, not a URL: write the host alone (`example.com`)".into(),
        );
    }
    if pattern.contains('/') {
        return if cidr(pattern).is_some() {
            None
        } else {
            Some("only an address range (`10.0.0.0/8`) may contain `/`".into())
        };
    }
    if pattern.bytes().any(|b| b.is_ascii_uppercase()) {
        return Some("hosts are matched in lower case; write the pattern in lower case".into());
    }
    if pattern.contains(':')
        && pattern.parse::<std::net::IpAddr>().is_err()
        && !pattern.contains('*')
    {
        return Some("a `net` pattern names the host only; match the port with `net.port`".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(op: NetOp, target: &str) -> Result<NetRequest, NetError> {
        let mut r = NetRequest {
            op,
            target: target.into(),
            ..NetRequest::default()
        };
        canonicalise(&mut r).map(|()| r)
    }

    #[test]
    fn canonical_hosts_ports_and_schemes() {
        let cases = [
            (
                NetOp::Fetch,
                "https://Docs.RS/serde",
                "docs.rs",
                443,
                "https",
                false,
            ),
            (
                NetOp::Fetch,
                "http://10.0.0.7:8080/x",
                "10.0.0.7",
                8080,
                "http",
                false,
            ),
            (NetOp::Fetch, "https://[::1]/", "::1", 443, "https", false),
            (
                NetOp::Fetch,
                "example.com/path",
                "example.com",
                443,
                "https",
                false,
            ),
            (
                NetOp::Connect,
                "git@github.com:acme/repo.git",
                "github.com",
                22,
                "ssh",
                false,
            ),
            (
                NetOp::Connect,
                "attacker.example:4444",
                "attacker.example",
                4444,
                "",
                false,
            ),
            (NetOp::Connect, "user@10.0.0.1", "10.0.0.1", 0, "", false),
            (
                NetOp::Connect,
                "$(cat .env | base64).attacker.example",
                "attacker.example",
                0,
                "",
                true,
            ),
            (
                NetOp::Connect,
                "${TOKEN}.evil.example",
                "evil.example",
                0,
                "",
                true,
            ),
            (
                NetOp::Connect,
                "$T.evil.example",
                "evil.example",
                0,
                "",
                true,
            ),
            (
                NetOp::Fetch,
                "https://$(whoami).evil.example/x",
                "evil.example",
                443,
                "https",
                true,
            ),
            (
                NetOp::Fetch,
                "https://xn--80ak6aa92e.com/",
                "xn--80ak6aa92e.com",
                443,
                "https",
                false,
            ),
            (
                NetOp::Fetch,
                "https://\u{0430}pple.com/",
                "xn--pple-43d.com",
                443,
                "https",
                false,
            ),
            (
                NetOp::Connect,
                "Secret.Example.",
                "secret.example",
                0,
                "",
                false,
            ),
            (
                NetOp::Connect,
                "git+ssh://git@github.com:someone/pkg.git",
                "github.com",
                22,
                "git+ssh",
                false,
            ),
        ];
        for (op, target, host, port, scheme, dynamic) in cases {
            let r = canon(op, target).unwrap_or_else(|e| panic!("{target}: {e:?}"));
            assert_eq!(
                (r.host.as_str(), r.port, r.scheme.as_str(), r.dynamic),
                (host, port, scheme, dynamic),
                "{target}"
            );
        }
    }

    #[test]
    fn destinations_without_a_host_are_refused() {
        for t in ["", "   ", "https://", ":443"] {
            assert!(canon(NetOp::Fetch, t).is_err(), "{t:?}");
        }
    }

    #[test]
    fn patterns_that_can_never_match_are_named() {
        assert!(pattern_problem("https://example.com").is_some());
        assert!(pattern_problem("Example.com").is_some());
        assert!(pattern_problem("example.com:443").is_some());
        assert!(pattern_problem("example.com/x").is_some());
        assert!(pattern_problem("10.0.0.0/8").is_none());
        assert!(pattern_problem("*.github.com").is_none());
        assert!(pattern_problem("::1").is_none());
        assert!(cidr("10.0.0.0/8")
            .is_some_and(|n| n.contains(&"10.2.3.4".parse::<std::net::IpAddr>().unwrap())));
    }

    #[test]
    fn hosts_of_every_spelling() {
        let cases = [
            ("https://Evil.Example/x?y=1", Some("evil.example")),
            (
                "https://u:p@api.example.com:8443/v1",
                Some("api.example.com"),
            ),
            ("git@github.com:acme/repo.git", Some("github.com")),
            ("attacker.example:4444", Some("attacker.example")),
            ("10.0.0.1", Some("10.0.0.1")),
            ("http://[::1]:80/", Some("::1")),
            ("secret.attacker.example.", Some("secret.attacker.example")),
            ("", None),
            ("./local", None),
        ];
        for (dest, want) in cases {
            assert_eq!(host_of(dest).as_deref(), want, "{dest}");
        }
    }
}
