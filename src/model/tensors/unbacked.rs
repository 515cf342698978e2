//! Where a value goes that Dynamo can hold only as an *unbacked symbol* — a Python number read from
//! a tensor (`.item()`, `int(t)`, `.tolist()`), or a tensor whose size depends on its values
//! (`nonzero()`, `x[mask]`, `unique()`) — and whether Dynamo still stops there once the capture
//! options are on (`dynamo_config::Capture`). Measured with torch 2.15 (counting backend, CPU):
//!
//! - traced with `capture_scalar_outputs`: the number in tensor arithmetic, a slice bound
//!   (`x[:, :n]`), a factory or torch argument (`torch.arange(n)`, `F.pad(x, (0, n))`,
//!   `x.roll(-n)`), an `assert`, a return value; a `.tolist()` as split sizes
//!   (`torch.split(x, sizes)`) or walked by a `for` whose items feed the same;
//! - still a graph break: an `if`/`while`/ternary/`and`/`or`/`not` on it ("data-dependent
//!   branching"), `range(n)`, indexing a Python list or `ModuleList` with it ("could not extract
//!   specialized integer"), formatting it, handing a list of them to a library function that
//!   compares them (`itertools.groupby`);
//! - traced with `capture_dynamic_output_shape_ops`: a selection indexed, gathered, reduced, fed to
//!   a module or a loss, scattered back; two reads through the same mask combined;
//! - still a graph break: a `for` over a selection (`for expert_idx in expert_hit`: "could not
//!   extract specialized integer"), `list()`/`split()` of one, a branch on its size, two
//!   selections of unrelated sizes combined elementwise (`l1_loss(a.masked_select(m),
//!   b.masked_select(m))`: "could not guard on data-dependent expression Eq(u1, u0)");
//! - a compile *error* instead of a break: `.tolist()` of a selection with
//!   `capture_dynamic_output_shape_ops` (GuardOnDataDependentSymNode), and indexing a tensor with a
//!   0-d integer tensor (`x[i.argmax()]`, `expert_mask[expert_idx]` with `expert_idx` a row of
//!   `nonzero()`) with `capture_scalar_outputs` (PendingUnbackedSymbolNotFound). `capture_crashes` finds
//!   those in a file, so that the option is not offered there.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::Cell;
use std::rc::Rc;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, CmpOp, Expr, ExprContext, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::diagnostic::snippet;
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_function};
use crate::model::file::FileModel;
use crate::model::file::call_graph::CallSite;
use crate::model::file::imports::{dotted_name, last_segment, unqualified};
use crate::model::file::module::is_entry_point;
use crate::model::file::module::is_self;
use crate::model::flow::calls;
use crate::model::tensors::tensor::Tensors;
use crate::model::tensors::torch_calls::FULL_REDUCTIONS;
/// What kind of unbacked value a finding produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// A Python number (`.item()`, `int(t)`).
    Number,
    /// A list of Python numbers (`.tolist()`), or a tuple of sizes (`sel.shape`).
    List,
    /// `zip(a, v)`, `enumerate(v)` of such a list: the numbers are the given element of each item.
    Zipped(usize),
    /// A tensor whose size depends on tensor values (`nonzero()`, `x[mask]`).
    Sized,
    /// A tensor computed from one by a call (`self.decoder(x[mask])`, `out.index_add(0, idx, v)`):
    /// it may have the selection's size, or not.
    Derived,
    /// A tuple a helper returns (`return positions, n`) whose given element holds the number.
    Element(usize),
}

impl Value {
    /// A tensor that may have a data-dependent size.
    fn is_tensor(self) -> bool {
        matches!(self, Value::Sized | Value::Derived)
    }

    /// What walking it gives: numbers for a list, tuples for a zip.
    fn item(self) -> Value {
        match self {
            Value::Zipped(_) => self,
            _ => Value::Number,
        }
    }

    fn is_number_or_list(self) -> bool {
        matches!(self, Value::Number | Value::List)
    }
}

/// Where Dynamo stops on an unbacked value even with the capture option on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Tested for truth: `if`, `while`, a ternary, `and`/`or`/`not`, `bool()`.
    Branch,
    /// `range(n)`: the loop needs a concrete count.
    Range,
    /// Indexes a Python list, dict or `ModuleList`.
    PythonIndex,
    /// Formatted into a string.
    Formatted,
    /// A size of `reshape`/`view` next to a `-1`: Dynamo must divide by it.
    Reshape,
    /// Stored in an attribute, a dict or a list, where tcfix loses track of it.
    Stored,
    /// Handed to a function tcfix has not measured (`itertools.groupby`, `sorted`, a method of a
    /// Python list), or to code it cannot see (a submodule, a function of another file).
    Unknown,
    /// Returned by a helper whose callers tcfix cannot see: what they do with it is unknown.
    Returned,
    /// Followed through more names or calls than tcfix follows: it does not know where it ends.
    TooFar,
    /// Not a place Dynamo stops: the value is returned, as the given kind, to the call of the file
    /// that passed it into the helper, where its walk goes on (`Flow::follow_into_callee`).
    Returns(Value),
    /// A selection walked by a `for` or a comprehension, or cut into a data-dependent number of
    /// pieces: Dynamo needs its length as a Python int.
    Iterated,
    /// `.tolist()` of a selection: with `capture_dynamic_output_shape_ops` it fails to compile.
    ToList,
    /// Two selections of unrelated sizes combined elementwise.
    Combined,
    /// Inside a loop over a selection, which still breaks.
    LoopOver,
    /// Given to a torch argument that must be a Python bool (`is_causal=q_len > 1`): GB0112,
    /// "argument 'is_causal' must be bool, not SymBool" (measured, torch 2.15).
    Flag,
}

/// Where and why Dynamo still stops on a value with the capture option on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StillBreaks {
    pub stop: Stop,
    /// The code it stops at: the test, the call, the loop.
    pub at: TextRange,
}

impl StillBreaks {
    /// Where Dynamo still stops with the capture option on, said briefly after the rule's advice
    /// in a finding's no-fix reason ("... : Dynamo still breaks at `x > 0` (a branch)"). The
    /// option itself and why it cannot help are the rule README's (`tcfix explain`).
    pub fn reason(&self, text: &str) -> String {
        let at = match self.stop {
            // A loop: its header.
            Stop::Iterated | Stop::LoopOver if text[self.at].starts_with("for ") => {
                snippet(text[self.at].lines().next().unwrap_or_default().trim_end().trim_end_matches(':'))
            }
            _ => snippet(&text[self.at]),
        };
        let still = |what: &str| format!("Dynamo still breaks at `{at}` ({what})");
        match self.stop {
            Stop::Branch => still("a branch on it"),
            Stop::Range => still("a loop count"),
            Stop::PythonIndex => still("a Python index"),
            Stop::Reshape => still("a split piece's size"),
            Stop::Formatted => still("formatted"),
            Stop::Iterated => still("needs its length"),
            Stop::Combined => still("sizes not known equal"),
            Stop::LoopOver => still("a loop over it"),
            Stop::Flag => still("a flag torch needs as a Python bool"),
            Stop::ToList => format!("`{at}` then fails to compile"),
            Stop::Stored | Stop::Unknown | Stop::Returned | Stop::Returns(_) | Stop::TooFar => {
                format!("tcfix cannot follow the value past `{at}`")
            }
        }
    }
}

/// The parents of one function's compiled code, and where each of its names is read: enough to
/// follow a value from where it is made to where it is used.
pub struct Flow<'m, 'a> {
    model: &'m FileModel<'a>,
    function: usize,
    tensors: &'m Tensors<'a, 'a>,
    code: CompiledCode<'a>,
}

/// What one walk of a function's compiled code records.
#[derive(Default)]
struct CompiledCode<'a> {
    parents: HashMap<usize, Parent<'a>>,
    uses: HashMap<&'a str, Vec<&'a Expr>>,
    /// The values assigned to each name (`name = value`, one target).
    bindings: HashMap<&'a str, Vec<&'a Expr>>,
    /// Names that walk the submodules of `self` (`for layer in self.layers`).
    module_loops: HashSet<&'a str>,
    /// Names bound by a `for` or a comprehension, with what they walk.
    walked: HashMap<&'a str, Vec<&'a Expr>>,
    /// The calls of the compiled code, by where they are (to follow a helper's result back).
    calls: HashMap<TextRange, &'a Expr>,
}

