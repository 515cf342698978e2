//! TCF204 loop-over-dynamic-dim: `for i in range(x.shape[1])`, `range(x.size(0))`, `range(len(x))`
//! or `range(N)` with `N` unpacked from an input's shape, in compiled code. Dynamo unrolls the loop,
//! so the graph holds one copy of the body per iteration and is valid for that size only: every new
//! size recompiles, dynamic shapes do not help, and after the recompile limit (8) the frame runs
//! eagerly. There is no mechanical fix: the body has to be written as one batched tensor operation.
//! Not reported in a frame that a graph break inside one of its loops already sends eagerly:
//! Dynamo then unrolls nothing there. A list built from such a range (`list(range(n))`,
//! `torch.tensor(list(range(n)))`) pins the size the same way (`range_list`), and so does taking
//! an input's tensor apart into its rows (`list(x)`, `x.unbind(0)`, `for row in x`: `tensor_rows`).

mod range_list;
mod tensor_rows;

use ruff_python_ast::{Comprehension, Expr, ExprCall, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::{Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::flow::own_containers::indexes_own_container;
use crate::model::flow::shapes::{InputSizes, only_for_single_step};
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF204",
    name: "loop-over-dynamic-dim",
    summary: "vectorize loops over an input's size",
    explanation: include_str!("../../codemods/loop-over-dynamic-dim/README.md"),
    hazard: "A loop over `range` of an input's size in compiled code is unrolled for that size.",
    why: "Dynamo unrolls the loop into the graph, so every new size of that dimension recompiles, even with \
              dynamic shapes, and after the recompile limit the frame runs eagerly.",
    category: Category::Recompile,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The `for` loops over `range` of an input size in the function's compiled code.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    // The one-token decode step of a recurrent layer: its loops over the sequence run once.
    if only_for_single_step(function.model(), function.id) {
        return None;
    }
    Some(Box::new(LoopFinder { function, sizes: function.sizes(), found: Vec::new(), unpacked: Vec::new() }))
}

/// Words that name dimensions a model fixes (`num_heads`, `num_levels`, `num_codebooks`, `ndim`,
/// `channels`): unpacked from an input's shape, they still take one value per model, so the loop
/// compiles once. Seen in transformers (grounding-dino's `num_levels = hidden_states.shape[1]`).
/// The loop variable may name it too (`for level in range(hidden_states.shape[1])` over the
/// stacked outputs of the decoder layers, `for codebook in range(codes.shape[1])`).
const FIXED_DIMENSION_WORDS: [&str; 12] =
    ["head", "channel", "level", "lvl", "codebook", "dim", "layer", "stage", "expert", "class", "label", "feature"];

fn names_fixed_dimension(size: &Expr) -> bool {
    let Expr::Name(name) = size else { return false };
    let name = name.id.to_ascii_lowercase();
    FIXED_DIMENSION_WORDS.iter().any(|word| name.contains(word)) || name == "c"
}

struct LoopFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    sizes: &'c InputSizes,
    found: Vec<Found>,
    /// Values unpacked into names (`q, k, v = qkv.unbind(0)`): their count is needed anyway.
    unpacked: Vec<TextRange>,
}

/// A `range(...)` over an input size, iterated by a loop or listed.
struct Found {
    /// The `range(...)` call.
    range: TextRange,
    /// The size it reads.
    size: TextRange,
    /// How a list of it is built (`list(range(…))`) and the fix, if it is listed.
    listed: Option<(String, Option<Fix>)>,
    /// A tensor taken apart into its rows (`tensor_rows`): `for` over it, or the call listing them.
    rows: Option<Rows>,
}

enum Rows {
    Loop,
    Listed,
}

