//! TCF201 lazily-grown-buffer: a buffer registered empty in `__init__` and reassigned in the
//! compiled region (a positional table grown with `torch.cat`). Module tensors are static to
//! Dynamo: every growth fails the size guard ("size mismatch at index 0. expected 0, actual 128")
//! and recompiles. The fix calls the existing growth routine once at the end of `__init__` with
//! the maximum length known there, so in-range inputs never grow it.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::fix::text::{indentation, insert_line_after};
use crate::fix::{Fix, Safety};
use crate::model::compiled_code::{CompiledCodeVisitor, Site, visit_compiled};
use crate::model::file::{FileModel, FunctionNode};
use crate::model::imports::Imports;
use crate::model::module::{init_method, method_body};
use crate::model::reach::describe;
use crate::rules::{Category, Checker, Rule};

pub static RULE: Rule = Rule {
    code: "TCF201",
    name: "lazily-grown-buffer",
    category: Category::Recompile,
    check,
};

/// Names under which models keep their maximum sequence length.
const MAX_LENGTH_NAMES: [&str; 9] = [
    "max_seq_len",
    "max_len",
    "max_length",
    "max_seq_length",
    "max_position_embeddings",
    "max_positions",
    "block_size",
    "context_length",
    "n_positions",
];

struct EmptyBuffer {
    name: String,
    persistent: bool,
}

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    let mut diagnostics = Vec::new();
    for class in (0..model.classes.len()).filter(|&c| model.classes[c].is_module) {
        let Some(init) = init_method(model, class) else {
            continue;
        };
        let buffers = empty_buffers(model, init);
        if buffers.is_empty() {
            continue;
        }
        for function in model
            .region_functions()
            .into_iter()
            .filter(|&f| model.self_class(f) == Some(class))
        {
            for (buffer, assignment) in reassignments(model, function, &buffers) {
                if calls_method(model, init, &model.function(function).name) {
                    continue; // pre-grown in `__init__` already
                }
                let message = format!(
                    "buffer `{}` is registered empty and grown in {}: each growth fails Dynamo's size guard and recompiles",
                    buffer.name,
                    describe(model, function)
                );
                let diagnostic = Diagnostic::new(&RULE, assignment, message);
                diagnostics.push(match pre_grow_fix(model, init, function, buffer) {
                    Ok(fix) => diagnostic.with_fix(fix),
                    Err(reason) => diagnostic.without_fix(reason),
                });
            }
        }
    }
    diagnostics
}

/// `self.register_buffer("pe", torch.empty(0, d), persistent=False)` calls in `__init__`.
fn empty_buffers(model: &FileModel, init: usize) -> Vec<EmptyBuffer> {
    let mut finder = RegisterBufferFinder {
        imports: &model.imports,
        found: Vec::new(),
    };
    visit_compiled(model.function(init).node.body(), &mut finder);
    finder.found
}

struct RegisterBufferFinder<'i> {
    imports: &'i Imports,
    found: Vec<EmptyBuffer>,
}

impl<'a> CompiledCodeVisitor<'a> for RegisterBufferFinder<'_> {
    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        let Expr::Call(call) = expr else { return true };
        let is_register = matches!(call.func.as_ref(), Expr::Attribute(a) if a.attr.id.as_str() == "register_buffer");
        let args = &call.arguments.args;
        if let (true, Some(Expr::StringLiteral(name)), Some(tensor)) =
            (is_register, args.first(), args.get(1))
        {
            if is_empty_tensor(tensor, self.imports) {
                let persistent = call
                    .arguments
                    .find_keyword("persistent")
                    .map(|k| &k.value)
                    .or(args.get(2))
                    .is_none_or(|value| !matches!(value, Expr::BooleanLiteral(b) if !b.value));
                self.found.push(EmptyBuffer {
                    name: name.value.to_str().to_string(),
                    persistent,
                });
            }
        }
        true
    }
}

/// `torch.empty(0, d)`, `torch.zeros((0, d))`, `torch.tensor([])`: no rows yet.
fn is_empty_tensor(expr: &Expr, imports: &Imports) -> bool {
    let Expr::Call(call) = expr else { return false };
    let Some(function) = imports.qualified_name(&call.func) else {
        return false;
    };
    let is_zero = |e: &Expr| matches!(e, Expr::NumberLiteral(n) if n.value.as_int().and_then(|i| i.as_u64()) == Some(0));
    let first = call.arguments.args.first();
    match function.as_str() {
        "torch.tensor" => matches!(first, Some(Expr::List(list)) if list.elts.is_empty()),
        "torch.empty" | "torch.zeros" | "torch.ones" | "torch.randn" | "torch.rand"
        | "torch.full" => match first {
            Some(Expr::Tuple(shape)) => shape.elts.first().is_some_and(is_zero),
            Some(Expr::List(shape)) => shape.elts.first().is_some_and(is_zero),
            Some(size) => is_zero(size),
            None => false,
        },
        _ => false,
    }
}