#[derive(Clone, Copy)]
enum Parent<'a> {
    Expr(&'a Expr),
    Stmt(&'a Stmt),
}

/// A selection (a TCF106 finding) as `Flow::selections` compares them.
pub struct Selection<'a> {
    pub expr: &'a Expr,
    /// For a read through a mask (`x[mask]`), the mask: reads through the same mask have the
    /// same size, which Dynamo knows.
    pub mask: Option<&'a Expr>,
}

/// What one step up from a value says.
enum Step<'a> {
    /// The value goes on as the given node, of the given kind.
    Up(&'a Expr, Value),
    /// It is bound to the names of a target (`h, w = ...`, a comprehension's `for t in ...`),
    /// read after the given offset.
    Bind(&'a Expr, Value, TextSize),
    /// It is an argument of a function of the file: followed as that function's `parameter`,
    /// then (for a tensor) on as the call's result.
    Into { call: &'a Expr, callee: usize, parameter: &'a str, then: Option<(&'a Expr, Value)> },
    /// It ends here: traced (`None`) or not.
    Done(Option<StillBreaks>),
}

/// The walk of one value: the names it reached, and the other selections it must not meet.
struct Walk<'w, 'a> {
    /// The names followed so far.
    visited: HashSet<&'a str>,
    /// Of those, the ones that hold the selection itself (not a value computed from it).
    sized: HashSet<&'a str>,
    /// Every selection of the function (`me` is the one followed), or none.
    others: &'w [Other<'a>],
    me: Option<usize>,
    mask: Option<&'a str>,
    /// Inside a helper the value was passed into: a `return` goes back to that call.
    returns_to_caller: bool,
    /// How many more helpers and callers the whole walk may enter, shared with the walks it
    /// starts: a file whose helpers call each other many times must not take exponential time.
    budget: Rc<Cell<usize>>,
}

impl<'w, 'a> Walk<'w, 'a> {
    fn new(others: &'w [Other<'a>], me: Option<usize>, mask: Option<&'a str>) -> Self {
        let budget = Rc::new(Cell::new(MAX_CALLS));
        Walk {
            visited: HashSet::default(),
            sized: HashSet::default(),
            others,
            me,
            mask,
            returns_to_caller: false,
            budget,
        }
    }

    /// The walk of the value in another function, on this walk's budget.
    fn elsewhere<'b>(&self, returns_to_caller: bool) -> Walk<'static, 'b> {
        Walk {
            visited: HashSet::default(),
            sized: HashSet::default(),
            others: &[],
            me: None,
            mask: None,
            returns_to_caller,
            budget: Rc::clone(&self.budget),
        }
    }

    /// Takes one entry into a helper or a caller from the budget; `false` when none is left.
    fn enter(&self) -> bool {
        let left = self.budget.get();
        self.budget.set(left.saturating_sub(1));
        left > 0
    }
}

/// Another selection of the function, with the names its value reached.
struct Other<'a> {
    range: TextRange,
    mask: Option<&'a str>,
    names: HashSet<&'a str>,
}

/// How many names (and calls) deep a value is followed (`n = x.item(); m = n * 2; ... m`); past
/// it, tcfix says it does not know. Attention code passes a selection through a dozen names.
const MAX_DEPTH: usize = 32;

/// How many helpers and callers one finding's walk enters in all.
const MAX_CALLS: usize = 256;

/// Library functions that hand their condition to `torch._check` under compile, measured to trace
/// a data-dependent condition with the capture options on: transformers' `torch_compilable_check`.
const TRACED_CHECKS: &[&str] = &["torch_compilable_check"];

/// Tensor methods that take sizes or a Python number: a receiver the tensors model does not know
/// is still a tensor when it is called with one of these.
const SIZE_METHODS: &[&str] = &[
    "split",
    "split_with_sizes",
    "tensor_split",
    "view",
    "reshape",
    "expand",
    "repeat",
    "narrow",
    "roll",
    "unflatten",
    "new_zeros",
    "new_ones",
    "new_full",
    "new_empty",
    "masked_fill",
    "clamp",
];

impl<'m, 'a> Flow<'m, 'a> {
    /// One walk of the function's compiled code.
    pub fn of(model: &'m FileModel<'a>, function: usize, tensors: &'m Tensors<'a, 'a>) -> Self {
        let mut collector = ParentCollector::default();
        visit_function(model, function, &mut collector);
        Flow { model, function, tensors, code: collector.code }
    }