impl<'a> LoopFinder<'_, 'a> {
    /// A loop over `iter` binding `target`, whose body is `body` (the element expressions of a
    /// comprehension) and `stmts` (a `for` statement's body).
    fn iterable(&mut self, target: &Expr, iter: &Expr, body: &[&Expr], stmts: &[Stmt]) {
        if names_fixed_dimension(target) || indexes_own_container(self.function.tensors(), target, body, stmts) {
            return;
        }
        if let Expr::Name(_) = iter
            && tensor_rows::varies_in_first_dim(self.function, iter, iter.range())
        {
            self.found.push(Found { range: iter.range(), size: iter.range(), listed: None, rows: Some(Rows::Loop) });
            return;
        }
        let Expr::Call(call) = iter else { return };
        let is_range = matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "range");
        if let Some(size) = self.size_of(call).filter(|_| is_range) {
            self.found.push(Found { range: call.range(), size, listed: None, rows: None });
        }
    }

    /// The input size a `range(...)` call reads, unless a name says the model fixes it.
    fn size_of(&self, range: &ExprCall) -> Option<TextRange> {
        let size = range.arguments.args.iter().find_map(|arg| self.sizes.read_by(arg))?;
        (!names_fixed_dimension(size)).then(|| size.range())
    }

    /// A list (or tensor) built from a range of an input size, reported once at its `range(...)`
    /// (the outer `torch.tensor(list(range(n)))` is met first and holds the fix).
    fn listed(&mut self, call: &'a ExprCall) {
        if let Some(tensor) = tensor_rows::listed_rows(self.function, call) {
            let found = Found { range: call.range(), size: tensor.range(), listed: None, rows: Some(Rows::Listed) };
            self.found.push(found);
            return;
        }
        let model = self.function.model();
        let Some(list) = range_list::range_list(model, call) else { return };
        if self.found.iter().any(|found| found.range == list.range.range()) {
            return;
        }
        if let Some(size) = self.size_of(list.range) {
            let text = &model.source.text;
            let listed = Some((list.describe(text), list.fix(model)));
            self.found.push(Found { range: list.range.range(), size, listed, rows: None });
        }
    }

    fn comprehensions(&mut self, generators: &[Comprehension], elements: &[&Expr]) {
        for generator in generators {
            self.iterable(&generator.target, &generator.iter, elements, &[]);
        }
    }
}

impl<'a> FunctionHooks<'a> for LoopFinder<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        match stmt {
            Stmt::For(for_stmt) => self.iterable(&for_stmt.target, &for_stmt.iter, &[], &for_stmt.body),
            Stmt::Assign(assign) if matches!(assign.targets.as_slice(), [Expr::Tuple(_) | Expr::List(_)]) => {
                self.unpacked.push(assign.value.range());
            }
            _ => {}
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        match expr {
            Expr::ListComp(comp) => self.comprehensions(&comp.generators, &[&comp.elt]),
            Expr::SetComp(comp) => self.comprehensions(&comp.generators, &[&comp.elt]),
            Expr::DictComp(comp) => self.comprehensions(&comp.generators, &[&comp.value]),
            Expr::Generator(comp) => self.comprehensions(&comp.generators, &[&comp.elt]),
            Expr::Call(call) => self.listed(call),
            _ => {}
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        // A graph break in one of the frame's loops makes Dynamo skip the frame: nothing in it is
        // unrolled, and that break is the finding (reported as critical by its own rule).
        if self.found.is_empty() || function.checker.runs_eagerly(function.id) {
            return;
        }
        for found in self.found {
            if self.unpacked.contains(&found.range) {
                continue;
            }
            let text = &function.model().source.text;
            let size = &text[found.size];
            let place = function.describe();
            // Medium: it costs only when that dimension varies between calls (sequence length,
            // batch size); over a channel count fixed by the model it compiles once.
            let diagnostic = match (found.listed, found.rows) {
                (_, Some(rows)) => {
                    let what = match rows {
                        Rows::Loop => format!("loop over the rows of `{size}`"),
                        Rows::Listed => format!("`{}` takes `{size}` apart into its rows", &text[found.range]),
                    };
                    Diagnostic::new(&RULE, found.range, format!(
                        "{what} in {place}: Dynamo makes the length of its first dimension a constant, so every new \
                         length recompiles (dynamic shapes do not help), and after 8 lengths the frame runs eagerly"
                    ))
                    .without_fix("keep the rows in one tensor: index, `torch.split` or batch over that dimension where they are used")
                }
                (None, None) => Diagnostic::new(&RULE, found.range, format!(
                    "loop over `range` of `{size}` in {place} is unrolled for each size: every new size recompiles \
                     (dynamic shapes do not help), and after 8 sizes the frame runs eagerly"
                ))
                .without_fix("write the loop body as one batched tensor operation over that dimension"),
                (Some((listing, fix)), None) => {
                    let diagnostic = Diagnostic::new(&RULE, found.range, format!(
                        "{listing} over `{size}` in {place} holds one Python number per index, so the size becomes a \
                         constant: every new size recompiles (dynamic shapes do not help), and after 8 sizes the frame \
                         runs eagerly"
                    ));
                    match fix {
                        Some(fix) => diagnostic.with_fix(fix),
                        None => diagnostic.without_fix("build the indices as a tensor: `torch.arange(…)` of the same bounds"),
                    }
                }
            };
            diagnostics.push(diagnostic.with_severity(Severity::Medium));
        }
    }
}
