//! Host names out of the network destinations a command names, so a rule can match
//! `exec.hosts` without parsing URLs itself.

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

#[cfg(test)]
mod tests {
    use super::host_of;

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
