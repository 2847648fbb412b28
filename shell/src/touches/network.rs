//! Network clients: where they connect, the files they send (`curl -d @.env`) and the
//! files they save, log or keep cookies in.

use super::effects::Out;
use crate::options::{options, parse, Spec};

const CURL: Spec = Spec {
    negatable: true,
    ..crate::options::model(
        "sSLfkviIOJGgNqZ0123456aBjlnpRM#V",
        "AbcCdDeEFHKmoPQrtTuUwxXyYz",
        "silent show-error location location-trusted fail fail-with-body fail-early \
            insecure verbose include head remote-name remote-name-all remote-header-name \
            get globoff no-buffer buffer compressed compressed-ssh http0.9 http1.0 \
            http1.1 http2 http2-prior-knowledge http3 http3-only ipv4 ipv6 tlsv1 \
            tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 sslv2 sslv3 append use-ascii disable-epsv \
            disable-eprt epsv eprt netrc netrc-optional list-only proxytunnel raw \
            create-dirs progress-bar progress-meter keepalive sessionid tcp-nodelay \
            tcp-fastopen parallel parallel-immediate path-as-is post301 post302 post303 \
            proxy-insecure remote-time retry-all-errors retry-connrefused ssl ssl-reqd \
            ssl-allow-beast ssl-no-revoke ssl-revoke-best-effort ssl-auto-client-cert \
            styled-output suppress-connect-headers tr-encoding trace-time xattr anyauth \
            basic digest ntlm ntlm-wb negotiate junk-session-cookies manual help version \
            doh-insecure ignore-content-length crlf false-start mail-rcpt-allowfails \
            disallow-username-in-url skip-existing proxy-anyauth proxy-basic \
            proxy-digest proxy-negotiate proxy-ntlm socks5-gssapi-nec \
            haproxy-protocol http2-prior-knowledge alpn npn clobber \
            ca-native proxy-ca-native insecure-proxy metalink no-progress-meter \
            no-keepalive no-sessionid no-buffer no-alpn no-npn no-clobber",
        "abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers \
            config connect-timeout connect-to continue-at cookie cookie-jar \
            create-file-mode crlfile curves data data-ascii data-binary data-raw \
            data-urlencode delegation dns-interface dns-ipv4-addr dns-ipv6-addr \
            dns-servers doh-url dump-header ech egd-file engine etag-compare etag-save \
            expect100-timeout form form-escape form-string ftp-account \
            ftp-alternative-to-user ftp-method ftp-port ftp-ssl-ccc-mode header \
            happy-eyeballs-timeout-ms haproxy-clientip hostpubmd5 hostpubsha256 hsts \
            interface ip-tos ipfs-gateway json keepalive-time keepalive-cnt key \
            key-type krb libcurl limit-rate local-port login-options mail-auth \
            mail-from mail-rcpt max-filesize max-redirs max-time netrc-file noproxy \
            oauth2-bearer output output-dir pass pinnedpubkey preproxy proto \
            proto-default proto-redir proxy proxy-cacert proxy-capath proxy-cert \
            proxy-cert-type proxy-ciphers proxy-crlfile proxy-header proxy-key \
            proxy-key-type proxy-pass proxy-pinnedpubkey proxy-service-name \
            proxy-tls13-ciphers proxy-tlsauthtype proxy-tlspassword proxy-tlsuser \
            proxy-user proxy1.0 pubkey quote random-file range rate referer request \
            request-target resolve retry retry-delay retry-max-time sasl-authzid \
            service-name socks4 socks4a socks5 socks5-basic socks5-gssapi \
            socks5-gssapi-service socks5-hostname speed-limit speed-time stderr \
            telnet-option tftp-blksize time-cond tls-max tls13-ciphers tlsauthtype \
            tlspassword tlsuser trace trace-ascii trace-config unix-socket \
            upload-file url url-query user user-agent variable vlan-priority \
            write-out",
    )
};

