//! TCF105 bool-mask-index-put: `t[mask] = values` with a boolean tensor mask and tensor values in
//! compiled code. The forward traces, but when `values` requires grad the backward of
//! `index_put` needs `nonzero`, AOTAutograd fails on it, and the whole frame falls back to eager
//! (pytorch#114686). The fix rebinds `t = t.masked_scatter(mask.unsqueeze(-1), values)`, only where
//! `t` is a fresh local tensor that nothing else can see (rebinding instead of mutating is then
//! invisible).
//!
//! Without grad nothing fails (measured under torch 2.15, `aot_eager` and `inductor`): not reported
//! under `with torch.no_grad():` / `torch.inference_mode()`, in a function decorated with them or
//! only called from such code in this file, nor for detached values. Eval mode alone does not turn
//! grad off, so in a model that raises in training it is still reported, at low severity, saying
//! that it runs eagerly unless called under `torch.inference_mode()`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::compiled::reach::describe;
use crate::model::file::{FileModel, FunctionNode, Reason};
use crate::model::file::imports::last_segment;
use crate::model::file::module::is_self;
use crate::model::flow::grad_free::GradFree;
use crate::model::flow::reaching_binding::{Uses, last_binding};
use crate::model::tensors::tensor::Tensors;
use crate::model::tensors::torch_calls::FACTORIES;
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF105",
    name: "bool-mask-index-put",
    summary: "write masked rows with masked_scatter instead of a boolean index assignment",
    explanation: include_str!("../../codemods/bool-mask-index-put/README.md"),
    hazard: "A boolean-mask assignment of tensor values (`t[mask] = values`) in compiled code makes the whole frame run eagerly whenever grad is enabled.",
    why: "The backward of the assignment needs `nonzero`, whose output size depends on the mask, so AOTAutograd \
              fails to compile it and Dynamo falls back to running the whole frame eagerly.",
    category: Category::GraphBreak,
    fixes: &[Safety::Unsafe],
    mentions: &[],
    backend_ops: &["aten.nonzero"],
};

pub const HOOKS: Hooks = Hooks::Region(start);

/// The assignments of tensor values through a boolean mask in the compiled code of the region's
/// functions, and the calls between them: whether grad is off where a write runs depends on its
/// callers, which the walk may reach after it (see `grad_is_off`).
fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(MaskedWrites {
        model: checker.model,
        found: Vec::new(),
        no_grad_blocks: Vec::new(),
        detached: HashSet::default(),
        writes: Vec::new(),
        calls: Vec::new(),
    })
}

struct IndexPut<'a> {
    statement: &'a ast::StmtAssign,
    target: &'a ast::ExprSubscript,
    /// The tensor written to, when it is a plain name.
    name: Option<&'a str>,
    site: Site,
}

/// A call in a region function's compiled code that may run another function of the file
/// (`helper(...)`, `self.method(...)`), resolved only when a write asks who calls its function.
struct RegionCall<'a> {
    caller: usize,
    call: &'a ast::ExprCall,
    /// It sits in a `with torch.no_grad():` block (or the like).
    under_no_grad: bool,
}

struct MaskedWrites<'m, 'a> {
    model: &'m FileModel<'a>,
    /// The writes found in the function being walked.
    found: Vec<IndexPut<'a>>,
    /// The bodies of `with torch.no_grad():` blocks seen so far in the function being walked.
    no_grad_blocks: Vec<TextRange>,
    /// Local names last bound to a detached tensor (`x = y.detach()`).
    detached: HashSet<&'a str>,
    /// By function, in the order walked: the writes found there.
    writes: Vec<(usize, Vec<IndexPut<'a>>)>,
    calls: Vec<RegionCall<'a>>,
}

impl<'a> RegionHooks<'a> for MaskedWrites<'_, 'a> {
    fn start(&mut self, _function: &Function<'_, 'a>) -> bool {
        self.no_grad_blocks.clear();
        self.detached.clear();
        true
    }

