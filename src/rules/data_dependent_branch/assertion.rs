//! `if <tensor test>: raise E("message")` -> `torch._assert_async(torch.logical_not(<test>), "message")`.
//!
//! Measured under torch 2.15 (counting backend): the `if` splits the forward into 2 graphs; the
//! assertion traces into one graph, with no break, and a failing check raises RuntimeError with the
//! message both eagerly and compiled. `torch._check(t)` rejects a tensor (TypeError: it wants a
//! bool), and `torch._check_tensor_all` still breaks without `capture_scalar_outputs`.
//! `if t:` on a tensor already needs a one-element tensor eagerly, which is all `_assert_async`
//! needs; `logical_not` is `not bool(t)` for every dtype (NaN counts as true in both).

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use super::rewrite::{METADATA, Rewrite, Test, strip_not};
use crate::diagnostic::snippet;
use crate::fix::text::torch_name;
use crate::fix::torch_api::TorchVersion;
use crate::fix::{Fix, Safety};
use crate::model::file::FileModel;
use crate::model::file::imports::last_segment;
use crate::model::tensors::tensor::Tensors;
/// The fix for an `if` whose body is only `raise`, or why there is none.
pub(super) fn assert_fix(
    model: &FileModel,
    tensors: &Tensors,
    target: TorchVersion,
    if_stmt: &ast::StmtIf,
    raise: &ast::StmtRaise,
) -> Result<Fix, String> {
    if !if_stmt.elif_else_clauses.is_empty() {
        return Err("the `if` that raises has `elif`/`else` branches: rewrite it by hand (`torch._assert_async` for \
                    the raise)"
            .into());
    }
    // Measured under 2.15 only; 2.3 is the default target.
    if target < TorchVersion(2, 3) {
        return Err("`torch._assert_async(cond, message)` is not checked for torch older than 2.3".into());
    }
    let (exception, message) = exception(raise)?;
    let test = Test::split(model, tensors, &if_stmt.test)?;
    let (tensor_test, negated) = strip_not(test.tensor);
    let chained = matches!(tensor_test, Expr::Compare(compare) if compare.ops.len() > 1);
    if !tensors.is_tensor(tensor_test) || chained {
        return Err("the test combines tensor values with Python `and`/`or`/`not` or a chained comparison, which \
                    still read them: write it with `&`, `|`, `~` on tensors first"
            .into());
    }
    let placeholders = match message {
        Some(message) => check_message(model, tensors, message)?,
        None => Vec::new(),
    };
    let rewrite = Rewrite::new(model, if_stmt, &test)?;
    let (torch, import) = torch_name(model);
    let tensor_text = rewrite.text(tensor_test.range());
    let condition = if negated { tensor_text } else { format!("{torch}.logical_not({tensor_text})") };
    // Without a message the failure would read "Expected Tensor with single nonzero value": name
    // the exception instead.
    let mut message = message.map_or_else(|| format!("\"{exception}\""), |message| rewrite.text(message.range()));
    for placeholder in &placeholders {
        message = message.replace(&placeholder.field, &placeholder.text);
    }
    // An f-string left with no field is a plain string (ruff's F541 would say so).
    if !placeholders.is_empty() && !message.contains(['{', '}']) && message.starts_with(['f', 'F']) {
        message.remove(0);
    }
    // A message over several lines goes on lines of its own, one level in, as it was in the raise.
    let assertion = if message.contains(['\n', '\r']) {
        let (newline, inner) = (rewrite.newline(), format!("{}{}", rewrite.indent, rewrite.unit));
        format!("{torch}._assert_async({newline}{inner}{condition},{newline}{inner}{message},{newline}{})", rewrite.indent)
    } else {
        format!("{torch}._assert_async({condition}, {message})")
    };
    let mut edits = rewrite.edits(&[assertion]);
    edits.extend(import);
    let other_type = if exception == "RuntimeError" { String::new() } else { format!("raises RuntimeError, not {exception}, and ") };
    let unshown = match placeholders.as_slice() {
        [] => String::new(),
        fields => format!(
            "; the message shows {} in place of the value, since formatting a tensor would break the graph again",
            fields.iter().map(|p| format!("`{}`", p.text)).collect::<Vec<_>>().join(", ")
        ),
    };
    let title = format!(
        "Check with `{torch}._assert_async` instead of raising (unsafe: a failure {other_type}on CUDA the check is \
         asynchronous: it fails later as a device-side assert that leaves the CUDA context unusable{unshown})"
    );
    Ok(Fix::new(title, Safety::Unsafe, edits))
}

/// `raise E("message")`, `raise E()`, `raise E`: the exception's name and its message.
fn exception(raise: &ast::StmtRaise) -> Result<(&str, Option<&Expr>), &'static str> {
    if raise.cause.is_some() {
        return Err("`raise ... from ...` chains an exception `_assert_async` cannot carry: rewrite it by hand");
    }
    let Some(exc) = raise.exc.as_deref() else {
        return Err("a bare `raise` re-raises the exception being handled: rewrite it by hand");
    };
    const ONLY: &str = "rewrite it by hand: tcfix rewrites `raise E(\"message\")` with one message argument only";
    match exc {
        Expr::Name(_) | Expr::Attribute(_) => Ok((last_segment(exc).ok_or(ONLY)?, None)),
        Expr::Call(call) if call.arguments.keywords.is_empty() => {
            let name = last_segment(&call.func).ok_or(ONLY)?;
            match call.arguments.args.as_ref() {
                [] => Ok((name, None)),
                [message] => Ok((name, Some(message))),
                _ => Err(ONLY),
            }
        }
        _ => Err(ONLY),
    }
}