    /// The expression `expr` is a direct part of, if any.
    pub fn parent_expr(&self, expr: &Expr) -> Option<&'a Expr> {
        match self.code.parents.get(&address(expr)) {
            Some(Parent::Expr(parent)) => Some(parent),
            _ => None,
        }
    }

    /// The values assigned to `name` in the function (`name = value`).
    pub fn bindings(&self, name: &str) -> &[&'a Expr] {
        self.code.bindings.get(name).map_or(&[], Vec::as_slice)
    }

    /// Where Dynamo still stops on the Python value `expr` makes (`Number` or `List`) with
    /// `capture_scalar_outputs` on; `None` when everything it reaches traces.
    pub fn still_breaks(&self, expr: &'a Expr, value: Value) -> Option<StillBreaks> {
        self.follow(expr, value, &mut Walk::new(&[], None, None), 0)
    }

    /// For each selection of the function, where Dynamo still stops on it with
    /// `capture_dynamic_output_shape_ops` on: what it reaches, combining it with another
    /// selection, or running inside a loop over one.
    pub fn selections(&self, selections: &[Selection<'a>]) -> Vec<Option<StillBreaks>> {
        let text = self.model.source.text.as_str();
        let mask_text = |selection: &Selection<'a>| selection.mask.map(|mask| &text[mask.range()]);
        // First the names each selection reaches, then each followed knowing the others'.
        let others: Vec<Other<'a>> = selections
            .iter()
            .map(|selection| {
                let mut walk = Walk::new(&[], None, None);
                self.follow(selection.expr, Value::Sized, &mut walk, 0);
                Other { range: selection.expr.range(), mask: mask_text(selection), names: walk.sized }
            })
            .collect();
        let mut verdicts: Vec<Option<StillBreaks>> = selections
            .iter()
            .enumerate()
            .map(|(index, selection)| {
                let mut walk = Walk::new(&others, Some(index), mask_text(selection));
                self.follow(selection.expr, Value::Sized, &mut walk, 0)
            })
            .collect();
        let loops: Vec<TextRange> = verdicts
            .iter()
            .flatten()
            .filter(|verdict| verdict.stop == Stop::Iterated)
            .map(|verdict| verdict.at)
            .collect();
        // Inside a loop that still breaks, nothing else matters.
        for (selection, verdict) in selections.iter().zip(verdicts.iter_mut()) {
            let range = selection.expr.range();
            let iterated_here = verdict.is_some_and(|v| v.stop == Stop::Iterated && v.at.contains_range(range));
            if let Some(&at) = loops.iter().find(|at| at.contains_range(range) && **at != range)
                && !iterated_here
            {
                *verdict = Some(StillBreaks { stop: Stop::LoopOver, at });
            }
        }
        verdicts
    }

    fn follow(&self, expr: &'a Expr, value: Value, walk: &mut Walk<'_, 'a>, depth: usize) -> Option<StillBreaks> {
        let mut current = expr;
        let mut value = value;
        loop {
            match self.code.parents.get(&address(current)) {
                None => return None,
                Some(Parent::Stmt(stmt)) => return self.at_statement(stmt, current, value, walk, depth),
                Some(Parent::Expr(parent)) => match self.step(parent, current, value, walk) {
                    Step::Up(next, next_value) => {
                        current = next;
                        value = next_value;
                    }
                    Step::Bind(target, value, after) => return self.assigned(target, value, after, walk, depth),
                    Step::Into { call, callee, parameter, then } => {
                        match self.follow_into_callee(call, callee, parameter, value, walk, depth) {
                            // Returned by the helper: what the call gives is the value again.
                            Some(StillBreaks { stop: Stop::Returns(returned), .. }) => {
                                current = call;
                                value = returned;
                            }
                            Some(verdict) => return Some(verdict),
                            None => {
                                let (next, next_value) = then?;
                                current = next;
                                value = next_value;
                            }
                        }
                    }
                    Step::Done(verdict) => return verdict,
                },
            }
            if let Some(verdict) = self.follow_named(current, value, walk, depth) {
                return verdict;
            }
        }
    }

    /// A walrus (`(n := t.item())`) binds a name on the way: its uses are followed too.
    fn follow_named(
        &self,
        current: &'a Expr,
        value: Value,
        walk: &mut Walk<'_, 'a>,
        depth: usize,
    ) -> Option<Option<StillBreaks>> {
        let Expr::Named(named) = current else { return None };
        let Expr::Name(name) = named.target.as_ref() else { return None };
        self.follow_name(name.id.as_str(), value, named.end(), walk, depth).map(Some)
    }

    /// One step from `child` to `parent`.
    fn step(&self, parent: &'a Expr, child: &'a Expr, value: Value, walk: &Walk<'_, 'a>) -> Step<'a> {
        let stop = |stop, at: &Expr| Step::Done(Some(StillBreaks { stop, at: at.range() }));
        match parent {
            Expr::BinOp(op) => {
                let other = if is(&op.left, child) { &op.right } else { &op.left };
                match value {
                    Value::Sized if self.meets_other(other, walk) => stop(Stop::Combined, parent),
                    Value::Sized | Value::Derived => Step::Up(parent, value),
                    _ if self.tensors.is_tensor(other) => Step::Done(None),
                    _ => Step::Up(parent, value),
                }
            }
            // A branch on something computed from a selection is that value's own matter (TCF104),
            // not the selection's size.
            Expr::UnaryOp(op) if op.op == UnaryOp::Not && value == Value::Derived => Step::Done(None),
            Expr::UnaryOp(op) if op.op == UnaryOp::Not => stop(Stop::Branch, parent),
            Expr::UnaryOp(_) | Expr::Starred(_) | Expr::Named(_) | Expr::Slice(_) => Step::Up(parent, value),
            Expr::BoolOp(_) if value == Value::Derived => Step::Done(None),
            Expr::BoolOp(_) => stop(Stop::Branch, parent),
            Expr::Compare(compare) => {
                let others: Vec<&Expr> = std::iter::once(compare.left.as_ref())
                    .chain(compare.comparators.iter())
                    .filter(|operand| !is(operand, child))
                    .collect();
                let membership = compare.ops.iter().any(|op| matches!(op, CmpOp::In | CmpOp::NotIn));
                if compare.ops.iter().all(|op| matches!(op, CmpOp::Is | CmpOp::IsNot)) {
                    // `v is None`: no value read.
                    return Step::Done(None);
                }
                match value {
                    Value::Sized if others.iter().any(|other| self.meets_other(other, walk)) => {
                        stop(Stop::Combined, parent)
                    }
                    Value::Sized | Value::Derived => Step::Up(parent, value),
                    _ if !membership && others.iter().any(|other| self.tensors.is_tensor(other)) => Step::Done(None),
                    _ => Step::Up(parent, Value::Number),
                }
            }
            Expr::If(if_expr) if is(&if_expr.test, child) && value == Value::Derived => Step::Done(None),
            Expr::If(if_expr) if is(&if_expr.test, child) => stop(Stop::Branch, parent),
            Expr::If(_) => Step::Up(parent, value),
            Expr::Attribute(attr) => self.attribute(attr, parent, value, walk),
            Expr::Call(call) if is(&call.func, child) => stop(Stop::Unknown, parent),
            Expr::Call(call) => self.argument(call, parent, child, value, walk),
            // An element of a list (of a nested list, a number too).
            Expr::Subscript(subscript) if is(&subscript.value, child) => match value {
                // `helper(...)[1]`: the number only if it is that element.
                Value::Element(position) => match int_literal(&subscript.slice) {
                    Some(index) if index != position => Step::Done(None),
                    _ => Step::Up(parent, Value::Number),
                },
                Value::List if matches!(subscript.slice.as_ref(), Expr::Slice(_)) => Step::Up(parent, Value::List),
                Value::Number | Value::List => Step::Up(parent, Value::Number),
                Value::Zipped(_) => Step::Up(parent, Value::List),
                Value::Sized | Value::Derived => Step::Up(parent, value),
            },
            Expr::Subscript(subscript) => self.index(subscript, parent, value),
            Expr::Tuple(_) | Expr::List(_) => self.element(parent, child, value),
            Expr::FString(_) | Expr::TString(_) => stop(Stop::Formatted, parent),
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::Generator(_) | Expr::DictComp(_) => {
                self.comprehension(parent, child, value)
            }
            Expr::Dict(_) | Expr::Set(_) => stop(Stop::Stored, parent),
            _ => Step::Done(None),
        }
    }

    /// `v.method(...)` or `v.attribute`.
    fn attribute(&self, attr: &'a ast::ExprAttribute, node: &'a Expr, value: Value, walk: &Walk<'_, 'a>) -> Step<'a> {
        let stop = |stop, at: &Expr| Step::Done(Some(StillBreaks { stop, at: at.range() }));
        let name = attr.attr.id.as_str();
        let call = match self.parent_expr(node) {
            Some(call @ Expr::Call(ast::ExprCall { func, .. })) if is(func, node) => Some(call),
            _ => None,
        };
        match (value, call) {
            (Value::Sized | Value::Derived, Some(call)) => match name {
                "tolist" => stop(Stop::ToList, call),
                "item" => stop(Stop::Unknown, call),
                "numel" | "nelement" | "__len__" => Step::Up(call, Value::Number),
                "size" => Step::Up(call, Value::List),
                "dim" | "ndimension" | "is_contiguous" | "is_floating_point" | "get_device" | "element_size" => {
                    Step::Done(None)
                }
                "unbind" | "split" | "chunk" | "tensor_split" | "split_with_sizes" if value == Value::Sized => {
                    stop(Stop::Iterated, call)
                }
                // A full reduction: a 0-d tensor, whose size is known.
                _ if FULL_REDUCTIONS.contains(&name) && reduces_all(call) => Step::Done(None),
                _ => {
                    let Expr::Call(method) = call else { return Step::Done(None) };
                    if value == Value::Sized && arguments(method).any(|argument| self.meets_other(argument, walk)) {
                        stop(Stop::Combined, call)
                    } else {
                        Step::Up(call, value)
                    }
                }
            },
            (Value::Sized | Value::Derived, None) => match name {
                "shape" => Step::Up(node, Value::List),
                "T" | "mT" | "H" | "mH" | "data" | "real" | "imag" => Step::Up(node, value),
                _ => Step::Done(None),
            },
            // `sel.shape[1:].numel()`: a `torch.Size`'s product.
            (Value::List, Some(call)) if name == "numel" => Step::Up(call, Value::Number),
            // A method of a Python number or list (`sizes.index(...)`, `n.bit_length()`).
            (_, Some(call)) => stop(Stop::Unknown, call),
            (_, None) => stop(Stop::Unknown, node),
        }
    }

    /// `f(..., v, ...)`.
    fn argument(
        &self,
        call: &'a ast::ExprCall,
        node: &'a Expr,
        child: &'a Expr,
        value: Value,
        walk: &Walk<'_, 'a>,
    ) -> Step<'a> {
        let stop = |stop| Step::Done(Some(StillBreaks { stop, at: node.range() }));
        if let Some(builtin) = self.builtin(call) {
            return match (builtin, value) {
                ("range", _) => stop(Stop::Range),
                ("len", Value::Sized) => Step::Up(node, Value::Number),
                ("len" | "isinstance" | "type" | "id" | "callable" | "hasattr" | "getattr", _) => Step::Done(None),
                ("int" | "float" | "abs" | "round" | "pow" | "divmod", Value::Number) => Step::Up(node, Value::Number),
                ("min" | "max", Value::Number) if call.arguments.args.len() >= 2 => Step::Up(node, Value::Number),
                ("sum", Value::List) => Step::Up(node, Value::Number),
                ("iter" | "reversed" | "list" | "tuple", Value::List | Value::Zipped(_)) => Step::Up(node, value),
                ("zip", Value::List) => {
                    let position = call.arguments.args.iter().position(|argument| is(argument, child));
                    Step::Up(node, position.map_or(Value::List, Value::Zipped))
                }
                ("enumerate", Value::List) => Step::Up(node, Value::Zipped(1)),
                ("zip" | "enumerate" | "iter" | "reversed" | "list" | "tuple" | "sum", Value::Sized) => {
                    stop(Stop::Iterated)
                }
                ("zip" | "enumerate" | "iter" | "reversed" | "list" | "tuple" | "sum", Value::Derived)
                    if self.tensors.is_tensor(child) =>
                {
                    stop(Stop::Iterated)
                }
                ("bool", _) => stop(Stop::Branch),
                // What a call made of a selection (`torch.split(out, sizes)`) may be a tuple.
                (_, Value::Derived) => Step::Done(None),
                ("str" | "repr" | "format" | "print", _) => stop(Stop::Formatted),
                _ => stop(Stop::Unknown),
            };
        }
        if let Expr::Attribute(method) = call.func.as_ref() {
            // `self.rms[name].append(v)`, `sizes.extend(v)`; not `x.add(v)` on a tensor.
            if STORING.contains(&method.attr.id.as_str()) && !self.tensors.is_tensor(&method.value) {
                return stop(Stop::Stored);
            }
        }
        let callee = calls::callee(self.model, self.function, call).filter(|&callee| callee != self.function);
        if let Some(callee) = callee {
            // A helper of the file: where its parameter goes is followed there.
            let Some(parameter) = parameter_of(self.model, call, callee, child) else { return stop(Stop::Unknown) };
            let then = match value {
                Value::Sized if self.meets_other_argument(call, child, walk) => return stop(Stop::Combined),
                Value::Sized | Value::Derived => Some((node, Value::Derived)),
                _ => None,
            };
            return Step::Into { call: node, callee, parameter, then };
        }
        if !value.is_tensor() && is_flag(call, child) {
            return stop(Stop::Flag);
        }
        if !value.is_tensor() {
            return self.number_argument(call, node);
        }
        if !self.is_traced_call(call) {
            return stop(Stop::Unknown);
        }
        let reduced = last_segment(&call.func).is_some_and(|name| FULL_REDUCTIONS.contains(&name));
        if reduced && call.arguments.args.len() == 1 && reduces_all_keywords(call) {
            return Step::Done(None);
        }
        if value == Value::Sized && self.meets_other_argument(call, child, walk) {
            stop(Stop::Combined)
        } else {
            Step::Up(node, Value::Derived)
        }
    }

    /// Whether another argument of `call` than `child` holds another selection.
    fn meets_other_argument(&self, call: &ast::ExprCall, child: &Expr, walk: &Walk<'_, 'a>) -> bool {
        arguments(call)
            .filter(|argument| !argument.range().contains_range(child.range()))
            .any(|argument| self.meets_other(argument, walk))
    }

    /// A Python number (or list of them) given to a call that is not a helper of the file: torch
    /// traces it (`torch.arange(n)`, `x.view(n, -1)`), `math` keeps it a number (`math.ceil(n / 4)`,
    /// measured), anything else (a submodule, a function of another file, a library) may branch
    /// on it where tcfix cannot see.
    fn number_argument(&self, call: &'a ast::ExprCall, node: &'a Expr) -> Step<'a> {
        let stop = |stop| Step::Done(Some(StillBreaks { stop, at: node.range() }));
        let qualified = self.model.imports.qualified_name(&call.func);
        if qualified.as_deref().is_some_and(|name| name.starts_with("math.")) {
            return Step::Up(node, Value::Number);
        }
        let torch = qualified.as_deref().is_some_and(|name| name == "torch" || name.starts_with("torch."))
            || last_segment(&call.func).is_some_and(|name| TRACED_CHECKS.contains(&name));
        let tensor_method = matches!(call.func.as_ref(), Expr::Attribute(method)
            if self.tensors.is_tensor(&method.value) || SIZE_METHODS.contains(&method.attr.id.as_str()));
        if !torch && !tensor_method {
            return stop(Stop::Unknown);
        }
        if infers_a_size(call) && self.reshapes_a_piece(call) { stop(Stop::Reshape) } else { Step::Done(None) }
    }

    /// Follow `value` into `callee` as its `parameter`; `call` is where the file's code calls it.
    /// `Stop::Returns` when the helper returns it (the walk goes on from `call`).
    fn follow_into_callee(
        &self,
        call: &'a Expr,
        callee: usize,
        parameter: &'a str,
        value: Value,
        walk: &Walk<'_, 'a>,
        depth: usize,
    ) -> Option<StillBreaks> {
        if depth >= MAX_DEPTH || !walk.enter() {
            return Some(StillBreaks { stop: Stop::TooFar, at: call.range() });
        }
        let tensors = Tensors::of(self.model, callee);
        let flow = Flow::of(self.model, callee, &tensors);
        let start = self.model.function(callee).node.range().start();
        flow.follow_name(parameter, value, start, &mut walk.elsewhere(true), depth + 1)
    }

    /// `return v`. A value passed into this helper goes back to the call that passed it. One made
    /// here goes to every caller of the function in the file; with none, a `forward` (or another
    /// entry point) hands it to the module's caller (measured: a returned number traces), and any
    /// other function to callers tcfix cannot see.
    fn returned(&self, ret: &'a Stmt, value: Value, walk: &Walk<'_, 'a>, depth: usize) -> Option<StillBreaks> {
        if walk.returns_to_caller {
            return Some(StillBreaks { stop: Stop::Returns(value), at: ret.range() });
        }
        let sites: Vec<&CallSite<'a>> = self.model.calls().call_sites(self.function).map(|(_, site)| site).collect();
        if sites.is_empty() {
            let unseen_callers = !is_entry_point(&self.model.function(self.function).name);
            return unseen_callers.then_some(StillBreaks { stop: Stop::Returned, at: ret.range() });
        }
        sites.iter().find_map(|site| {
            if depth >= MAX_DEPTH || !walk.enter() {
                return Some(StillBreaks { stop: Stop::TooFar, at: ret.range() });
            }
            let tensors = Tensors::of(self.model, site.caller);
            let flow = Flow::of(self.model, site.caller, &tensors);
            // A call the walk of compiled code did not record (in a lambda): not followed.
            let Some(call) = flow.code.calls.get(&site.call.range()) else {
                return Some(StillBreaks { stop: Stop::Unknown, at: site.call.range() });
            };
            flow.follow(call, value, &mut walk.elsewhere(false), depth + 1)
        })
    }

    /// `container[..., v, ...]`.
    fn index(&self, subscript: &'a ast::ExprSubscript, node: &'a Expr, value: Value) -> Step<'a> {
        if subscript.ctx != ExprContext::Load {
            // `out[:n] = 0`, `out[unique_ids] = 1.0`: a write into a tensor.
            return if self.tensors.is_tensor(&subscript.value) {
                Step::Done(None)
            } else {
                Step::Done(Some(StillBreaks { stop: Stop::PythonIndex, at: node.range() }))
            };
        }
        // A selection or a tensor made from one indexes tensors: a Python list takes no tensor of
        // more than one element as its index.
        if !self.tensors.is_tensor(&subscript.value) && !value.is_tensor() {
            return Step::Done(Some(StillBreaks { stop: Stop::PythonIndex, at: node.range() }));
        }
        match value {
            Value::Sized | Value::Derived => Step::Up(node, value),
            _ => Step::Done(None),
        }
    }

    /// `(a, v)`, `[v, w]`: part of a literal. A tuple assigned to a tuple of names hands each
    /// element to its name.
    fn element(&self, literal: &'a Expr, child: &'a Expr, value: Value) -> Step<'a> {
        let position = elements(literal).and_then(|elts| elts.iter().position(|elt| is(elt, child)));
        let parent = self.code.parents.get(&address(literal));
        // `return positions, n`: the caller's `positions, n = helper(...)` gives it to `n` alone.
        if let (Some(Parent::Stmt(Stmt::Return(_))), Some(position)) = (parent, position)
            && value.is_number_or_list()
        {
            return Step::Up(literal, Value::Element(position));
        }
        let Some(Parent::Stmt(Stmt::Assign(assign))) = parent else {
            return Step::Up(literal, value);
        };
        let (Some(targets), Some(elts)) = (assign.targets.first().and_then(elements), elements(literal)) else {
            return Step::Up(literal, value);
        };
        let position = elts.iter().position(|elt| is(elt, child));
        match position {
            Some(position)
                if assign.targets.len() == 1 && is(&assign.value, literal) && targets.len() == elts.len() =>
            {
                Step::Bind(&targets[position], value, assign.end())
            }
            _ => Step::Up(literal, value),
        }
    }

    /// A comprehension: walking `v` (`for t, h, w in sizes`), testing it (`if n`), or building
    /// a list of it.
    fn comprehension(&self, node: &'a Expr, child: &'a Expr, value: Value) -> Step<'a> {
        let stop = |stop, at: TextRange| Step::Done(Some(StillBreaks { stop, at }));
        let (generators, elements): (&[ast::Comprehension], Vec<&Expr>) = match node {
            Expr::ListComp(comp) => (&comp.generators, vec![&comp.elt]),
            Expr::SetComp(comp) => (&comp.generators, vec![&comp.elt]),
            Expr::Generator(comp) => (&comp.generators, vec![&comp.elt]),
            Expr::DictComp(comp) => {
                (&comp.generators, comp.key.as_deref().into_iter().chain([comp.value.as_ref()]).collect())
            }
            _ => return Step::Done(None),
        };
        for generator in generators {
            if is(&generator.iter, child) {
                return match value {
                    // The element is read before the target is written, textually.
                    Value::List | Value::Zipped(_) => Step::Bind(&generator.target, value.item(), node.start()),
                    Value::Sized => stop(Stop::Iterated, node.range()),
                    Value::Derived if self.tensors.is_tensor(child) => stop(Stop::Iterated, node.range()),
                    Value::Derived => Step::Done(None),
                    Value::Number | Value::Element(_) => stop(Stop::Unknown, node.range()),
                };
            }
            if generator.ifs.iter().any(|test| is(test, child)) {
                return stop(Stop::Branch, child.range());
            }
        }
        if elements.iter().any(|element| is(element, child)) && !matches!(node, Expr::DictComp(_)) {
            return match value {
                Value::Sized | Value::Derived => Step::Up(node, value),
                _ => Step::Up(node, Value::List),
            };
        }
        if matches!(node, Expr::DictComp(_)) {
            return stop(Stop::Stored, node.range());
        }
        Step::Done(None)
    }

    /// `v` as part of a statement.
    fn at_statement(
        &self,
        stmt: &'a Stmt,
        child: &'a Expr,
        value: Value,
        walk: &mut Walk<'_, 'a>,
        depth: usize,
    ) -> Option<StillBreaks> {
        let stop = |stop, at: TextRange| Some(StillBreaks { stop, at });
        match stmt {
            Stmt::Assign(assign) if is(&assign.value, child) => {
                assign.targets.iter().find_map(|target| self.assigned(target, value, stmt.end(), walk, depth))
            }
            Stmt::AnnAssign(assign) if assign.value.as_deref().is_some_and(|v| is(v, child)) => {
                self.assigned(&assign.target, value, stmt.end(), walk, depth)
            }
            Stmt::AugAssign(assign) if is(&assign.value, child) => {
                self.assigned(&assign.target, value, stmt.end(), walk, depth)
            }
            Stmt::If(_) | Stmt::While(_) if value == Value::Derived => None,
            Stmt::If(if_stmt) => {
                let tested = is(&if_stmt.test, child)
                    || if_stmt
                        .elif_else_clauses
                        .iter()
                        .any(|clause| clause.test.as_ref().is_some_and(|t| is(t, child)));
                if tested { stop(Stop::Branch, child.range()) } else { None }
            }
            Stmt::While(while_stmt) if is(&while_stmt.test, child) => stop(Stop::Branch, child.range()),
            Stmt::For(for_stmt) if is(&for_stmt.iter, child) => match value {
                Value::List | Value::Zipped(_) => {
                    self.assigned(&for_stmt.target, value.item(), for_stmt.target.end(), walk, depth)
                }
                Value::Sized => stop(Stop::Iterated, for_stmt.range()),
                // A tensor computed from a selection may have its size: walking it needs the length.
                // (A dataclass or dict built from one is walked by its fields: nothing to say.)
                Value::Derived if self.tensors.is_tensor(child) => stop(Stop::Iterated, for_stmt.range()),
                Value::Derived => None,
                Value::Number | Value::Element(_) => stop(Stop::Unknown, child.range()),
            },
            Stmt::Return(_) => self.returned(stmt, value, walk, depth),
            Stmt::With(_) | Stmt::Match(_) => stop(Stop::Unknown, child.range()),
            _ => None,
        }
    }

    /// `target = v`: follow the names it binds, as read after `after`.
    fn assigned(
        &self,
        target: &'a Expr,
        value: Value,
        after: TextSize,
        walk: &mut Walk<'_, 'a>,
        depth: usize,
    ) -> Option<StillBreaks> {
        let stored = Some(StillBreaks { stop: Stop::Stored, at: target.range() });
        match target {
            Expr::Name(name) => self.follow_name(name.id.as_str(), value, after, walk, depth),
            // `k, v = item` of a zipped item: only the list's own element holds its numbers.
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if matches!(value, Value::Zipped(_)) =>
            {
                let Value::Zipped(position) = value else { return None };
                elts.get(position).and_then(|elt| self.assigned(elt, Value::List, after, walk, depth))
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if matches!(value, Value::Element(_)) =>
            {
                let Value::Element(position) = value else { return None };
                elts.get(position).and_then(|elt| self.assigned(elt, Value::Number, after, walk, depth))
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let element = match value {
                    Value::Sized | Value::Derived => value,
                    _ => Value::Number,
                };
                elts.iter().find_map(|elt| match elt {
                    Expr::Starred(starred) => self.assigned(&starred.value, value, after, walk, depth),
                    _ => self.assigned(elt, element, after, walk, depth),
                })
            }
            Expr::Subscript(subscript) if self.tensors.is_tensor(&subscript.value) => None,
            _ => stored,
        }
    }

    /// Where the uses of `name` after `after` (the binding's end) take the value.
    fn follow_name(
        &self,
        name: &'a str,
        value: Value,
        after: TextSize,
        walk: &mut Walk<'_, 'a>,
        depth: usize,
    ) -> Option<StillBreaks> {
        let uses = self.code.uses.get(name).map_or(&[][..], Vec::as_slice);
        let mut later = uses.iter().filter(|use_| use_.start() >= after).peekable();
        if depth >= MAX_DEPTH {
            return later.peek().map(|use_| StillBreaks { stop: Stop::TooFar, at: use_.range() });
        }
        if !walk.visited.insert(name) {
            return None;
        }
        if value == Value::Sized {
            walk.sized.insert(name);
        }
        // A use that returns the value to the caller is one of its ends: the other uses still count.
        let mut returns = None;
        for use_ in later {
            match self.follow(use_, value, walk, depth + 1) {
                Some(verdict @ StillBreaks { stop: Stop::Returns(_), .. }) => returns = returns.or(Some(verdict)),
                Some(verdict) => return Some(verdict),
                None => {}
            }
        }
        returns
    }

    /// Whether `expr` holds another selection (of unrelated size) than the one being followed.
    fn meets_other(&self, expr: &Expr, walk: &Walk<'_, 'a>) -> bool {
        walk.others.iter().enumerate().filter(|(index, _)| Some(*index) != walk.me).any(|(_, other)| {
            let same_mask = walk.mask.is_some() && walk.mask == other.mask;
            !same_mask && (expr.range().contains_range(other.range) || mentions(expr, &other.names))
        })
    }

    /// The builtin a call calls (`range`, `len`, `int`...; `"<other>"` for one `Flow::argument`
    /// does not know), unless the name is the function's own, imported, or a function of the file.
    fn builtin(&self, call: &ast::ExprCall) -> Option<&'static str> {
        let Expr::Name(name) = call.func.as_ref() else { return None };
        let name = name.id.as_str();
        let shadowed = self.tensors.is_local(name)
            || self.model.imports.get(name).is_some()
            || self.model.resolve_name(name, Some(self.function)).is_some()
            || self.model.class_named(name).is_some();
        (!shadowed).then(|| BUILTINS.iter().find(|builtin| **builtin == name).copied().unwrap_or("<other>"))
    }

    /// Whether Dynamo traces into the call like any other code: a torch function, a tensor
    /// method, a method or submodule of `self`, a function of the file or of the project.
    fn is_traced_call(&self, call: &ast::ExprCall) -> bool {
        if let Some(qualified) = self.model.imports.qualified_name(&call.func) {
            if qualified == "torch" || qualified.starts_with("torch.") || qualified.starts_with("math.") {
                return true;
            }
            let package = self.model.module_name.split('.').next().unwrap_or_default();
            let imported = dotted_name(&call.func)
                .is_some_and(|dotted| self.model.imports.get(dotted.split('.').next().unwrap_or_default()).is_some());
            if imported && !package.is_empty() && qualified.split('.').next() == Some(package) {
                return true;
            }
        }
        match call.func.as_ref() {
            Expr::Attribute(method) => {
                is_self(&method.value)
                    || self.tensors.is_tensor(&method.value)
                    || SIZE_METHODS.contains(&method.attr.id.as_str())
                    || starts_at_self(&method.value)
            }
            Expr::Subscript(subscript) => starts_at_self(&subscript.value),
            Expr::Name(name) => {
                let name = name.id.as_str();
                // A class of the file: a submodule built in forward, or the output dataclass returned.
                self.model.resolve_name(name, Some(self.function)).is_some()
                    || self.model.class_named(name).is_some()
                    || self.holds_module(name)
            }
            _ => false,
        }
    }
}