/// Assignments `self.<buffer> = ...` in the compiled code of `function`.
fn reassignments<'b>(
    model: &FileModel,
    function: usize,
    buffers: &'b [EmptyBuffer],
) -> Vec<(&'b EmptyBuffer, TextRange)> {
    struct Finder<'b> {
        buffers: &'b [EmptyBuffer],
        found: Vec<(&'b EmptyBuffer, TextRange)>,
    }
    impl<'a, 'b> CompiledCodeVisitor<'a> for Finder<'b> {
        fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
            let targets: Vec<&Expr> = match stmt {
                Stmt::Assign(assign) => assign.targets.iter().collect(),
                Stmt::AugAssign(assign) => vec![assign.target.as_ref()],
                Stmt::AnnAssign(assign) => vec![assign.target.as_ref()],
                _ => return,
            };
            for target in targets {
                let Expr::Attribute(attr) = target else {
                    continue;
                };
                let on_self =
                    matches!(attr.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self");
                if let Some(buffer) = self
                    .buffers
                    .iter()
                    .find(|b| on_self && b.name == attr.attr.id.as_str())
                {
                    self.found.push((buffer, stmt.range()));
                }
            }
        }
    }
    let mut finder = Finder {
        buffers,
        found: Vec::new(),
    };
    visit_compiled(model.function(function).node.body(), &mut finder);
    finder.found
}

/// Whether `__init__` calls `self.<method>(...)`.
fn calls_method(model: &FileModel, init: usize, method: &str) -> bool {
    struct Finder<'m> {
        method: &'m str,
        found: bool,
    }
    impl<'a> CompiledCodeVisitor<'a> for Finder<'_> {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            if let Expr::Call(call) = expr {
                if let Expr::Attribute(attr) = call.func.as_ref() {
                    let on_self =
                        matches!(attr.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self");
                    self.found |= on_self && attr.attr.id.as_str() == self.method;
                }
            }
            true
        }
    }
    let mut finder = Finder {
        method,
        found: false,
    };
    visit_compiled(model.function(init).node.body(), &mut finder);
    finder.found
}

/// `self.<grow>(<max length>)` as the last line of `__init__`.
fn pre_grow_fix(
    model: &FileModel,
    init: usize,
    grow: usize,
    buffer: &EmptyBuffer,
) -> Result<Fix, String> {
    let routine = model.function(grow);
    let FunctionNode::Def(def) = routine.node else {
        return Err("grown in a lambda".to_string());
    };
    if routine.name == "forward" || routine.class.is_none() {
        return Err("grown inline: move the growth into a method that takes the new length, then call it from `__init__` with the maximum length".to_string());
    }
    if required_parameters(&def.parameters) != 1 {
        return Err(format!(
            "`{}` does not take a single length argument",
            routine.name
        ));
    }
    let max_length = max_length_in_init(model, init).ok_or_else(|| {
        format!(
            "no maximum length is known in `__init__` (a parameter or attribute named like {})",
            MAX_LENGTH_NAMES[..3].join(", ")
        )
    })?;
    let body = method_body(model, init);
    let (Some(first), Some(last)) = (body.first(), body.last()) else {
        return Err("`__init__` is empty".to_string());
    };
    if matches!(last, Stmt::Return(_) | Stmt::Raise(_)) {
        return Err("`__init__` ends in a return".to_string());
    }
    let text = &model.source.text;
    let line = format!("self.{}({max_length})", routine.name);
    let edit = insert_line_after(text, last.range(), indentation(text, first.start()), &line);
    let title = format!(
        "Call `{line}` at the end of `__init__` so forward never grows `{}`",
        buffer.name
    );
    Ok(if buffer.persistent {
        Fix::new(
            format!(
                "{title} (unsafe: the buffer is persistent, so its size in `state_dict` changes)"
            ),
            Safety::Unsafe,
            vec![edit],
        )
    } else {
        Fix::new(title, Safety::Safe, vec![edit])
    })
}

fn required_parameters(parameters: &ast::Parameters) -> usize {
    parameters
        .posonlyargs
        .iter()
        .chain(&parameters.args)
        .skip(1) // self
        .filter(|p| p.default.is_none())
        .count()
}

/// The expression holding the maximum length in `__init__`: a parameter (`max_len`), an
/// attribute set there (`self.block_size`), or an attribute of a parameter (`config.max_len`).
fn max_length_in_init(model: &FileModel, init: usize) -> Option<String> {
    let FunctionNode::Def(def) = model.function(init).node else {
        return None;
    };
    let parameters: Vec<&str> = def
        .parameters
        .iter_non_variadic_params()
        .map(|p| p.parameter.name.id.as_str())
        .collect();
    if let Some(name) = parameters.iter().find(|p| MAX_LENGTH_NAMES.contains(p)) {
        return Some(name.to_string());
    }
    let text = &model.source.text[def.range()];
    let candidates = ["self"]
        .into_iter()
        .chain(parameters.iter().copied().skip(1));
    for owner in candidates {
        for name in MAX_LENGTH_NAMES {
            let expr = format!("{owner}.{name}");
            let whole_word = text.match_indices(&expr).any(|(at, _)| {
                !text[at + expr.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    && !text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
            });
            if whole_word {
                return Some(expr);
            }
        }
    }
    None
}
