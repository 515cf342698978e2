//! TCF208 shape-specialization: a Python int that changes between calls and sets a size in
//! compiled code: an int argument that sets a slice, an `arange` or an index, or a length read
//! off an argument's `.shape` that does.
//!
//! Dynamo compiles the first value into the graph as a constant; the first call with another
//! value compiles a second graph in which the value is dynamic (measured under torch 2.15: 2
//! graphs for 10 decode positions, 1 with `dynamic=True`). Only for decode steps compiled on their
//! own: a prefill through the same compiled code recompiles at the first decode step anyway (the
//! length drops to 1, which Dynamo specializes), and that recompile makes the position dynamic too
//! (measured: 2 graphs for a prefill and 5 steps, 3 for three prompts, with or without
//! `dynamic=True`). So those findings are low, and say so where a prefill may come first. Not a length read off a cache argument:
//! the prefill passes no cache, so the first decode step compiles its length as a constant and
//! the second recompiles (3 graphs for one prompt, 2 with `dynamic=True`). Branches on a size are
//! not reported:
//! measured, a prefill/decode test (`seq_len > 1`) or a test against the trained resolution adds
//! no graph to what the size change itself costs with the default settings. Only values that
//! change between calls cost anything, and a name does not say which do (a config int named
//! `start_pos` compiles once; measured: 1 graph over 10 calls): the code must show it
//! (`evidence`): the file's own eager loop passes a new value on each call, or, where no call of
//! the file reaches an entry point, it slices its module's buffer from the value to the value
//! plus an input's size, the window a decode position opens.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::imports::last_segment;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

mod evidence;

use evidence::{Evidence, Why};

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
    let model = function.model();
    let parameters = model.function(function.id).node.parameters();
    // `self` is the module, not a value a caller passes.
    let skip = usize::from(model.function(function.id).class.is_some());
    let passed = |p: &&ast::ParameterWithDefault| p.parameter.name.id.as_str() != "self";
    let ints = parameters.map(|p| int_parameters(p, skip)).unwrap_or_default();
    let passed_names = parameters
        .map(|p| p.iter_non_variadic_params().skip(skip).filter(passed).map(|p| p.parameter.name.id.to_string()).collect())
        .unwrap_or_default();
    Some(Box::new(Finder {
        function,
        ints,
        passed: passed_names,
        parameters,
        fallbacks: Vec::new(),
        lengths: Vec::new(),
        reported: HashSet::default(),
        found: Vec::new(),
    }))
}

/// When an int position argument costs a graph: measured under torch 2.15, a prefill then decode
/// steps through one compiled function make 2 graphs whether the position is a Python int or
/// dynamic from the start; decode steps alone make 2 against 1. Said where a prefill may come
/// first: the file calls the function before its loop, or the evidence is the entry point's own
/// window (its callers are not in the file); not for a plain loop (a sampler's steps).
const ONLY_DECODE_STEPS: &str = "only when decode steps run through the compiled code without a prefill first: \
    after a prefill, the first decode step recompiles anyway (for its length of 1) and makes the value dynamic then";

/// What the rule found, with where it points; reported only where the code shows the value
/// changes between calls (`evidence`).
enum Found {
    /// An int argument sets a slice or an `arange` (`presumed_tensor`: the tensors model takes
    /// the argument for a tensor, so only a caller passing an int counts).
    Offset { name: String, range: TextRange, presumed_tensor: bool },
    /// The same argument as a plain index: alone (`self.sigmas[t]`), traced as a size is; in a
    /// tuple (`self.keys[:, i]`, `rows[i, :]`), guarded on its value, `dynamic=True` too.
    Index { name: String, range: TextRange, in_tuple: bool, presumed_tensor: bool },
    /// A local read from an argument's `.shape`, then used as a slice bound or an `arange`.
    Length { name: String, argument: String, range: TextRange },
}

/// A local assigned a length read off an argument, reported once it sets a slice or a size.
struct Length {
    name: String,
    argument: String,
    assignment: TextRange,
}

