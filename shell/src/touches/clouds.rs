//! Infrastructure and cloud CLIs (kubectl, helm, terraform, pulumi, aws, gcloud, az,
//! gh, docker, podman): the subcommand path and operands that destructive-operation
//! rules name, the files they read, and the commands they carry into a container or
//! a pod, which are not visible.

use super::effects::Out;
use crate::options::{listed, options, parse, Spec};

/// The leading non-option words of `args` that are subcommands: at most `depth`,
/// stopping after a word in `leaves` (a verb).
fn path(ops: &[&str], depth: usize, groups: &str) -> usize {
    let mut n = 0;
    while n < depth && n < ops.len() {
        n += 1;
        if !ops.get(n - 1).is_some_and(|w| listed(groups, w)) {
            break;
        }
    }
    n
}

/// `file://path` and `fileb://path` values (aws, az `@file`): files read.
fn file_values(args: &[String], out: &mut Out) {
    for a in args {
        let v = a.split_once('=').map_or(a.as_str(), |(_, v)| v);
        if let Some(f) = v
            .strip_prefix("file://")
            .or_else(|| v.strip_prefix("fileb://"))
        {
            out.read(f);
        }
    }
}

const KUBECTL: Spec = options(
    "nslcfopLk",
    "namespace context cluster user server kubeconfig token as as-group \
        request-timeout cache-dir certificate-authority client-certificate client-key \
        tls-server-name output selector filename container field-selector type patch \
        grace-period timeout replicas image sort-by template kustomize for from-literal \
        from-file from-env-file cascade overrides port dry-run field-manager \
        subresource since since-time tail limit-bytes label-columns chunk-size \
        password username profile-output v",
    "all all-namespaces force now wait stdin tty quiet watch recursive server-side \
        prune overwrite record include-uninitialized insecure-skip-tls-verify",
);

/// kubectl: `VERB` (with the group for `config`, `rollout`, `auth`, `certificate`),
/// `-f FILE|URL` read; `exec`/`run`/`debug`/`attach` carry a command into a pod.
pub(super) fn kubectl(name: &str, args: &[String], out: &mut Out) {
    let p = parse(args, &KUBECTL);
    out.options(p.normalised(&[
        ('n', "namespace"),
        ('l', "selector"),
        ('c', "container"),
        ('f', "filename"),
        ('o', "output"),
        ('p', "patch"),
        ('k', "kustomize"),
        ('s', "server"),
        ('A', "all-namespaces"),
    ]));
    let ops: Vec<&str> = p
        .operands
        .get(..p.dashdash.unwrap_or(p.operands.len()))
        .unwrap_or_default()
        .to_vec();
    let n = path(
        &ops,
        2,
        "config rollout auth certificate plugin alpha apply set create top",
    );
    let n = if matches!(ops.first(), Some(&"create" | &"set" | &"top" | &"apply")) && n == 2 {
        // `kubectl create secret …` keeps the resource kind as an operand.
        1
    } else {
        n
    };
    ops.iter().take(n).for_each(|s| out.subcommand(s));
    out.operands(p.operands().skip(n));
    for f in p.values('f', "filename") {
        if f.contains("://") {
            out.net(f);
        } else {
            out.read(f);
        }
    }
    out.reads(p.values('\0', "kubeconfig"));
    for l in ["from-file", "from-env-file"] {
        for v in p.values('\0', l) {
            out.read(v.split_once('=').map_or(v, |(_, f)| f));
        }
    }
    p.values('s', "server").for_each(|s| out.net(s));
    let verb = ops.first().copied().unwrap_or_default();
    if matches!(verb, "exec" | "run" | "debug" | "attach")
        && (p.dashdash.is_some() || verb == "attach")
    {
        out.opaque(format!("'{name} {verb}' runs a command inside a pod"));
    }
    if verb == "cp" {
        // `kubectl cp LOCAL POD:PATH` or back.
        for o in p.operands().skip(n) {
            if !o.contains(':') {
                out.read(o);
                out.write(o);
            }
        }
    }
}

