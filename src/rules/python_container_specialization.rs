//! TCF205 python-container-specialization: a list argument of compiled code handled element by
//! element — `if isinstance(images, list): images = torch.cat(images)`, `len(images)`,
//! `for image in images` (nanoVLM's `_process_images`). Dynamo traces a Python list as its
//! elements: it guards on the list's length and compiles one version per distinct length,
//! dynamic shapes or not. The list should become one tensor before the compiled call.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::{self as ast, Comprehension, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::imports::Imports;
use crate::model::file::module::is_self;
use crate::model::flow::own_containers::pairs_with_own_container;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF205",
    name: "python-container-specialization",
    summary: "stack list arguments before the compiled call",
    explanation: include_str!("../../codemods/python-container-specialization/README.md"),
    hazard: "A list argument whose length shapes compiled code (torch.cat over it, len of it, a loop over it).",
    why: "Dynamo guards on the list's length, so every new number of elements recompiles, dynamic shapes or \
              not, and after the recompile limit the frame runs eagerly.",
    category: Category::Recompile,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The function's parameters, watched in the checker's walk for the list ones (tested with
/// `isinstance(p, list)`) and for what shapes the code by their length.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let model = function.model();
    let parameters: HashSet<String> = model
        .function(function.id)
        .node
        .parameters()?
        .iter_non_variadic_params()
        .map(|p| p.parameter.name.id.to_string())
        .collect();
    if parameters.is_empty() {
        return None;
    }
    Some(Box::new(UseFinder {
        function,
        parameters,
        tested: HashSet::default(),
        validating: None,
        in_assert: None,
        rebound: HashMap::default(),
        imports: &model.imports,
        uses: Vec::new(),
    }))
}

/// Whether calls of the function in this file pass `parameter` a list written out in the call
/// (`normalize([query, key])`, and elsewhere `normalize(context)`, a tensor): the list path then
/// serves lists whose length the code fixes, not the data.
fn always_given_a_list_display(model: &FileModel, function: usize, parameter: &str) -> bool {
    let f = model.function(function);
    if f.name == "forward" {
        return false;
    }
    let Some(parameters) = f.node.parameters() else { return false };
    let Some(index) = parameters.iter_non_variadic_params().position(|p| p.parameter.name.id.as_str() == parameter)
    else {
        return false;
    };
    let position = if f.class.is_some() { index.saturating_sub(1) } else { index };
    model.calls.iter().any(|call| {
        let callee = match call.func.as_ref() {
            Expr::Name(name) => Some(name.id.as_str()),
            Expr::Attribute(attr) if is_self(&attr.value) => Some(attr.attr.id.as_str()),
            _ => None,
        };
        let argument =
            call.arguments.find_keyword(parameter).map(|keyword| &keyword.value).or_else(|| call.arguments.args.get(position));
        callee == Some(f.name.as_str()) && matches!(argument, Some(Expr::List(_) | Expr::Tuple(_)))
    })
}

/// Lists with one entry per layer or feature level: their length is fixed by the model
/// (transformers' depth necks take `hidden_states: list[Tensor]`, timm's feature nets `x`).
const PER_LAYER_WORDS: [&str; 6] = ["hidden_states", "feat", "logits", "layer", "level", "outputs"];

/// Whether the function's parameter `name` defaults to `None`.
fn defaults_to_none(function: &Function, name: &str) -> bool {
    let Some(parameters) = function.model().function(function.id).node.parameters() else { return false };
    parameters
        .iter_non_variadic_params()
        .any(|p| p.parameter.name.id.as_str() == name && p.default().is_some_and(Expr::is_none_literal_expr))
}