struct Finder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    /// The arguments that may be Python ints (not typed as tensors, lists or floats).
    ints: Vec<String>,
    /// Every argument a caller passes (not `self`): a length may be read off any.
    passed: Vec<String>,
    parameters: Option<&'a ast::Parameters>,
    /// Bodies of `if position_ids is None:`-style tests on an argument, met so far in the walk
    /// (those around a node are met before it): what runs when the caller does not pass it. Models pass positions they computed, so a position argument used
    /// only there does not reach the graph from a model's forward (transformers' positional
    /// embeddings slice with `past_key_values_length` only when `position_ids` is missing).
    fallbacks: Vec<TextRange>,
    lengths: Vec<Length>,
    /// Names already reported (one finding per value).
    reported: HashSet<String>,
    found: Vec<Found>,
}

/// The arguments that may be Python ints, past `self`.
fn int_parameters(parameters: &ast::Parameters, skip: usize) -> Vec<String> {
    parameters
        .iter_non_variadic_params()
        .skip(skip)
        .filter(|p| may_be_int(p))
        .map(|p| p.parameter.name.id.to_string())
        .collect()
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

impl<'c, 'a> Finder<'c, 'a> {
    fn assignment(&mut self, stmt: &'a Stmt) {
        let Stmt::Assign(assign) = stmt else { return };
        let [Expr::Name(target)] = assign.targets.as_slice() else { return };
        let value = assign.value.as_ref();
        let Some(read) = self.function.sizes().read_by(value) else { return };
        let Some(argument) = root_name(read).filter(|root| self.passed.iter().any(|p| p == root)) else { return };
        if !self.function.tensors().is_tensor(value) {
            let (name, argument) = (target.id.to_string(), argument.to_string());
            self.lengths.push(Length { name, argument, assignment: stmt.range() });
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
        let in_tuple = matches!(subscript.slice.as_ref(), Expr::Tuple(_));
        for part in parts {
            match part {
                Expr::Slice(slice) => {
                    slice_bounds(slice).into_iter().for_each(|bound| self.offset_read(bound, Read::Bound));
                }
                index if indexes_tensor => self.offset_read(index, Read::Index { in_tuple }),
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
            self.offset_read(arg, Read::Bound);
        }
    }

    /// A slice bound, an index or an `arange` argument that reads an int argument or a length.
    fn offset_read(&mut self, expr: &'a Expr, read: Read) {
        let in_fallback = self.fallbacks.iter().any(|body| body.contains_range(expr.range()));
        // An input without annotation or default is presumed a tensor (`arange` takes either):
        // only a caller's loop that passes it an int says otherwise.
        let presumed_tensor = self.function.tensors().is_tensor(expr);
        if in_fallback {
            return;
        }
        let reported = &self.reported;
        let unreported = |name: &String| reads_name(expr, name) && !reported.contains(name);
        let int = self.ints.iter().find(|name| unreported(name)).cloned();
        let length = self.lengths.iter().find(|length| unreported(&length.name));
        let length = length.map(|length| (length.name.clone(), length.argument.clone(), length.assignment));
        if let Some(name) = int {
            self.reported.insert(name.clone());
            self.found.push(match read {
                Read::Index { in_tuple } => Found::Index { name, range: expr.range(), in_tuple, presumed_tensor },
                Read::Bound => Found::Offset { name, range: expr.range(), presumed_tensor },
            });
        }
        if presumed_tensor {
            return;
        }
        if let Some((name, argument, range)) = length {
            self.reported.insert(name.clone());
            self.found.push(Found::Length { name, argument, range });
        }
    }
}

/// How an int is read: as a slice bound or an `arange`/`narrow` argument, or as a plain index.
#[derive(Clone, Copy)]
enum Read {
    Bound,
    Index { in_tuple: bool },
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
            _ => {}
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        if self.found.is_empty() {
            return;
        }
        let function = self.function;
        let model = function.model();
        let place = function.describe();
        let evidence = Evidence::find(model);
        for found in self.found {
            let why = match &found {
                Found::Offset { name, presumed_tensor: true, .. } | Found::Index { name, presumed_tensor: true, .. } => {
                    evidence.int_changes(function.id, name).filter(|why| matches!(why, Why::Loop { .. }))
                }
                Found::Offset { name, .. } | Found::Index { name, .. } => evidence.int_changes(function.id, name),
                Found::Length { name, argument, .. } => evidence.grows(function.id, argument, name),
            };
            let Some(why) = why else { continue };
            let (range, message, severity, advice) = report(found, &because(model, why), after_prefill(why), &place);
            diagnostics.push(Diagnostic::new(&RULE, range, message).with_severity(severity).without_fix(advice));
        }
    }
}

/// The evidence, for the message.
fn because(model: &FileModel, why: Why) -> String {
    let line = |range: TextRange| model.source.line_column(range.start()).0;
    match why {
        Why::Loop { call, grown: false, .. } => {
            format!("the call at line {} passes a new value on each turn of its loop", line(call))
        }
        Why::Loop { call, grown: true, .. } => {
            format!("the call at line {} passes what its loop made longer on the turn before", line(call))
        }
        Why::Window { slice } => {
            format!("line {} slices a module's buffer from it to it plus an input's length", line(slice))
        }
    }
}

/// Whether a prefill may run through the compiled code before the changing calls.
fn after_prefill(why: Why) -> bool {
    match why {
        Why::Loop { prefill, .. } => prefill,
        Why::Window { .. } => true,
    }
}

/// Where, what, how bad and what to do, for one finding with its evidence.
fn report(found: Found, why: &str, after_prefill: bool, place: &str) -> (TextRange, String, Severity, String) {
    let caveat = |name: &str| match after_prefill {
        true => format!("`{name}` is made dynamic; {ONLY_DECODE_STEPS}"),
        false => format!("`{name}` is made dynamic"),
    };
    let dynamic_advice = "compile with `dynamic=True` to trace the position as a symbolic int from the first call";
    match found {
        Found::Offset { name, range, .. } => (
            range,
            format!(
                "`{name}` changes between calls ({why}) and sets a slice or a size in {place}: Dynamo compiles its \
                 first value into the graph, so the first new value compiles a second graph before {}",
                caveat(&name)
            ),
            Severity::Low,
            format!("{dynamic_advice} (measured: 2 graphs for 10 decode positions by default, 1 with `dynamic=True`)"),
        ),
        // Measured under torch 2.15: `self.sigmas[t]`, `self.rows[t]`, `self.keys[0][t]` over 12
        // values of `t`: 2 graphs, 1 with `dynamic=True`, read or stored.
        Found::Index { name, range, in_tuple: false, .. } => (
            range,
            format!(
                "`{name}` changes between calls ({why}) and indexes a tensor in {place}: Dynamo compiles its first \
                 value into the graph, so the first new value compiles a second graph before {}",
                caveat(&name)
            ),
            Severity::Low,
            format!("{dynamic_advice} (measured: 2 graphs for 12 values of a lone index by default, 1 with `dynamic=True`)"),
        ),
        // Measured: `self.keys[:, i]`, `self.keys[0, i]`, `self.rows[i, :]` over 12 values of
        // `i`: 8 graphs, then eager, `dynamic=True` too, read or stored.
        Found::Index { name, range, in_tuple: true, .. } => (
            range,
            format!(
                "`{name}` changes between calls ({why}) and indexes a tensor in {place} beside other indexes: \
                 Dynamo guards on its value, `dynamic=True` too, so every new value compiles another graph, and \
                 after 8 the frame runs eagerly"
            ),
            Severity::High,
            format!(
                "index with a slice, `[{name}:{name} + 1]`: a slice bound is made dynamic (measured: \
                 2 graphs, 1 with `dynamic=True`)"
            ),
        ),
        Found::Length { name, argument, range } => (
            range,
            format!(
                "`{name}` is read from `{argument}`'s shape in {place} and grows with each call ({why}): \
                 Dynamo compiles the first length into the graph, so the next length compiles a second \
                 graph before it is made dynamic"
            ),
            Severity::Medium,
            "mark the cache's length dynamic before the first call \
             (`torch._dynamo.mark_dynamic(cache_tensor, dim)`) or compile with `dynamic=True`"
                .to_string(),
        ),
    }
}
