//! The Rhai escape hatch. One locked-down engine per policy set: no modules, no I/O, no
//! print, no clock, hard limits on operations, call depth, expression depth and data
//! sizes. Scripts are compiled once per process: when the compiler meets them, or, for a
//! set restored from a snapshot, at the first evaluation (a hook whose request reaches no
//! script never builds the engine). Evaluating one is pure.

use crate::request::{Domain, Request, RequestKind};
use crate::schema::{script_vars, Ty};
use rhai::packages::{
    BasicArrayPackage, BasicMapPackage, BasicMathPackage, CorePackage, LogicPackage,
    MoreStringPackage, Package,
};
use rhai::{Array, Dynamic, Engine, Scope, AST};
use std::sync::OnceLock;

/// Operation budget per script evaluation: a runaway loop stops after well under a millisecond.
pub const MAX_OPERATIONS: u64 = 20_000;
/// Deepest function-call nesting a script may reach.
pub const MAX_CALL_LEVELS: usize = 16;
/// Largest string a script may build, in bytes.
pub const MAX_STRING_BYTES: usize = 64 * 1024;
/// Longest array a script may build.
pub const MAX_ARRAY_LEN: usize = 4096;
/// Largest object map a script may build.
pub const MAX_MAP_LEN: usize = 256;

/// The set's locked-down Rhai engine and every `script { … }` condition compiled for it;
/// [`Cond::Script`](crate::ir::Cond::Script) refers to a script by its index here.
#[derive(Debug)]
pub struct ScriptHost {
    engine: OnceLock<Engine>,
    /// The compiled scripts, in index order. Set from the start when scripts are compiled
    /// one by one; left empty by [`ScriptHost::deferred`] until the first use, and then an
    /// error when one of them no longer compiles.
    compiled: OnceLock<Result<Vec<AST>, String>>,
    /// Script bodies in compile order, so a policy cache can recompile them.
    sources: Vec<(Domain, String)>,
}

/// A compile error inside a script, `offset` in bytes from the start of the script body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// Byte offset of the error in the script body, when Rhai reports a position.
    pub offset: Option<usize>,
    /// Rhai's description of the error.
    pub message: String,
}

impl Default for ScriptHost {
    fn default() -> Self {
        Self::new()
    }
}

/// The locked-down engine every script runs on: only the pure core, logic, array, map,
/// math and string packages, the limits above, strict variables, and `eval`, `print` and
/// `debug` disabled.
fn engine() -> Engine {
    let mut engine = Engine::new_raw();
    engine.register_global_module(CorePackage::new().as_shared_module());
    engine.register_global_module(LogicPackage::new().as_shared_module());
    engine.register_global_module(BasicArrayPackage::new().as_shared_module());
    engine.register_global_module(BasicMapPackage::new().as_shared_module());
    engine.register_global_module(BasicMathPackage::new().as_shared_module());
    engine.register_global_module(MoreStringPackage::new().as_shared_module());
    engine.set_max_operations(MAX_OPERATIONS);
    engine.set_max_call_levels(MAX_CALL_LEVELS);
    engine.set_max_expr_depths(32, 16);
    engine.set_max_string_size(MAX_STRING_BYTES);
    engine.set_max_array_size(MAX_ARRAY_LEN);
    engine.set_max_map_size(MAX_MAP_LEN);
    engine.set_max_variables(64);
    engine.set_max_functions(16);
    engine.set_strict_variables(true);
    engine.set_allow_shadowing(false);
    engine.set_fail_on_invalid_map_property(true);
    engine.set_optimization_level(rhai::OptimizationLevel::None);
    engine.disable_symbol("eval");
    engine.disable_symbol("print");
    engine.disable_symbol("debug");
    engine.on_print(|_| {});
    engine.on_debug(|_, _, _| {});
    engine
}

