//! einops and einx: functions that take tensors (after a pattern string) and give back a tensor
//! of their operands' kind (`rearrange(x, "b n d -> b d n")`, `einx.multiply("b n, b", x, w)`).
//! They work on numpy arrays too, so the result is a tensor only when an operand is one.

use ruff_python_ast::{self as ast, Expr};

/// einops' functions that return one array of their input's kind.
const EINOPS: &[&str] = &["rearrange", "repeat", "reduce", "einsum"];

/// einx's operations that return arrays of their operands' kind, besides its mask operations
/// (`EINX_MASKS`); not `solve`, `matches`, `check`: those return Python values.
const EINX: &[&str] = &[
    "rearrange",
    "dot",
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "logsumexp",
    "var",
    "std",
    "count_nonzero",
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "floor_divide",
    "maximum",
    "minimum",
    "logaddexp",
    "where",
    "get_at",
    "set_at",
    "add_at",
    "subtract_at",
    "flip",
    "roll",
    "softmax",
    "log_softmax",
    "reduce",
    "elementwise",
    "argmax",
    "argmin",
    "sort",
    "argsort",
];

/// einx's operations whose result is boolean: a mask when an operand is a tensor.
const EINX_MASKS: &[&str] = &[
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "any",
    "all",
];

/// The operands of an einops or einx call that returns one array (the arrays, without the
/// pattern), by its qualified name; None for any other function, and for an einx call that may
/// return a tuple or, with `graph=True`, its code as a string.
pub fn operands<'a>(qualified: &str, call: &'a ast::ExprCall) -> Option<&'a [Expr]> {
    let args = &call.arguments.args[..];
    if qualified.strip_prefix("einops.").is_some_and(|name| EINOPS.contains(&name)) {
        return Some(if qualified == "einops.einsum" { args } else { args.get(..1).unwrap_or_default() });
    }
    let name = qualified.strip_prefix("einx.")?;
    let one_output = args.first().is_some_and(gives_one_array) && call.arguments.find_keyword("graph").is_none();
    ((EINX.contains(&name) || EINX_MASKS.contains(&name)) && one_output).then(|| args.get(1..).unwrap_or_default())
}

/// Whether an einx pattern gives one array: a literal with no comma among its outputs
/// (`"b (q + k) -> b q, b k"` gives a tuple). A pattern tcfix cannot read may give several.
fn gives_one_array(pattern: &Expr) -> bool {
    let Expr::StringLiteral(pattern) = pattern else { return false };
    let pattern = pattern.value.to_str();
    // Without an arrow the commas part the inputs (`"b n, b"`): one output.
    let Some((_, outputs)) = pattern.split_once("->") else { return true };
    let mut depth = 0i32;
    !outputs.chars().any(|c| {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        c == ',' && depth == 0
    })
}

/// Whether an einx call compares or combines truth values (`einx.less("j, i -> i j", a, b)`).
pub fn gives_mask(qualified: &str) -> bool {
    qualified.strip_prefix("einx.").is_some_and(|name| EINX_MASKS.contains(&name))
}
