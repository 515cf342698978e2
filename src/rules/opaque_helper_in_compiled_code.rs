//! TCF102 opaque-helper-in-compiled-code: `self.tokenizer.image_token_id` and the like in the
//! compiled region. Tokenizers and processors are opaque to Dynamo (HF properties call the Rust
//! `token_to_id`): the graph breaks on every forward (GB0156). The fix computes the value once
//! in `__init__`, after the last line there that touches the helper, and reads the cached
//! attribute in the compiled code. `self.config.x` is not a hazard: Dynamo treats it as constant;
//! nor is a "helper" that holds an `nn.Module` (wav2vec2's `feature_extractor`, a VQ tokenizer).

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::comparable::ComparableExpr;
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::Ranged;

use crate::diagnostic::Diagnostic;
use crate::fix::text::{indentation, insert_line_after, stands_alone};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::file::{init_method, is_module_class, method_body, self_assignments};
use crate::model::file::module::is_self;
use crate::rules::bool_mask_index_put;
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF102",
    name: "opaque-helper-in-compiled-code",
    summary: "compute tokenizer and processor lookups once in __init__",
    explanation: include_str!("../../codemods/opaque-helper-in-compiled-code/README.md"),
    hazard: "A tokenizer or processor lookup in compiled code breaks the graph.",
    why: "Dynamo cannot trace the tokenizer, so the graph breaks on every call to fetch a value that never \
              changes.",
    category: Category::GraphBreak,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Region(start);

fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(Lookups { checker, finder: None, names: HashMap::default() })
}

/// The lookups of the region's compiled code, found in the checker's walk one function at a time;
/// the names the fixes cache values under are given per class, over all its functions.
struct Lookups<'c, 'a> {
    checker: &'c Checker<'a>,
    /// The lookups of the function being walked, and its class.
    finder: Option<(usize, LookupFinder<'a, 'c>)>,
    names: HashMap<usize, CacheNames<'a>>,
}

impl<'c, 'a> RegionHooks<'a> for Lookups<'c, 'a> {
    fn start(&mut self, function: &Function<'_, 'a>) -> bool {
        let model = self.checker.model;
        self.finder = None;
        let Some(class) = model.self_class(function.id) else { return false };
        let settings: &'c _ = self.checker.settings;
        let helpers: Vec<&'c String> =
            settings.opaque_helpers.iter().filter(|helper| !holds_module(model, class, helper)).collect();
        // Without helpers to ask, the function holds no lookup.
        if helpers.is_empty() {
            return false;
        }
        self.finder = Some((class, LookupFinder { helpers, found: Vec::new() }));
        true
    }

    fn expr(&mut self, _function: &Function<'_, 'a>, expr: &'a Expr, site: Site) -> bool {
        let Some((_, finder)) = &mut self.finder else { return false };
        let Some((helper, cache_name)) = finder.lookup(expr) else { return true };
        finder.found.push(Lookup { helper: helper.to_string(), expr, cache_name, site });
        false // the outermost expression is the lookup: its parts are not lookups of their own
    }

    fn end(&mut self, function: &Function<'_, 'a>, diagnostics: &mut Vec<Diagnostic>) {
        let Some((class, finder)) = self.finder.take() else { return };
        let (checker, model) = (self.checker, self.checker.model);
        for lookup in finder.found {
            let text = &model.source.text[lookup.expr.range()];
            let message = format!(
                "`{text}` in {} asks the {} for a value Dynamo cannot trace: the graph breaks here",
                function.describe(),
                lookup.helper.replace('_', " ")
            );
            let diagnostic = function.graph_break(Diagnostic::new(&RULE, lookup.expr.range(), message), lookup.site);
            let names = self.names.entry(class).or_insert_with(|| CacheNames::new(model, class));
            let masked_write = || bool_mask_index_put::traced_with(checker, function.id);
            diagnostics.push(match cache_fix(model, class, &lookup, names, masked_write) {
                Ok(fix) => diagnostic.with_fix(fix),
                Err(reason) => diagnostic.without_fix(reason),
            });
        }
    }
}

