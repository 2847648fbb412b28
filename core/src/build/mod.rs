//! Policy compiler: parses every source, checks it against the request schema and
//! builds the indexed [`PolicySet`](crate::PolicySet). Every problem becomes a located
//! diagnostic; a set with any error is never produced (callers fail closed).
//!
//! `passes` runs them in order: `header` (language, defaults, `let`s), `lets`
//! (expansion), then the lowering of each statement to IR — `rules` (with `expr` and
//! `obligations`), `guides`, `detectors`, `test_blocks` — then `ids` across the set and
//! `assemble` (the index). `context` is the state they share. `precompiled` saves the
//! state after the standard library and starts later compilations from it.

mod annotations;
mod assemble;
mod context;
mod detectors;
mod expr;
mod guides;
mod header;
mod ids;
mod lets;
mod obligations;
mod output;
mod overrides;
mod passes;
mod precompiled;
mod rules;
mod test_blocks;
mod test_requests;

pub use detectors::{check_regex, DEFAULT_LOOKBACK, REGEX_SIZE_LIMIT};
pub use header::LANGUAGE_VERSION;
pub use output::{BuildOptions, BuildOutput, FileDiagnostic, PolicySource, NO_FILE};
pub use precompiled::{
    build_precompiled, embedded_detectors, precompile, PrecompileError, PrecompiledUse,
};
pub use rules::exec_pattern;

/// Compiles sources into a policy set. Files are given in layer order (stdlib first).
pub fn build(sources: &[PolicySource], options: &BuildOptions) -> BuildOutput {
    passes::compile(sources, options, passes::parse_all(sources), None)
}
