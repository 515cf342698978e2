//! TCF209 size-formatted-into-string: an f-string in compiled code that formats one of an input's
//! sizes and is used: the message of a check that builds it (`_assert(H % p == 0, f"Input height
//! ({H}) should be divisible by {p}")` with `B, C, H, W = x.shape`), a key, a name stored on the
//! module. Dynamo turns the size into text only by making it a constant, so a size it had made
//! dynamic is pinned again, and each new size compiles another graph (with `dynamic=True` too)
//! until the recompile limit sends the frame to eager. Measured under torch 2.15 (README): 5 graphs
//! for 5 image sizes, against 2 without the message; timm's ViT with `dynamic_img_size=True` does
//! this through its patch embedding's size check.
//!
//! Dynamo builds an f-string only when something reads it, so only uses that read it are
//! reported: a check known to build its message (`message_checks`: `torch._assert`, the project's
//! asserting or raising checks), a subscript, an attribute store. Not: a message of an `assert`
//! statement, a `raise` or a message lambda (built when the check fails), a check tcfix cannot see
//! into, whole shapes (`{x.shape}` stays symbolic), sizes a `==` check pins anyway, and the
//! arguments of print and logging calls (TCF101's guard removes them).
//!
//! Fix (Safe): a check called as a statement of its own, `check(cond, f"...")`, becomes `if not
//! (cond): check(False, f"...")`: the message is built only when the check fails, which raises
//! the same error as before.

use ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity, snippet};
use crate::fix::text::{block_indent_unit, indent_unit, wrap_in_if};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::flow::message_checks::is_message_check;
use crate::model::flow::shapes::InputSizes;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::print_in_compiled_code::writes_output;
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
    fixes: &[Safety::Safe],
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
    /// The statement being walked, when what it formats is built only if a check fails: the
    /// message of an `assert`, or a `raise`.
    built_on_failure: Option<TextRange>,
    /// Sizes a check outside any branch of the function requires equal to something
    /// (`_assert(H == self.img_size[0], ...)`, `assert W == 224`): pinned on every path, so
    /// formatting them costs nothing more.
    pinned: Vec<String>,
    found: Vec<Message<'a>>,
}

struct Message<'a> {
    string: &'a ast::ExprFString,
    /// The sizes it formats, as written (`H`, `x.shape[2]`).
    sizes: Vec<String>,
    /// The sizes its own check requires equal to something: pinned wherever the check is.
    pinned: Vec<String>,
    /// The check whose message it is, where it is one: `_assert(cond, f"...")` as a statement
    /// (the call, and the statement).
    check: Option<(&'a ast::ExprCall, TextRange)>,
}

impl<'a> FunctionHooks<'a> for Messages<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        self.statement = Some(stmt);
        // `self.name = f"..."`: the module keeps it.
        if let Stmt::Assign(assign) = stmt
            && let Expr::FString(string) = assign.value.as_ref()
            && assign.targets.iter().any(|target| matches!(target, Expr::Attribute(_)))
        {
            self.judge_string(string);
        }
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
                self.judge_call_messages(call, site);
                true
            }
            // `cache[f"{H}x{W}"]`: a key is read.
            Expr::Subscript(subscript) => {
                if let Expr::FString(string) = subscript.slice.as_ref() {
                    self.judge_string(string);
                }
                true
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
            diagnostics.push(with_fix(model, function.id, diagnostic, message));
        }
    }
}

impl<'a> Messages<'_, 'a> {
    /// An f-string read where it is: reported when it formats a size.
    fn judge_string(&mut self, string: &'a ast::ExprFString) {
        let sizes = self.sizes_formatted(string);
        if !sizes.is_empty() {
            self.found.push(Message { string, sizes, pinned: Vec::new(), check: None });
        }
    }

    /// The f-string arguments of a check that builds its message.
    fn judge_call_messages(&mut self, call: &'a ast::ExprCall, site: Site) {
        let arguments = call.arguments.args.iter().chain(call.arguments.keywords.iter().map(|k| &k.value));
        for argument in arguments {
            let Expr::FString(string) = argument else { continue };
            let sizes = self.sizes_formatted(string);
            if sizes.is_empty() {
                continue;
            }
            if !is_message_check(self.function.model(), &call.func) {
                return;
            }
            let condition = call.arguments.args.first().filter(|first| !matches!(first, Expr::FString(_)));
            // `check(False, f"...")` fails whenever it runs: its message is built only then (the
            // fix's own shape).
            if matches!(condition, Some(Expr::BooleanLiteral(flag)) if !flag.value) {
                continue;
            }
            let pinned = condition.map(|condition| self.equated_sizes(condition)).unwrap_or_default();
            if !site.in_branch {
                self.pinned.extend(pinned.iter().cloned());
            }
            let check = self.as_check(call, string);
            self.found.push(Message { string, sizes, pinned, check });
        }
    }

    /// The input sizes the interpolations of `string` read, as written. A whole shape
    /// (`{x.shape}`) is formatted symbolically and pins nothing.
    fn sizes_formatted(&self, string: &ast::ExprFString) -> Vec<String> {
        let text = &self.function.model().source.text;
        let mut sizes: Vec<String> = (string.value.elements().filter_map(|element| element.as_interpolation()))
            .filter_map(|field| self.sizes.read_by(&field.expression))
            .filter(|size| !is_whole_shape(size))
            .map(|size| text[size.range()].to_string())
            .collect();
        sizes.dedup();
        sizes
    }

    /// The sizes `condition` requires equal to something: a whole side of a `==` (`H == 224`;
    /// not `H % 16 == 0`, which leaves other multiples of 16 open), through `and`.
    fn equated_sizes(&self, condition: &Expr) -> Vec<String> {
        let text = &self.function.model().source.text;
        match condition {
            Expr::BoolOp(bool_op) if bool_op.op == ast::BoolOp::And => {
                bool_op.values.iter().flat_map(|value| self.equated_sizes(value)).collect()
            }
            Expr::Compare(compare) if compare.ops.iter().all(|op| *op == CmpOp::Eq) => {
                (std::iter::once(compare.left.as_ref()).chain(compare.comparators.iter()))
                    .filter(|side| self.sizes.read_by(side).is_some_and(|read| read.range() == side.range()))
                    .map(|side| text[side.range()].to_string())
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
        // `if not (condition):` on a tensor would be a branch on its data (TCF104's graph break):
        // only a condition on sizes, a Python bool, is moved.
        let is_check = message.range() == string.range()
            && self.sizes.read_by(condition).is_some()
            && !self.function.tensors().is_tensor(condition)
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

fn with_fix(model: &FileModel, function: usize, diagnostic: Diagnostic, message: &Message) -> Diagnostic {
    let Some((call, statement)) = message.check else {
        return diagnostic.without_fix(
            "build the string only where it is needed (under the check that fails, or outside the compiled code), \
             or leave the size out of it",
        );
    };
    let text = &model.source.text;
    let condition = &call.arguments.args[0];
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
    diagnostic.with_fix(Fix::new(title, Safety::Safe, edits))
}