/// Whether the class assigns an `nn.Module` to `self.<helper>`: then it is a submodule that
/// Dynamo traces, not an opaque helper.
fn holds_module(model: &FileModel, class: usize, helper: &str) -> bool {
    self_assignments(model, class)
        .iter()
        .filter(|a| a.attr == helper)
        .any(|a| matches!(a.value(), Some(Expr::Call(call)) if is_module_class(model, &call.func)))
}

/// A read of a helper's attribute, a call of its method, `len()` or `getattr()` of it, or a
/// call of a tokenizer itself.
struct Lookup<'a> {
    helper: String,
    expr: &'a Expr,
    /// The name to cache it under, when the value cannot depend on the call's inputs.
    cache_name: Option<String>,
    site: Site,
}

struct LookupFinder<'a, 'h> {
    helpers: Vec<&'h String>,
    found: Vec<Lookup<'a>>,
}

impl<'a> LookupFinder<'a, '_> {
    /// `self.<helper>` -> the helper's name, when it is one of the opaque helpers.
    fn helper(&self, expr: &'a Expr) -> Option<&'a str> {
        let Expr::Attribute(attr) = expr else { return None };
        let is_self = is_self(&attr.value);
        let name = attr.attr.id.as_str();
        (is_self && self.helpers.iter().any(|h| h.as_str() == name)).then_some(name)
    }

    /// The helper at the root of `self.<helper>.a.b`, or of `self.<helper>` itself.
    fn chain_root(&self, expr: &'a Expr) -> Option<&'a str> {
        match expr {
            Expr::Attribute(attr) => self.helper(expr).or_else(|| self.chain_root(&attr.value)),
            _ => None,
        }
    }

    /// The helper a lookup asks, and the name to cache the answer under (if it can be cached).
    fn lookup(&self, expr: &'a Expr) -> Option<(&'a str, Option<String>)> {
        match expr {
            Expr::Call(call) => self.call_lookup(call),
            // self.tokenizer.image_token_id, self.processor.tokenizer.image_token_id
            Expr::Attribute(attr) if attr.ctx == ExprContext::Load && self.helper(expr).is_none() => {
                Some((self.chain_root(&attr.value)?, Some(format!("{}_", attr.attr.id))))
            }
            _ => None,
        }
    }

    fn call_lookup(&self, call: &'a ast::ExprCall) -> Option<(&'a str, Option<String>)> {
        let args = &call.arguments.args;
        match call.func.as_ref() {
            // len(self.tokenizer)
            Expr::Name(name) if name.id.as_str() == "len" && args.len() == 1 => {
                let helper = self.helper(&args[0])?;
                Some((helper, Some(format!("{helper}_len_"))))
            }
            // getattr(self.tokenizer, "pad_token_id")
            Expr::Name(name) if name.id.as_str() == "getattr" => {
                let helper = self.helper(args.first()?)?;
                let Some(Expr::StringLiteral(attr)) = args.get(1) else { return Some((helper, None)) };
                let cacheable = constant_arguments(&call.arguments);
                Some((helper, cacheable.then(|| format!("{}_", slug(attr.value.to_str())))))
            }
            // self.tokenizer(text): calling a tokenizer runs Rust code. Other helpers are left
            // alone here: diffusers' attention `processor` is a plain callable Dynamo traces.
            func @ Expr::Attribute(_) if self.helper(func).is_some() => {
                let helper = self.helper(func)?;
                helper.contains("tokenizer").then_some((helper, None))
            }
            // self.tokenizer.convert_tokens_to_ids("<image>")
            Expr::Attribute(method) => {
                let helper = self.chain_root(&method.value)?;
                let cacheable = constant_arguments(&call.arguments);
                Some((helper, cacheable.then(|| call_cache_name(method, call))))
            }
            _ => None,
        }
    }
}

fn constant_arguments(arguments: &ast::Arguments) -> bool {
    arguments.args.iter().all(is_constant) && arguments.keywords.iter().all(|k| is_constant(&k.value))
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
    let words: Vec<String> = call
        .arguments
        .args
        .iter()
        .filter_map(|arg| match arg {
            Expr::StringLiteral(s) => Some(slug(s.value.to_str())),
            _ => None,
        })
        .filter(|word| !word.is_empty())
        .collect();
    let mut name = method.attr.id.to_string();
    if !words.is_empty() {
        let joined = words.join("_");
        name = format!("{name}_{}", &joined[..joined.len().min(24)]);
    }
    format!("{}_", name.trim_end_matches('_'))
}

/// Lowercase letters, digits and single underscores: `"<image>"` -> `image`.
fn slug(text: &str) -> String {
    let words: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    words.split('_').filter(|part| !part.is_empty()).collect::<Vec<_>>().join("_")
}

/// The attribute names the fixes of one class cache values under: one per distinct lookup (the
/// fixes of one pass are made on the same text, so they must not pick the same free name).
struct CacheNames<'a> {
    model: &'a FileModel<'a>,
    class: usize,
    given: Vec<(ComparableExpr<'a>, String)>,
}

impl<'a> CacheNames<'a> {
    fn new(model: &'a FileModel<'a>, class: usize) -> Self {
        Self { model, class, given: Vec::new() }
    }

    fn name_for(&mut self, looked_up: &'a Expr, base: &str) -> String {
        let key = ComparableExpr::from(looked_up);
        if let Some((_, name)) = self.given.iter().find(|(given, _)| *given == key) {
            return name.clone();
        }
        let given = &self.given;
        let name = free_name(self.model, self.class, base, |name| given.iter().any(|(_, g)| g == name));
        self.given.push((key, name.clone()));
        name
    }
}

/// Cache the looked-up value in `__init__`. Safe when the helper is assigned only at the top
/// level of `__init__` and forward looks it up unconditionally; unsafe when other methods
/// reassign it (the cached value could go stale) or forward looks it up only under a condition.
fn cache_fix<'a>(
    model: &FileModel,
    class: usize,
    lookup: &Lookup<'a>,
    names: &mut CacheNames<'a>,
    masked_write: impl FnOnce() -> Option<String>,
) -> Result<Fix, String> {
    let helper = &lookup.helper;
    let Some(base_name) = &lookup.cache_name else {
        return Err(format!("the result depends on the inputs: move the {helper} call out of the compiled region"));
    };
    let init =
        init_method(model, class).ok_or_else(|| format!("the class has no `__init__` that sets `self.{helper}`"))?;
    let assignments: Vec<_> = self_assignments(model, class).iter().filter(|a| &a.attr == helper).collect();
    let Some(assignment) = assignments.iter().rev().find(|a| a.method == init && a.top_level) else {
        return Err(format!("`self.{helper}` is not set unconditionally in `__init__`"));
    };
    let value = assignment.value();
    if value.is_some_and(|value| may_be_none(model, init, value)) {
        let later = assignments.iter().find(|a| a.method != init).map(|a| model.function(a.method).name.clone());
        let set_later = later.map_or("it is set later".to_string(), |method| format!("`{method}` sets it later"));
        return Err(format!(
            "`__init__` sets `self.{helper}` to None (or to a parameter that defaults to None); {set_later}"
        ));
    }
    let reassigned_in = assignments.iter().find(|a| a.method != init).map(|a| model.function(a.method).name.clone());

    let text = &model.source.text;
    let looked_up = &text[lookup.expr.range()];
    let body = method_body(model, init);
    let mut edits = Vec::new();
    let cached = existing_cache(body, lookup.expr);
    let name = match &cached {
        Some(existing) => existing.clone(),
        None => {
            // After the last line of `__init__` that touches the helper, also through the name
            // it was assigned from (`tokenizer.add_tokens(...)` after `self.tokenizer = tokenizer`).
            let alias = match value {
                Some(Expr::Name(name)) => Some(name.id.as_str()),
                _ => None,
            };
            let touches = |stmt: &&Stmt| {
                mentions(text, stmt, &format!("self.{helper}"))
                    || alias.is_some_and(|alias| mentions(text, stmt, alias))
            };
            let anchor = body.iter().rev().find(touches).unwrap_or(assignment.stmt);
            if !body.first().is_some_and(|first| stands_alone(text, first.range()))
                || !stands_alone(text, anchor.range())
            {
                return Err("`__init__` shares its lines with other code: cache the value by hand".to_string());
            }
            let name = names.name_for(lookup.expr, base_name);
            let line = format!("self.{name} = {looked_up}");
            edits.push(insert_line_after(text, anchor.range(), indentation(text, anchor.start()), &line));
            name
        }
    };
    edits.push(Edit::replace(lookup.expr.range(), format!("self.{name}")));
    let title = match cached {
        Some(_) => format!("Read `self.{name}`, which `__init__` already sets to `{looked_up}`"),
        None => format!("Compute `{looked_up}` once in `__init__` as `self.{name}`"),
    };
    let mut risks = Vec::new();
    if let Some(method) = reassigned_in {
        risks.push(format!("`{method}` reassigns `self.{helper}`, the cached value could go stale"));
    }
    if lookup.site.in_branch {
        risks.push("forward looks it up only under a condition; `__init__` now always does, which can fail where that condition would have skipped it".to_string());
    }
    if let Some(write) = masked_write() {
        risks.push(format!(
            "without the break, {write} is traced into one graph with the rest of the frame, and in \
             training the whole frame falls back to eager (TCF105's hazard): apply TCF105's fix with it"
        ));
    }
    Ok(if risks.is_empty() {
        Fix::new(title, Safety::Safe, edits)
    } else {
        Fix::new(format!("{title} (unsafe: {})", risks.join("; ")), Safety::Unsafe, edits)
    })
}

