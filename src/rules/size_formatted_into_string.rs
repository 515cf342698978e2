//! TCF209 size-formatted-into-string: an f-string in compiled code that formats one of an input's
//! sizes (`_assert(H % p == 0, f"Input height ({H}) should be divisible by {p}")` with `B, C, H, W
//! = x.shape`). Dynamo joins the pieces of such a string into a constant, so a size it had made
//! dynamic is pinned again, and each new size compiles another graph (with `dynamic=True` too)
//! until the recompile limit sends the frame to eager: used or not, the string is built where the
//! line runs. Measured under torch 2.15 (README): 5 graphs for 5 image sizes, against 2 without
//! it; timm's ViT with `dynamic_img_size=True` does this through its patch embedding's size check.
//!
//! Not reported: the message of an `assert` statement, an f-string in a `raise` or in a lambda
//! (built when the check fails), a lone field (`f"{H}"`, joined with nothing: formatted only when
//! read), whole shapes (`{x.shape}` stays symbolic), sizes a `==` against a number pins anyway, and
//! the arguments of print and logging calls (TCF101's guard removes them).
//!
//! Fix: a check called as a statement of its own, `check(cond, f"...")`, becomes `if not (cond):
//! check(False, f"...")`: the message is built only when the check fails, which raises as before.
//! Safe for a check known to do nothing when the condition holds (`message_checks`: torch's
//! `_assert`, the project's asserting or raising checks) with a message that only reads values;
//! Unsafe for a check tcfix cannot see into, or a message that calls something.
//!
//! Fix for a message passed to a project function whose own signature accepts it as a callable
//! (`msg: str | Callable[[], str]`, transformers' `torch_compilable_check`), positionally or by
//! keyword: `lambda: f"..."`, built only when the function calls it (`message_checks`).

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity, snippet};
use crate::fix::text::{block_indent_unit, indent_unit, wrap_in_if};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::flow::message_checks::{Slot, is_message_check, takes_callable_message};
use crate::model::flow::shapes::InputSizes;
use crate::model::tensors::tensor::Tensors;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::model::file::output_calls::writes_output;
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF209",
    name: "size-formatted-into-string",
    summary: "build messages that name a size only when they are needed",
    explanation: include_str!("../../codemods/size-formatted-into-string/README.md"),
    hazard: "An f-string in compiled code formats one of an input's sizes.",
    why: "Dynamo makes the size a constant to format it, so every new size compiles another graph, even with \
              dynamic shapes, and after the recompile limit the frame runs eagerly.",
    category: Category::Recompile,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &["f\"", "f'"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    Some(Box::new(Messages {
        function,
        sizes: function.sizes(),
        statement: None,
        built_on_failure: None,
        pinned: Vec::new(),
        found: Vec::new(),
    }))
}

struct Messages<'c, 'a> {
    function: &'c Function<'c, 'a>,
    sizes: &'c InputSizes,
    /// The statement being walked.
    statement: Option<&'a Stmt>,
    /// In the statement being walked, what is built only if a check fails: the message of an
    /// `assert`, or a `raise`.
    built_on_failure: Option<TextRange>,
    /// Sizes a check outside any branch of the function requires equal to a number
    /// (`_assert(H == self.img_size[0], ...)`, `assert W == 224`): pinned on every path, so
    /// formatting them costs nothing more.
    pinned: Vec<String>,
    found: Vec<Message<'a>>,
}

struct Message<'a> {
    string: &'a ast::ExprFString,
    /// The sizes it formats, as written (`H`, `x.shape[2]`).
    sizes: Vec<String>,
    /// The sizes its own check requires equal to a number: pinned wherever the check is.
    pinned: Vec<String>,
    /// The check whose message it is, where it is one: `_assert(cond, f"...")` as a statement
    /// (the call, and the statement).
    check: Option<(&'a ast::ExprCall, TextRange)>,
    /// The call it is an argument of, and where the call passes it (`msg=f"..."`).
    passed: Option<(&'a ast::ExprCall, Slot<'a>)>,
}

