//! The physical stage of a path decision, shared by every front end — the agent hooks and
//! the MCP tools, `decide` and `explain`, and the plan of `apply` and `run` — so they give
//! one verdict for one request.
//!
//! The rules judge names; the file system acts on files. After the named path is decided,
//! this stage looks at what is on disk beneath the project root:
//! - symbolic links are followed to where the bytes land ([`landing`]): a landing elsewhere
//!   inside the project is decided too, one outside is `path.symlink-escape`, one that
//!   cannot be resolved is `path.unresolvable`;
//! - the file found there is refused the way the journal's safe-path primitive refuses it
//!   (`effects::safe_fs`): a device file, FIFO or socket (`path.special-file`) for every
//!   operation, a file with more than one hard link (`path.hardlink`) for a write or a
//!   delete, since another name of it may live outside the project.
//!
//! It is a check at decision time (the journal re-checks at the point of use); a path that
//! does not exist yet passes it, so new files can be decided.

use contextos_engine::canon;
use contextos_engine::decision::Rejection;
use contextos_engine::effects::landing::{landing, Landing};
use contextos_engine::{Decision, Effect, EvalOptions, PathOp, PolicySet, Request, RequestKind};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// What the file system makes of a project-relative path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Physical {
    /// The bytes land where the path says, on a file the operation may touch.
    Same,
    /// Symbolic links lead to this other path inside the project: it is decided too.
    Lands(String),
    /// Refused before any rule, with a stable reason code.
    Refused { code: &'static str, message: String },
}

/// The physical stage of `path` (canonical: repository-relative, `/`-separated) for `op`,
/// beneath `root`. Paths outside the project (absolute, `~/…`) are left to the rules
/// anchored outside it: links are followed beneath the project root only.
pub fn physical(root: &Path, op: PathOp, path: &str) -> Physical {
    if path.starts_with('/') || path.starts_with('~') {
        return Physical::Same;
    }
    let (lands, target) = match landing(root, path) {
        Landing::Same => (None, path.to_string()),
        Landing::Inside(real) => (Some(real.clone()), real),
        Landing::Outside(dest) => {
            return Physical::Refused {
                code: "path.symlink-escape",
                message: format!(
                    "a symbolic link leads out of the project, to {}",
                    dest.display()
                ),
            }
        }
        Landing::Unresolvable(why) => {
            return Physical::Refused {
                code: "path.unresolvable",
                message: format!("symbolic links cannot be resolved: {why}"),
            }
        }
    };
    if let Some(refused) = kind_refusal(root, op, &target) {
        return refused;
    }
    match lands {
        Some(real) => Physical::Lands(real),
        None => Physical::Same,
    }
}

/// The kind of file at `rel` (no link left on the way), refused as the journal refuses it.
fn kind_refusal(root: &Path, op: PathOp, rel: &str) -> Option<Physical> {
    // Not there (or unreadable: the landing walk already saw every component) is a file
    // the operation creates.
    let meta = std::fs::symlink_metadata(root.join(rel)).ok()?;
    let kind = meta.file_type();
    if kind.is_block_device() || kind.is_char_device() || kind.is_fifo() || kind.is_socket() {
        return Some(Physical::Refused {
            code: "path.special-file",
            message: format!("`{rel}` is not a regular file (a device, FIFO or socket)"),
        });
    }
    if kind.is_file() && meta.nlink() > 1 && op != PathOp::Read {
        return Some(Physical::Refused {
            code: "path.hardlink",
            message: format!(
                "`{rel}` has {} hard links; changing it could change a file outside the project",
                meta.nlink()
            ),
        });
    }
    None
}

/// A path request decided with its physical stage.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The named path's decision; a deny with the refusal as its rejection when the stage
    /// refused the path.
    pub decision: Decision,
    /// Where symbolic links lead the path inside the project, decided with the same
    /// operation, role and session.
    pub landing: Option<Decision>,
}

impl Judged {
    /// The stronger of the named path's and the landing's verdicts.
    pub fn verdict(&self) -> Effect {
        self.landing.as_ref().map_or(self.decision.verdict, |l| {
            l.verdict.max(self.decision.verdict)
        })
    }