/// helm: `SUBCOMMAND [SUB]`, values files read, chart URLs and repositories network;
/// `--post-renderer` runs a program.
pub(super) fn helm(args: &[String], out: &mut Out) {
    let spec = options(
        "nfo",
        "namespace kube-context kubeconfig values set set-string set-file set-json \
            version repo output timeout description post-renderer post-renderer-args \
            username password ca-file cert-file key-file registry-config \
            repository-cache repository-config history-max burst-limit qps max-history \
            revision cascade labels selector name-template api-versions kube-version \
            output-dir show-only destination keyring",
        "install dry-run wait atomic force create-namespace devel",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[('n', "namespace"), ('f', "values"), ('o', "output")]));
    let ops: Vec<&str> = p.operands().collect();
    let n = path(
        &ops,
        2,
        "repo plugin dependency dep get show search registry env completion",
    );
    ops.iter().take(n).for_each(|s| out.subcommand(s));
    out.operands(ops.iter().skip(n).copied());
    for f in p.values('f', "values") {
        if f.contains("://") {
            out.net(f);
        } else {
            out.read(f);
        }
    }
    for v in p.values('\0', "set-file") {
        out.read(v.split_once('=').map_or(v, |(_, f)| f));
    }
    out.reads(p.values('\0', "kubeconfig"));
    p.values('\0', "repo").for_each(|r| out.net(r));
    ops.iter()
        .skip(n)
        .filter(|o| o.contains("://"))
        .for_each(|o| out.net(o));
    if p.values('\0', "post-renderer").next().is_some() {
        out.opaque("'helm --post-renderer' runs a program");
    }
    if ops.first() == Some(&"plugin") && ops.get(1) == Some(&"install") {
        out.opaque("'helm plugin install' installs code that helm runs");
    }
}

/// terraform and tofu: `-chdir=DIR SUBCOMMAND [SUB]`, Go-style options (`-x=v`, one
/// or two dashes); `-var-file` read, `-out`/`-state-out` written.
pub(super) fn terraform(args: &[String], out: &mut Out) {
    const VALUES: &str = "var var-file target replace out state state-out backup lock-timeout \
        parallelism backend-config plugin-dir lockfile from-module chdir generate-config-out \
        filter test-directory json-into platform";
    let mut ops = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) else {
            ops.push(a.as_str());
            continue;
        };
        if body.is_empty() {
            ops.extend(args.iter().skip(i).map(String::as_str));
            break;
        }
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None if listed(VALUES, body) => {
                i += 1;
                (body, args.get(i - 1).map(String::as_str))
            }
            None => (body, None),
        };
        match (name, value) {
            (_, Some("true")) => out.options([format!("-{name}")]),
            (_, Some(v)) => out.options([format!("-{name}={v}")]),
            (_, None) => out.options([format!("-{name}")]),
        }
        match (name, value) {
            ("chdir", Some(d)) => out.chdir(d),
            ("var-file", Some(f)) => out.read(f),
            ("out" | "state-out" | "backup" | "generate-config-out", Some(f)) => out.write(f),
            ("plugin-dir", Some(d)) => out.read(d),
            _ => {}
        }
    }
    let n = path(&ops, 2, "state workspace providers");
    ops.iter().take(n).for_each(|s| out.subcommand(s));
    out.operands(ops.iter().skip(n).copied());
}

/// pulumi: `SUBCOMMAND [SUB]`; `--cwd`/`-C` changes directory.
pub(super) fn pulumi(args: &[String], out: &mut Out) {
    let spec = options(
        "sCpmc",
        "stack cwd target parallel message config config-file secrets-provider \
            target-replace replace exclude",
        "yes skip-preview non-interactive diff refresh remove force exclude-protected \
            continue-on-error target-dependents",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[
        ('s', "stack"),
        ('C', "cwd"),
        ('p', "parallel"),
        ('m', "message"),
        ('c', "config"),
        ('y', "yes"),
        ('f', "force"),
    ]));
    p.values('C', "cwd").for_each(|d| out.chdir(d));
    out.reads(p.values('\0', "config-file"));
    let ops: Vec<&str> = p.operands().collect();
    let n = path(
        &ops,
        2,
        "stack config state plugin policy org schema package env",
    );
    ops.iter().take(n).for_each(|s| out.subcommand(s));
    out.operands(ops.iter().skip(n).copied());
}

