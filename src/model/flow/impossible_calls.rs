//! A function that only its own file's calls reach, every one of which leaves out an argument the
//! function requires (`self.slide(img, meta, rescale)` of `def slide(self, img, meta, rescale,
//! stride, crop)`): each call raises `TypeError` before the body runs, so nothing in it is traced.

use ruff_python_ast::{self as ast, Expr};

use crate::model::compiled::reach::root_reason;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::flow::calls::Mentions;

/// Whether `function` is compiled only through calls of this file and each of them would raise
/// `TypeError` for a missing argument.
pub fn never_runs(model: &FileModel, function: usize) -> bool {
    let info = model.function(function);
    let FunctionNode::Def(def) = info.node else { return false };
    if root_reason(model, function).is_some()
        || model.called_from_other_files.contains(&info.qualname)
        || !def.decorator_list.is_empty()
    {
        return false;
    }
    let mut sites = model.calls().call_sites(function).peekable();
    let every_call_misses =
        sites.peek().is_some() && sites.all(|(_, site)| misses_an_argument(def, info.class.is_some(), site.call));
    // Last, as it walks the file: a reference handed on may still run it.
    every_call_misses && Mentions::of(model, &[function]).only_in_calls(model, function)
}

/// Whether `call` leaves out a parameter of `def` that has no default. A method called through an
/// attribute (`self.slide(...)`) gets its first parameter bound; a call that unpacks (`*args`,
/// `**kwargs`) may pass anything.
fn misses_an_argument(def: &ast::StmtFunctionDef, is_method: bool, call: &ast::ExprCall) -> bool {
    let arguments = &call.arguments;
    if arguments.args.iter().any(Expr::is_starred_expr) || arguments.keywords.iter().any(|k| k.arg.is_none()) {
        return false;
    }
    let bound = usize::from(is_method && call.func.is_attribute_expr());
    let parameters = &def.parameters;
    let positional = parameters.posonlyargs.iter().chain(&parameters.args).skip(bound);
    let given = arguments.args.len();
    let named = |name: &str| arguments.keywords.iter().any(|k| k.arg.as_ref().is_some_and(|arg| arg.id == name));
    let missing_positional = positional
        .enumerate()
        .any(|(at, p)| p.default.is_none() && at >= given && !named(p.parameter.name.id.as_str()));
    let missing_keyword =
        parameters.kwonlyargs.iter().any(|p| p.default.is_none() && !named(p.parameter.name.id.as_str()));
    missing_positional || missing_keyword
}
