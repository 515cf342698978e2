//! TCF102 opaque-helper-in-compiled-code: `self.tokenizer.image_token_id` and the like in the
//! compiled region. Tokenizers and processors are opaque to Dynamo (HF properties call the Rust
//! `token_to_id`): the graph breaks on every forward (GB0156). The fix computes the value once
//! in `__init__`, after the last line there that touches the helper, and reads the cached
//! attribute in the compiled code. `self.config.x` is not a hazard: Dynamo treats it as constant.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::text::{indentation, insert_line_after};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled_code::{CompiledCodeVisitor, Site, visit_compiled};
use crate::model::file::FileModel;
use crate::model::module::{init_method, method_body, self_assignments};
use crate::model::reach::describe;
use crate::rules::{Category, Checker, Rule};

pub static RULE: Rule = Rule {
    code: "TCF102",
    name: "opaque-helper-in-compiled-code",
    category: Category::GraphBreak,
    check,
};

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    let mut diagnostics = Vec::new();
    for function in model.region_functions() {
        let Some(class) = model.self_class(function) else {
            continue;
        };
        let mut finder = LookupFinder {
            helpers: &checker.settings.opaque_helpers,
            found: Vec::new(),
        };
        visit_compiled(model.function(function).node.body(), &mut finder);
        for lookup in finder.found {
            let text = &model.source.text[lookup.range];
            let message = format!(
                "`{text}` in {} asks the {} for a value Dynamo cannot trace: the graph breaks here",
                describe(model, function),
                lookup.helper.replace('_', " ")
            );
            let severity = if lookup.site.in_loop {
                Severity::Critical
            } else {
                Severity::High
            };
            let diagnostic = Diagnostic::new(&RULE, lookup.range, message).with_severity(severity);
            diagnostics.push(match cache_fix(model, class, &lookup) {
                Ok(fix) => diagnostic.with_fix(fix),
                Err(reason) => diagnostic.without_fix(reason),
            });
        }
    }
    diagnostics
}

/// A read of a helper's attribute, or a call of a helper's method or of the helper itself.
struct Lookup {
    helper: String,
    range: TextRange,
    /// The name to cache it under, when the value cannot depend on the call's inputs.
    cache_name: Option<String>,
    site: Site,
}

struct LookupFinder<'h> {
    helpers: &'h [String],
    found: Vec<Lookup>,
}

impl LookupFinder<'_> {
    /// `self.<helper>` -> the helper's name, when it is one of the opaque helpers.
    fn helper<'e>(&self, expr: &'e Expr) -> Option<&'e str> {
        let Expr::Attribute(attr) = expr else {
            return None;
        };
        let is_self = matches!(attr.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self");
        let name = attr.attr.id.as_str();
        (is_self && self.helpers.iter().any(|h| h == name)).then_some(name)
    }
}

impl<'a> CompiledCodeVisitor<'a> for LookupFinder<'_> {
    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        let lookup = match expr {
            // self.tokenizer(text)
            Expr::Call(call) if self.helper(&call.func).is_some() => {
                Some((self.helper(&call.func), None))
            }
            // self.tokenizer.convert_tokens_to_ids("<image>")
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Attribute(method) if self.helper(&method.value).is_some() => {
                    let cache_name =
                        constant_arguments(&call.arguments).then(|| call_cache_name(method, call));
                    Some((self.helper(&method.value), cache_name))
                }
                _ => None,
            },
            // self.tokenizer.image_token_id
            Expr::Attribute(attr) if self.helper(&attr.value).is_some() => {
                Some((self.helper(&attr.value), Some(format!("{}_", attr.attr.id))))
            }
            _ => None,
        };
        let Some((Some(helper), cache_name)) = lookup else {
            return true;
        };
        self.found.push(Lookup {
            helper: helper.to_string(),
            range: expr.range(),
            cache_name,
            site,
        });
        false
    }
}

fn constant_arguments(arguments: &ast::Arguments) -> bool {
    arguments.args.iter().all(is_constant)
        && arguments.keywords.iter().all(|k| is_constant(&k.value))
}

fn is_constant(expr: &Expr) -> bool {
    match expr {
        Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::NumberLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_) => true,
        Expr::UnaryOp(op) => is_constant(&op.operand),
        Expr::Tuple(tuple) => tuple.elts.iter().all(is_constant),
        Expr::List(list) => list.elts.iter().all(is_constant),
        _ => false,
    }
}