/// `isinstance(images, list)`, `isinstance(images, (list, tuple))`: the name tested.
fn isinstance_list(expr: &Expr) -> Option<&str> {
    let Expr::Call(call) = expr else { return None };
    let is_isinstance = matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "isinstance");
    let [Expr::Name(tested), types] = call.arguments.args.as_ref() else { return None };
    // Tuples are mostly fixed-structure outputs (per-layer hidden states, gate logits): lists are
    // what batches of images or crops arrive in.
    let is_list_type = |e: &Expr| matches!(e, Expr::Name(n) if matches!(n.id.as_str(), "list" | "List"));
    let lists = match types {
        Expr::Tuple(tuple) => tuple.elts.iter().any(is_list_type),
        other => is_list_type(other),
    };
    (is_isinstance && lists).then_some(tested.id.as_str())
}

struct UseFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    parameters: HashSet<String>,
    /// The parameters the compiled code tests with `isinstance(p, list)` (or `tuple`): arguments
    /// that may arrive as a Python list.
    tested: HashSet<String>,
    /// `if not isinstance(x, list): raise ...`: a check of the argument's type, and the
    /// `isinstance(x, list)` tests inside it say nothing about how it is used.
    validating: Option<TextRange>,
    in_assert: Option<TextRange>,
    /// Arguments rebound to something that is not a list (`x = module(x)`): later uses are of
    /// another object.
    /// (where the rebinding statement ends: uses in its own value are still of the argument).
    rebound: HashMap<String, TextSize>,
    imports: &'c Imports,
    /// Where a parameter's length would shape the code, and how: the parameters it may be, first
    /// first (`zip(a, b)` is about the first of them that is a list), with where each sits.
    uses: Vec<(Vec<(&'a str, TextRange)>, Use<'a>)>,
}

/// How a parameter's length would shape the code.
enum Use<'a> {
    /// Its first argument, if the call is `torch.cat`, `torch.stack` or `len` (asked only of
    /// the list parameters' calls: most calls are not of these, and naming the callee costs).
    Call(&'a ast::ExprCall),
    Looped,
}

impl Use<'_> {
    fn how(&self, imports: &Imports) -> Option<&'static str> {
        let Use::Call(call) = self else { return Some("looped over") };
        match imports.qualified_name(&call.func).as_deref() {
            Some("torch.cat" | "torch.concat" | "torch.concatenate") => Some("concatenated"),
            Some("torch.stack") => Some("stacked"),
            Some("len") => Some("measured with `len`"),
            _ => None,
        }
    }
}

impl<'a> UseFinder<'_, 'a> {
    fn parameter_name<'e>(&self, expr: &'e Expr) -> Option<&'e str> {
        match expr {
            Expr::Name(name) if self.parameters.contains(name.id.as_str()) && !self.is_rebound(name) => {
                Some(name.id.as_str())
            }
            _ => None,
        }
    }

    fn is_rebound(&self, name: &ast::ExprName) -> bool {
        self.rebound.get(name.id.as_str()).is_some_and(|&end| name.start() >= end)
    }

    /// `x = module(x)` stops tracking `x`; `images = [img for ...]` keeps it a list.
    fn assigned(&mut self, assign: &ast::StmtAssign) {
        if matches!(assign.value.as_ref(), Expr::List(_) | Expr::ListComp(_)) {
            return;
        }
        for target in &assign.targets {
            if let Expr::Name(name) = target
                && self.parameters.contains(name.id.as_str())
            {
                self.rebound.entry(name.id.to_string()).or_insert(assign.end());
            }
        }
    }

    fn tested(&mut self, expr: &Expr) {
        if self.validating.is_some_and(|test| test.contains_range(expr.range())) {
            return;
        }
        if let Some(name) = isinstance_list(expr).filter(|name| self.parameters.contains(*name))
            && !PER_LAYER_WORDS.iter().any(|word| name.contains(word))
        {
            self.tested.insert(name.to_string());
        }
    }

    fn call(&mut self, call: &'a ast::ExprCall) {
        let Some(first) = call.arguments.args.first() else { return };
        let Some(name) = self.parameter_name(first) else { return };
        self.uses.push((vec![(name, call.range())], Use::Call(call)));
    }

    /// A loop over `iter` binding `target`, with its body: a list whose elements pair with the
    /// module's own layers (`for i, level in enumerate(levels): self.proj[i](level)`) is as long
    /// as the model has layers, fixed when it is built (measured under torch 2.15, the whole model
    /// compiled at three image sizes: 0 breaks, no recompile for the list).
    fn looped(&mut self, target: &Expr, iter: &'a Expr, body: &[&Expr], stmts: &[Stmt]) {
        if !pairs_with_own_container(self.function.tensors(), target, iter, body, stmts) {
            self.iterated(iter);
        }
    }

    fn iterated(&mut self, iter: &'a Expr) {
        let iterated: Vec<(&'a str, TextRange)> = match iter {
            // enumerate(images), zip(images, ...)
            Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(f) if matches!(f.id.as_str(), "enumerate" | "zip")) => {
                call.arguments.args.iter().filter_map(|arg| self.parameter_name(arg).map(|name| (name, arg.range()))).collect()
            }
            other => self.parameter_name(other).map(|name| (name, other.range())).into_iter().collect(),
        };
        if !iterated.is_empty() {
            self.uses.push((iterated, Use::Looped));
        }
    }

    fn comprehensions(&mut self, generators: &'a [Comprehension], elements: &[&Expr]) {
        generators.iter().for_each(|generator| self.looped(&generator.target, &generator.iter, elements, &[]));
    }

    /// The list parameters: tested as lists, and not always given a list written out in the call.
    fn lists(&self) -> HashSet<&str> {
        let model = self.function.model();
        self.tested
            .iter()
            .filter(|parameter| !always_given_a_list_display(model, self.function.id, parameter))
            .map(String::as_str)
            .collect()
    }
}

