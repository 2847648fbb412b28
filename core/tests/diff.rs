#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The symbolic policy diff, the near-miss hints and the query, on compiled sets (no I/O):
//! every widening edit is found with a witness, tightening edits never widen, identical
//! sets compare equal, and a change outside every head is not reported.
mod common;
use common::set;
use contextos_core::diff::{symbolic, Direction};
use contextos_core::query::query;
use contextos_core::{Domain, PathOp};

const HEADER: &str = "language 1;\ndefault path = allow;\ndefault exec = ask;\ndefault plugin = deny;\ndefault commit = allow; default net = allow; default mcp = allow;\n";

const BASE: &str = r#"
@id("no-env") deny path write, delete "**/.env" because "e";
@id("lock") ask path write "Cargo.lock" when role != "maintainer" because "l";
@id("plan") allow exec "terraform plan *" because "p";
@id("force") deny exec "git push --force *" because "f";
role reviewer { @id("rev") deny path write "**" because "r"; }
"#;

fn widenings(old: &str, new: &str) -> Vec<(String, String, String)> {
    let a = set(&format!("{HEADER}{old}"));
    let b = set(&format!("{HEADER}{new}"));
    symbolic(&a, &b, false)
        .into_iter()
        .filter(|c| c.direction == Direction::Widening)
        .flat_map(|c| {
            c.witnesses
                .iter()
                .map(|w| {
                    (
                        w.subject.clone(),
                        format!("{:?}", w.role),
                        format!("{}->{}", c.from.verdict, c.to.verdict),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn has(ws: &[(String, String, String)], subject: &str, change: &str) -> bool {
    ws.iter().any(|(s, _, c)| s == subject && c == change)
}

#[test]
fn identical_sets_have_no_difference() {
    let a = set(&format!("{HEADER}{BASE}"));
    let b = set(&format!("{HEADER}{BASE}"));
    assert!(symbolic(&a, &b, true).is_empty());
}

#[test]
fn every_widening_edit_has_a_witness() {
    let cases = [
        (
            BASE.replace(
                "@id(\"no-env\") deny path write, delete \"**/.env\" because \"e\";",
                "",
            ),
            ".env",
            "deny->allow",
        ),
        (
            BASE.replace(
                "deny path write, delete \"**/.env\"",
                "deny path delete \"**/.env\"",
            ),
            "x/.env",
            "deny->allow",
        ),
        (
            BASE.replace(
                "when role != \"maintainer\"",
                "when role != \"maintainer\" and role != \"dev\"",
            ),
            "Cargo.lock",
            "ask->allow",
        ),
        (
            BASE.replace("\"terraform plan *\"", "\"terraform *\""),
            "terraform x",
            "ask->allow",
        ),
        (
            BASE.replace(
                "deny exec \"git push --force *\"",
                "ask exec \"git push --force *\"",
            ),
            "git push --force",
            "deny->ask",
        ),
        (
            BASE.replace(
                "\"**/.env\" because",
                "\"**/.env\" unless path matches \"test/**\" because",
            ),
            "test/.env",
            "deny->allow",
        ),
        (
            BASE.replace(
                "deny exec \"git push --force *\" because",
                "deny exec \"git push --force *\" unless exec.args contains \"--dry-run\" because",
            ),
            "git push --force --dry-run",
            "deny->ask",
        ),
    ];
    for (new, subject, change) in &cases {
        let ws = widenings(BASE, new);
        assert!(has(&ws, subject, change), "{subject} {change}: {ws:?}");
    }
    // A role-specific widening is found under that role.
    let ws = widenings(
        BASE,
        &BASE.replace(
            "role reviewer { @id(\"rev\") deny path write \"**\" because \"r\"; }",
            "role reviewer { @id(\"rev\") deny path write \"src/**\" because \"r\"; }",
        ),
    );
    assert!(
        ws.iter()
            .any(|(s, r, c)| s == "Cargo.lock" && r == "Some(\"reviewer\")" && c == "deny->ask"),
        "{ws:?}"
    );
}

#[test]
fn tightening_edits_never_widen() {
    for new in [
        format!("{BASE}\n@id(\"cfg\") deny path write \"config/**\" because \"c\";"),
        BASE.replace("\"terraform plan *\"", "\"terraform plan\""),
        BASE.replace(
            "allow exec \"terraform plan *\"",
            "ask exec \"terraform plan *\"",
        ),
        BASE.replace(
            "ask path write \"Cargo.lock\"",
            "deny path write \"Cargo.lock\"",
        ),
    ] {
        assert!(widenings(BASE, &new).is_empty(), "{new}");
        let a = set(&format!("{HEADER}{BASE}"));
        let b = set(&format!("{HEADER}{new}"));
        assert!(
            symbolic(&a, &b, false)
                .iter()
                .any(|c| c.direction == Direction::Tightening),
            "the tightening itself is seen: {new}"
        );
    }
}

#[test]
fn accepted_widening_is_marked() {
    let new = BASE.replace(
        "@id(\"force\") deny exec",
        "@id(\"force\") @accept(\"widening\") ask exec",
    );
    let a = set(&format!("{HEADER}{BASE}"));
    let b = set(&format!("{HEADER}{new}"));
    let changes = symbolic(&a, &b, false);
    assert!(!changes.is_empty());
    assert!(changes.iter().all(|c| c.accepted), "{changes:?}");
}

#[test]
fn query_orders_regions_and_decides_role_clauses() {
    let s = set(&format!("{HEADER}{BASE}"));
    let q = query(&s, Domain::Path, Some(PathOp::Write), Some("maintainer"));
    assert!(q
        .regions
        .iter()
        .all(|r| r.rule.id != "lock" && r.rule.id != "rev"));
    let q = query(&s, Domain::Path, Some(PathOp::Write), Some("reviewer"));
    let ids: Vec<&str> = q.regions.iter().map(|r| r.rule.id.as_str()).collect();
    assert_eq!(ids, ["no-env", "rev", "lock"], "strongest first");
    let lock = q.regions.iter().find(|r| r.rule.id == "lock").unwrap();
    assert!(!lock.conditional, "the role clause is decided for the role");
    assert_eq!(lock.overruled_by.as_deref(), Some("rev"));
}
