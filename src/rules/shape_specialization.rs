//! TCF208 shape-specialization: a Python int that changes between calls and sets a size in
//! compiled code: an int argument of `forward` named as a position (`start_pos`,
//! `past_key_values_length`) that sets a slice or an `arange`, or an offset read from a cache
//! argument's `.shape`.
//!
//! Dynamo compiles the first value into the graph as a constant; the first call with another
//! value compiles a second graph in which the value is dynamic (measured under torch 2.15: 2
//! graphs for 10 decode positions, 1 with `dynamic=True`). Only for decode steps compiled on their
//! own: a prefill through the same compiled code recompiles at the first decode step anyway (the
//! length drops to 1, which Dynamo specializes), and that recompile makes the position dynamic too
//! (measured: 2 graphs for a prefill and 5 steps, 3 for three prompts, with or without
//! `dynamic=True`). So those findings are low and say so. Not a length read off a cache argument:
//! the prefill passes no cache, so the first decode step compiles its length as a constant and
//! the second recompiles (3 graphs for one prompt, 2 with `dynamic=True`). Branches on a size are
//! not reported:
//! measured, a prefill/decode test (`seq_len > 1`) or a test against the trained resolution adds
//! no graph to what the size change itself costs with the default settings. Only values that
//! change between calls cost anything, so the rule stays with names and sources that say they do:
//! config ints, `len(self.layers)` and the module's own sizes are not reported.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::Reason;
use crate::model::file::imports::last_segment;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF208",
    name: "shape-specialization",
    summary: "mark sizes and offsets that change between calls dynamic",
    explanation: include_str!("../../codemods/shape-specialization/README.md"),
    hazard: "A Python int that changes between calls (a decode position, a cache length) sets a slice or a size \
             in compiled code.",
    why: "Dynamo compiles the first value into the graph, so the first change compiles a second graph before the \
          value is made dynamic.",
    category: Category::Recompile,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let parameters = function.model().function(function.id).node.parameters();
    // An argument changes between calls only where the caller is the user's loop: the entry
    // points of the compiled region. A helper's argument may be a constant its caller passes.
    let is_entry = matches!(function.model().region.get(&function.id), Some(Reason::Forward | Reason::Compiled));
    let offsets = if is_entry { parameters.map(position_parameters).unwrap_or_default() } else { Vec::new() };
    let caches = parameters.map(cache_parameters).unwrap_or_default();
    Some(Box::new(Finder {
        function,
        offsets,
        caches,
        parameters,
        fallbacks: Vec::new(),
        cache_lengths: Vec::new(),
        reported: HashSet::default(),
        found: Vec::new(),
    }))
}

/// When an int position argument costs a graph: measured under torch 2.15, a prefill then decode
/// steps through one compiled function make 2 graphs whether the position is a Python int or
/// dynamic from the start; decode steps alone make 2 against 1.
const ONLY_DECODE_STEPS: &str = "only when decode steps run through the compiled code without a prefill first: \
    after a prefill, the first decode step recompiles anyway (for its length of 1) and makes the value dynamic then";

/// What the rule found, with where it points.
enum Found {
    /// An int argument that changes per call sets a slice or an `arange`.
    Offset { name: String, range: TextRange },
    /// The same argument used as a plain index: Dynamo guards on its value, `dynamic=True` too.
    Index { name: String, range: TextRange },
    /// A local read from a cache argument's `.shape`, then used.
    CacheLength { name: String, range: TextRange },
}

/// A local assigned a length read off a cache argument, reported once it is used.
struct CacheLength {
    name: String,
    assignment: TextRange,
}

struct Finder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    /// Int arguments named as a position in a sequence (`start_pos`, `past_key_values_length`).
    offsets: Vec<String>,
    /// Arguments named as a cache of past keys and values (`past_key_values`, `layer_past`).
    caches: Vec<String>,
    parameters: Option<&'a ast::Parameters>,
    /// Bodies of `if position_ids is None:`-style tests on an argument, met so far in the walk
    /// (those around a node are met before it): what runs when the caller does not pass it. Models pass positions they computed, so a position argument used
    /// only there does not reach the graph from a model's forward (transformers' positional
    /// embeddings slice with `past_key_values_length` only when `position_ids` is missing).
    fallbacks: Vec<TextRange>,
    cache_lengths: Vec<CacheLength>,
    /// Names already reported (one finding per changing value).
    reported: HashSet<String>,
    found: Vec<Found>,
}

/// Parameters named as a position that advances from call to call, and not typed as tensors.
fn position_parameters(parameters: &ast::Parameters) -> Vec<String> {
    parameters
        .iter_non_variadic_params()
        .filter(|p| names_position(&p.parameter.name) && may_be_int(p))
        .map(|p| p.parameter.name.id.to_string())
        .collect()
}