/// The parameter of `callee` that `call` binds `argument` to, when the call says which.
fn parameter_of<'a>(model: &FileModel<'a>, call: &ast::ExprCall, callee: usize, argument: &Expr) -> Option<&'a str> {
    let parameters = model.function(callee).node.parameters()?;
    let positional = parameters.posonlyargs.iter().chain(&parameters.args).enumerate();
    let keyword_only = parameters.kwonlyargs.iter().map(|parameter| (usize::MAX, parameter));
    positional.chain(keyword_only).find_map(|(index, parameter)| {
        let name = parameter.parameter.name.id.as_str();
        calls::argument(model, call, callee, index, name).is_some_and(|bound| is(bound, argument)).then_some(name)
    })
}

/// `x.view(1, h, w, -1)`, `x.reshape((b, -1))`: a reshape that infers one size from the others.
fn infers_a_size(call: &ast::ExprCall) -> bool {
    let reshapes = last_segment(&call.func).is_some_and(|name| matches!(name, "reshape" | "view" | "unflatten"));
    let minus_one = |expr: &Expr| {
        matches!(expr, Expr::UnaryOp(op) if op.op == UnaryOp::USub
            && matches!(op.operand.as_ref(), Expr::NumberLiteral(n) if n.value.as_int().and_then(|i| i.as_u64()) == Some(1)))
    };
    let any_minus_one = |expr: &Expr| match expr {
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => elts.iter().any(minus_one),
        _ => minus_one(expr),
    };
    reshapes && call.arguments.args.iter().any(any_minus_one)
}