    fn stmt(&mut self, function: &Function<'_, 'a>, stmt: &'a Stmt, site: Site) {
        if let Some(body) = no_grad_block(self.model, stmt) {
            self.no_grad_blocks.push(body);
        }
        let Stmt::Assign(assign) = stmt else { return };
        if let [Expr::Name(name)] = assign.targets.as_slice() {
            if self.is_detached(&assign.value) {
                self.detached.insert(name.id.as_str());
            } else {
                self.detached.remove(name.id.as_str());
            }
            return;
        }
        let [Expr::Subscript(target)] = assign.targets.as_slice() else { return };
        let tensors = function.tensors();
        // `t[mask] = 0.0` is traced fine: only tensor values have the failing backward, and only
        // when grad is on.
        let is_mask = |mask: &Expr| tensors.is_mask(mask) || mask_reaches(function, tensors, assign, mask);
        let is_hazard = tensors.is_tensor(&target.value)
            && is_mask(&target.slice)
            && tensors.is_tensor(&assign.value)
            && !never_requires_grad(tensors, &target.value)
            && !never_requires_grad(tensors, &assign.value)
            && !built_without_grad(function, tensors, &assign.value, stmt.range())
            && !self.is_detached(&assign.value)
            && !self.no_grad_blocks.iter().any(|block| block.contains_range(stmt.range()));
        if is_hazard {
            let name = match target.value.as_ref() {
                Expr::Name(name) => Some(name.id.as_str()),
                _ => None,
            };
            self.found.push(IndexPut { statement: assign, target, name, site });
        }
    }

    fn expr(&mut self, function: &Function<'_, 'a>, expr: &'a Expr, _site: Site) -> bool {
        if let Expr::Call(call) = expr
            && match call.func.as_ref() {
                Expr::Name(_) => true,
                Expr::Attribute(attr) => is_self(&attr.value),
                _ => false,
            }
        {
            let under_no_grad = self.no_grad_blocks.iter().any(|block| block.contains_range(call.range()));
            self.calls.push(RegionCall { caller: function.id, call, under_no_grad });
        }
        true
    }

    fn end(&mut self, function: &Function<'_, 'a>, _diagnostics: &mut Vec<Diagnostic>) {
        if !self.found.is_empty() {
            self.writes.push((function.id, std::mem::take(&mut self.found)));
        }
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        if self.writes.is_empty() {
            return;
        }
        let model = self.model;
        let callers = CallersOf::resolve(model, &self.calls);
        for (function, puts) in self.writes {
            if grad_is_off(model, &callers, function, &mut Vec::new()) {
                continue;
            }
            report(model, function, puts, diagnostics);
        }
    }
}

/// The findings for the writes of one function where grad may be on.
fn report(model: &FileModel, function: usize, puts: Vec<IndexPut>, diagnostics: &mut Vec<Diagnostic>) {
    let inference_only = raises_in_training(model, function).or_else(|| refused_in_file(model));
    for put in puts {
        let text = &model.source.text[put.target.range()];
        let diagnostic = match &inference_only {
            Some(model_name) => Diagnostic::new(
                &RULE,
                put.statement.range(),
                format!(
                    "`{text} = ...` in {} assigns tensor values through a boolean mask: `{model_name}` raises in \
                     training, but eval mode does not turn grad off, so the frame falls back to eager unless it is \
                     called under `torch.inference_mode()` or `torch.no_grad()`",
                    describe(model, function)
                ),
            )
            .with_severity(Severity::Low),
            None => Diagnostic::new(
                &RULE,
                put.statement.range(),
                format!(
                    "`{text} = ...` in {} assigns tensor values through a boolean mask: whenever the values \
                     require grad (training, or eval without `torch.no_grad()`), the frame falls back to eager",
                    describe(model, function)
                ),
            ),
        };
        diagnostics.push(match masked_scatter_fix(model, function, &put) {
            Ok(fix) => diagnostic.with_fix(fix),
            Err(reason) => diagnostic.without_fix(reason),
        });
    }
}

/// Values computed only from integer or boolean tensors and fresh ones (`2.0 /
/// torch.sqrt(counts[nonempty])` with `counts = valid.sum(1).float()`): measured under torch
/// 2.15 (`aot_eager`, training), such a write compiles in one graph.
fn built_without_grad(function: &Function, tensors: &Tensors, value: &Expr, at: TextRange) -> bool {
    let FunctionNode::Def(def) = function.model().function(function.id).node else { return false };
    GradFree::new(function.model(), def, tensors).holds(value, at)
}

/// Integer and boolean tensors never require grad, and without grad the assignment compiles:
/// masks, and tensors named for ids, labels, masks or indices (`labels[mask] = ignore_ids`).
fn never_requires_grad(tensors: &Tensors, expr: &Expr) -> bool {
    if tensors.is_mask(expr) {
        return true;
    }
    let integer_cast = matches!(expr, Expr::Call(call)
        if matches!(last_segment(&call.func), Some("long" | "int" | "bool" | "short" | "byte")));
    integer_cast
        || root_name(expr).is_some_and(|name| {
            let name = name.to_ascii_lowercase();
            ["label", "ids", "mask", "index", "indices"].iter().any(|word| name.contains(word))
        })
}

impl MaskedWrites<'_, '_> {
    /// `y.detach()`, `y.detach().view(-1, d)`, `y.detach() * 0.5`, or a local last bound to one:
    /// no grad flows.
    fn is_detached(&self, expr: &Expr) -> bool {
        let is_number = |e: &Expr| matches!(e, Expr::NumberLiteral(_));
        match expr {
            Expr::Name(name) => self.detached.contains(name.id.as_str()),
            Expr::BinOp(op) => {
                (self.is_detached(&op.left) || is_number(&op.left))
                    && (self.is_detached(&op.right) || is_number(&op.right))
            }
            Expr::UnaryOp(op) => self.is_detached(&op.operand),
            Expr::Attribute(attr) => self.is_detached(&attr.value),
            Expr::Subscript(subscript) => self.is_detached(&subscript.value),
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Attribute(method) => {
                    matches!(method.attr.id.as_str(), "detach" | "detach_") || self.is_detached(&method.value)
                }
                _ => false,
            },
            _ => false,
        }
    }
}

