//! `contextos query [--role R] DOMAIN [OP]`: what a role may do — the regions the policies
//! deny, ask and allow, strongest first.

use crate::output;
use crate::support::context::check_role;
use crate::support::{CliError, Context, Exit, Format};
use contextos_engine::core::query::{query, Answer, Region};
use contextos_engine::{Domain, PathOp};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The domain: path, exec, net, mcp, plugin or commit.
    domain: String,
    /// The operation, for path (read, write, delete) and net (fetch, connect).
    op: Option<String>,
    /// Ask for the requests this role makes.
    #[arg(long)]
    role: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let set = ctx.load_set()?;
    check_role(&set, args.role.as_deref())?;
    let domain = Domain::parse(&args.domain).ok_or_else(|| {
        CliError::Input(format!(
            "unknown domain `{}`: use path, exec, net, mcp, plugin or commit",
            args.domain
        ))
    })?;
    let op = match (domain, args.op.as_deref()) {
        (Domain::Path, Some(o)) => Some(PathOp::parse(o).ok_or_else(|| {
            CliError::Input(format!(
                "unknown path operation `{o}`: use read, write or delete"
            ))
        })?),
        (Domain::Path, None) => {
            return Err(CliError::Input(
                "name the path operation: `contextos query path read|write|delete`".into(),
            ))
        }
        (Domain::Net, Some(o)) if contextos_engine::NetOp::parse(o).is_some() => None,
        (_, Some(o)) => {
            return Err(CliError::Input(format!(
                "`{}` has no operation `{o}`",
                args.domain
            )))
        }
        (_, None) => None,
    };
    let mut answer = query(&set, domain, op, args.role.as_deref());
    if let (Domain::Net, Some(o)) = (
        domain,
        args.op.as_deref().and_then(contextos_engine::NetOp::parse),
    ) {
        answer.regions.retain(|r| {
            set.rule(&r.rule.id)
                .is_some_and(|rule| rule.ops & (1 << (o as u8)) != 0)
        });
    }
    match ctx.format {
        Format::Json => output::print_json(serde_json::to_value(&answer).unwrap_or_default()),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => print(&answer, args),
    }
    Ok(Exit::Ok)
}

fn print(a: &Answer, args: &Args) {
    outln!(
        "{} {}{} — {}",
        a.domain,
        args.op
            .as_deref()
            .map(|o| format!("{o} "))
            .unwrap_or_default(),
        match &a.role {
            Some(r) => format!("as role {r}"),
            None => "without a role".into(),
        },
        format_args!("strongest first; anything else: {} (default)", a.default)
    );
    for e in [
        contextos_engine::Effect::Deny,
        contextos_engine::Effect::Ask,
        contextos_engine::Effect::Allow,
    ] {
        let regions: Vec<&Region> = a.regions.iter().filter(|r| r.effect == e).collect();
        if regions.is_empty() {
            continue;
        }
        outln!("{e}:");
        for r in regions {
            let pats = if r.patterns.is_empty() {
                "(every subject)".to_string()
            } else {
                r.patterns
                    .iter()
                    .map(|p| format!("{p:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            outln!("  {pats}  [{} {}]", r.rule.id, r.rule.origin);
            for c in &r.conditions {
                outln!("      {c}");
            }
            if let Some(by) = &r.overruled_by {
                outln!("      never decides: always overruled by {by}");
            }
        }
    }
}