/// `None`, or a parameter of `__init__` that defaults to `None`.
fn may_be_none(model: &FileModel, init: usize, value: &Expr) -> bool {
    let is_none = |expr: &Expr| matches!(expr, Expr::NoneLiteral(_));
    match value {
        Expr::NoneLiteral(_) => true,
        Expr::Name(name) => {
            let FunctionNode::Def(def) = model.function(init).node else { return false };
            def.parameters
                .iter_non_variadic_params()
                .any(|p| p.parameter.name.id == name.id && p.default.as_deref().is_some_and(is_none))
        }
        _ => false,
    }
}

/// An attribute an earlier fix already set to the same lookup: `self.image_token_id_ = ...`.
fn existing_cache(init_body: &[Stmt], looked_up: &Expr) -> Option<String> {
    let wanted = ComparableExpr::from(looked_up);
    init_body.iter().find_map(|stmt| {
        let Stmt::Assign(assign) = stmt else { return None };
        let [Expr::Attribute(target)] = assign.targets.as_slice() else { return None };
        let is_self = is_self(&target.value);
        (is_self && ComparableExpr::from(assign.value.as_ref()) == wanted).then(|| target.attr.id.to_string())
    })
}

/// Whether the statement's text uses `name` as a whole (dotted) name.
fn mentions(text: &str, stmt: &Stmt, name: &str) -> bool {
    let source = &text[stmt.range()];
    let is_name_char = |c: char| c.is_alphanumeric() || c == '_';
    source.match_indices(name).any(|(at, _)| {
        !source[at + name.len()..].starts_with(is_name_char)
            && !source[..at].ends_with(|c: char| is_name_char(c) || c == '.')
    })
}

/// `base`, or `base` with a number, whichever the class does not use yet (nor `also_taken`).
fn free_name(model: &FileModel, class: usize, base: &str, also_taken: impl Fn(&str) -> bool) -> String {
    let class_node = model.classes[class].node;
    let class_text = &model.source.text[class_node.range()];
    let taken = |name: &str| {
        let attr = format!(".{name}");
        class_text
            .match_indices(&attr)
            .any(|(at, _)| !class_text[at + attr.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
            || model.method(class, name).is_some()
            || also_taken(name)
    };
    if !taken(base) {
        return base.to_string();
    }
    (2..).map(|n| format!("{base}{n}")).find(|name| !taken(name)).expect("some number is free")
}
