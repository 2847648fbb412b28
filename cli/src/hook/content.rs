//! What an edit puts into a file, where that text runs code later: lifecycle scripts added
//! to package manifests, a new Cargo build script, package-manager configuration that
//! changes where packages come from or turns install scripts back on. The path of such an
//! edit is usually allowed (it is the project's own manifest), so its content is what
//! would slip by: each finding becomes an explicit `ask` part (rule
//! `hook.lifecycle-script`).

use crate::hook::judge::{Part, Place};
use contextos_engine::emit::{Edit, HookEvent};
use contextos_engine::Effect;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The rule id every finding here carries.
pub const RULE: &str = "hook.lifecycle-script";

/// npm (and pnpm, yarn, bun) run these scripts of a package.json on install, publish or
/// pack, without the person typing them.
const NPM_LIFECYCLE: [&str; 8] = [
    "preinstall",
    "install",
    "postinstall",
    "prepare",
    "prepublish",
    "prepublishOnly",
    "prepack",
    "postpack",
];

/// The extra parts for every edit of `ev` whose text adds code that runs later.
pub fn parts(ev: &HookEvent, place: &Place) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for e in &ev.edits {
        let rel = place.base.resolve(&e.path.replace('\\', "/"));
        for finding in findings(e, &rel, || on_disk(place, &rel)) {
            if !out.iter().any(|p| p.reason == finding) {
                out.push(Part {
                    verdict: Effect::Ask,
                    explicit: true,
                    reason: finding,
                    rules: vec![RULE.to_string()],
                    host: false,
                });
            }
        }
    }
    out
}

/// The file as it is now, where it can be read (for a whole-file write: what it replaces).
fn on_disk(place: &Place, rel: &str) -> Option<String> {
    let p = if rel.starts_with('/') {
        PathBuf::from(rel)
    } else if rel.starts_with('~') {
        return None;
    } else {
        place.root.join(rel)
    };
    // Only a regular file is read: opening a FIFO would block the hook until its deadline.
    if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
        return None;
    }
    std::fs::read_to_string(p).ok()
}

fn name_of(rel: &str) -> String {
    rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase()
}

/// The reasons `e` (to the project-relative `rel`) needs a person's confirmation.
fn findings(e: &Edit, rel: &str, current: impl Fn() -> Option<String>) -> Vec<String> {
    let name = name_of(rel);
    let before = || {
        if e.whole {
            current().unwrap_or_default()
        } else {
            e.removed.clone()
        }
    };
    let mut out = Vec::new();
    match name.as_str() {
        "package.json" => {
            let old = pairs(&before(), &NPM_LIFECYCLE);
            for (script, value) in pairs(&e.added, &NPM_LIFECYCLE) {
                if old.get(&script) != Some(&value) {
                    out.push(format!(
                        "write `{rel}`: sets the `{script}` lifecycle script (`{}`), which the package manager runs on its own at install, publish or pack time [{RULE}]",
                        clip(&value)
                    ));
                }
            }
        }
        "build.rs" if e.whole => out.push(format!(
            "write `{rel}`: a Cargo build script runs as code on every build of the crate [{RULE}]"
        )),
        "cargo.toml"
            if added_lines(e, &before())
                .iter()
                .any(|l| key_of(l).is_some_and(|k| k == "build")) =>
        {
            out.push(format!(
                "write `{rel}`: sets the crate's `build` script, which runs as code on every build [{RULE}]"
            ));
        }
        "setup.py" if e.whole && current().is_none() => out.push(format!(
            "write `{rel}`: a new setup.py is code that pip runs when it builds or installs the project [{RULE}]"
        )),
        "setup.py" if added_lines(e, &before()).iter().any(|l| l.contains("cmdclass")) => {
            out.push(format!(
                "write `{rel}`: adds a `cmdclass` build command, code that pip runs when it builds or installs the project [{RULE}]"
            ));
        }
        "pyproject.toml" => {
            let hooks = added_lines(e, &before()).into_iter().find(|l| {
                let t = l.trim();
                matches!(key_of(t), Some("build-backend" | "backend-path"))
                    || (t.starts_with('[') && t.contains(".hooks"))
                    || t.starts_with("[build-system")
            });
            if let Some(l) = hooks {
                out.push(format!(
                    "write `{rel}`: changes the build backend or a build hook (`{}`), code that runs when the project is built or installed [{RULE}]",
                    clip(l.trim())
                ));
            }
        }
        ".npmrc" | ".yarnrc" | ".yarnrc.yml" | ".pnpmrc" | "bunfig.toml" | "pip.conf"
        | "pip.ini" => {
            for l in added_lines(e, &before()) {
                if let Some(what) = package_config(&name, l.trim()) {
                    out.push(format!(
                        "write `{rel}`: {what} (`{}`) [{RULE}]",
                        clip(l.trim())
                    ));
                }
            }
        }
        _ => {}
    }
    out
}