/// The compile-time stand-ins for a domain's variables (empty strings and lists).
fn stand_ins(domain: Domain) -> Scope<'static> {
    // Declared as plain variables, not constants: Rhai's optimiser would otherwise fold
    // these stand-in values into the compiled script.
    let mut scope = Scope::new();
    for (name, ty) in script_vars(domain) {
        match ty {
            Ty::List => scope.push(*name, Array::new()),
            _ => scope.push(*name, String::new()),
        };
    }
    scope
}

impl ScriptHost {
    /// An engine with no scripts yet.
    pub fn new() -> Self {
        ScriptHost {
            engine: OnceLock::new(),
            compiled: OnceLock::from(Ok(Vec::new())),
            sources: Vec::new(),
        }
    }

    /// A host for scripts compiled before (a policy snapshot's), compiled again at the
    /// first evaluation. If one no longer compiles, every evaluation is an error, which
    /// the evaluator resolves to the stricter outcome.
    pub fn deferred(sources: Vec<(Domain, String)>) -> Self {
        ScriptHost {
            engine: OnceLock::new(),
            compiled: OnceLock::new(),
            sources,
        }
    }

    fn engine(&self) -> &Engine {
        self.engine.get_or_init(engine)
    }

    fn compiled(&self) -> Result<&[AST], String> {
        self.compiled
            .get_or_init(|| {
                self.sources
                    .iter()
                    .map(|(domain, body)| {
                        self.engine()
                            .compile_with_scope(&stand_ins(*domain), body)
                            .map_err(|e| format!("a script does not compile: {}", e.err_type()))
                    })
                    .collect()
            })
            .as_ref()
            .map(Vec::as_slice)
            .map_err(Clone::clone)
    }

    /// Script `index` with its domain.
    fn script(&self, index: usize) -> Result<(Domain, &AST), String> {
        let ast = self
            .compiled()?
            .get(index)
            .ok_or_else(|| format!("script #{index} is not compiled"))?;
        let domain = self
            .sources
            .get(index)
            .map(|(d, _)| *d)
            .ok_or_else(|| format!("script #{index} is not compiled"))?;
        Ok((domain, ast))
    }

    /// Compiles a script for a domain and returns its index; a variable the domain does
    /// not have (see [`script_vars`]) is a compile error.
    pub fn compile(&mut self, domain: Domain, body: &str) -> Result<usize, ScriptError> {
        let ast = self
            .engine()
            .compile_with_scope(&stand_ins(domain), body)
            .map_err(|e| ScriptError {
                offset: position_offset(body, e.position()),
                message: e.err_type().to_string(),
            })?;
        // A deferred host compiles what it holds first, so indexes keep their order.
        let _ = self.compiled();
        match self.compiled.get_mut() {
            Some(Ok(compiled)) => compiled.push(ast),
            Some(Err(message)) => {
                return Err(ScriptError {
                    offset: None,
                    message: message.clone(),
                })
            }
            None => {
                return Err(ScriptError {
                    offset: None,
                    message: "the script host could not compile its scripts".into(),
                })
            }
        }
        self.sources.push((domain, body.to_string()));
        Ok(self.sources.len() - 1)
    }