/// Methods of Python lists, dicts and sets that keep what they are given.
/// Torch arguments that must be a Python bool: a number read from a tensor, or a comparison of
/// one, given there breaks the graph even with `capture_scalar_outputs` (measured: sdpa's).
const FLAGS: &[&str] = &["is_causal"];

/// Whether `child` is the value of one of `call`'s `FLAGS` keywords.
fn is_flag(call: &ast::ExprCall, child: &Expr) -> bool {
    call.arguments.keywords.iter().any(|keyword| {
        is(&keyword.value, child) && keyword.arg.as_ref().is_some_and(|arg| FLAGS.contains(&arg.as_str()))
    })
}

const STORING: &[&str] = &["append", "extend", "insert", "add", "update", "setdefault"];

/// `t.sum()`, `t.sum(dtype=torch.float32)`: no dimension given.
fn reduces_all(call: &Expr) -> bool {
    let Expr::Call(call) = call else { return false };
    call.arguments.args.is_empty() && reduces_all_keywords(call)
}

fn reduces_all_keywords(call: &ast::ExprCall) -> bool {
    call.arguments.keywords.iter().all(|keyword| keyword.arg.as_ref().is_some_and(|arg| arg.as_str() == "dtype"))
}

impl Flow<'_, '_> {
    /// Whether `call` reshapes a piece of a split (`for piece in x.split(sizes): piece.view(h, w, -1)`):
    /// measured, that breaks where the same reshape of a whole tensor or a slice traces.
    fn reshapes_a_piece(&self, call: &ast::ExprCall) -> bool {
        let receiver = match call.func.as_ref() {
            Expr::Attribute(method) => method.value.as_ref(),
            _ => match call.arguments.args.first() {
                Some(first) => first,
                None => return false,
            },
        };
        let Expr::Name(name) = receiver else { return false };
        self.code.walked.get(name.id.as_str()).is_some_and(|walked| walked.iter().any(|iter| self.splits(iter, 0)))
    }