impl<'a> FunctionHooks<'a> for Messages<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        self.statement = Some(stmt);
        if let Stmt::Assert(assert) = stmt
            && !site.in_branch
        {
            let pinned = self.equated_sizes(&assert.test);
            self.pinned.extend(pinned);
        }
        self.built_on_failure = match stmt {
            Stmt::Assert(assert) => assert.msg.as_ref().map(|msg| msg.range()),
            Stmt::Raise(raise) => Some(raise.range()),
            _ => None,
        };
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        if self.built_on_failure.is_some_and(|range| range.contains_range(expr.range())) {
            return false;
        }
        match expr {
            // TCF101 reports the call; its guard keeps the message from being built.
            Expr::Call(call) if writes_output(call, &self.function.model().imports) => false,
            // A message lambda (`torch._check(cond, lambda: f"...")`) runs when the check fails.
            Expr::Lambda(_) => false,
            Expr::Call(call) => {
                self.judge_check(call, site);
                true
            }
            Expr::FString(string) => {
                let sizes = self.sizes_formatted(string);
                if !sizes.is_empty() && !self.found.iter().any(|message| message.string.range() == string.range()) {
                    self.found.push(Message { string, sizes, pinned: Vec::new(), check: None, passed: None });
                }
                false
            }
            _ => true,
        }
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        let model = function.model();
        for message in &self.found {
            let pinned = |size: &&String| self.pinned.contains(size) || message.pinned.contains(size);
            let Some(size) = message.sizes.iter().find(|size| !pinned(size)) else { continue };
            let text = &model.source.text[message.string.range()];
            let diagnostic = Diagnostic::new(
                &RULE,
                message.string.range(),
                format!(
                    "`{}` in {} formats `{size}`, a size of an input, so Dynamo makes it a constant: each new value \
                     compiles another graph (with `dynamic=True` too), and after the recompile limit the frame runs \
                     eagerly; only when `{size}` changes between calls (another image size or sequence length)",
                    snippet(text),
                    function.describe(),
                ),
            )
            .with_severity(Severity::Medium);
            diagnostics.push(with_fix(model, function.id, function.tensors(), diagnostic, message));
        }
    }
}