    /// The type a compiled script returns when run against its compile-time stand-ins (empty
    /// strings and lists), when that is not a boolean. A script that ends in an integer or a
    /// string fails at every evaluation, and the evaluator then takes the stricter outcome on
    /// every request: the author meant a condition and wrote something else. `None` when it
    /// returns a boolean or fails on the stand-ins (its type is then unknown here).
    pub fn non_boolean_result(&self, index: usize) -> Option<&'static str> {
        let (domain, ast) = self.script(index).ok()?;
        let mut scope = stand_ins(domain);
        let value: Dynamic = self.engine().eval_ast_with_scope(&mut scope, ast).ok()?;
        (!value.is::<bool>()).then(|| value.type_name())
    }

    /// The script bodies with their domains, in index order, for snapshots to recompile them.
    pub fn sources(&self) -> &[(Domain, String)] {
        &self.sources
    }

    /// Runs a compiled script against a request. Errors (limits, wrong result type,
    /// runtime failures) are returned for the caller to resolve to the stricter outcome.
    pub fn eval(&self, index: usize, req: &Request) -> Result<bool, String> {
        let (domain, ast) = self.script(index)?;
        let mut scope = Scope::new();
        scope.push_constant("role", req.role.clone().unwrap_or_default());
        let list = |v: &[String]| -> Array { v.iter().cloned().map(Dynamic::from).collect() };
        match (&req.kind, domain) {
            (RequestKind::Path(p), Domain::Path) => {
                scope.push_constant("path", p.path.clone());
                scope.push_constant("op", p.op.as_str().to_string());
            }
            (RequestKind::Exec(e), Domain::Exec) => {
                scope.push_constant("argv", list(&e.argv));
                scope.push_constant(
                    "program",
                    e.argv
                        .first()
                        .map(|a| contextos_shell::basename(a).to_string())
                        .unwrap_or_default(),
                );
                scope.push_constant("piped_from", list(&e.piped_from));
                scope.push_constant("env", list(&e.env));
                scope.push_constant("cwd", e.cwd.clone());
                scope.push_constant("reads", list(&e.reads));
                scope.push_constant("writes", list(&e.writes));
                scope.push_constant("network", list(&e.network));
                scope.push_constant("runs", list(&e.runs));
                scope.push_constant("code", list(&e.code));
                scope.push_constant("options", list(&e.options));
                scope.push_constant("subcommand", e.subcommand.join(" "));
                scope.push_constant("operands", list(&e.operands));
            }
            (RequestKind::Plugin(p), Domain::Plugin) => {
                scope.push_constant("name", p.name.clone());
                scope.push_constant("source", p.source.clone());
                scope.push_constant("version", p.version.clone());
                scope.push_constant("digest", p.digest.clone());
                scope.push_constant("signer", p.signer.clone().unwrap_or_default());
                scope.push_constant("findings", list(&p.findings));
            }
            (RequestKind::Commit(c), Domain::Commit) => {
                scope.push_constant("files", list(&c.files));
                scope.push_constant("findings", list(&c.findings));
                scope.push_constant("message", c.message.clone());
                scope.push_constant("kind", c.kind.clone());
                scope.push_constant("severity", c.severity.clone());
            }
            (RequestKind::Net(n), Domain::Net) => {
                scope.push_constant("url", n.target.clone());
                scope.push_constant("host", n.host.clone());
                scope.push_constant("scheme", n.scheme.clone());
                scope.push_constant("method", n.method.clone());
                scope.push_constant("tool", n.tool.clone());
                scope.push_constant("op", n.op.as_str().to_string());
                scope.push_constant("carries", list(&n.carries));
                scope.push_constant("sends", list(&n.sends));
            }
            (RequestKind::Mcp(m), Domain::Mcp) => {
                scope.push_constant("server", m.server.clone());
                scope.push_constant("tool", m.tool.clone());
                scope.push_constant("args", m.args.clone());
                scope.push_constant("carries", list(&m.carries));
                scope.push_constant("definition", m.definition.clone());
            }
            _ => return Err("script evaluated against a request of another domain".into()),
        }
        let value: Dynamic = self
            .engine()
            .eval_ast_with_scope(&mut scope, ast)
            .map_err(|e| e.to_string())?;
        value
            .as_bool()
            .map_err(|t| format!("script returned {t}, expected a boolean"))
    }
}

fn position_offset(body: &str, pos: rhai::Position) -> Option<usize> {
    let line = pos.line()?;
    let col = pos.position().unwrap_or(1);
    let start: usize = body
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let line_text = body.get(start..)?.lines().next().unwrap_or("");
    let in_line: usize = line_text
        .chars()
        .take(col.saturating_sub(1))
        .map(char::len_utf8)
        .sum();
    Some(start + in_line)
}