    /// Whether `expr` holds the pieces of a split (`x.split(sizes)`, `torch.split(...)`, a name bound
    /// to one, a `zip` of one).
    fn splits(&self, expr: &Expr, depth: usize) -> bool {
        if depth > 3 {
            return false;
        }
        match expr {
            Expr::Call(call) => {
                let name = last_segment(&call.func).unwrap_or_default();
                matches!(name, "split" | "tensor_split" | "split_with_sizes" | "chunk" | "unbind")
                    || (matches!(name, "zip" | "enumerate")
                        && call.arguments.args.iter().any(|a| self.splits(a, depth + 1)))
            }
            Expr::Name(name) => self.bindings(name.id.as_str()).iter().any(|value| self.splits(value, depth + 1)),
            _ => false,
        }
    }

    /// Whether a local name holds a module or a torch callable: `loss_fct = CrossEntropyLoss()`,
    /// `for layer in self.layers`.
    fn holds_module(&self, name: &str) -> bool {
        let built = self.bindings(name);
        let torch_built = !built.is_empty()
            && built.iter().all(|value| {
                matches!(value, Expr::Call(call) if self.model.imports.qualified_name(&call.func)
                    .is_some_and(|q| q.starts_with("torch.") || self.model.class_named(unqualified(&q)).is_some()))
            });
        torch_built || self.code.module_loops.contains(name)
    }
}

/// The builtins `Flow::argument` knows; any other is `"<other>"`.
const BUILTINS: &[&str] = &[
    "range",
    "len",
    "isinstance",
    "type",
    "id",
    "callable",
    "hasattr",
    "getattr",
    "int",
    "float",
    "abs",
    "round",
    "pow",
    "divmod",
    "min",
    "max",
    "sum",
    "zip",
    "enumerate",
    "iter",
    "reversed",
    "list",
    "tuple",
    "bool",
    "str",
    "repr",
    "format",
    "print",
];

/// `self.blocks`, `self.visual.merger`, `self[name]`, `self.x.mul_(d).add_`: a chain from `self`.
fn starts_at_self(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => is_self(expr),
        Expr::Attribute(attr) => starts_at_self(&attr.value),
        Expr::Subscript(subscript) => starts_at_self(&subscript.value),
        // `self.latent_mean.mul_(decay).add_`
        Expr::Call(call) => starts_at_self(&call.func),
        _ => false,
    }
}

/// `1` in `t[1]`.
fn int_literal(expr: &Expr) -> Option<usize> {
    let Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Int(int), .. }) = expr else { return None };
    int.as_usize()
}

/// The elements of a tuple or list literal.
fn elements(expr: &Expr) -> Option<&[Expr]> {
    match expr {
        Expr::Tuple(tuple) => Some(&tuple.elts),
        Expr::List(list) => Some(&list.elts),
        _ => None,
    }
}

/// A call's positional and keyword arguments.
fn arguments(call: &ast::ExprCall) -> impl Iterator<Item = &Expr> + Clone {
    call.arguments.args.iter().chain(call.arguments.keywords.iter().map(|keyword| &keyword.value))
}

/// Whether `expr` reads one of `names`.
pub(super) fn mentions(expr: &Expr, names: &HashSet<&str>) -> bool {
    struct Finder<'n> {
        names: &'n HashSet<&'n str>,
        found: bool,
    }
    impl<'a> Visitor<'a> for Finder<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Name(name) => self.found |= self.names.contains(name.id.as_str()),
                // `labels.to(logits.device)`: where a tensor lives says nothing of its size.
                Expr::Attribute(attr) if matches!(attr.attr.id.as_str(), "device" | "dtype") => {}
                _ => walk_expr(self, expr),
            }
        }
    }
    if names.is_empty() {
        return false;
    }
    let mut finder = Finder { names, found: false };
    finder.visit_expr(expr);
    finder.found
}

fn address(expr: &Expr) -> usize {
    std::ptr::from_ref(expr) as usize
}

/// The same node (not merely equal text).
fn is(a: &Expr, b: &Expr) -> bool {
    std::ptr::eq(a, b)
}

