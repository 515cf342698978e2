//! Checks that do nothing when their condition holds and raise with their message when it fails:
//! `torch._assert(condition, message)`, and functions of the project that assert or raise with
//! their message parameter (`def _assert(condition, message): assert condition, message`, timm's
//! fallback). Calling such a check only when the condition fails changes nothing, which makes
//! TCF209's fix (`if not (cond): check(False, f"...")`) Safe. Other files' checks are known
//! through the project index, re-exports included.

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::module::is_docstring;
use crate::model::file::{FileModel, FunctionNode};

/// torch's own check: `assert condition, message`.
pub const TORCH_ASSERT: &str = "torch._assert";

/// The file's module-level names that are such checks: names bound to
/// `torch._assert` (`from torch import _assert`) and the file's own such functions.
pub fn own_message_checks(model: &FileModel) -> Vec<String> {
    let imported =
        model.imports.bindings().filter(|(_, full)| *full == TORCH_ASSERT).map(|(local, _)| local.to_string());
    let defined =
        model.functions.iter().filter(|function| function.class.is_none() && function.parent.is_none()).filter_map(
            |function| match function.node {
                FunctionNode::Def(def) if builds_message(def) => Some(def.name.id.to_string()),
                _ => None,
            },
        );
    let mut names: Vec<String> = imported.chain(defined).collect();
    names.sort();
    names.dedup();
    names
}

/// Whether `func`, called, is such a check: `torch._assert`, or one of the project's. The
/// question is recorded on the model (once per name): the answer depends on other files.
pub fn is_message_check(model: &FileModel, func: &Expr) -> bool {
    let qualified = match func {
        // A name the file does not import is its own (or a builtin, which is no check).
        Expr::Name(name) if model.imports.get(name.id.as_str()).is_none() => {
            format!("{}.{}", model.module_name, name.id)
        }
        _ => match model.imports.qualified_name(func) {
            Some(qualified) => qualified,
            None => return false,
        },
    };
    if qualified == TORCH_ASSERT {
        return true;
    }
    let answer = model.message_checks.contains(&qualified);
    let mut asked = model.message_checks_asked.borrow_mut();
    if !asked.contains(&qualified) {
        asked.push(qualified);
    }
    answer
}

/// Whether `def` checks its first parameter and uses its second as the message, and does nothing
/// else: `assert condition, message`, or `if not condition: raise Error(message)` (a docstring
/// aside).
pub fn builds_message(def: &ast::StmtFunctionDef) -> bool {
    let parameters: Vec<&str> =
        def.parameters.iter_non_variadic_params().map(|p| p.parameter.name.id.as_str()).collect();
    let [condition, message, ..] = parameters.as_slice() else { return false };
    let is = |expr: &Expr, name: &str| matches!(expr, Expr::Name(n) if n.id.as_str() == name);
    let body: Vec<&Stmt> = def.body.iter().filter(|stmt| !is_docstring(stmt)).collect();
    match body.as_slice() {
        [Stmt::Assert(assert)] => {
            is(&assert.test, condition) && assert.msg.as_deref().is_some_and(|msg| is(msg, message))
        }
        [Stmt::If(check)] if check.elif_else_clauses.is_empty() => {
            let negated = matches!(check.test.as_ref(), Expr::UnaryOp(op) if op.op == ast::UnaryOp::Not && is(&op.operand, condition));
            let raises_message = matches!(check.body.as_slice(), [Stmt::Raise(ast::StmtRaise { exc: Some(exc), .. })]
                if matches!(exc.as_ref(), Expr::Call(call) if call.arguments.args.first().is_some_and(|arg| is(arg, message))));
            negated && raises_message
        }
        _ => false,
    }
}
