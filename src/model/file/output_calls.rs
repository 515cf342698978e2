//! Calls that write output: `print()`, `warnings.warn()`, `logging.info()`, `logger.warning()`.
//! Dynamo breaks the graph on each (TCF101's business), and a branch that holds nothing else
//! only reports (`rare_paths::before_failing_assert`).

use ruff_python_ast::{self as ast, Expr};

use crate::model::file::imports::{Imports, dotted_name, last_segment};

/// Logger methods, including transformers' `warning_once` / `info_once`: Dynamo breaks on any
/// logger method it is not told to ignore.
const LOG_METHODS: [&str; 12] = [
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "exception",
    "critical",
    "fatal",
    "log",
    "warning_once",
    "warn_once",
    "info_once",
];

/// Whether a call writes output (`print()`, `logger.info()`): TCF101's business, and what its
/// guard keeps from running under compile, arguments included.
pub fn writes_output(call: &ast::ExprCall, imports: &Imports) -> bool {
    output_call(call, imports).is_some()
}

/// How to name a call that writes output (`print()`, `logger.info()`), if it is one.
pub fn output_call(call: &ast::ExprCall, imports: &Imports) -> Option<String> {
    let qualified = imports.qualified_name(&call.func);
    match qualified.as_deref() {
        Some("print" | "warnings.warn" | "rich.print") => return Some(format!("{}()", dotted_name(&call.func)?)),
        Some(name) if name.starts_with("logging.") && is_log_method(last_segment(&call.func)) => {
            return Some(format!("{}()", dotted_name(&call.func)?));
        }
        _ => {}
    }
    let Expr::Attribute(method) = call.func.as_ref() else {
        return None;
    };
    (is_log_method(Some(method.attr.id.as_str())) && is_logger(&method.value))
        .then(|| format!("{}()", dotted_name(&call.func).unwrap_or_else(|| format!("….{}", method.attr.id))))
}

fn is_log_method(name: Option<&str>) -> bool {
    name.is_some_and(|name| LOG_METHODS.contains(&name))
}

/// `logger`, `log`, `_LOGGER`, `self.logger`, `logging.getLogger(__name__)`.
fn is_logger(expr: &Expr) -> bool {
    match expr {
        Expr::Call(call) => last_segment(&call.func) == Some("getLogger"),
        _ => last_segment(expr).is_some_and(|name| {
            let name = name.trim_start_matches('_').to_ascii_lowercase();
            name == "log" || name == "logger" || name.ends_with("_logger")
        }),
    }
}