/// `convert_tokens_to_ids("<image>")` -> `convert_tokens_to_ids_image_`.
fn call_cache_name(method: &ast::ExprAttribute, call: &ast::ExprCall) -> String {
    let mut name = method.attr.id.to_string();
    let words: String = call
        .arguments
        .args
        .iter()
        .filter_map(|arg| match arg {
            Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
            Expr::NumberLiteral(_) => Some("n".to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("_");
    let slug: String = words
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .split('_')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if !slug.is_empty() {
        name = format!("{name}_{}", &slug[..slug.len().min(24)]);
    }
    format!("{}_", name.trim_end_matches('_'))
}

/// Cache the looked-up value in `__init__`. Safe when the helper is assigned only at the top
/// level of `__init__`; unsafe when other methods reassign it (the cached value could go stale).
fn cache_fix(model: &FileModel, class: usize, lookup: &Lookup) -> Result<Fix, String> {
    let helper = &lookup.helper;
    let Some(base_name) = &lookup.cache_name else {
        return Err(format!(
            "the result depends on the inputs: move the {helper} call out of the compiled region"
        ));
    };
    let init = init_method(model, class)
        .ok_or_else(|| format!("the class has no `__init__` that sets `self.{helper}`"))?;
    let assignments: Vec<_> = self_assignments(model, class)
        .into_iter()
        .filter(|a| &a.attr == helper)
        .collect();
    if !assignments.iter().any(|a| a.method == init && a.top_level) {
        return Err(format!(
            "`self.{helper}` is not set unconditionally in `__init__`"
        ));
    }
    let reassigned_in = assignments
        .iter()
        .find(|a| a.method != init)
        .map(|a| model.function(a.method).name.clone());

    let text = &model.source.text;
    let looked_up = &text[lookup.range];
    let body = method_body(model, init);
    let mut edits = Vec::new();
    let name = match existing_cache(text, body, looked_up) {
        Some(existing) => existing,
        None => {
            let anchor = body
                .iter()
                .rev()
                .find(|stmt| mentions(text, stmt, helper))
                .expect("the assignment");
            let name = free_name(model, class, base_name);
            let line = format!("self.{name} = {looked_up}");
            edits.push(insert_line_after(
                text,
                anchor.range(),
                indentation(text, anchor.start()),
                &line,
            ));
            name
        }
    };
    edits.push(Edit::replace(lookup.range, format!("self.{name}")));
    let title = format!("Compute `{looked_up}` once in `__init__` as `self.{name}`");
    Ok(match reassigned_in {
        None => Fix::new(title, Safety::Safe, edits),
        Some(method) => Fix::new(
            format!(
                "{title} (unsafe: `{method}` reassigns `self.{helper}`, the cached value could go stale)"
            ),
            Safety::Unsafe,
            edits,
        ),
    })
}

/// An attribute an earlier fix already set to the same lookup: `self.image_token_id_ = ...`.
fn existing_cache(text: &str, init_body: &[Stmt], looked_up: &str) -> Option<String> {
    init_body.iter().find_map(|stmt| {
        let Stmt::Assign(assign) = stmt else {
            return None;
        };
        let [Expr::Attribute(target)] = assign.targets.as_slice() else {
            return None;
        };
        let is_self = matches!(target.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self");
        (is_self && &text[assign.value.range()] == looked_up).then(|| target.attr.id.to_string())
    })
}

fn mentions(text: &str, stmt: &Stmt, helper: &str) -> bool {
    let source = &text[stmt.range()];
    let needle = format!("self.{helper}");
    source.match_indices(&needle).any(|(at, _)| {
        !source[at + needle.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

/// `base`, or `base` with a number, whichever the class does not use yet.
fn free_name(model: &FileModel, class: usize, base: &str) -> String {
    let class_text = &model.source.text[model.classes[class].node.range()];
    let taken = |name: &str| {
        let attr = format!(".{name}");
        class_text.match_indices(&attr).any(|(at, _)| {
            !class_text[at + attr.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        }) || model.method(class, name).is_some()
    };
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| format!("{base}{n}"))
        .find(|name| !taken(name))
        .expect("some number is free")
}