/// Records each node's parent in one walk of compiled code.
#[derive(Default)]
struct ParentCollector<'a> {
    code: CompiledCode<'a>,
    /// The statements around the walk's position, outermost first.
    statements: Vec<&'a Stmt>,
    /// The expressions around the walk's position, outermost first.
    expressions: Vec<&'a Expr>,
}

impl<'a> ParentCollector<'a> {
    /// An `assert`'s message and a `raise`d error are built only when the code fails: the values
    /// they format are not traced on the path that compiles.
    fn is_error_message(&self, expr: &Expr) -> bool {
        let is = |part: Option<&Expr>| part.is_some_and(|part| part.range() == expr.range());
        self.expressions.is_empty()
            && match self.statements.last() {
                Some(Stmt::Assert(assert)) => is(assert.msg.as_deref()),
                Some(Stmt::Raise(raise)) => is(raise.exc.as_deref()) || is(raise.cause.as_deref()),
                _ => false,
            }
    }

    /// The names a `for` target binds (`piece`, `(t, h, w)`), each walking `iter`.
    fn record_walk(&mut self, target: &'a Expr, iter: &'a Expr) {
        match target {
            Expr::Name(name) => self.code.walked.entry(name.id.as_str()).or_default().push(iter),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for elt in elts {
                    self.record_walk(elt, iter);
                }
            }
            _ => {}
        }
    }
}

