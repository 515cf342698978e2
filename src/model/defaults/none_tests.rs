//! A file's own test for `None`: `def exists(v): return v is not None`, the helper many model files
//! define and branch on (`if exists(self.max_token_size):`). What the helper does, not its name,
//! makes it one: a module-level function of one parameter whose body (past a docstring) is
//! `return <parameter> is not None`.

use ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};

use crate::model::file::{FileModel, FunctionNode};

/// The names of the file's module-level functions that test their one argument against `None`.
pub fn none_tests<'a>(model: &FileModel<'a>) -> Vec<&'a str> {
    model
        .functions
        .iter()
        .filter(|function| function.parent.is_none() && function.class.is_none())
        .filter_map(|function| match function.node {
            FunctionNode::Def(def) if tests_for_none(def) => Some(def.name.id.as_str()),
            _ => None,
        })
        .collect()
}

/// `def f(v): return v is not None`, a docstring allowed before the `return`.
fn tests_for_none(def: &ast::StmtFunctionDef) -> bool {
    let parameters = &def.parameters;
    let [parameter] = &*parameters.args else { return false };
    if !parameters.posonlyargs.is_empty()
        || !parameters.kwonlyargs.is_empty()
        || parameters.vararg.is_some()
        || parameters.kwarg.is_some()
    {
        return false;
    }
    let body = match &*def.body {
        [Stmt::Expr(docstring), rest @ ..] if docstring.value.is_string_literal_expr() => rest,
        body => body,
    };
    let [Stmt::Return(ast::StmtReturn { value: Some(value), .. })] = body else { return false };
    let Expr::Compare(compare) = value.as_ref() else { return false };
    matches!(
        (compare.left.as_ref(), &*compare.ops, &*compare.comparators),
        (Expr::Name(name), [CmpOp::IsNot], [Expr::NoneLiteral(_)]) if name.id == parameter.parameter.name.id
    )
}

/// The argument of a call to one of `tests` with one positional argument: `exists(self.scale)`
/// -> `self.scale`.
pub fn tested_for_none<'e>(call: &'e ast::ExprCall, tests: &[&str]) -> Option<&'e Expr> {
    let Expr::Name(func) = call.func.as_ref() else { return None };
    if !tests.contains(&func.id.as_str()) || !call.arguments.keywords.is_empty() {
        return None;
    }
    match &*call.arguments.args {
        [argument] if !argument.is_starred_expr() => Some(argument),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_parser::parse_module;

    fn first_def(source: &str) -> bool {
        let parsed = parse_module(source).unwrap();
        let Stmt::FunctionDef(def) = &parsed.suite()[0] else { panic!("not a def") };
        tests_for_none(def)
    }

    #[test]
    fn a_none_test_is_known_by_its_body() {
        assert!(first_def("def exists(v):\n    return v is not None\n"));
        assert!(first_def("def present(value):\n    \"\"\"Set?\"\"\"\n    return value is not None\n"));
        assert!(!first_def("def exists(v):\n    return v is None\n"));
        assert!(!first_def("def exists(v, d):\n    return v is not None\n"));
        assert!(!first_def("def exists(v):\n    print(v)\n    return v is not None\n"));
        assert!(!first_def("def exists(v):\n    return other is not None\n"));
    }
}
