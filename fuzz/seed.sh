#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with the starting inputs of every fuzz target: the
# repository's own test fixtures where they exist, the hand-picked inputs of
# fuzz/seeds/<target>/ otherwise (and beside them). The corpora are regenerated, not
# committed; libFuzzer adds what it learns to them while it runs.
set -euo pipefail
cd "$(dirname "$0")"
root=..
corpus=corpus

add() { # target file-or-stdin name
  mkdir -p "$corpus/$1"
  cat > "$corpus/$1/$2"
}

# Policy sources: the grammar fixtures, the standard library and the examples.
for t in policy_parse policy_pest policy_differential; do
  mkdir -p "$corpus/$t"
  find "$root/grammar/tests/fixtures" "$root/stdlib-policies/policies" "$root/examples" \
    -name '*.policy' -type f | while read -r f; do
    cp "$f" "$corpus/$t/$(basename "$(dirname "$f")")-$(basename "$f")"
  done
done

# Shell lines: every `command = '…'` of the exec corpus (TOML literal or basic string).
n=0
for f in "$root"/tests/e2e/fixtures/exec_corpus/*.toml; do
  sed -n -e "s/.*command = '\\([^']*\\)'.*/\\1/p" -e 's/.*command = "\(\([^"\\]\|\\.\)*\)".*/\1/p' "$f" |
    while IFS= read -r line; do
      n=$((n + 1))
      printf '%s' "$line" | add shell_line "exec-$(basename "$f" .toml)-$n"
    done
done

# Hook payloads: each agent's fixtures, behind the byte that picks the agent (the order
# of AGENTS in fuzz_targets/hook_event.rs).
i=0
for agent in claude cursor copilot codex gemini windsurf amp amazonq cline kiro; do
  dir="$root/tests/e2e/fixtures/hooks/$agent"
  if [ -d "$dir" ]; then
    find "$dir" -name '*.json' -type f | while read -r f; do
      { printf "\\x0$i"; cat "$f"; } | add hook_event "$agent-$(basename "$f")"
    done
  fi
  i=$((i + 1))
done

# Plugin archives: a pack as tar and tar.gz, one with a symbolic link, one with a
# name that climbs out, one with a single top-level directory (form byte first: see
# fuzz_targets/plugin_archive.rs).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/pack/policies"
printf 'name = "acme-guard"\nversion = "1.2.0"\n' > "$work/pack/plugin.toml"
printf 'language 1;\ndeny exec "curl *" because "no";\n' > "$work/pack/policies/net.policy"
tar -C "$work/pack" -cf "$work/flat.tar" .
tar -C "$work" -cf "$work/nested.tar" pack
ln -s /etc/passwd "$work/pack/link"
tar -C "$work/pack" -cf "$work/link.tar" .
rm "$work/pack/link"
tar -C "$work/pack" -cf "$work/climb.tar" --transform 's,^\./plugin.toml,../escape.toml,' .
for f in flat nested link climb; do
  { printf '\x00'; cat "$work/$f.tar"; } | add plugin_archive "$f-tar"
  { printf '\x01'; cat "$work/$f.tar"; } | add plugin_archive "$f-gzipped"
  { printf '\x02'; gzip -c "$work/$f.tar"; } | add plugin_archive "$f-tgz"
done

# Formats without fixtures, and lines the fixtures lack: the committed hand-picked seeds.
for dir in seeds/*/; do
  t=$(basename "$dir")
  mkdir -p "$corpus/$t"
  cp "$dir"* "$corpus/$t/"
done
for t in policy_parse policy_pest policy_differential shell_line hook_event changeset_diff \
  changeset_json apply_patch policy_cache log_verify plugin_archive trusted_keys plugin_signature; do
  echo "$t: $(find "$corpus/$t" -type f | wc -l) seeds"
done