impl<'a> CompiledCodeVisitor<'a> for ParentCollector<'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        while self.statements.last().is_some_and(|outer| !outer.range().contains_range(stmt.range())) {
            self.statements.pop();
        }
        self.statements.push(stmt);
        match stmt {
            Stmt::Assign(assign) => {
                if let [Expr::Name(name)] = assign.targets.as_slice() {
                    self.code.bindings.entry(name.id.as_str()).or_default().push(&assign.value);
                }
            }
            Stmt::For(for_stmt) => {
                self.record_walk(&for_stmt.target, &for_stmt.iter);
                let walked = match for_stmt.iter.as_ref() {
                    Expr::Call(call) if last_segment(&call.func) == Some("enumerate") => call.arguments.args.first(),
                    iter => Some(iter),
                };
                let target = match for_stmt.target.as_ref() {
                    Expr::Tuple(tuple) if tuple.elts.len() == 2 && walked.is_some_and(|w| !is(w, &for_stmt.iter)) => {
                        tuple.elts.last()
                    }
                    target => Some(target),
                };
                if let (Some(walked), Some(Expr::Name(name))) = (walked, target)
                    && starts_at_self(walked)
                    && !is_self(walked)
                {
                    self.code.module_loops.insert(name.id.as_str());
                }
            }
            _ => {}
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if matches!(expr, Expr::Lambda(_)) || self.is_error_message(expr) {
            return false;
        }
        let parent = match self.expressions.last() {
            Some(parent) => Parent::Expr(parent),
            None => {
                while self.statements.last().is_some_and(|outer| !outer.range().contains_range(expr.range())) {
                    self.statements.pop();
                }
                match self.statements.last() {
                    Some(stmt) => Parent::Stmt(stmt),
                    None => return true,
                }
            }
        };
        self.code.parents.insert(address(expr), parent);
        if matches!(expr, Expr::Call(_)) {
            self.code.calls.insert(expr.range(), expr);
        }
        let generators = match expr {
            Expr::ListComp(comp) => comp.generators.as_slice(),
            Expr::SetComp(comp) => comp.generators.as_slice(),
            Expr::Generator(comp) => comp.generators.as_slice(),
            Expr::DictComp(comp) => comp.generators.as_slice(),
            _ => &[],
        };
        for generator in generators {
            self.record_walk(&generator.target, &generator.iter);
        }
        if let Expr::Name(name) = expr
            && name.ctx == ExprContext::Load
        {
            self.code.uses.entry(name.id.as_str()).or_default().push(expr);
        }
        self.expressions.push(expr);
        true
    }

    fn leave_expr(&mut self, _expr: &'a Expr) {
        self.expressions.pop();
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::compiled::reach::mark_region;
    use crate::source::SourceFile;

    const HEAD: &str = "import itertools\nimport math\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x: torch.Tensor, grid: torch.Tensor, m: torch.Tensor):\n";

    /// Where the value of the first expression written `probe` in `forward` still breaks.
    fn verdict(body: &str, probe: &str, value: Value) -> Option<Stop> {
        verdict_in(body, "forward", probe, value)
    }

    /// `verdict`, for a probe in the method `function` (written after `forward` in `body`).
    fn verdict_in(body: &str, function: &str, probe: &str, value: Value) -> Option<Stop> {
        let code = format!("{HEAD}{body}");
        let source = SourceFile::parse(Path::new("m.py"), code.clone()).unwrap();
        let mut model = FileModel::build(&source, "m");
        // What forward calls is compiled too: its helpers' callers are known.
        mark_region(&mut model, &crate::facts_of_single_file(Path::new("m.py"), &code).unwrap());
        let forward = model.functions.iter().position(|f| f.name == function).unwrap();
        let tensors = Tensors::of(&model, forward);
        let flow = Flow::of(&model, forward, &tensors);
        let at = code.find(probe).unwrap();
        let expr = flow
            .code
            .parents
            .keys()
            .map(|&address| unsafe { &*(address as *const Expr) })
            .find(|expr| expr.start().to_usize() == at && expr.range().len().to_usize() == probe.len())
            .unwrap();
        flow.still_breaks(expr, value).map(|verdict| verdict.stop)
    }

    #[test]
    fn sizes_slices_and_factories_trace() {
        let split = "        sizes = (grid.prod(-1) // 4).tolist()\n        return torch.split(x, sizes)\n";
        assert_eq!(verdict(split, "(grid.prod(-1) // 4).tolist()", Value::List), None);
        let walked = "        for t, h, w in grid.tolist():\n            x = x[: t * h * w].reshape(t, h, w)\n        return x\n";
        assert_eq!(verdict(walked, "grid.tolist()", Value::List), None);
        let sliced = "        n = int(m.sum().item())\n        return x[:, :n] + torch.arange(n)\n";
        assert_eq!(verdict(sliced, "m.sum().item()", Value::Number), None);
        let checked = "        assert m.max().item() <= 4\n        return x\n";
        assert_eq!(verdict(checked, "m.max().item()", Value::Number), None);
    }

    #[test]
    fn branches_loops_containers_and_library_calls_still_break() {
        let branch = "        if torch.isnan(x).any().item():\n            x = x * 0\n        return x\n";
        assert_eq!(verdict(branch, "torch.isnan(x).any().item()", Value::Number), Some(Stop::Branch));
        let walked = "        for t, h, w in grid.tolist():\n            if t > 1:\n                x = x * 2\n        return x\n";
        assert_eq!(verdict(walked, "grid.tolist()", Value::List), Some(Stop::Branch));
        let counted =
            "        k = int(m.max().item())\n        for i in range(k):\n            x = x * i\n        return x\n";
        assert_eq!(verdict(counted, "m.max().item()", Value::Number), Some(Stop::Range));
        let grouped = "        for k, g in itertools.groupby(enumerate(m.tolist()), lambda p: p[1]):\n            x = x + k\n        return x\n";
        assert_eq!(verdict(grouped, "m.tolist()", Value::List), Some(Stop::Unknown));
        let reshaped = "        for (h, w), piece in zip(grid.tolist(), x.split(2)):\n            x = piece.view(1, h, w, -1)\n        return x\n";
        assert_eq!(verdict(reshaped, "grid.tolist()", Value::List), Some(Stop::Reshape));
        let whole = "        h, w = grid.tolist()\n        return x.view(1, h, w, -1)\n";
        assert_eq!(verdict(whole, "grid.tolist()", Value::List), None, "measured: traced");
        let indexed = "        names = ['a', 'b']\n        return names[m.argmax().item()]\n";
        assert_eq!(verdict(indexed, "m.argmax().item()", Value::Number), Some(Stop::PythonIndex));
        // sdpa's `is_causal` must be a bool: with the option on the break moves there (GB0112).
        let causal = "        q_len = m.sum().item()\n        causal = q_len > 1\n        return torch.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=causal)\n";
        assert_eq!(verdict(causal, "m.sum().item()", Value::Number), Some(Stop::Flag));
        let inline = "        q_len = int(m.sum())\n        return torch.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=q_len > 1)\n";
        assert_eq!(verdict(inline, "int(m.sum())", Value::Number), Some(Stop::Flag));
    }

    #[test]
    fn a_number_is_followed_into_the_files_helpers_and_back_to_their_callers() {
        let helper = |use_: &str| {
            format!("        n = m.sum().item()\n        return self.scale(x, n)\n\n    def scale(self, x, n):\n{use_}")
        };
        let branches = helper("        if n > 0:\n            return x * 2\n        return x\n");
        assert_eq!(verdict(&branches, "m.sum().item()", Value::Number), Some(Stop::Branch));
        let slices = helper("        return x[:, :n]\n");
        assert_eq!(verdict(&slices, "m.sum().item()", Value::Number), None);
        let counted =
            "        return x[:, : self.count(m)]\n\n    def count(self, m):\n        return m.sum().item()\n";
        assert_eq!(verdict_in(counted, "count", "m.sum().item()", Value::Number), None);
        let tested = "        if self.count(m) > 0:\n            return x\n        return -x\n\n    def count(self, m):\n        return m.sum().item()\n";
        assert_eq!(verdict_in(tested, "count", "m.sum().item()", Value::Number), Some(Stop::Branch));
        let uncalled = "        return x\n\n    def count(self, m):\n        return m.sum().item()\n";
        assert_eq!(verdict_in(uncalled, "count", "m.sum().item()", Value::Number), Some(Stop::Returned));
    }

    #[test]
    fn a_helper_returns_a_number_to_the_call_that_passed_it_in() {
        // Measured: one frame each, with the option on (a reviewer's repros).
        let twice = "        a = self.twice(m.sum().item())\n        b = self.twice(a)\n        return x[:, :b]\n\n    def twice(self, v):\n        return v * 2\n";
        assert_eq!(verdict(twice, "m.sum().item()", Value::Number), None, "not round the helper's other call");
        let other_call = "        n = self.clamp(m.sum().item())\n        k = self.clamp(x.shape[0])\n        if k > 2:\n            x = x * 2\n        return x[:, :n]\n\n    def clamp(self, v):\n        return min(v, 8)\n";
        assert_eq!(verdict(other_call, "m.sum().item()", Value::Number), None, "`k` is another call's result");
        let tuple = "        positions, rows = self.grid(m)\n        return x[:, :rows] * positions.sum()\n\n    def grid(self, m):\n        return torch.arange(4), int(m.sum().item())\n";
        assert_eq!(verdict_in(tuple, "grid", "m.sum().item()", Value::Number), None, "`rows` alone holds it");
        let features = "        n = self.forward_features(m)\n        if n > 0:\n            return x\n        return -x\n\n    def forward_features(self, m):\n        return m.sum().item()\n";
        assert_eq!(
            verdict_in(features, "forward_features", "m.sum().item()", Value::Number),
            Some(Stop::Branch),
            "an entry point called in the file returns to that call"
        );
        let lambda = "        return sorted([x, grid], key=lambda t: self.count(t))\n\n    def count(self, t):\n        return t.sum().item()\n";
        assert_eq!(verdict_in(lambda, "count", "t.sum().item()", Value::Number), Some(Stop::Unknown));
    }

    #[test]
    fn helpers_that_call_each_other_many_times_are_followed_on_a_budget() {
        // Each level calls the next four times: 4^8 paths, cut off by the budget, not walked.
        let mut body = String::from("        return x[:, : self.f0(m.sum().item())]\n");
        for level in 0..8 {
            let next = format!("self.f{}(v)", level + 1);
            body.push_str(&format!("\n    def f{level}(self, v):\n        return {next} + {next} + {next} + {next}\n"));
        }
        body.push_str("\n    def f8(self, v):\n        return v\n");
        assert_eq!(verdict(&body, "m.sum().item()", Value::Number), Some(Stop::TooFar));
    }

    #[test]
    fn a_number_given_to_code_tcfix_cannot_see_is_unknown_and_math_keeps_it_a_number() {
        let submodule = "        n = m.sum().item()\n        return self.rotary(x, n)\n";
        assert_eq!(verdict(submodule, "m.sum().item()", Value::Number), Some(Stop::Unknown));
        let ceil = "        k = math.ceil(m.sum().item() / 4)\n        return torch.arange(k)\n";
        assert_eq!(verdict(ceil, "m.sum().item()", Value::Number), None, "measured: traced");
        let counted = "        k = math.ceil(m.sum().item() / 4)\n        for i in range(k):\n            x = x + i\n        return x\n";
        assert_eq!(verdict(counted, "m.sum().item()", Value::Number), Some(Stop::Range), "measured: breaks");
    }

    #[test]
    fn a_walk_too_long_to_follow_is_not_called_traced() {
        let mut body = String::from("        n0 = m.sum().item()\n");
        for step in 1..=MAX_DEPTH + 1 {
            body.push_str(&format!("        n{step} = n{} + 1\n", step - 1));
        }
        body.push_str(&format!("        return x[:, :n{}]\n", MAX_DEPTH + 1));
        assert_eq!(verdict(&body, "m.sum().item()", Value::Number), Some(Stop::TooFar));
    }

    #[test]
    fn a_zip_hands_each_name_its_own_element() {
        let zipped = "        for piece, (h, w) in zip(x.split(2), grid.tolist()):\n            x = piece.mean() * h * w\n        return x\n";
        assert_eq!(verdict(zipped, "grid.tolist()", Value::List), None);
    }

    /// The verdicts of `Flow::selections` for the selections written in `probes`.
    fn selections(body: &str, probes: &[&str]) -> Vec<Option<Stop>> {
        let code = format!("{HEAD}{body}");
        let source = SourceFile::parse(Path::new("m.py"), code.clone()).unwrap();
        let model = FileModel::build(&source, "m");
        let forward = model.functions.iter().position(|f| f.name == "forward").unwrap();
        let tensors = Tensors::of(&model, forward);
        let flow = Flow::of(&model, forward, &tensors);
        let found: Vec<Selection> = probes
            .iter()
            .map(|probe| {
                let at = code.find(probe).unwrap();
                let expr = flow
                    .code
                    .parents
                    .keys()
                    .map(|&address| unsafe { &*(address as *const Expr) })
                    .find(|expr| expr.start().to_usize() == at && expr.range().len().to_usize() == probe.len())
                    .unwrap();
                let mask = match expr {
                    Expr::Subscript(subscript) => Some(subscript.slice.as_ref()),
                    _ => None,
                };
                Selection { expr, mask }
            })
            .collect();
        flow.selections(&found).into_iter().map(|verdict| verdict.map(|v| v.stop)).collect()
    }

    #[test]
    fn selections_combined_walked_or_listed_still_break() {
        let same_mask = "        keep = m > 0\n        return torch.nn.functional.mse_loss(x[keep], grid[keep])\n";
        assert_eq!(selections(same_mask, &["x[keep]", "grid[keep]"]), [None, None]);
        let two = "        a = x.masked_select(m > 0)\n        b = grid.masked_select(m > 0)\n        return torch.nn.functional.l1_loss(a, b)\n";
        assert_eq!(
            selections(two, &["x.masked_select(m > 0)", "grid.masked_select(m > 0)"]),
            [Some(Stop::Combined), Some(Stop::Combined)]
        );
        let experts = "        hit = m.nonzero()\n        for e in hit:\n            rows, cols = torch.where(grid[e])\n            x = x.index_add(0, cols, x[cols])\n        return x\n";
        assert_eq!(
            selections(experts, &["m.nonzero()", "torch.where(grid[e])"]),
            [Some(Stop::Iterated), Some(Stop::LoopOver)]
        );
        let listed = "        return torch.where(m > 0)[0].tolist()\n";
        assert_eq!(selections(listed, &["torch.where(m > 0)"]), [Some(Stop::ToList)]);
        let counted =
            "        idx = m.nonzero()\n        if idx.numel() == 0:\n            return x\n        return x[idx]\n";
        assert_eq!(selections(counted, &["m.nonzero()"]), [Some(Stop::Branch)]);
        let derived = "        kept = torch.cumsum(x[m > 0], 0)\n        for v in kept:\n            grid = grid + v\n        return grid\n";
        assert_eq!(selections(derived, &["x[m > 0]"]), [Some(Stop::Iterated)]);
        let asserted =
            "        kept = x[m > 0]\n        assert kept.numel() >= 0, f\"{kept.shape}\"\n        return kept.sum()\n";
        assert_eq!(selections(asserted, &["x[m > 0]"]), [None], "the message is built only on failure");
    }
}
