//! What the calls of one function pass (keywords, `False`s, how many positional arguments, or
//! something unreadable): a fact the index gathers from other files' calls
//! (`flow::imported_calls`) and tells the file that defines the function
//! (`Facts::passed_from_elsewhere`), where `dead_code` reads which of its flags stay off.

use ruff_python_ast::{self as ast, Expr};

/// What the calls of one function pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Passed {
    /// The keywords some call passes a value other than `False` or `None`, sorted, once each.
    keywords: Vec<String>,
    /// The keywords some call passes `False` (a parameter that defaults to `None` is then no
    /// longer `None`, but still false).
    falses: Vec<String>,
    /// The most positional arguments a call passes.
    positional: usize,
    /// Some use cannot be read: anything may be passed.
    hidden: bool,
}

impl Passed {
    /// A use that hands the function on instead of calling it: anything may be passed.
    pub fn hidden() -> Self {
        Passed { hidden: true, ..Passed::default() }
    }

    /// Joins what another use passes.
    pub fn merge(&mut self, other: &Passed) {
        for keyword in &other.keywords {
            if let Err(at) = self.keywords.binary_search(keyword) {
                self.keywords.insert(at, keyword.clone());
            }
        }
        for keyword in &other.falses {
            if let Err(at) = self.falses.binary_search(keyword) {
                self.falses.insert(at, keyword.clone());
            }
        }
        self.positional = self.positional.max(other.positional);
        self.hidden |= other.hidden;
    }

    /// Whether some call may pass the parameter `name`, the `position`-th positional one
    /// (counted from 0; `None` for a keyword-only one).
    pub fn passes(&self, name: &str, position: Option<usize>) -> bool {
        self.hidden
            || self.keywords.binary_search_by(|keyword| keyword.as_str().cmp(name)).is_ok()
            || position.is_some_and(|position| position < self.positional)
    }

    /// Whether some call passes `name=False`.
    pub fn passes_false(&self, name: &str) -> bool {
        self.falses.binary_search_by(|keyword| keyword.as_str().cmp(name)).is_ok()
    }

    /// What one call passes.
    pub fn by_call(call: &ast::ExprCall) -> Self {
        let arguments = &call.arguments;
        // `warning=False` passes the default again: the flag stays off.
        let is_false = |value: &Expr| matches!(value, Expr::BooleanLiteral(literal) if !literal.value);
        let named = |keep: &dyn Fn(&Expr) -> bool| {
            let mut names: Vec<String> = (arguments.keywords.iter())
                .filter(|keyword| keep(&keyword.value))
                .filter_map(|keyword| Some(keyword.arg.as_ref()?.to_string()))
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        };
        let keywords = named(&|value| !value.is_none_literal_expr() && !is_false(value));
        let falses = named(&is_false);
        let hidden =
            arguments.args.iter().any(Expr::is_starred_expr) || arguments.keywords.iter().any(|k| k.arg.is_none());
        Passed { keywords, falses, positional: arguments.args.len(), hidden }
    }
}