const CURL_ALIASES: &[(char, &str)] = &[
    ('d', "data"),
    ('F', "form"),
    ('H', "header"),
    ('o', "output"),
    ('O', "remote-name"),
    ('T', "upload-file"),
    ('K', "config"),
    ('u', "user"),
    ('X', "request"),
    ('x', "proxy"),
    ('L', "location"),
    ('s', "silent"),
    ('S', "show-error"),
    ('f', "fail"),
    ('k', "insecure"),
    ('v', "verbose"),
    ('i', "include"),
    ('I', "head"),
    ('b', "cookie"),
    ('c', "cookie-jar"),
    ('A', "user-agent"),
    ('e', "referer"),
    ('G', "get"),
    ('D', "dump-header"),
    ('w', "write-out"),
    ('m', "max-time"),
    ('C', "continue-at"),
    ('r', "range"),
    ('E', "cert"),
    ('J', "remote-header-name"),
    ('Z', "parallel"),
    ('n', "netrc"),
    ('N', "no-buffer"),
    ('g', "globoff"),
    ('U', "proxy-user"),
    ('R', "remote-time"),
    ('4', "ipv4"),
    ('6', "ipv6"),
    ('#', "progress-bar"),
    ('a', "append"),
    ('j', "junk-session-cookies"),
    ('l', "list-only"),
    ('p', "proxytunnel"),
    ('0', "http1.0"),
    ('1', "tlsv1"),
    ('V', "version"),
    ('q', "disable"),
    ('M', "manual"),
    ('B', "use-ascii"),
    ('t', "telnet-option"),
    ('P', "ftp-port"),
    ('Q', "quote"),
    ('y', "speed-time"),
    ('Y', "speed-limit"),
    ('z', "time-cond"),
];

/// curl: every operand is a URL; `@file` values of the data options, `-F k=@f`,
/// `-T f` and `-K cfg` are files read (sent).
pub(super) fn curl(args: &[String], out: &mut Out) {
    let p = parse(args, &CURL);
    out.parsed(&p, CURL_ALIASES);
    out.operands(p.operands());
    p.operands().for_each(|u| out.net(u));
    p.values('\0', "url").for_each(|u| out.net(u));
    for proxy in p.values('x', "proxy").chain(p.values('\0', "preproxy")) {
        out.net(proxy);
    }
    // Request bodies taken from files.
    for l in ["data", "data-ascii", "data-binary", "json", "url-query"] {
        let short = if l == "data" { 'd' } else { '\0' };
        out.reads(p.values(short, l).filter_map(|v| v.strip_prefix('@')));
    }
    for v in p.values('\0', "data-urlencode") {
        // `@file` or `name@file`; `name=content` sends content.
        if let Some((name, file)) = v.split_once('@') {
            if !name.contains('=') {
                out.read(file);
            }
        }
    }
    for v in p.values('F', "form") {
        // `name=@file;type=…`, `name=<file`.
        if let Some((_, value)) = v.split_once('=') {
            if let Some(file) = value.strip_prefix('@').or_else(|| value.strip_prefix('<')) {
                out.read(file.split(';').next().unwrap_or(file));
            }
        }
    }
    for v in p
        .values('H', "header")
        .chain(p.values('\0', "proxy-header"))
    {
        out.reads(v.strip_prefix('@'));
    }
    for v in p.values('\0', "variable") {
        if let Some((name, file)) = v.split_once('@') {
            if !name.contains('=') {
                out.read(file);
            }
        }
    }
    out.reads(p.values('T', "upload-file"));
    out.reads(p.values('K', "config"));
    for v in p.values('b', "cookie") {
        if !v.contains('=') {
            out.read(v);
        }
    }
    for l in [
        "cacert",
        "capath",
        "cert",
        "key",
        "netrc-file",
        "proxy-cacert",
        "proxy-cert",
        "proxy-key",
        "crlfile",
        "proxy-crlfile",
        "random-file",
        "egd-file",
    ] {
        let short = if l == "cert" { 'E' } else { '\0' };
        out.reads(p.values(short, l));
    }
    let dir = p.values('\0', "output-dir").last();
    // Names from the URL or server, or options from a config file.
    let remote = [
        ('O', "remote-name"),
        ('J', "remote-header-name"),
        ('K', "config"),
    ];
    if remote.iter().any(|(s, l)| p.has(*s, l)) || p.has_long("remote-name-all") {
        out.unknown();
        out.writes(dir);
    }
    for f in p.values('o', "output") {
        match dir {
            Some(d) if !f.starts_with(['/', '~', '$']) && f != "-" => {
                out.write(&format!("{}/{f}", d.trim_end_matches('/')));
            }
            _ => out.write(f),
        }
    }
    out.writes(p.values('D', "dump-header"));
    out.writes(p.values('c', "cookie-jar"));
    for l in [
        "alt-svc",
        "etag-save",
        "hsts",
        "libcurl",
        "stderr",
        "trace",
        "trace-ascii",
    ] {
        out.writes(p.values('\0', l));
    }
}

