//! Branches on a keyword flag that reaches a function only through its `**kwargs`.
//!
//! `def sdpa_attention_forward(module, query, key, value, mask, **kwargs)` then
//! `if kwargs.get("output_attentions", False): logger.warning_once(...)`: the branch runs only for
//! a caller that passes `output_attentions=True` down the chain of `**kwargs`; a call that does
//! not never takes it, so Dynamo never traces it. A finding there is real only for such a caller:
//! it stays, low, and says so.
//!
//! Only a truth test of `kwargs.get("name")` or `kwargs.get("name", <None or False>)` on the
//! function's own `**` parameter (alone, or as a part of an `and`), the body of such an `if`, the
//! clauses after `if not kwargs.get(...)`, and the arm of a conditional expression. The `**`
//! parameter must not be assigned or written into in the function.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, BoolOp, Expr, ExprContext, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::model::defaults::finding_conditions::{BranchTests, BranchWalk, FindingConditions};
use crate::model::file::{FileModel, FunctionNode};

/// For each of `ranges` (the findings' ranges), the condition its code needs when it sits in a
/// branch on a keyword flag read from `**kwargs`: "only when `output_attentions=True` reaches
/// `sdpa_attention_forward` through `**kwargs` (unset by default)".
pub fn off_unless_keyword_passed(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    for function in &model.functions {
        let FunctionNode::Def(def) = function.node else { continue };
        let Some(kwargs) = def.parameters.kwarg.as_deref() else { continue };
        let kwargs = kwargs.name.id.as_str();
        if !conditions.touches(def.range()) || changes(&def.body, kwargs) {
            continue;
        }
        let mut walk = BranchWalk { tests: KeywordTests { def, kwargs }, conditions: &mut conditions };
        walk.visit_body(&def.body);
    }
    conditions.into_vec()
}

/// Whether the body rebinds `kwargs` or writes into it (`kwargs["x"] = ...`, `kwargs.update(...)`,
/// `kwargs.setdefault(...)`): then a key may be set here, not only by the caller.
fn changes(body: &[Stmt], kwargs: &str) -> bool {
    struct Writes<'n> {
        kwargs: &'n str,
        found: bool,
    }
    impl<'a> Visitor<'a> for Writes<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            let names_kwargs = |expr: &Expr| matches!(expr, Expr::Name(name) if name.id.as_str() == self.kwargs);
            self.found |= match expr {
                Expr::Name(name) => name.id.as_str() == self.kwargs && name.ctx != ExprContext::Load,
                Expr::Subscript(item) => item.ctx != ExprContext::Load && names_kwargs(&item.value),
                Expr::Attribute(method) => {
                    names_kwargs(&method.value)
                        && matches!(method.attr.id.as_str(), "update" | "setdefault" | "__setitem__")
                }
                _ => false,
            };
            walk_expr(self, expr);
        }
    }
    let mut writes = Writes { kwargs, found: false };
    writes.visit_body(body);
    writes.found
}

/// The tests of a function's keyword flags, for the walk that marks the branches on them.
struct KeywordTests<'a> {
    def: &'a ast::StmtFunctionDef,
    kwargs: &'a str,
}

impl KeywordTests<'_> {
    fn condition(&self, key: &str) -> String {
        format!("only when `{key}=True` reaches `{}` through `**{}` (unset by default)", self.def.name.id, self.kwargs)
    }

    /// `kwargs.get("key")`, `kwargs.get("key", None)`, `kwargs.get("key", False)`: the key.
    fn keyword_flag<'t>(&self, expr: &'t Expr) -> Option<&'t str> {
        let Expr::Call(call) = expr else { return None };
        let Expr::Attribute(method) = call.func.as_ref() else { return None };
        let on_kwargs = matches!(method.value.as_ref(), Expr::Name(name) if name.id.as_str() == self.kwargs);
        if !on_kwargs || method.attr.id.as_str() != "get" || !call.arguments.keywords.is_empty() {
            return None;
        }
        match &*call.arguments.args {
            [Expr::StringLiteral(key)] => Some(key.value.to_str()),
            [Expr::StringLiteral(key), Expr::NoneLiteral(_)] => Some(key.value.to_str()),
            [Expr::StringLiteral(key), Expr::BooleanLiteral(ast::ExprBooleanLiteral { value: false, .. })] => {
                Some(key.value.to_str())
            }
            _ => None,
        }
    }
}

impl BranchTests for KeywordTests<'_> {
    /// `kwargs.get("key")`, alone or a part of an `and`.
    fn needs(&self, test: &Expr) -> Option<String> {
        let key = match test {
            Expr::BoolOp(bool_op) if bool_op.op == BoolOp::And => {
                bool_op.values.iter().find_map(|value| self.keyword_flag(value))
            }
            test => self.keyword_flag(test),
        }?;
        Some(self.condition(key))
    }

    /// `not kwargs.get("key")`.
    fn needs_false(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::UnaryOp(unary) if unary.op == UnaryOp::Not => {
                Some(self.condition(self.keyword_flag(&unary.operand)?))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::file::FileModel;
    use crate::source::SourceFile;

    fn conditions(code: &str, needle: &str) -> Option<String> {
        let source = SourceFile::parse(std::path::Path::new("m.py"), code.to_string()).expect("parses");
        let model = FileModel::build(&source, "m");
        let at = code.find(needle).expect("needle") as u32;
        let range = TextRange::at(at.into(), (needle.len() as u32).into());
        off_unless_keyword_passed(&model, &[range]).remove(0)
    }

    #[test]
    fn a_branch_on_a_keyword_read_from_kwargs_needs_the_caller_to_pass_it() {
        let code = "def attend(q, k, **kwargs):\n    if kwargs.get(\"output_attentions\", False):\n        print(q)\n    return q\n";
        assert_eq!(
            conditions(code, "print(q)").as_deref(),
            Some("only when `output_attentions=True` reaches `attend` through `**kwargs` (unset by default)")
        );
    }

    #[test]
    fn kwargs_filled_in_the_function_decide_nothing() {
        let code = "def attend(q, **kwargs):\n    kwargs.setdefault(\"trace\", True)\n    if kwargs.get(\"trace\"):\n        print(q)\n";
        assert_eq!(conditions(code, "print(q)"), None);
    }

    #[test]
    fn a_default_that_is_on_is_no_flag_off() {
        let code = "def attend(q, **kwargs):\n    if kwargs.get(\"trace\", True):\n        print(q)\n";
        assert_eq!(conditions(code, "print(q)"), None);
    }
}