impl<'a> Messages<'_, 'a> {
    /// A call with an f-string argument that formats a size, seen before the walk reaches the
    /// string: the message of a check, judged with the check's condition.
    fn judge_check(&mut self, call: &'a ast::ExprCall, site: Site) {
        let positional = call.arguments.args.iter().enumerate().map(|(at, argument)| (Some(Slot::At(at)), argument));
        let keywords = (call.arguments.keywords.iter())
            .map(|keyword| (keyword.arg.as_ref().map(|name| Slot::Named(name.id.as_str())), &keyword.value));
        for (slot, argument) in positional.chain(keywords) {
            let Expr::FString(string) = argument else { continue };
            let sizes = self.sizes_formatted(string);
            if sizes.is_empty() {
                continue;
            }
            let condition = call.arguments.args.first().filter(|first| !matches!(first, Expr::FString(_)));
            // `check(False, f"...")` fails whenever it runs: its message is built only then (the
            // fix's own shape). Marked as seen, so that the walk does not report it on its own.
            if matches!(condition, Some(Expr::BooleanLiteral(flag)) if !flag.value) {
                self.found.push(Message { string, sizes: Vec::new(), pinned: Vec::new(), check: None, passed: None });
                continue;
            }
            let pinned = condition.map(|condition| self.equated_sizes(condition)).unwrap_or_default();
            if !site.in_branch {
                self.pinned.extend(pinned.iter().cloned());
            }
            let check = self.as_check(call, string);
            let passed = slot.map(|slot| (call, slot));
            self.found.push(Message { string, sizes, pinned, check, passed });
        }
    }

    /// The input sizes the fields of `string` read, as written; none for a lone field (`f"{H}"`,
    /// formatted only when read). A whole shape (`{x.shape}`) is formatted symbolically and pins
    /// nothing.
    fn sizes_formatted(&self, string: &ast::ExprFString) -> Vec<String> {
        let elements: Vec<_> = string.value.elements().collect();
        if elements.len() < 2 {
            return Vec::new();
        }
        let text = &self.function.model().source.text;
        let mut sizes: Vec<String> = Vec::new();
        let read = (elements.iter().filter_map(|element| element.as_interpolation()))
            .filter_map(|field| self.sizes.read_by(&field.expression))
            .filter(|size| !is_whole_shape(size));
        for size in read {
            let size = text[size.range()].to_string();
            if !sizes.contains(&size) {
                sizes.push(size);
            }
        }
        sizes
    }

    /// The sizes `condition` requires equal to a number: one side of a `==` whose other side is
    /// no input size (`H == 224`, `H == self.img_size[0]`; not `H == W`, which ties two sizes, nor
    /// `H % 16 == 0`, which leaves other multiples of 16 open), through `and`.
    fn equated_sizes(&self, condition: &Expr) -> Vec<String> {
        let text = &self.function.model().source.text;
        let is_size = |side: &Expr| self.sizes.read_by(side).is_some_and(|read| read.range() == side.range());
        match condition {
            Expr::BoolOp(bool_op) if bool_op.op == ast::BoolOp::And => {
                bool_op.values.iter().flat_map(|value| self.equated_sizes(value)).collect()
            }
            Expr::Compare(compare) if compare.ops.as_ref() == [CmpOp::Eq] => {
                let (left, right) = (compare.left.as_ref(), &compare.comparators[0]);
                let number = |side: &Expr| self.sizes.read_by(side).is_none();
                [(left, right), (right, left)]
                    .into_iter()
                    .filter(|(side, other)| is_size(side) && number(other))
                    .map(|(side, _)| text[side.range()].to_string())
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// `check(condition, f"...")`: two positional arguments, the message last, the call a
    /// statement of its own (the fix puts that statement under `if not (condition):`).
    fn as_check(&self, call: &'a ast::ExprCall, string: &ast::ExprFString) -> Option<(&'a ast::ExprCall, TextRange)> {
        let [condition, Expr::FString(message)] = call.arguments.args.as_ref() else { return None };
        let Some(Stmt::Expr(statement)) = self.statement else { return None };
        let is_check = message.range() == string.range()
            && self.sizes.read_by(condition).is_some()
            && call.arguments.keywords.is_empty()
            && statement.value.range() == call.range();
        is_check.then_some((call, statement.range()))
    }
}

/// `x.shape`, `x.size()`: the whole shape.
fn is_whole_shape(size: &Expr) -> bool {
    match size {
        Expr::Attribute(attr) => attr.attr.id.as_str() == "shape",
        Expr::Call(call) => call.arguments.is_empty() && matches!(call.func.as_ref(), Expr::Attribute(m) if m.attr.id.as_str() == "size"),
        _ => false,
    }
}

fn with_fix(model: &FileModel, function: usize, tensors: &Tensors, diagnostic: Diagnostic, message: &Message) -> Diagnostic {
    if let Some((call, slot)) = message.passed
        && takes_callable_message(model, &call.func, slot)
    {
        return with_lambda_fix(model, diagnostic, call, message.string);
    }
    let Some((call, statement)) = message.check else {
        return diagnostic.without_fix(
            "build the string only where it is needed (under the check that fails, or outside the compiled code), \
             or leave the size out of it",
        );
    };
    let text = &model.source.text;
    let condition = &call.arguments.args[0];
    // `if not (condition):` on a tensor would be a branch on its data (TCF104's graph break).
    if holds_tensor(condition, tensors) {
        return diagnostic.without_fix("the condition reads a tensor: build the message only when the check fails, by hand");
    }
    // A name bound in the call would be bound only when the check fails.
    if has_walrus(call) {
        return diagnostic.without_fix("the call binds a name (`:=`): move the binding out, then build the message only when the check fails");
    }
    if text[condition.range()].contains(['\n', '\r']) {
        return diagnostic.without_fix("the condition spans lines: put the call under `if not (condition):` by hand");
    }
    let unit = match model.function(function).node {
        FunctionNode::Def(def) => block_indent_unit(model.source, def.start(), def.body[0].start()),
        FunctionNode::Lambda(_) => indent_unit(model.source),
    };
    let guard = format!("not ({})", &text[condition.range()]);
    let Some(mut edits) = wrap_in_if(model.source, statement, &guard, &unit) else {
        return diagnostic.without_fix("the call shares its line with other code: put it on a line of its own");
    };
    edits.push(Edit::replace(condition.range(), "False"));
    let check = &text[call.func.range()];
    let title = format!("Build the message only when the check fails: `if not (…): {check}(False, …)`");
    let risk = match (is_message_check(model, &call.func), calls_in(text, message.string)) {
        (true, None) => None,
        (false, _) => Some(format!("tcfix does not know `{check}` to do nothing when the condition holds")),
        (true, Some(called)) => Some(format!("`{called}` in the message now runs only when the check fails")),
    };
    let fix = match risk {
        None => Fix::new(title, Safety::Safe, edits),
        Some(risk) => Fix::new(format!("{title} (unsafe: {risk})"), Safety::Unsafe, edits),
    };
    diagnostic.with_fix(fix)
}

/// `check(cond, lambda: f"...")` for a callee whose signature accepts the message as a callable:
/// the string is built only when the callee calls it, and under tracing transformers'
/// `torch_compilable_check` never does. The condition and the call stay as they are, so this
/// works where the other fix cannot (a tensor condition, a keyword message, a call inside an
/// expression). Safe when the message only reads values; a field that calls something now runs
/// only when the callee calls the lambda.
fn with_lambda_fix(model: &FileModel, diagnostic: Diagnostic, call: &ast::ExprCall, string: &ast::ExprFString) -> Diagnostic {
    let text = &model.source.text;
    if let Some(why) = cannot_defer(string) {
        return diagnostic.without_fix(why);
    }
    let check = snippet(&text[call.func.range()]);
    let title = format!("Pass the message as a lambda (`{check}` takes one): it is built only when the check fails");
    let edits = vec![Edit::insert(string.start(), "lambda: ")];
    let fix = match calls_in(text, string) {
        None => Fix::new(title, Safety::Safe, edits),
        Some(called) => Fix::new(
            format!("{title} (unsafe: `{called}` in the message now runs only when the check fails)"),
            Safety::Unsafe,
            edits,
        ),
    };
    diagnostic.with_fix(fix)
}

/// Why the message's fields cannot move into a lambda, if they cannot: a name bound there (`:=`)
/// would be bound in the lambda; `await` and `yield` are not allowed in one; `super()` without
/// arguments needs the method's frame.
fn cannot_defer(string: &ast::ExprFString) -> Option<&'static str> {
    let mut finder = Finder {
        found: None,
        wanted: |expr: &Expr| match expr {
            Expr::Named(_) | Expr::Await(_) | Expr::Yield(_) | Expr::YieldFrom(_) => true,
            Expr::Call(call) => call.arguments.is_empty() && matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "super"),
            _ => false,
        },
    };
    for field in string.value.elements().filter_map(|element| element.as_interpolation()) {
        finder.visit_expr(&field.expression);
    }
    finder.found.map(|_| {
        "the message binds a name, awaits, yields or calls `super()`: build it only when the check fails, by hand"
    })
}