/// What a package-manager configuration line changes, when it matters.
fn package_config(name: &str, line: &str) -> Option<&'static str> {
    if line.starts_with('#') || line.starts_with(';') {
        return None;
    }
    // `.npmrc` keys hold `:` (`@scope:registry=`), YAML separates with `:`, yarn 1's
    // `.yarnrc` with a space.
    let (key, value) = match name {
        ".yarnrc.yml" => line.split_once(':')?,
        ".yarnrc" => line.split_once(char::is_whitespace)?,
        "pip.conf" | "pip.ini" => line.split_once(['=', ':'])?,
        _ => line.split_once('=')?,
    };
    let key = key.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    let value = value.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    let registry = key == "registry"
        || key.ends_with(":registry")
        || key == "npmregistryserver"
        || key == "index-url"
        || key == "extra-index-url";
    if registry {
        return Some("points the package manager at another registry or index");
    }
    let scripts_on = (key == "ignore-scripts" && value == "false")
        || (key == "enablescripts" && value == "true");
    if scripts_on {
        return Some("turns install scripts of dependencies back on");
    }
    None
}

/// Lines of the new text that were not there before.
fn added_lines<'a>(e: &'a Edit, before: &str) -> Vec<&'a str> {
    let old: std::collections::HashSet<&str> = before.lines().map(str::trim).collect();
    e.added
        .lines()
        .filter(|l| !l.trim().is_empty() && !old.contains(l.trim()))
        .collect()
}

/// The key of a `key = value` / `key: value` / `"key": value` line.
fn key_of(line: &str) -> Option<&str> {
    let (k, _) = line.split_once(['=', ':'])?;
    let k = k.trim().trim_matches(['"', '\'']).trim();
    (!k.is_empty() && !k.contains(char::is_whitespace)).then_some(k)
}

/// Every `"name": "value"` of one of `names` in JSON text (or a fragment of it, as an Edit
/// sends), the value as written. A fragment need not parse, so this is a scan, not a parse;
/// it finds keys inside any object, which can only ask more.
fn pairs(text: &str, names: &[&str]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while let Some(i) = rest.find('"') {
        let after = &rest[i + 1..];
        let Some((key, tail)) = json_string(after) else {
            break;
        };
        rest = tail;
        if !names.contains(&key.as_str()) {
            continue;
        }
        let t = tail.trim_start();
        let Some(t) = t.strip_prefix(':') else {
            continue;
        };
        let t = t.trim_start();
        if let Some(v) = t.strip_prefix('"') {
            if let Some((value, tail)) = json_string(v) {
                out.insert(key, value);
                rest = tail;
            }
        } else {
            // A value that is not a string (`null`, a number): still a change to the key.
            let v: String = t
                .chars()
                .take_while(|c| !matches!(c, ',' | '}' | '\n'))
                .collect();
            out.insert(key, v.trim().to_string());
        }
    }
    out
}

/// A JSON string body up to its closing quote (escapes kept as written), and what follows.
fn json_string(s: &str) -> Option<(String, &str)> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some((s[..i].to_string(), &s[i + 1..])),
            _ => {}
        }
    }
    None
}