/// aws: `SERVICE OPERATION`; `file://` values read, `s3://` locations network, local
/// paths of `s3 cp/mv/sync` read or written.
pub(super) fn aws(args: &[String], out: &mut Out) {
    const GLOBAL: &str = "profile region output endpoint-url query color ca-bundle \
        cli-read-timeout cli-connect-timeout cli-binary-format cli-input-json \
        cli-input-yaml";
    const S3_VALUES: &str = "exclude include acl storage-class sse sse-c sse-c-key \
        sse-kms-key-id grants website-redirect content-type cache-control \
        content-disposition content-encoding content-language expires metadata \
        metadata-directive page-size source-region request-payer expected-size \
        grants checksum-algorithm";
    let mut ops: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(name) = a.strip_prefix("--") else {
            ops.push(a);
            continue;
        };
        let (name, inline) = name
            .split_once('=')
            .map_or((name, None), |(n, v)| (n, Some(v)));
        let s3 = ops.first() == Some(&"s3");
        // Operation parameters take a value unless they are booleans (`--no-x`,
        // `--dry-run`) or followed by another option.
        let takes = listed(GLOBAL, name)
            || (s3 && listed(S3_VALUES, name))
            || (!s3
                && ops.len() >= 2
                && !name.starts_with("no-")
                && !listed("dry-run debug recursive force quiet", name)
                && args.get(i).is_some_and(|v| !v.starts_with("--")));
        let value = match inline {
            Some(v) => Some(v),
            None if takes => {
                i += 1;
                args.get(i - 1).map(String::as_str)
            }
            None => None,
        };
        match value {
            Some(v) => out.options([format!("--{name}={v}")]),
            None => out.options([format!("--{name}")]),
        }
        if name == "endpoint-url" {
            out.nets(value);
        }
    }
    file_values(args, out);
    let n = ops.len().min(2);
    ops.iter().take(n).for_each(|s| out.subcommand(s));
    let rest = ops.get(n..).unwrap_or_default();
    out.operands(rest.iter().copied());
    for o in rest {
        if o.starts_with("s3://") {
            out.net(o);
        }
    }
    if ops.first() == Some(&"s3") {
        let verb = ops.get(1).copied().unwrap_or_default();
        let local = |o: &&&str| !o.starts_with("s3://");
        if let ("cp" | "mv" | "sync", [src, dst]) = (verb, rest) {
            if local(&src) {
                out.read(src);
                if verb == "mv" {
                    out.delete(src);
                }
            }
            if local(&dst) {
                out.write(dst);
            }
        }
    }
}

/// gcloud and az: the command groups down to the first verb.
pub(super) fn gcloud_az(name: &str, args: &[String], out: &mut Out) {
    const VERBS: &str = "delete create list describe update set get add remove deploy rm \
        cp mv ls cat login logout access ssh scp start stop reset resize import export \
        run submit cancel enable disable destroy undelete restore patch show purge \
        add-iam-policy-binding remove-iam-policy-binding get-iam-policy set-iam-policy \
        activate-service-account print-access-token print-identity-token download upload \
        invoke execute connect";
    let values = if name == "az" {
        "subscription output query resource-group name g n o"
    } else {
        "project account configuration format verbosity impersonate-service-account \
            zone region filter limit sort-by billing-project flags-file"
    };
    let mut ops: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(body) = a
            .strip_prefix("--")
            .or_else(|| a.strip_prefix('-').filter(|b| !b.is_empty()))
        else {
            ops.push(a);
            continue;
        };
        let (n, inline) = body
            .split_once('=')
            .map_or((body, None), |(n, v)| (n, Some(v)));
        let value = match inline {
            Some(v) => Some(v),
            None if listed(values, n)
                || (n.len() > 1
                    && args.get(i).is_some_and(|v| !v.starts_with('-'))
                    && ops.len() >= 2
                    && !listed("quiet yes no-wait async force recursive all", n)) =>
            {
                i += 1;
                args.get(i - 1).map(String::as_str)
            }
            None => None,
        };
        let dash = if a.starts_with("--") { "--" } else { "-" };
        match value {
            Some(v) => {
                out.options([format!("{dash}{n}={v}")]);
                if let Some(f) = v.strip_prefix('@').filter(|_| name == "az") {
                    out.read(f);
                }
            }
            None => out.options([format!("{dash}{n}")]),
        }
        if n == "flags-file" {
            out.reads(value);
        }
    }
    let mut n = 0;
    while n < ops.len() && n < 5 {
        n += 1;
        if ops.get(n - 1).is_some_and(|w| listed(VERBS, w)) {
            break;
        }
    }
    ops.iter().take(n).for_each(|s| out.subcommand(s));
    out.operands(ops.iter().skip(n).copied());
    for o in ops.iter().skip(n) {
        if o.starts_with("gs://") {
            out.net(o);
        }
    }
    if name == "gcloud" && ops.contains(&"ssh") {
        if let Some(c) = args.iter().find(|a| a.starts_with("--command")) {
            out.opaque(format!("'gcloud … ssh {c}' runs a command remotely"));
        }
    }
}