/// `start_pos`, `cur_pos`, `offset`, `past_length`, `past_key_values_length`, `start_position`.
fn names_position(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "pos"
        || name.ends_with("_pos")
        || name.ends_with("offset")
        || name.ends_with("start_position")
        || (name.starts_with("past") && name.contains("len"))
}

/// An int by its annotation (`int`, `Optional[int]`, `int | None`) or its default (`= 0`), or
/// with neither; not a tensor, a list or a float.
fn may_be_int(parameter: &ast::ParameterWithDefault) -> bool {
    if let Some(annotation) = parameter.parameter.annotation.as_deref() {
        return mentions_type(annotation, "int") && !mentions_type(annotation, "Tensor");
    }
    match parameter.default.as_deref() {
        None => true,
        Some(Expr::NumberLiteral(number)) => matches!(number.value, ast::Number::Int(_)),
        Some(_) => false,
    }
}

/// Whether an annotation names a type (`int` in `Optional[int]`, `Tensor` in `torch.Tensor`).
fn mentions_type(annotation: &Expr, wanted: &str) -> bool {
    let mut finder = NameRead { wanted, attributes: true, found: false };
    finder.visit_expr(annotation);
    finder.found
}

/// Whether code reads a local name (`start_pos` in `start_pos + 1`; not `self.start_pos`).
fn reads_name(expr: &Expr, wanted: &str) -> bool {
    let mut finder = NameRead { wanted, attributes: false, found: false };
    finder.visit_expr(expr);
    finder.found
}

/// Whether an expression reads a name, or also an attribute of that name (in annotations).
struct NameRead<'w> {
    wanted: &'w str,
    attributes: bool,
    found: bool,
}

// A visitor of its own: a search of one slice bound or annotation, asked when its node is judged: the checker's walk reaches the names inside only after.
impl<'a> Visitor<'a> for NameRead<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) if name.id.as_str() == self.wanted => self.found = true,
            Expr::Attribute(attr) if self.attributes && attr.attr.id.as_str() == self.wanted => self.found = true,
            _ => walk_expr(self, expr),
        }
    }
}

/// Parameters named as a cache of past keys and values, whose length grows with each decode step.
fn cache_parameters(parameters: &ast::Parameters) -> Vec<String> {
    parameters
        .iter_non_variadic_params()
        .map(|p| p.parameter.name.id.as_str())
        .filter(|name| {
            let name = name.to_ascii_lowercase();
            // `past_key_values`, `layer_past`, `kv_cache`; not `past_values` (a time series'
            // history, timesfm), `cache_position` (a tensor of positions) or `use_cache`.
            (name.contains("past_key")
                || name.contains("layer_past")
                || name.contains("cache")
                || name.starts_with("kv"))
                && !name.contains("position")
                && !name.contains("mask")
                && !name.contains("params")
                && !name.starts_with("use_")
        })
        .map(str::to_string)
        .collect()
}

/// The name an expression starts from: `past_key_values` in `past_key_values[0][0].shape[2]`.
fn root_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attr) => root_name(&attr.value),
        Expr::Subscript(subscript) => root_name(&subscript.value),
        Expr::Call(call) => root_name(&call.func),
        _ => None,
    }
}

/// `bsz`, `batch_size`: how many sequences, not how long the cache is.
fn names_batch(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("batch") || name.contains("bsz") || name.contains("bsize") || name == "b" || name == "bs"
}

impl<'c, 'a> Finder<'c, 'a> {
    fn assignment(&mut self, stmt: &'a Stmt) {
        let Stmt::Assign(assign) = stmt else { return };
        let [Expr::Name(target)] = assign.targets.as_slice() else { return };
        let name = target.id.to_string();
        let value = assign.value.as_ref();
        let sizes = self.function.sizes();
        if let Some(read) = sizes.read_by(value) {
            let from_cache = root_name(read).is_some_and(|root| self.caches.iter().any(|cache| cache == root));
            if from_cache && !names_batch(&name) && !self.function.tensors().is_tensor(value) {
                self.cache_lengths.push(CacheLength { name, assignment: stmt.range() });
            }
        }
    }

    /// A subscript whose slice bounds, or whose plain index (`cache[:, start_pos] = k`), read a
    /// changing position argument.
    fn slice(&mut self, subscript: &'a ast::ExprSubscript) {
        let parts: Vec<&Expr> = match subscript.slice.as_ref() {
            Expr::Tuple(tuple) => tuple.elts.iter().collect(),
            part => vec![part],
        };
        // An index says nothing of a list or a module list (another guard, another message).
        let indexes_tensor = self.function.tensors().is_tensor(&subscript.value);
        for part in parts {
            match part {
                Expr::Slice(slice) => slice_bounds(slice).into_iter().for_each(|bound| self.offset_read(bound, false)),
                index if indexes_tensor => self.offset_read(index, true),
                _ => {}
            }
        }
    }

