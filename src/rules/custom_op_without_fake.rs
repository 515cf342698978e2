//! TCF401 custom-op-without-fake: a function decorated `@torch.library.custom_op("ns::name", ...)`
//! that returns tensors, with no fake (meta) implementation registered in the same file:
//! `@name.register_fake`, `name.register_fake(...)`, `torch.library.register_fake("ns::name")` or
//! the older `impl_abstract`. Under torch.compile Dynamo runs every op on fake tensors first, and
//! without a fake implementation it stops with `TorchRuntimeError ... There was no fake impl
//! registered` (measured under torch 2.15, for the eager backend as for inductor).
//! The check is per file: a fake registered in another file is not seen (README).
//!
//! Measured under torch 2.15 (with and without `fullgraph`, eager and aot_eager backends): an op
//! tagged `torch.Tag.inplace` that returns its mutated input compiles with no fake (torch derives
//! one), so it is not reported; an op with `mutates_args` that returns nothing needs none either;
//! one with `mutates_args=()` that returns nothing does. An untagged op that returns one of the
//! inputs it mutates fails at its first call, eager or compiled, fake or not ("The output of this
//! custom operator (1) must not also be an input"): reported as such, with the tag as the remedy.

use std::cell::OnceCell;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::text::{indentation, line_ending, torch_name};
use crate::fix::{Edit, Fix, Safety};
use crate::model::file::module::is_docstring;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::flow::calls::returned_values;
use crate::model::file::imports::{dotted_name, last_segment};
use crate::rules::check::{Checker, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF401",
    name: "custom-op-without-fake",
    summary: "register a fake implementation for each custom op",
    explanation: include_str!("../../codemods/custom-op-without-fake/README.md"),
    hazard: "A `torch.library.custom_op` that returns tensors has no fake implementation registered.",
    why: "torch.compile traces every op on fake tensors first, and without a fake implementation it stops with a \
              TorchRuntimeError instead of compiling.",
    category: Category::Error,
    fixes: &[Safety::DisplayOnly],
    mentions: &["custom_op"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::File(check);

/// Unary torch functions whose output has the input's shape, dtype and device.
const ELEMENTWISE: [&str; 22] = [
    "abs",
    "neg",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "exp",
    "expm1",
    "log",
    "log1p",
    "sqrt",
    "rsqrt",
    "relu",
    "gelu",
    "silu",
    "erf",
    "floor",
    "ceil",
    "round",
    "clone",
    "contiguous",
];

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    // Found on the first op that needs one: most files that say "custom_op" define none.
    let registered = OnceCell::new();
    let mut diagnostics = Vec::new();
    for (id, function) in model.functions.iter().enumerate() {
        let FunctionNode::Def(def) = function.node else { continue };
        let Some(op) = custom_op(model, def) else { continue };
        let needs_no_fake = op.tagged_inplace || (returns_nothing(def) && op.mutates != Mutates::Nothing);
        if needs_no_fake || registered.get_or_init(|| FakeRegistrations::of(model)).covers(&def.name.id, &op.name) {
            continue;
        }
        let op_name = &op.name;
        if let Some(input) = returned_mutated_input(model, id, &op.mutates) {
            let message = format!(
                "custom op `{op_name}` (`{}`) returns `{input}`, which it mutates: torch refuses an output that is \
                 also an input at the op's first call, eager or compiled, and a fake implementation does not help",
                def.name.id
            );
            diagnostics.push(
                Diagnostic::new(&RULE, def.name.range(), message).with_severity(Severity::Critical).without_fix(
                    "tag it `tags=torch.Tag.inplace` (its first argument must be the one it mutates and returns; \
                     torch then derives its fake), or return nothing (`-> None`) or a new tensor",
                ),
            );
            continue;
        }
        let op = op_name;
        let message = format!(
            "custom op `{op}` (`{}`) has no fake implementation in this file: torch.compile fails on it with `TorchRuntimeError ... no fake impl registered`",
            def.name.id
        );
        let diagnostic = Diagnostic::new(&RULE, def.name.range(), message).with_severity(Severity::Critical);
        diagnostics.push(match mirrored_input(def) {
            Some(input) => diagnostic.with_fix(stub(model, def, &input)),
            None if returns_nothing(def) => diagnostic.without_fix(format!(
                "it returns nothing and declares no mutation: add `@{}.register_fake` that returns None, or list \
                 what it mutates in `mutates_args`",
                def.name.id
            )),
            None => diagnostic.without_fix(format!(
                "the output's shape is not a plain copy of one input's: add `@{}.register_fake` returning empty tensors of the output's shape",
                def.name.id
            )),
        });
    }
    diagnostics
}

/// What `@torch.library.custom_op("ns::name", mutates_args=..., tags=...)` says of an op.
struct CustomOp {
    /// `"ns::name"`, or the function's name when it is not a literal.
    name: String,
    mutates: Mutates,
    /// `tags` holds `torch.Tag.inplace`.
    tagged_inplace: bool,
}

/// The inputs an op says it mutates.
#[derive(PartialEq, Eq)]
enum Mutates {
    /// `mutates_args=()`.
    Nothing,
    /// A literal list of parameter names.
    These(Vec<String>),
    /// `"unknown"`, or not a literal.
    Unknown,
}

/// The op `def` defines when it is decorated `@torch.library.custom_op(...)`.
fn custom_op(model: &FileModel, def: &ast::StmtFunctionDef) -> Option<CustomOp> {
    def.decorator_list.iter().find_map(|decorator| {
        let Expr::Call(call) = &decorator.expression else { return None };
        let name = model.imports.qualified_name(&call.func)?;
        if name != "torch.library.custom_op" {
            return None;
        }
        let name = match call.arguments.args.first().or_else(|| call.arguments.find_keyword("name").map(|k| &k.value)) {
            Some(Expr::StringLiteral(literal)) => literal.value.to_str().to_string(),
            _ => def.name.id.to_string(),
        };
        let mutates = match call.arguments.find_keyword("mutates_args").map(|k| &k.value) {
            Some(Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })) => {
                let names: Option<Vec<String>> = elts
                    .iter()
                    .map(|e| match e {
                        Expr::StringLiteral(literal) => Some(literal.value.to_str().to_string()),
                        _ => None,
                    })
                    .collect();
                match names {
                    Some(names) if names.is_empty() => Mutates::Nothing,
                    Some(names) => Mutates::These(names),
                    None => Mutates::Unknown,
                }
            }
            _ => Mutates::Unknown,
        };
        let tagged_inplace =
            call.arguments.find_keyword("tags").is_some_and(|tags| names_inplace_tag(model, &tags.value));
        Some(CustomOp { name, mutates, tagged_inplace })
    })
}