/// gh: `GROUP VERB` (`repo delete`, `secret set`), `api` with its method.
pub(super) fn gh(args: &[String], out: &mut Out) {
    let spec = options(
        "RXFfHqtbBmLlsSAajpwe",
        "repo method field raw-field header jq template input hostname body body-file \
            title base head label assignee reviewer milestone project limit state \
            author json search branch tag target notes notes-file env org visibility \
            workflow ref repo-dir cache paginate-limit",
        "yes confirm force paginate draft web fill silent include",
    );
    let p = parse(args, &spec);
    out.options(p.normalised(&[
        ('R', "repo"),
        ('X', "method"),
        ('F', "field"),
        ('f', "raw-field"),
        ('H', "header"),
        ('b', "body"),
        ('F', "body-file"),
        ('t', "title"),
        ('y', "yes"),
    ]));
    let ops: Vec<&str> = p.operands().collect();
    let one = listed(
        "api browse status completion alias help",
        ops.first().copied().unwrap_or_default(),
    );
    let n = ops.len().min(if one { 1 } else { 2 });
    ops.iter().take(n).for_each(|s| out.subcommand(s));
    out.operands(ops.iter().skip(n).copied());
    out.reads(
        p.values('\0', "body-file")
            .chain(p.values('\0', "notes-file")),
    );
    out.reads(p.values('\0', "input"));
    for f in p.values('F', "field") {
        if let Some((_, file)) = f.split_once("=@") {
            out.read(file);
        }
    }
    // Every gh command but the local ones talks to GitHub's API (or `--hostname`'s).
    let local = listed(
        "completion alias help config",
        ops.first().copied().unwrap_or_default(),
    );
    let mut hosts = p.values('\0', "hostname").peekable();
    if hosts.peek().is_none() && !local {
        out.net("https://api.github.com");
    }
    hosts.for_each(|h| out.net(h));
    // Uploads: the files a gist or a release carries off.
    match (ops.first().copied(), ops.get(1).copied()) {
        (Some("gist"), Some("create" | "new")) => {
            out.reads(ops.iter().skip(2).copied().filter(|f| *f != "-"))
        }
        (Some("release"), Some("upload")) => out.reads(ops.iter().skip(3).copied()),
        (Some("release"), Some("create")) => out.reads(ops.iter().skip(3).copied()),
        _ => {}
    }
    if ops.first() == Some(&"extension") && ops.get(1) == Some(&"install") {
        out.opaque("'gh extension install' installs code that gh runs");
    }
    if ops.first() == Some(&"alias") && p.has_long("shell") {
        out.opaque("'gh alias set --shell' defines a shell command");
    }
}

const DOCKER_RUN: &str = "add-host annotation attach blkio-weight cap-add cap-drop \
    cgroup-parent cgroupns cidfile cpu-period cpu-quota cpu-shares cpus cpuset-cpus \
    cpuset-mems device device-cgroup-rule dns dns-option dns-search domainname entrypoint \
    env env-file expose gpus group-add health-cmd health-interval health-retries \
    health-start-period health-timeout hostname ip ip6 ipc isolation kernel-memory label \
    label-file link log-driver log-opt mac-address memory memory-reservation memory-swap \
    mount name network network-alias pid pids-limit platform publish pull restart runtime \
    security-opt shm-size stop-signal stop-timeout storage-opt sysctl tmpfs ulimit user \
    userns uts volume volume-driver volumes-from workdir detach-keys cpu-count \
    env-from file tag build-arg target cache-from cache-to output secret ssh progress \
    filter format since until signal time";