    /// One decision document: the named path's, carrying the landing's verdict and
    /// deciding rules when the landing decided more strongly.
    pub fn merged(&self) -> Decision {
        let d = &self.decision;
        match &self.landing {
            Some(l) if l.verdict > d.verdict => Decision {
                verdict: l.verdict,
                decided_by: l.decided_by.clone(),
                overruled: d
                    .decided_by
                    .iter()
                    .chain(&d.overruled)
                    .chain(&l.overruled)
                    .cloned()
                    .collect(),
                default_applied: l.default_applied,
                obligations: l.obligations.clone(),
                rejection: l.rejection.clone(),
                errors: d.errors.iter().chain(&l.errors).cloned().collect(),
                ..d.clone()
            },
            _ => d.clone(),
        }
    }
}

/// Decides a path request, then runs the physical stage beneath `root` on the path as
/// canonicalised. Any other request is decided as it is.
pub fn decide(set: &PolicySet, root: &Path, req: &Request, opts: EvalOptions) -> Judged {
    let decision = set.decide(req, opts);
    let RequestKind::Path(p) = &req.kind else {
        return Judged {
            decision,
            landing: None,
        };
    };
    // A lexical rejection already denied it; there is nothing on disk to look at.
    let Ok(canonical) = canon::canonical_path(&p.path) else {
        return Judged {
            decision,
            landing: None,
        };
    };
    match physical(root, p.op, &canonical) {
        Physical::Same => Judged {
            decision,
            landing: None,
        },
        Physical::Lands(real) => {
            let mut moved = req.clone();
            moved.kind = RequestKind::Path(contextos_engine::PathRequest {
                op: p.op,
                path: real,
            });
            Judged {
                landing: Some(set.decide(&moved, opts)),
                decision,
            }
        }
        Physical::Refused { code, message } => Judged {
            decision: refused(decision, code, message),
            landing: None,
        },
    }
}

/// The named path's decision turned into the stage's refusal: a deny no rule can lift.
fn refused(d: Decision, code: &str, message: String) -> Decision {
    Decision {
        verdict: Effect::Deny,
        decided_by: Vec::new(),
        overruled: Vec::new(),
        default_applied: false,
        obligations: Vec::new(),
        rejection: Some(Rejection {
            code: code.to_string(),
            message,
        }),
        ..d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn project() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        (dir, root)
    }

    fn code(p: Physical) -> Option<&'static str> {
        match p {
            Physical::Refused { code, .. } => Some(code),
            _ => None,
        }
    }

    #[test]
    fn links_are_followed_and_outside_or_loops_are_refused() {
        let (dir, root) = project();
        symlink(dir.path().join("outside"), root.join("out")).unwrap();
        symlink("src", root.join("in")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        assert_eq!(
            physical(&root, PathOp::Write, "in/a.rs"),
            Physical::Lands("src/a.rs".into())
        );
        assert_eq!(
            code(physical(&root, PathOp::Read, "out/x")),
            Some("path.symlink-escape")
        );
        assert_eq!(
            code(physical(&root, PathOp::Write, "loop")),
            Some("path.unresolvable")
        );
        assert_eq!(
            physical(&root, PathOp::Write, "new/file.rs"),
            Physical::Same
        );
        assert_eq!(
            physical(&root, PathOp::Write, "/etc/passwd"),
            Physical::Same
        );
    }

    #[test]
    fn hard_links_are_refused_for_changes_only_and_special_files_always() {
        let (dir, root) = project();
        std::fs::write(dir.path().join("outside/secret"), "s").unwrap();
        std::fs::hard_link(dir.path().join("outside/secret"), root.join("src/h")).unwrap();
        for op in [PathOp::Write, PathOp::Delete] {
            assert_eq!(code(physical(&root, op, "src/h")), Some("path.hardlink"));
        }
        assert_eq!(physical(&root, PathOp::Read, "src/h"), Physical::Same);
        let fifo = root.join("src/pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        for op in [PathOp::Read, PathOp::Write, PathOp::Delete] {
            assert_eq!(
                code(physical(&root, op, "src/pipe")),
                Some("path.special-file")
            );
        }
        // Through a link inside the project, the file it lands on is what counts.
        symlink("src/h", root.join("alias")).unwrap();
        assert_eq!(
            code(physical(&root, PathOp::Write, "alias")),
            Some("path.hardlink")
        );
    }
}