pub(super) fn wget(args: &[String], out: &mut Out) {
    let spec = options(
        "aABDeiIlnoOPQRtTUwX",
        "accept accept-regex append-output base bind-address body-data body-file \
            ca-certificate ca-directory certificate config connect-timeout cut-dirs \
            default-page directory-prefix dns-timeout domains exclude-directories \
            exclude-domains execute header hsts-file http-password http-user \
            include-directories input-file level limit-rate load-cookies method \
            output-document output-file password post-data post-file private-key \
            quota read-timeout referer reject reject-regex rejected-log save-cookies \
            timeout tries use-askpass user user-agent wait waitretry warc-file \
            ftp-user ftp-password proxy-user proxy-password",
        "spider",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    p.operands().for_each(|u| out.net(u));
    if p.has('e', "execute") || p.has_long("config") {
        out.unknown(); // wgetrc commands can set the output file
    }
    if p.values('\0', "use-askpass").next().is_some() {
        out.opaque("'wget --use-askpass' runs a program");
    }
    for f in p.values('i', "input-file") {
        if f.contains("://") {
            out.net(f);
        } else {
            out.read(f);
        }
    }
    for l in [
        "post-file",
        "body-file",
        "load-cookies",
        "config",
        "ca-certificate",
        "certificate",
        "private-key",
    ] {
        out.reads(p.values('\0', l));
    }
    let docs: Vec<&str> = p.values('O', "output-document").collect();
    let fetches = !p.operands.is_empty() || p.has('i', "input-file");
    if docs.is_empty() && fetches && !p.has_long("spider") {
        out.unknown(); // file names come from the URLs
    }
    out.writes(
        p.values('P', "directory-prefix")
            .filter(|_| docs.is_empty()),
    );
    out.writes(docs);
    out.writes(p.values('o', "output-file"));
    out.writes(p.values('a', "append-output"));
    out.writes(p.values('\0', "save-cookies"));
    out.writes(p.values('\0', "rejected-log"));
}

/// HTTPie (`http`, `https`, `xh`): `[METHOD] URL [ITEM…]`; `field=@file`,
/// `field:=@file` and `@file` items send files.
pub(super) fn httpie(args: &[String], out: &mut Out) {
    let spec = options(
        "aAoprsv",
        "auth auth-type output print pretty style session session-read-only proxy \
            verify cert cert-key timeout max-redirects default-scheme format-options \
            boundary response-charset response-mime history-print",
        "download continue",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
    let mut ops = p.operands().skip_while(|m| methods.contains(m));
    out.net(ops.next().unwrap_or_default());
    for item in ops {
        if let Some(f) = item.strip_prefix('@') {
            out.read(f);
        } else if let Some((_, f)) = item.split_once("=@").or_else(|| item.split_once(":=@")) {
            out.read(f);
        }
    }
    out.writes(p.values('o', "output"));
    if p.has('d', "download") && p.values('o', "output").next().is_none() {
        out.unknown();
    }
    out.writes(p.values('\0', "session").filter(|s| s.contains(['/', '.'])));
}

/// aria2c: URIs, `-i FILE` lists more; files land in `-d DIR` (`-o NAME`).
pub(super) fn aria2c(args: &[String], out: &mut Out) {
    let p = parse(args, &options("dioxsjl", "dir input-file out log", ""));
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    p.operands().for_each(|u| out.net(u));
    out.reads(p.values('i', "input-file"));
    out.writes(p.values('l', "log"));
    let dirs: Vec<&str> = p.values('d', "dir").collect();
    let names: Vec<&str> = p.values('o', "out").collect();
    match (dirs.last(), names.is_empty()) {
        (Some(d), false) => names
            .iter()
            .for_each(|n| out.write(&format!("{}/{n}", d.trim_end_matches('/')))),
        (None, false) => out.writes(names),
        (dir, true) => {
            out.writes(dir.copied());
            out.unknown();
        }
    }
}

/// The host of an scp/rsync/sftp operand (`user@host:path`, `scp://user@host/x`,
/// `host::module`), as written; `None` for a local path.
pub(super) fn remote_host(arg: &str) -> Option<&str> {
    if let Some(rest) = arg
        .strip_prefix("scp://")
        .or_else(|| arg.strip_prefix("sftp://"))
        .or_else(|| arg.strip_prefix("rsync://"))
        .or_else(|| arg.strip_prefix("ssh://"))
    {
        return rest.split('/').next().filter(|h| !h.is_empty());
    }
    if let Some(rest) = arg.strip_prefix('[') {
        // `[::1]:path`
        return rest
            .split_once(']')
            .map(|_| arg.split(']').next().unwrap_or(arg));
    }
    let (host, _) = arg.split_once(':')?;
    // A `/` before the colon makes it a local path (`./a:b`).
    (!host.is_empty() && !host.contains('/')).then_some(host)
}

/// sftp: `[user@]host[:path]`.
pub(super) fn sftp(args: &[String], out: &mut Out) {
    let p = parse(args, &options("BbcDFiJlPRSsoX", "", ""));
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    out.reads(
        p.values('b', "")
            .chain(p.values('F', ""))
            .chain(p.values('i', "")),
    );
    if p.values('S', "").next().is_some() || p.values('D', "").next().is_some() {
        out.opaque("'sftp -S/-D' runs another program as the connection");
    }
    for a in p.operands() {
        out.net(remote_host(a).unwrap_or(a));
    }
}

/// nc, ncat, netcat, telnet: `HOST PORT` (reported `HOST:PORT`); `-e`/`-c` run a
/// program with the connection, which hides what it does.
pub(super) fn netcat(name: &str, args: &[String], out: &mut Out) {
    let spec = options(
        "eciIOpPqsTwWxXmMo",
        "exec sh-exec lua-exec proxy proxy-type proxy-auth output hex-dump source \
            source-port wait idle-timeout max-conns allow allowfile deny denyfile append",
        "listen udp",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    let runs = [('e', "exec"), ('c', "sh-exec"), ('\0', "lua-exec")];
    if name != "telnet" && runs.iter().any(|(s, l)| p.has(*s, l)) {
        out.opaque(format!(
            "'{name}' runs a program fed by the network connection"
        ));
    }
    if name != "telnet" {
        out.writes(p.values('o', "output").chain(p.values('\0', "hex-dump")));
        p.values('x', "proxy").for_each(|x| out.net(x));
    }
    let ops: Vec<&str> = p.operands().collect();
    match ops.as_slice() {
        [host, port, ..] if !p.has('l', "listen") => out.net(&format!("{host}:{port}")),
        [host] if !p.has('l', "listen") => out.net(host),
        _ => {}
    }
}

/// socat ADDRESS ADDRESS: network addresses, files, and programs (`EXEC:`,
/// `SYSTEM:`).
pub(super) fn socat(args: &[String], out: &mut Out) {
    let addrs: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-') || *a == "-")
        .collect();
    out.options(
        args.iter()
            .filter(|a| a.starts_with('-') && *a != "-")
            .cloned(),
    );
    out.operands(addrs.iter().copied());
    for a in addrs {
        let (kind, rest) = a.split_once([':', ',']).unwrap_or((a, ""));
        let kind = kind.to_ascii_uppercase();
        let target = rest.split(',').next().unwrap_or(rest);
        match kind.as_str() {
            "EXEC" | "SYSTEM" => out.opaque(format!("'socat' runs '{target}'")),
            "TCP" | "TCP4" | "TCP6" | "TCP-CONNECT" | "UDP" | "UDP4" | "UDP6" | "UDP-CONNECT"
            | "OPENSSL" | "SSL" | "OPENSSL-CONNECT" | "SCTP" | "SCTP-CONNECT" | "DCCP-CONNECT"
            | "SOCKS4" | "SOCKS4A" | "SOCKS5" | "PROXY" | "UDP-SENDTO" => {
                out.net(target_after(rest))
            }
            "OPEN" | "GOPEN" | "FILE" => {
                out.read(target);
                out.write(target);
            }
            "CREATE" | "CREAT" => out.write(target),
            _ => {}
        }
    }
}

/// `[proxy:]host:port` → the destination `host:port` (a proxy's target last).
fn target_after(rest: &str) -> &str {
    let rest = rest.split(',').next().unwrap_or(rest);
    let parts: Vec<&str> = rest.split(':').collect();
    match parts.len() {
        n if n > 2 => {
            let start = rest.len() - parts[n - 2..].iter().map(|p| p.len()).sum::<usize>() - 1;
            rest.get(start..).unwrap_or(rest)
        }
        _ => rest,
    }
}

/// DNS tools and simple clients whose operands are names or hosts: dig, nslookup,
/// host, drill, ping, ftp, traceroute, whois, …
pub(super) fn hosts(name: &str, args: &[String], out: &mut Out) {
    let spec = match name {
        "dig" => options("bcfkmpqtxy", "", ""),
        "ping" | "ping6" => options("cfiIlmMpQsStTwWF", "", ""),
        "host" => options("cmNRtWD", "", ""),
        "traceroute" | "tracepath" | "mtr" => options("fFgimNpqstwzlcP", "", ""),
        _ => options("", "", ""),
    };
    let p = parse(args, &spec);
    out.options(p.normalised(&[]));
    out.operands(p.operands());
    let ops: Vec<&str> = p.operands().collect();
    for (k, a) in ops.iter().enumerate() {
        match name {
            "dig" | "drill" => {
                if let Some(server) = a.strip_prefix('@') {
                    out.net(server);
                } else if !a.starts_with('+') && !is_rr_type(a) && !a.eq_ignore_ascii_case("IN") {
                    out.net(a);
                }
            }
            // `nslookup NAME [SERVER]`, `host NAME [SERVER]`.
            "nslookup" | "host" => {
                if k < 2 && !a.starts_with('-') {
                    out.net(a);
                }
            }
            "ping" | "ping6" | "traceroute" | "tracepath" | "mtr" | "ftp" | "whois"
            | "ssh-keyscan" | "tftp" => {
                // Ping's packet size and traceroute's length follow the host.
                if k == 0 || name == "ssh-keyscan" {
                    out.net(a);
                }
            }
            _ => out.net(a),
        }
    }
    if name == "dig" {
        let files: Vec<&str> = p.values('f', "").collect();
        out.reads(files);
    }
}

fn is_rr_type(a: &str) -> bool {
    const TYPES: &str = "A AAAA ANY CAA CNAME DNSKEY DS HINFO MX NS NSEC PTR SOA SRV SSHFP \
        TLSA TXT AXFR IXFR HTTPS SVCB";
    TYPES.split_whitespace().any(|t| t.eq_ignore_ascii_case(a))
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(network_and_crypto, network_destinations);
}