impl<'a> FunctionHooks<'a> for UseFinder<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        match stmt {
            Stmt::For(for_stmt) => self.looped(&for_stmt.target, &for_stmt.iter, &[], &for_stmt.body),
            Stmt::Assign(assign) => self.assigned(assign),
            Stmt::Assert(assert) => self.in_assert = Some(assert.range()),
            Stmt::If(if_stmt) if matches!(if_stmt.body.last(), Some(Stmt::Raise(_))) => {
                self.validating = Some(if_stmt.test.range());
            }
            _ => {}
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        self.tested(expr);
        // `assert len(x) in [1, 2]` checks the argument: Dynamo turns it into a guard-free check.
        if self.in_assert.is_some_and(|assert| assert.contains_range(expr.range())) {
            return true;
        }
        match expr {
            Expr::Call(call) => self.call(call),
            Expr::ListComp(comp) => self.comprehensions(&comp.generators, &[&comp.elt]),
            Expr::SetComp(comp) => self.comprehensions(&comp.generators, &[&comp.elt]),
            Expr::DictComp(comp) => self.comprehensions(&comp.generators, &[&comp.value]),
            Expr::Generator(comp) => self.comprehensions(&comp.generators, &[&comp.elt]),
            _ => {}
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        if self.tested.is_empty() {
            return;
        }
        let lists = self.lists();
        let found = self.uses.iter().filter_map(|(candidates, how)| {
            let (parameter, range) = candidates.iter().find(|(name, _)| lists.contains(name))?;
            Some((parameter.to_string(), *range, how.how(self.imports)?))
        });
        let mut reported = HashSet::default();
        for (parameter, range, how) in found {
            if !reported.insert(parameter.clone()) {
                continue; // one finding per argument: the first place its length matters
            }
            let mut message = format!(
                "list argument `{parameter}` is {how} in {}: Dynamo guards on its length, so each new number of \
                 elements recompiles (dynamic shapes do not help)",
                self.function.describe()
            );
            if defaults_to_none(self.function, &parameter) {
                // Called as the signature suggests, the argument is not a list at all.
                message.push_str(&format!("; only when `{parameter}` is passed a list (`None` by default)"));
            }
            // Medium: one compile per distinct length, bounded by how many lengths the data has.
            diagnostics.push(Diagnostic::new(&RULE, range, message).with_severity(Severity::Medium).without_fix(
                "stack or concatenate the list into one tensor before calling the compiled model, and pass the \
                 tensor (mark its first dimension dynamic if it varies)",
            ));
        }
    }
}