/// `torch.Tag.inplace`, alone or in a tuple or list.
fn names_inplace_tag(model: &FileModel, tags: &Expr) -> bool {
    match tags {
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            elts.iter().any(|tag| names_inplace_tag(model, tag))
        }
        _ => model.imports.qualified_name(tags).as_deref() == Some("torch.Tag.inplace"),
    }
}

/// The mutated input the op's body returns as is (`x.add_(1); return x`), if any: read off what the
/// model says the function returns.
fn returned_mutated_input(model: &FileModel, function: usize, mutates: &Mutates) -> Option<String> {
    let Mutates::These(mutated) = mutates else { return None };
    returned_values(model, function)
        .into_iter()
        .flatten()
        .flat_map(|value| match value {
            Expr::Tuple(tuple) => tuple.elts.iter().collect(),
            value => vec![value],
        })
        .find_map(|value| match value {
            Expr::Name(name) if mutated.iter().any(|m| m == name.id.as_str()) => Some(name.id.to_string()),
            _ => None,
        })
}

/// `-> None`: an op that only mutates its inputs needs no fake output (but one that mutates nothing
/// still needs a fake: measured).
fn returns_nothing(def: &ast::StmtFunctionDef) -> bool {
    matches!(def.returns.as_deref(), Some(Expr::NoneLiteral(_)))
}

/// The one tensor parameter whose shape the output provably has: one parameter annotated
/// `torch.Tensor`, a `-> torch.Tensor` annotation, and a body that is `return` of `a.clone()`,
/// `a * 2`, `torch.sin(a)`, `a.sin()` and the like.
fn mirrored_input(def: &ast::StmtFunctionDef) -> Option<String> {
    let is_tensor = |annotation: Option<&Expr>| {
        annotation.and_then(dotted_name).is_some_and(|name| name == "torch.Tensor" || name == "Tensor")
    };
    if !is_tensor(def.returns.as_deref()) {
        return None;
    }
    let tensors: Vec<&ast::ParameterWithDefault> =
        def.parameters.iter_non_variadic_params().filter(|p| is_tensor(p.parameter.annotation.as_deref())).collect();
    let [input] = tensors.as_slice() else { return None };
    let input = input.parameter.name.id.as_str();
    let [.., Stmt::Return(ast::StmtReturn { value: Some(value), .. })] = def.body.as_slice() else { return None };
    let only_return = def.body.iter().filter(|s| !is_docstring(s)).count() == 1;
    (only_return && mirrors(value, input)).then(|| input.to_string())
}