fn clip(s: &str) -> String {
    const MAX: usize = 120;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX - 1).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(path: &str, removed: &str, added: &str, whole: bool) -> Edit {
        Edit {
            path: path.into(),
            removed: removed.into(),
            added: added.into(),
            whole,
        }
    }

    fn found(e: &Edit, disk: Option<&str>) -> Vec<String> {
        let rel = e.path.clone();
        findings(e, &rel, || disk.map(str::to_string))
    }

    #[test]
    fn lifecycle_scripts_added_or_changed_through_an_edit_are_found() {
        let e = edit(
            "web/package.json",
            r#""test": "jest""#,
            r#""test": "jest",
    "postinstall": "node ./scripts/x.js""#,
            false,
        );
        let f = found(&e, None);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].contains("`postinstall`") && f[0].contains("node ./scripts/x.js"));
        // Changing the command of an existing one counts; keeping it does not.
        let changed = edit(
            "package.json",
            r#""prepare": "husky""#,
            r#""prepare": "curl x | sh""#,
            false,
        );
        assert_eq!(found(&changed, None).len(), 1);
        let kept = edit(
            "package.json",
            r#""prepare": "husky", "lint": "eslint""#,
            r#""prepare": "husky", "lint": "eslint ."#,
            false,
        );
        assert!(found(&kept, None).is_empty());
        // Ordinary scripts and other files are not asked.
        let ordinary = edit("package.json", "", r#""build": "tsc""#, false);
        assert!(found(&ordinary, None).is_empty());
        let other = edit("notes.json", "", r#""postinstall": "x""#, false);
        assert!(found(&other, None).is_empty());
    }

    #[test]
    fn a_whole_file_write_is_compared_with_the_file_on_disk() {
        let disk = r#"{"scripts": {"postinstall": "node setup.js", "test": "jest"}}"#;
        let same = edit(
            "package.json",
            "",
            r#"{"name": "x", "scripts": {"postinstall": "node setup.js", "test": "vitest"}}"#,
            true,
        );
        assert!(found(&same, Some(disk)).is_empty());
        let new = edit(
            "Package.JSON",
            "",
            r#"{"scripts": {"preinstall": "node \"evil.js\""}}"#,
            true,
        );
        let f = found(&new, Some(disk));
        assert_eq!(f.len(), 1);
        assert!(f[0].contains(r#"node \"evil.js\""#), "{f:?}");
    }

    #[test]
    fn build_scripts_and_package_configuration() {
        assert_eq!(
            found(&edit("crates/x/build.rs", "", "fn main() {}", true), None).len(),
            1
        );
        assert!(found(&edit("build.rs", "a", "b", false), None).is_empty());
        assert_eq!(
            found(&edit("Cargo.toml", "", "build = \"gen.rs\"\n", false), None).len(),
            1
        );
        assert!(found(&edit("Cargo.toml", "", "serde = \"1\"\n", false), None).is_empty());
        let npmrc = edit(
            ".npmrc",
            "",
            "registry=https://evil.example/\nignore-scripts=false\nfund=false\n",
            true,
        );
        assert_eq!(found(&npmrc, None).len(), 2);
        let yarn = edit(
            ".yarnrc.yml",
            "",
            "npmRegistryServer: \"https://evil.example\"\nenableScripts: true\n",
            false,
        );
        assert_eq!(found(&yarn, None).len(), 2);
        let scoped = edit(
            ".npmrc",
            "",
            "@acme:registry=https://npm.evil.example/\n",
            false,
        );
        assert_eq!(found(&scoped, None).len(), 1);
        let yarn1 = edit(".yarnrc", "", "registry \"https://evil.example\"\n", false);
        assert_eq!(found(&yarn1, None).len(), 1);
        // A registry line already there is not asked again.
        let kept = edit(
            ".npmrc",
            "",
            "registry=https://r.example/\nsave-exact=true\n",
            true,
        );
        assert!(found(&kept, Some("registry=https://r.example/\n")).is_empty());
        let py = edit(
            "pyproject.toml",
            "",
            "[build-system]\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n",
            false,
        );
        assert_eq!(found(&py, None).len(), 1);
        assert_eq!(
            found(&edit("setup.py", "", "import os\n", true), None).len(),
            1
        );
        assert!(found(&edit("setup.py", "", "import os\n", true), Some("x")).is_empty());
    }
}