/// docker and podman: the subcommand (two words for management groups), volume
/// mounts of host paths, and `exec`/`run` commands inside a container (opaque).
pub(super) fn docker(name: &str, args: &[String], out: &mut Out) {
    let global = Spec {
        posix: true,
        ..options(
            "cHl",
            "config context host log-level tlscacert tlscert tlskey",
            "",
        )
    };
    let g = parse(args, &global);
    out.options(g.normalised(&[('c', "context"), ('H', "host"), ('l', "log-level")]));
    g.values('H', "host").for_each(|h| out.net(h));
    let rest: Vec<String> = g.operands.iter().map(|s| s.to_string()).collect();
    let Some(first) = rest.first() else {
        return;
    };
    let groups = "container image volume network system builder buildx compose context \
        plugin secret service stack swarm node config trust manifest machine pod";
    let two = listed(groups, first) && rest.len() > 1;
    let n = if two { 2 } else { 1 };
    let sub: Vec<&str> = rest.iter().take(n).map(String::as_str).collect();
    sub.iter().for_each(|s| out.subcommand(s));
    let verb = sub.last().copied().unwrap_or_default();
    // Short options mean different things per subcommand (`run -v` mounts a volume,
    // `compose down -v` and `rm -v` remove volumes, `build -f` names the Dockerfile).
    let (values, aliases): (&str, &[(char, &str)]) = match verb {
        "run" | "create" | "exec" => (
            "aevpwulhmc",
            &[
                ('e', "env"),
                ('v', "volume"),
                ('p', "publish"),
                ('w', "workdir"),
                ('u', "user"),
                ('i', "interactive"),
                ('t', "tty"),
                ('d', "detach"),
                ('l', "label"),
                ('h', "hostname"),
                ('m', "memory"),
            ],
        ),
        "build" | "buildx" => ("ftoc", &[('f', "file"), ('t', "tag"), ('o', "output")]),
        "down" | "rm" => ("t", &[('v', "volumes"), ('f', "force"), ('s', "stop")]),
        "prune" => ("", &[('f', "force"), ('a', "all")]),
        "logs" => ("n", &[('f', "follow"), ('n', "tail")]),
        _ => ("", &[]),
    };
    let spec = Spec {
        posix: matches!(verb, "run" | "exec" | "create"),
        ..options(values, DOCKER_RUN, "")
    };
    let args = rest.get(n..).unwrap_or_default();
    let p = parse(args, &spec);
    out.options(p.normalised(aliases));
    out.operands(p.operands());
    out.reads(
        p.values('\0', "env-file")
            .chain(p.values('\0', "label-file")),
    );
    for v in p.values('v', "volume") {
        // `HOST:CONTAINER[:ro]`: a host path the container reads (and writes).
        let mut parts = v.split(':');
        let host = parts.next().unwrap_or_default();
        if host.starts_with(['/', '.', '~', '$']) {
            out.read(host);
            if !v.ends_with(":ro") && !v.contains(":ro,") {
                out.write(host);
            }
        }
    }
    for m in p.values('\0', "mount") {
        let src = m.split(',').find_map(|kv| {
            kv.strip_prefix("source=")
                .or_else(|| kv.strip_prefix("src="))
        });
        if let Some(src) = src.filter(|s| s.starts_with(['/', '.', '~', '$'])) {
            out.read(src);
            if !m.contains("readonly") && !m.contains("ro=true") {
                out.write(src);
            }
        }
    }
    match verb {
        "exec" => out.opaque(format!("'{name} exec' runs a command inside a container")),
        "run" | "create"
            if p.operands.len() > 1 || p.values('\0', "entrypoint").next().is_some() =>
        {
            out.opaque(format!("'{name} {verb}' runs a command inside a container"));
        }
        "build" => {
            out.reads(p.operands());
            out.reads(p.values('f', "file"));
        }
        "cp" => {
            for o in p.operands() {
                if !o.contains(':') {
                    out.read(o);
                    out.write(o);
                }
            }
        }
        "login" | "push" | "pull" => {
            if let Some(r) = p.operands().next() {
                out.net(r);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    case_files!(clouds);
}