fn mirrors(expr: &Expr, input: &str) -> bool {
    let is_input = |e: &Expr| matches!(e, Expr::Name(name) if name.id.as_str() == input);
    let is_number = |e: &Expr| matches!(e, Expr::NumberLiteral(_));
    match expr {
        Expr::BinOp(op) => {
            matches!(op.op, ast::Operator::Add | ast::Operator::Sub | ast::Operator::Mult | ast::Operator::Div)
                && ((is_input(&op.left) && is_number(&op.right)) || (is_number(&op.left) && is_input(&op.right)))
        }
        Expr::UnaryOp(op) => op.op == ast::UnaryOp::USub && is_input(&op.operand),
        Expr::Call(call) if call.arguments.keywords.is_empty() => {
            let Some(function) = last_segment(&call.func) else { return false };
            if !ELEMENTWISE.contains(&function) {
                return false;
            }
            match call.func.as_ref() {
                // `a.sin()`
                Expr::Attribute(attr) if is_input(&attr.value) => call.arguments.args.is_empty(),
                // `torch.sin(a)`, `F.relu(a)`
                _ => matches!(call.arguments.args.as_ref(), [only] if is_input(only)),
            }
        }
        _ => false,
    }
}

/// The fake implementation, added after the op's def (DisplayOnly: shown, never written).
fn stub(model: &FileModel, def: &ast::StmtFunctionDef, input: &str) -> Fix {
    let text = &model.source.text;
    let newline = line_ending(text, def.start());
    let indent = indentation(text, def.start());
    let unit = crate::fix::text::indent_unit(model.source);
    let params: Vec<String> =
        def.parameters.iter_non_variadic_params().map(|p| p.parameter.name.id.to_string()).collect();
    let code = format!(
        "{newline}{newline}{indent}@{name}.register_fake{newline}{indent}def _{name}_fake({params}):{newline}{indent}{unit}return {torch}.empty_like({input})",
        torch = torch_name(model).0,
        name = def.name.id,
        params = params.join(", ")
    );
    let at = ruff_source_file::LineRanges::line_end(text.as_str(), def.end());
    Fix::new(
        format!("Register a fake implementation: `torch.empty_like({input})` (check it matches the op's output)"),
        Safety::DisplayOnly,
        vec![Edit::insert(at, code)],
    )
}

/// The fake registrations the file makes, by function name and by op name. A walk of its own: the
/// attribute (`op.register_fake`) may sit anywhere, decorator, call or assignment, and the model
/// records calls, not attribute reads; it runs only on a file defining an op that needs a fake.
#[derive(Default)]
struct FakeRegistrations {
    functions: Vec<String>,
    ops: Vec<String>,
}

impl FakeRegistrations {
    fn of(model: &FileModel) -> Self {
        let mut finder = Self::default();
        finder.visit_body(model.source.parsed.suite());
        finder
    }

    fn covers(&self, function: &str, op: &str) -> bool {
        self.functions.iter().any(|f| f == function) || self.ops.iter().any(|o| o == op)
    }
}

impl<'a> Visitor<'a> for FakeRegistrations {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            // `name.register_fake` (decorator or call), `name.register_fake(...)`
            Expr::Attribute(attr) if matches!(attr.attr.id.as_str(), "register_fake" | "impl_abstract") => {
                if let Expr::Name(name) = attr.value.as_ref() {
                    self.functions.push(name.id.to_string());
                }
            }
            // `torch.library.register_fake("ns::name")`, `impl_abstract("ns::name")`
            Expr::Call(call) if matches!(last_segment(&call.func), Some("register_fake" | "impl_abstract")) => {
                if let Some(Expr::StringLiteral(literal)) = call.arguments.args.first() {
                    self.ops.push(literal.value.to_str().to_string());
                }
            }
            _ => {}
        }
        walk_expr(self, expr);
    }
}