/// The name an expression starts from: `labels` in `labels.unsqueeze(-1)[..., 0]`.
fn root_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attr) => root_name(&attr.value),
        Expr::Subscript(subscript) => root_name(&subscript.value),
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(method) => root_name(&method.value),
            _ => None,
        },
        _ => None,
    }
}

/// `t[mask] = values` -> `t = t.masked_scatter(mask.unsqueeze(-1), values)`.
fn masked_scatter_fix(model: &FileModel, function: usize, put: &IndexPut) -> Result<Fix, &'static str> {
    const NOT_LOCAL: &str = "write `x = x.masked_scatter(mask.unsqueeze(-1), values)` on a fresh tensor, or \
                             `torch.where` over full rows: others may see this one (an input, attribute or view)";
    let name = put.name.ok_or(NOT_LOCAL)?;
    if put.site.in_loop {
        // A view taken of the tensor in one iteration would stop seeing the next iteration's writes.
        return Err("the assignment is in a loop: rewrite it by hand with `masked_scatter` if no view of the \
                    tensor outlives an iteration");
    }
    let FunctionNode::Def(def) = model.function(function).node else { return Err(NOT_LOCAL) };
    if !is_fresh_local(def, name, put.statement.range()) {
        return Err(NOT_LOCAL);
    }
    let text = &model.source.text;
    if let Expr::Subscript(source) = put.statement.value.as_ref()
        && text[source.slice.range()] == text[put.target.slice.range()] {
            // `t[mask] = src[mask]`: the mask likely has the full shape of `t`, not one dim less.
            return Err("the values are read with the same mask: if `t` and the source have the mask's shape, \
                        write `t = torch.where(mask, source, t)`");
        }
    let mask = &text[put.target.slice.range()];
    let mask = match put.target.slice.as_ref() {
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_) => mask.to_string(),
        _ => format!("({mask})"),
    };
    let values = &text[put.statement.value.range()];
    let replacement = format!("{name} = {name}.masked_scatter({mask}.unsqueeze(-1), {values})");
    let title = format!(
        "Rebind `{name}` to `{name}.masked_scatter(...)` (unsafe: assumes the mask covers all but the last dim of \
         `{name}` and the values have one row per selected position; surplus rows are now ignored instead of \
         raising)"
    );
    Ok(Fix::new(title, Safety::Unsafe, vec![Edit::replace(put.statement.range(), replacement)]))
}

