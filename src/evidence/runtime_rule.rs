//! The two codes of a finding no rule made: a graph break or a recompile Dynamo logged at a line
//! where tcfix's rules found nothing ("seen at runtime, no rule").
//!
//! Why a pseudo-rule and not a separate list: a runtime-only finding is reported exactly like a
//! rule's (at its file and line, in every output format, counted in the summary and the exit
//! code, filtered by `--select graph-break` / `--select TCF2`), so it is a `Diagnostic` with a
//! rule of its own. The code is the category's `x00`, which no real rule takes: TCF100 for graph
//! breaks, TCF200 for recompiles. They are not in the registry: no checker runs them, and
//! `tcfix rules` lists only what static analysis finds.

use crate::rules::rule::{Category, Rule};

pub static GRAPH_BREAK_SEEN: Rule = Rule {
    code: "TCF100",
    name: "graph-break-seen-at-runtime",
    summary: "a graph break Dynamo logged where no rule found a hazard",
    hazard: "Dynamo broke the graph here in the traced run, and no tcfix rule explains why.",
    why: "Each break splits the compiled graph and runs the code between the pieces in Python.",
    explanation: "# graph-break-seen-at-runtime (TCF100)\n\nDynamo logged a graph break at this line in the run \
                  given with `--trace` or `--torch-logs`, and no tcfix rule found a hazard there. The message \
                  carries Dynamo's own reason and its graph-break code (GBxxxx); the code's page on \
                  https://meta-pytorch.github.io/compile-graph-break-site/ says what to do.\n",
    category: Category::GraphBreak,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

pub static RECOMPILE_SEEN: Rule = Rule {
    code: "TCF200",
    name: "recompile-seen-at-runtime",
    summary: "a recompile Dynamo logged where no rule found a hazard",
    hazard: "A guard failed at this line in the traced run and Dynamo recompiled, and no tcfix rule explains why.",
    why: "Each recompile costs a full compile; past the recompile limit the frame runs eagerly.",
    explanation: "# recompile-seen-at-runtime (TCF200)\n\nDynamo logged a recompile whose failed guard comes from \
                  this line in the run given with `--trace` or `--torch-logs`, and no tcfix rule found a hazard \
                  there. The message names the guard and the attribute or argument it checks: a value that \
                  changes between calls (a flag flipped by the training loop, a Python int that counts) is \
                  specialised into the graph.\n",
    category: Category::Recompile,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

/// Both, for `tcfix explain TCF100`.
pub static RUNTIME_RULES: &[&Rule] = &[&GRAPH_BREAK_SEEN, &RECOMPILE_SEEN];

/// Whether a finding is one of these (and so has no rule behind it).
pub fn is_runtime_only(rule: &Rule) -> bool {
    rule.code == GRAPH_BREAK_SEEN.code || rule.code == RECOMPILE_SEEN.code
}