/// A replacement field of the message that reads tensor data, and what the fix writes instead.
struct Placeholder {
    /// `{n_tokens.item()}`, as written.
    field: String,
    /// `<n_tokens.item()>`: the value's name, since its value cannot be shown.
    text: String,
}

/// The message must be a string literal or an f-string of Python values: Dynamo folds those while
/// tracing (measured: `f"... {self.config.vocab_size}"`, `{x.shape[0]}`, `{x.dtype}`, format specs),
/// but formatting a tensor (`{labels}`, `{n.item()}`) breaks the graph: such a field is written as
/// a placeholder naming the value (`<n.item()>`). The message is now built on every call rather
/// than only on failure, so it calls nothing but effect-free builtins.
fn check_message(model: &FileModel, tensors: &Tensors, message: &Expr) -> Result<Vec<Placeholder>, String> {
    let text = &model.source.text;
    let fields = match message {
        Expr::StringLiteral(_) => return Ok(Vec::new()),
        Expr::FString(fstring) => fstring.value.elements().filter_map(|element| match element {
            ast::InterpolatedStringElement::Interpolation(field) => Some(field),
            ast::InterpolatedStringElement::Literal(_) => None,
        }),
        _ => {
            return Err("write the message as a string literal or an f-string, or rewrite it by hand: tcfix does not \
                        rewrite `.format()`, `%` or a variable"
                .into());
        }
    };
    let mut placeholders = Vec::new();
    for field in fields {
        match first_read(tensors, &field.expression) {
            Some(Read::Tensor) => placeholders.push(placeholder(text, field)?),
            Some(Read::Call(range)) => {
                return Err(format!(
                    "rewrite it by hand: the message calls `{}`, which would then run on every call, not only \
                     on failure",
                    snippet(&text[range])
                ));
            }
            None => {}
        }
    }
    Ok(placeholders)
}

/// The placeholder for a field that formats tensor data, when its text can stand in the string
/// as it is (no quote, brace, backslash or line break).
fn placeholder(text: &str, field: &ast::InterpolatedElement) -> Result<Placeholder, String> {
    let expression = text[field.expression.range()].trim();
    if expression.contains(['{', '}', '\'', '"', '\\', '\n', '\r']) || field.debug_text.is_some() {
        return Err(format!(
            "the message formats tensor data (`{}`), which breaks the graph even under `_assert_async`: format only \
             Python values (shapes, config numbers), then apply the fix",
            snippet(expression)
        ));
    }
    Ok(Placeholder { field: text[field.range()].to_string(), text: format!("<{expression}>") })
}

/// Builtins without effects that Dynamo folds on Python values (measured: `tuple(x.shape)`,
/// `str(x.dtype)`, `int(x.shape[0])`, `max(x.shape)`, `len(t)` in a message: one graph).
const PURE_BUILTINS: &[&str] = &["tuple", "list", "str", "repr", "int", "float", "bool", "min", "max", "abs", "round"];

enum Read {
    Tensor,
    Call(TextRange),
}

/// The first expression in `expr` that reads tensor data (`labels`, `n.item()`) or calls something
/// (`self.describe()`), tensor metadata (`x.shape`, `x.size(0)`, `len(t)`) and effect-free builtins
/// (`tuple(x.shape)`) aside.
fn first_read(tensors: &Tensors, expr: &Expr) -> Option<Read> {
    struct Reads<'t, 'm, 'a> {
        tensors: &'t Tensors<'m, 'a>,
        found: Option<Read>,
    }
    // A visitor of its own: a search of one assertion's message, asked when the assertion is judged.
    impl<'e> Visitor<'e> for Reads<'_, '_, '_> {
        fn visit_expr(&mut self, expr: &'e Expr) {
            if self.found.is_some() {
                return;
            }
            let metadata = |attr: &ast::ExprAttribute| METADATA.contains(&attr.attr.id.as_str());
            match expr {
                Expr::Attribute(attr) if metadata(attr) => {}
                _ if self.tensors.is_tensor(expr) => self.found = Some(Read::Tensor),
                Expr::Call(call) => match call.func.as_ref() {
                    Expr::Attribute(attr) if metadata(attr) => walk_expr(self, expr),
                    // `len(t)` is `t.shape[0]`.
                    Expr::Name(name) if name.id.as_str() == "len" && !self.tensors.is_local("len") => {}
                    Expr::Name(name) if PURE_BUILTINS.contains(&name.id.as_str()) && !self.tensors.is_local(&name.id) => {
                        walk_expr(self, expr)
                    }
                    Expr::Attribute(attr) if self.tensors.is_tensor(&attr.value) => {
                        self.found = Some(Read::Tensor)
                    }
                    _ => self.found = Some(Read::Call(expr.range())),
                },
                _ => walk_expr(self, expr),
            }
        }
    }
    let mut reads = Reads { tensors, found: None };
    reads.visit_expr(expr);
    reads.found
}