/// Whether the condition, or a part of it joined by `and`/`or`/`not` or compared, is a tensor.
fn holds_tensor(condition: &Expr, tensors: &Tensors) -> bool {
    tensors.is_tensor(condition)
        || match condition {
            Expr::BoolOp(bool_op) => bool_op.values.iter().any(|value| holds_tensor(value, tensors)),
            Expr::UnaryOp(unary) => holds_tensor(&unary.operand, tensors),
            Expr::Compare(compare) => {
                tensors.is_tensor(&compare.left) || compare.comparators.iter().any(|side| tensors.is_tensor(side))
            }
            _ => false,
        }
}

fn has_walrus(call: &ast::ExprCall) -> bool {
    let mut finder = Finder { found: None, wanted: |expr: &Expr| expr.is_named_expr() };
    finder.visit_expr(&call.func);
    for argument in call.arguments.args.iter().chain(call.arguments.keywords.iter().map(|k| &k.value)) {
        finder.visit_expr(argument);
    }
    finder.found.is_some()
}

/// The first call in the message's fields other than reading a size or a length (`x.size(2)`,
/// `len(xs)`), as written: one whose effects the fix would make conditional.
fn calls_in(text: &str, string: &ast::ExprFString) -> Option<String> {
    let mut finder = Finder { found: None, wanted: |expr: &Expr| matches!(expr, Expr::Call(call) if !reads_only(call)) };
    for field in string.value.elements().filter_map(|element| element.as_interpolation()) {
        finder.visit_expr(&field.expression);
    }
    finder.found.map(|call| snippet(&text[call]))
}

fn reads_only(call: &ast::ExprCall) -> bool {
    match call.func.as_ref() {
        Expr::Attribute(method) => matches!(method.attr.id.as_str(), "size" | "dim" | "numel" | "stride"),
        Expr::Name(name) => matches!(name.id.as_str(), "len" | "int" | "str" | "min" | "max" | "abs" | "round" | "tuple" | "list"),
        _ => false,
    }
}

/// Where the first expression (in source order) that `wanted` picks is.
struct Finder<F: Fn(&Expr) -> bool> {
    found: Option<TextRange>,
    wanted: F,
}

// A visitor of its own: a search of one call or f-string field, asked when the call is judged.
impl<'a, F: Fn(&Expr) -> bool> Visitor<'a> for Finder<F> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.found.is_some() {
            return;
        }
        if (self.wanted)(expr) {
            self.found = Some(expr.range());
            return;
        }
        walk_expr(self, expr);
    }
}