/// Whether, in the block holding the assignment at `put`, the statement binding `name` last before
/// it is `name = <fresh tensor>` (`torch.zeros(...)`, `x.clone()`) and nothing in between reads or
/// rebinds `name`: then nothing else holds the tensor or a view of it, and rebinding the name is the
/// same as writing into it.
fn is_fresh_local(def: &ast::StmtFunctionDef, name: &str, put: TextRange) -> bool {
    matches!(last_binding(def, name, put), Some((Expr::Call(call), Uses::Untouched))
        if last_segment(&call.func).is_some_and(|f| FACTORIES.contains(&f) || f == "clone"))
}

/// The mask of `t[mask] = v` is a mask where it is used: the statement binding it last before, in
/// the same block, binds a mask (`m = torch.tensor(m, dtype=torch.bool)` after `m = helper(...)`:
/// the function's other bindings of the name do not reach the assignment).
fn mask_reaches(function: &Function, tensors: &Tensors, put: &ast::StmtAssign, mask: &Expr) -> bool {
    let Expr::Name(mask) = mask else { return false };
    let FunctionNode::Def(def) = function.model().function(function.id).node else { return false };
    matches!(last_binding(def, mask.id.as_str(), put.range()), Some((value, Uses::Untouched | Uses::Read))
        if tensors.is_mask(value))
}

/// Context managers and decorators that turn grad off.
const NO_GRAD: [&str; 4] =
    ["torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.inference_mode"];

/// Whether a `with` item or decorator turns grad off: `torch.no_grad()`, `torch.inference_mode()`
/// (not `inference_mode(False)`), `torch.set_grad_enabled(False)`, or a bare `@torch.no_grad`.
fn disables_grad(model: &FileModel, expr: &Expr) -> bool {
    let (func, arguments) = match expr {
        Expr::Call(call) => (call.func.as_ref(), Some(&call.arguments)),
        _ => (expr, None),
    };
    let Some(name) = model.imports.qualified_name(func) else { return false };
    let first =
        arguments.and_then(|arguments| arguments.args.first().or_else(|| arguments.keywords.first().map(|k| &k.value)));
    let literal_false = matches!(first, Some(Expr::BooleanLiteral(literal)) if !literal.value);
    if name == "torch.set_grad_enabled" || name == "torch.autograd.set_grad_enabled" {
        return literal_false;
    }
    NO_GRAD.contains(&name.as_str()) && !literal_false
}

/// The body of `with torch.no_grad():` (and the like), as a range.
fn no_grad_block(model: &FileModel, stmt: &Stmt) -> Option<TextRange> {
    let Stmt::With(with) = stmt else { return None };
    let disables = with.items.iter().any(|item| disables_grad(model, &item.context_expr));
    let (first, last) = (with.body.first()?, with.body.last()?);
    disables.then(|| TextRange::new(first.start(), last.end()))
}

/// Whether grad is off wherever `function` runs under compile: it is decorated `@torch.no_grad()`
/// (or the like), or it is reached only through calls from this file, each under a no-grad block or
/// in a function where grad is off. A forward, a hook or a compiled function runs with the grad
/// mode of whoever calls the model: not known. Nor is a function that another file's compiled
/// code calls: this file's calls are not all of them.
fn grad_is_off(model: &FileModel, callers: &CallersOf, function: usize, visiting: &mut Vec<usize>) -> bool {
    if let FunctionNode::Def(def) = model.function(function).node
        && def.decorator_list.iter().any(|decorator| disables_grad(model, &decorator.expression))
    {
        return true;
    }
    let Some(Reason::CalledFrom(_)) = model.region.get(&function) else { return false };
    let called_from_other_files = model.called_from_other_files.contains(&model.function(function).qualname);
    if called_from_other_files || visiting.contains(&function) {
        return false;
    }
    visiting.push(function);
    let calls = callers.of(function);
    let off = !calls.is_empty()
        && calls.iter().all(|&(caller, under_no_grad)| under_no_grad || grad_is_off(model, callers, caller, visiting));
    visiting.pop();
    off
}

/// The calls to each function from the region's compiled code, as the checker's walk saw them: each
/// caller, and whether the call sits in a no-grad block.
struct CallersOf(HashMap<usize, Vec<(usize, bool)>>);