    /// `torch.arange(start_pos, ...)`, `x.narrow(1, offset, n)`: a position argument as a size.
    fn sized_call(&mut self, call: &'a ast::ExprCall) {
        if !matches!(last_segment(&call.func), Some("arange" | "narrow")) {
            return;
        }
        for arg in call.arguments.args.iter() {
            self.offset_read(arg, false);
        }
    }

    fn offset_read(&mut self, expr: &'a Expr, index: bool) {
        let offset = self.offsets.iter().find(|name| reads_name(expr, name) && !self.reported.contains(*name));
        let Some(name) = offset.cloned() else { return };
        let in_fallback = self.fallbacks.iter().any(|body| body.contains_range(expr.range()));
        if in_fallback || self.function.tensors().is_tensor(expr) {
            return;
        }
        self.reported.insert(name.clone());
        self.found.push(if index {
            Found::Index { name, range: expr.range() }
        } else {
            Found::Offset { name, range: expr.range() }
        });
    }

    fn name_use(&mut self, name: &ast::ExprName) {
        if name.ctx != ast::ExprContext::Load || self.reported.contains(name.id.as_str()) {
            return;
        }
        let Some(length) = self.cache_lengths.iter().find(|length| length.name == name.id.as_str()) else { return };
        self.reported.insert(length.name.clone());
        self.found.push(Found::CacheLength { name: length.name.clone(), range: length.assignment });
    }
}

/// `position_ids is None`, for an argument of the function.
fn is_missing_argument(test: &Expr, parameters: &ast::Parameters) -> bool {
    let Expr::Compare(compare) = test else { return false };
    let is_none = matches!((compare.ops.as_ref(), compare.comparators.as_ref()), ([CmpOp::Is], [Expr::NoneLiteral(_)]));
    let argument = matches!(compare.left.as_ref(), Expr::Name(name) if parameters.includes(&name.id));
    is_none && argument
}

fn slice_bounds(slice: &ast::ExprSlice) -> Vec<&Expr> {
    [slice.lower.as_deref(), slice.upper.as_deref()].into_iter().flatten().collect()
}

impl<'a> FunctionHooks<'a> for Finder<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        self.assignment(stmt);
        if let (Stmt::If(if_stmt), Some(parameters)) = (stmt, self.parameters)
            && is_missing_argument(&if_stmt.test, parameters)
            && let (Some(first), Some(last)) = (if_stmt.body.first(), if_stmt.body.last())
        {
            self.fallbacks.push(TextRange::new(first.start(), last.end()));
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        match expr {
            Expr::Subscript(subscript) => self.slice(subscript),
            Expr::Call(call) => self.sized_call(call),
            Expr::Name(name) => self.name_use(name),
            _ => {}
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        let place = function.describe();
        for found in self.found {
            let (range, message, severity, advice) = match found {
                Found::Offset { name, range } => (
                    range,
                    format!(
                        "`{name}` changes between calls and sets a slice or a size in {place}: Dynamo compiles its \
                         first value into the graph, so the first new value compiles a second graph before `{name}` \
                         is made dynamic; {ONLY_DECODE_STEPS}"
                    ),
                    Severity::Low,
                    "compile with `dynamic=True` to trace the position as a symbolic int from the first call \
                     (measured: 2 graphs for 10 decode positions by default, 1 with `dynamic=True`)"
                        .to_string(),
                ),
                Found::Index { name, range } => (
                    range,
                    format!(
                        "`{name}` changes between calls and indexes a tensor in {place}: Dynamo guards on its \
                         value, `dynamic=True` too, so every new value compiles another graph, and after 8 the \
                         frame runs eagerly"
                    ),
                    Severity::High,
                    format!(
                        "index with a slice, `[{name}:{name} + 1]`: a slice bound is made dynamic (measured: \
                         2 graphs, 1 with `dynamic=True`)"
                    ),
                ),
                Found::CacheLength { name, range } => (
                    range,
                    format!(
                        "`{name}` is read from the cache's shape in {place} and grows with each decode step: \
                         Dynamo compiles the first length into the graph, so the next length compiles a second \
                         graph before it is made dynamic"
                    ),
                    Severity::Medium,
                    "mark the cache's length dynamic before the first call \
                     (`torch._dynamo.mark_dynamic(cache_tensor, dim)`) or compile with `dynamic=True`"
                        .to_string(),
                ),
            };
            diagnostics.push(Diagnostic::new(&RULE, range, message).with_severity(severity).without_fix(advice));
        }
    }
}
