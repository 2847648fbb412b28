//! Downloaders: the files `curl` and `wget` save, log or keep cookies in.

use super::effects::Out;
use crate::options::{options, parse};

pub(super) fn curl(args: &[String], out: &mut Out) {
    let spec = options(
        "AbcCdDeEFHKmoPQrtTuUwxXyYz",
        "alt-svc cacert capath cert ciphers config connect-timeout connect-to \
            continue-at cookie cookie-jar data data-ascii data-binary data-raw data-urlencode \
            dump-header etag-compare etag-save form form-string ftp-port header hsts \
            interface json key libcurl limit-rate max-filesize max-redirs max-time noproxy \
            oauth2-bearer output output-dir pass proto proxy proxy-header proxy-user quote \
            range referer request resolve retry retry-delay retry-max-time speed-limit \
            speed-time stderr telnet-option time-cond trace trace-ascii unix-socket \
            upload-file url user user-agent variable write-out",
        "head netrc remote-name remote-name-all remote-header-name",
    );
    let p = parse(args, &spec);
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
            ca-certificate certificate config connect-timeout cut-dirs default-page \
            directory-prefix dns-timeout domains exclude-directories exclude-domains execute \
            header hsts-file http-password http-user include-directories input-file level \
            limit-rate load-cookies method output-document output-file password post-data \
            post-file private-key quota read-timeout referer reject reject-regex rejected-log \
            save-cookies timeout tries user user-agent wait waitretry warc-file",
        "spider",
    );
    let p = parse(args, &spec);
    if p.has('e', "execute") || p.has_long("config") {
        out.unknown(); // wgetrc commands can set the output file
    }
    let docs: Vec<&str> = p.values('O', "output-document").collect();
    let fetches = !p.operands.is_empty() || p.has('i', "input-file");
    if docs.is_empty() && fetches && !p.has_long("spider") {
        out.unknown(); // file names come from the URLs
    }
    out.writes(docs);
    out.writes(p.values('o', "output-file"));
    out.writes(p.values('a', "append-output"));
    out.writes(p.values('\0', "save-cookies"));
    out.writes(p.values('\0', "rejected-log"));
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(network_and_crypto);
}