impl CallersOf {
    fn resolve(model: &FileModel, calls: &[RegionCall]) -> Self {
        let mut callers: HashMap<usize, Vec<(usize, bool)>> = HashMap::default();
        for call in calls {
            if let Some(callee) = callee(model, call) {
                callers.entry(callee).or_default().push((call.caller, call.under_no_grad));
            }
        }
        CallersOf(callers)
    }

    fn of(&self, function: usize) -> &[(usize, bool)] {
        self.0.get(&function).map_or(&[], Vec::as_slice)
    }
}

/// The function of the file a call runs: one visible by name, or a method of the caller's own class.
fn callee(model: &FileModel, call: &RegionCall) -> Option<usize> {
    match call.call.func.as_ref() {
        Expr::Name(name) => model.resolve_name(name.id.as_str(), Some(call.caller)),
        Expr::Attribute(attr) if is_self(&attr.value) => {
            model.self_class(call.caller).and_then(|class| model.method(class, attr.attr.id.as_str()))
        }
        _ => None,
    }
}

/// The class whose code says it is for inference only (`if self.training: raise ...` in the
/// method itself or in its class's `forward`), for `function` or a method of this file that it is
/// reached from.
fn raises_in_training(model: &FileModel, function: usize) -> Option<String> {
    let mut current = function;
    let mut seen = vec![current];
    loop {
        if let Some(class) = model.self_class(current) {
            let methods = [Some(current), model.method(class, "forward")];
            if methods.into_iter().flatten().any(|method| method_raises_in_training(model, method)) {
                return Some(model.classes[class].qualname.clone());
            }
        }
        let Some(Reason::CalledFrom(caller)) = model.region.get(&current) else { return None };
        // Reached from another file too: that caller's class may train.
        if model.called_from_other_files.contains(&model.function(current).qualname) {
            return None;
        }
        current = model.functions.iter().position(|f| &f.qualname == caller)?;
        if seen.contains(&current) {
            return None;
        }
        seen.push(current);
    }
}

/// The model that says, in a `raise` of this file, that it cannot be trained at all ("Training
/// of X is not supported yet"): no backward runs through this file's code, whichever function.
fn refused_in_file(model: &FileModel) -> Option<String> {
    model.dead_code.training_refused_by().map(|class| class.unwrap_or("this file's model").to_string())
}

/// `if self.training: raise ...` at the top level of a method.
fn method_raises_in_training(model: &FileModel, method: usize) -> bool {
    let FunctionNode::Def(def) = model.function(method).node else { return false };
    def.body.iter().any(|stmt| {
        let Stmt::If(if_stmt) = stmt else { return false };
        let tests_training = matches!(if_stmt.test.as_ref(), Expr::Attribute(attr)
            if is_self(&attr.value) && attr.attr.id.as_str() == "training");
        tests_training && if_stmt.body.iter().any(|s| matches!(s, Stmt::Raise(_)))
    })
}

/// Once a fix removes a graph break in `function`, the code on both sides of it is traced as one
/// graph: if that code holds a masked write of values that may require grad (TCF105's hazard), AOTAutograd gives
/// the whole frame up to eager in training, where before only the graph holding the write fell
/// back (measured under torch 2.15 on the VLM whole-model oracle: graphs 5 -> 6, eager frames
/// 1 -> 2). The code traced with the break gone: `CallGraph::traced_with`, in the file. Returns
/// how to name the first such write: "`out[mask] = ...` on line 170".
pub fn traced_with(checker: &Checker, function: usize) -> Option<String> {
    let model = checker.model;
    let seen = model.calls().traced_with(function);
    let text = &model.source.text;
    let mut writes = checker.hazards_of(&RULE);
    writes.sort_by_key(|range| range.start());
    writes.into_iter().find(|write| seen.iter().any(|&f| model.function(f).node.range().contains_range(*write))).map(
        |write| {
            let code = text[write].lines().next().unwrap_or_default();
            let code = code.split_once(" = ").map_or(code.to_string(), |(target, _)| format!("{target} = ..."));
            let line = text[..write.start().to_usize()].matches('\n').count() + 1;
            format!("`{code}` on line {line}")
        },
    )
}
