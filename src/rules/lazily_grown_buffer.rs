//! TCF201 lazily-grown-buffer: a buffer registered empty in `__init__` and reassigned in the
//! compiled region (a positional table grown with `torch.cat`). Module tensors are static to
//! Dynamo: every growth fails the size guard ("size mismatch at index 0. expected 8, actual 16")
//! and recompiles. The fix calls the existing growth routine once at the end of `__init__` with
//! the maximum length known there, so in-range inputs never grow it.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::fix::text::{indentation, insert_line_after, stands_alone};
use crate::fix::{Fix, Safety};
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_all, visit_function};
use crate::model::file::{FileModel, FunctionNode};
use crate::model::file::imports::Imports;
use crate::model::file::{init_method, method_body, self_assignments};
use crate::model::file::module::is_self;
use crate::model::compiled::reach::describe;
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF201",
    name: "lazily-grown-buffer",
    summary: "pre-grow buffers that forward grows",
    explanation: include_str!("../../codemods/lazily-grown-buffer/README.md"),
    hazard: "A buffer registered empty and grown in compiled code recompiles at every growth.",
    why: "Dynamo guards on the buffer's shape, so every growth costs a full recompile, and after the recompile \
              limit the frame silently runs eagerly.",
    category: Category::Recompile,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Region(start);

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

/// The config fields, in order of preference, whose default a table may be pre-grown to when the
/// module knows no maximum length (`seq_len` only here: in a module it is the input's length).
const CONFIG_MAX_LENGTH_NAMES: [&str; 11] = [
    "max_position_embeddings",
    "max_seq_len",
    "max_seq_length",
    "max_len",
    "max_length",
    "max_positions",
    "n_positions",
    "block_size",
    "context_length",
    "seq_len",
    "seq_length",
];

pub(crate) struct EmptyBuffer {
    pub(crate) name: String,
    persistent: bool,
}

/// Where the compiled code replaces a buffer (`self.pe = ...` or `self.register_buffer("pe", ...)`):
/// which of the class's empty buffers.
struct Growth {
    buffer: usize,
    range: TextRange,
    site: Site,
}

fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(Growths {
        model: checker.model,
        classes: HashMap::default(),
        class: None,
        found: Vec::new(),
        growths: Vec::new(),
        self_calls: HashMap::default(),
    })
}

/// A module class's empty buffers, registered in its `__init__`.
struct EmptyBuffers {
    init: usize,
    buffers: Vec<EmptyBuffer>,
    /// The methods `__init__` runs, found on the first growth.
    run_by_init: Option<HashSet<String>>,
}

/// The growths of empty buffers in the compiled code of each module class's region functions,
/// found in the checker's walk and reported when the walk of their function ends.
struct Growths<'m, 'a> {
    model: &'m FileModel<'a>,
    /// By module class: its empty buffers, if it has any.
    classes: HashMap<usize, Option<EmptyBuffers>>,
    /// The class of the function being walked, when it has empty buffers.
    class: Option<usize>,
    /// The growths in the function being walked.
    found: Vec<Growth>,
    /// By class, and function: the growths found, reported when the walk is over.
    growths: Vec<(usize, usize, Vec<Growth>)>,
    /// By class: the `self.<method>(...)` calls in its functions' compiled code, with where they sit.
    self_calls: HashMap<usize, Vec<(String, Site)>>,
}

impl Growths<'_, '_> {
    fn buffer(&self, name: &str) -> Option<usize> {
        let buffers = &self.classes.get(&self.class?)?.as_ref()?.buffers;
        buffers.iter().position(|b| b.name == name)
    }
}

impl<'a> RegionHooks<'a> for Growths<'_, 'a> {
    fn start(&mut self, function: &Function<'_, 'a>) -> bool {
        let model = self.model;
        self.class = model.self_class(function.id).filter(|&class| {
            model.classes[class].is_module
                && self
                    .classes
                    .entry(class)
                    .or_insert_with(|| {
                        let init = init_method(model, class)?;
                        let buffers = empty_buffers(model, init);
                        (!buffers.is_empty()).then_some(EmptyBuffers { init, buffers, run_by_init: None })
                    })
                    .is_some()
        });
        self.class.is_some()
    }

    fn stmt(&mut self, _function: &Function<'_, 'a>, stmt: &'a Stmt, site: Site) {
        let targets: Vec<&Expr> = match stmt {
            Stmt::Assign(assign) => assign.targets.iter().collect(),
            Stmt::AugAssign(assign) => vec![assign.target.as_ref()],
            Stmt::AnnAssign(assign) => vec![assign.target.as_ref()],
            _ => return,
        };
        for target in targets {
            let Expr::Attribute(attr) = target else { continue };
            if let Some(buffer) = self.buffer(attr.attr.id.as_str()).filter(|_| is_self(&attr.value)) {
                self.found.push(Growth { buffer, range: stmt.range(), site });
            }
        }
    }

    fn expr(&mut self, _function: &Function<'_, 'a>, expr: &'a Expr, site: Site) -> bool {
        if let (Expr::Call(call), Some(class)) = (expr, self.class)
            && let Expr::Attribute(method) = call.func.as_ref()
            && is_self(&method.value)
        {
            self.self_calls.entry(class).or_default().push((method.attr.id.to_string(), site));
        }
        if let Expr::Call(call) = expr
            && let Some((Expr::StringLiteral(name), _, _)) = register_buffer_arguments(call)
            && let Some(buffer) = self.buffer(name.value.to_str())
        {
            self.found.push(Growth { buffer, range: call.range(), site });
        }
        true
    }

    fn end(&mut self, function: &Function<'_, 'a>, _diagnostics: &mut Vec<Diagnostic>) {
        if let Some(class) = self.class
            && !self.found.is_empty()
        {
            self.growths.push((class, function.id, std::mem::take(&mut self.found)));
        }
    }

    /// Whether a growth is guarded depends on the calls of its routine in the class's other
    /// functions, which the walk may reach after it: the growths are reported once it is over.
    fn finish(mut self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let model = self.model;
        for (class, function, found) in std::mem::take(&mut self.growths) {
            let Some(Some(empty)) = self.classes.get_mut(&class) else { continue };
            let self_calls = self.self_calls.get(&class).map_or(&[][..], Vec::as_slice);
            for growth in found {
                let buffer = &empty.buffers[growth.buffer];
                let guarded = growth_is_guarded(model, self_calls, function, growth.site);
                let run_by_init = empty.run_by_init.get_or_insert_with(|| methods_run_by(model, class, empty.init));
                if guarded && run_by_init.contains(&model.function(function).name) {
                    continue; // pre-grown in `__init__` already
                }
                let message = format!(
                    "buffer `{}` is registered empty and grown in {}: each growth fails Dynamo's size guard and \
                     recompiles",
                    buffer.name,
                    describe(model, function)
                );
                let diagnostic = Diagnostic::new(&RULE, growth.range, message);
                diagnostics.push(match pre_grow_fix(model, empty.init, function, buffer, guarded) {
                    Ok(fix) => diagnostic.with_fix(fix),
                    Err(reason) => diagnostic.without_fix(reason),
                });
            }
        }
    }
}

/// The `self.register_buffer(name, tensor, persistent)` arguments, positional or by keyword.
pub(crate) fn register_buffer_arguments(call: &ast::ExprCall) -> Option<(&Expr, Option<&Expr>, Option<&Expr>)> {
    let Expr::Attribute(method) = call.func.as_ref() else { return None };
    if method.attr.id.as_str() != "register_buffer" || !is_self(&method.value) {
        return None;
    }
    let argument = |index: usize, keyword: &str| {
        call.arguments.args.get(index).or_else(|| call.arguments.find_keyword(keyword).map(|k| &k.value))
    };
    Some((argument(0, "name")?, argument(1, "tensor"), argument(2, "persistent")))
}

/// `self.register_buffer("pe", torch.empty(0, d), persistent=False)` calls in `__init__`.
pub(crate) fn empty_buffers(model: &FileModel, init: usize) -> Vec<EmptyBuffer> {
    struct Finder<'i> {
        imports: &'i Imports,
        found: Vec<EmptyBuffer>,
    }
    // A visitor of its own: `__init__` is eager code, which the checker's walk of compiled code never sees (once per class).
    impl<'a> CompiledCodeVisitor<'a> for Finder<'_> {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            let Expr::Call(call) = expr else { return true };
            let Some((Expr::StringLiteral(name), Some(tensor), persistent)) = register_buffer_arguments(call) else {
                return true;
            };
            if is_empty_tensor(tensor, self.imports) {
                let persistent = !matches!(persistent, Some(Expr::BooleanLiteral(b)) if !b.value);
                self.found.push(EmptyBuffer { name: name.value.to_str().to_string(), persistent });
            }
            true
        }
    }
    let mut finder = Finder { imports: &model.imports, found: Vec::new() };
    visit_all(model.function(init).node.body(), &mut finder);
    finder.found
}

/// `torch.empty(0, d)`, `torch.zeros((0, d))`, `torch.tensor([])`, `torch.Tensor()`: no rows yet.
fn is_empty_tensor(expr: &Expr, imports: &Imports) -> bool {
    let Expr::Call(call) = expr else { return false };
    let Some(function) = imports.qualified_name(&call.func) else { return false };
    let is_zero =
        |e: &Expr| matches!(e, Expr::NumberLiteral(n) if n.value.as_int().and_then(|i| i.as_u64()) == Some(0));
    let first = call.arguments.args.first();
    match function.as_str() {
        "torch.Tensor" => call.arguments.is_empty(),
        "torch.tensor" => matches!(first, Some(Expr::List(list)) if list.elts.is_empty()),
        "torch.empty" | "torch.zeros" | "torch.ones" | "torch.randn" | "torch.rand" | "torch.full" => match first {
            Some(Expr::Tuple(shape)) => shape.elts.first().is_some_and(is_zero),
            Some(Expr::List(shape)) => shape.elts.first().is_some_and(is_zero),
            Some(size) => is_zero(size),
            None => false,
        },
        _ => false,
    }
}

/// Whether the growth happens only when the buffer is too short (`if n > self.pe.shape[0]:`),
/// rather than on every call: under a condition, after an early return, or in a routine that
/// every caller calls under a condition.
fn growth_is_guarded(model: &FileModel, self_calls: &[(String, Site)], function: usize, site: Site) -> bool {
    if site.in_branch || has_early_return(model, function) {
        return true;
    }
    let name = &model.function(function).name;
    let mut call_sites = self_calls.iter().filter(|(called, _)| called == name).peekable();
    call_sites.peek().is_some() && call_sites.all(|(_, site)| site.in_branch)
}

fn has_early_return(model: &FileModel, function: usize) -> bool {
    method_body(model, function)
        .iter()
        .any(|stmt| matches!(stmt, Stmt::If(if_stmt) if matches!(if_stmt.body.last(), Some(Stmt::Return(_)))))
}

/// The `self.<method>(...)` calls in all of a function's code (`__init__` and what it runs: eager
/// code, which the checker's walk of compiled code never sees).
fn self_calls(model: &FileModel, function: usize) -> Vec<String> {
    struct Finder(Vec<String>);
    // A visitor of its own: `__init__` and what it runs are eager code, which the checker's walk of compiled code never sees.
    impl<'a> CompiledCodeVisitor<'a> for Finder {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(attr) = call.func.as_ref()
                && is_self(&attr.value)
            {
                self.0.push(attr.attr.id.to_string());
            }
            true
        }
    }
    let mut finder = Finder(Vec::new());
    visit_all(model.function(function).node.body(), &mut finder);
    finder.0
}

/// The methods of the class that `__init__` runs, directly or through other methods
/// (`self.reset_parameters()` calling `self._extend_pe(...)`).
fn methods_run_by(model: &FileModel, class: usize, init: usize) -> HashSet<String> {
    let mut run: HashSet<String> = HashSet::default();
    let mut pending = vec![init];
    while let Some(function) = pending.pop() {
        // `__init__` and what it calls run eagerly, whatever `is_compiling()` branches they hold.
        for name in self_calls(model, function) {
            if run.insert(name.clone()) {
                pending.extend(model.method(class, &name));
            }
        }
    }
    run
}

/// `self.<grow>(<max length>)` as the last line of `__init__`.
fn pre_grow_fix(
    model: &FileModel,
    init: usize,
    grow: usize,
    buffer: &EmptyBuffer,
    guarded: bool,
) -> Result<Fix, String> {
    let routine = model.function(grow);
    let FunctionNode::Def(def) = routine.node else { return Err("grown in a lambda".to_string()) };
    if !guarded {
        return Err(format!(
            "`{}` is rebuilt on every call, not only when too short: pre-growing it would not stop the recompiles; give it a fixed size",
            buffer.name
        ));
    }
    if routine.name == "forward" || routine.class.is_none() {
        return Err("grown inline: move the growth into a method that takes the new length, then call it from `__init__` with the maximum length".to_string());
    }
    let Some(rest) = growth_arguments(&def.parameters, &buffer.name) else {
        return Err(format!(
            "`{}` takes something else than a length (then, optionally, a `device` and a `dtype`): call it from `__init__` by hand with the maximum length",
            routine.name
        ));
    };
    let (max_length, from_config) = match max_length_in_init(model, init) {
        Some(expr) => (expr, None),
        None => {
            let (field, default, from) = config_max_length(model).ok_or_else(|| {
                format!(
                    "pass the maximum length to `__init__` and call `self.{}(<max length>{rest})` at its end: \
                     tcfix found no `max_len`-like parameter or config default",
                    routine.name
                )
            })?;
            (default.clone(), Some((format!("`{field} = {default}`"), from)))
        }
    };
    let body = method_body(model, init);
    let text = &model.source.text;
    let (Some(first), Some(last)) = (body.first(), body.last()) else { return Err("`__init__` is empty".to_string()) };
    if !stands_alone(text, first.range()) || !stands_alone(text, last.range()) {
        return Err("`__init__` shares its lines with other code: add the call by hand".to_string());
    }
    if matches!(last, Stmt::Return(_) | Stmt::Raise(_)) {
        return Err("`__init__` ends in a return".to_string());
    }
    let line = format!("self.{}({max_length}{rest})", routine.name);
    let edit = insert_line_after(text, last.range(), indentation(text, first.start()), &line);
    let title = format!("Call `{line}` at the end of `__init__` so forward never grows `{}`", buffer.name);
    let mut risks = Vec::new();
    if buffer.persistent {
        risks.push("the buffer is persistent, so its size in `state_dict` changes".to_string());
    }
    if let Some((default, from)) = &from_config {
        risks.push(format!(
            "the length is {from} {default}, which this module does not know: a model built with \
             a longer one, or longer inputs, still grow the table and recompile; the table's values for earlier \
             positions are unchanged"
        ));
    }
    // Passed the buffer's own dtype, the routine builds the table as the empty buffer is typed.
    if !rest.ends_with(".dtype") && !keeps_dtype(model, grow, &buffer.name) {
        risks.push(
            "the table is now built before the model is cast (`.to(torch.bfloat16)`), so it takes that dtype where it used to stay float32"
                .to_string(),
        );
    }
    Ok(if risks.is_empty() {
        Fix::new(title, Safety::Safe, vec![edit])
    } else {
        Fix::new(format!("{title} (unsafe: {})", risks.join("; ")), Safety::Unsafe, vec![edit])
    })
}

/// Whether the growth routine builds the new table in the buffer's own dtype (`self.pe.dtype`,
/// `.type_as(self.pe)`, `.to(self.pe)`): then building it early, before a cast, changes nothing.
/// A fixed `dtype=torch.float32` or `.to(self.pe.device)` does not.
fn keeps_dtype(model: &FileModel, grow: usize, buffer: &str) -> bool {
    struct Finder<'b> {
        buffer: &'b str,
        found: bool,
    }
    impl Finder<'_> {
        fn is_buffer(&self, expr: &Expr) -> bool {
            matches!(expr, Expr::Attribute(attr) if attr.attr.id.as_str() == self.buffer && is_self(&attr.value))
        }
    }
    // A visitor of its own: the fix's question about the growth routine, asked once per finding.
    impl<'a> CompiledCodeVisitor<'a> for Finder<'_> {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            match expr {
                // self.pe.dtype
                Expr::Attribute(attr) if attr.attr.id.as_str() == "dtype" && self.is_buffer(&attr.value) => {
                    self.found = true
                }
                // x.type_as(self.pe), x.to(self.pe)
                Expr::Call(call) => {
                    let method = match call.func.as_ref() {
                        Expr::Attribute(method) => method.attr.id.as_str(),
                        _ => "",
                    };
                    let like_buffer = matches!(call.arguments.args.as_ref(), [only] if self.is_buffer(only));
                    self.found |= matches!(method, "type_as" | "to") && like_buffer;
                }
                _ => {}
            }
            true
        }
    }
    let mut finder = Finder { buffer, found: false };
    visit_function(model, grow, &mut finder);
    finder.found
}

/// What the growth routine takes after the length: nothing (`extend_pe(self, length)`), or the
/// device and dtype to build the table with (`_ensure_cache(self, seq_len, device, dtype)`), which
/// `__init__` passes as the empty buffer's own (`self.table.device, self.table.dtype`) so that a
/// later `.to(...)` of the model moves and casts the table as it would have moved the empty one.
/// `None` for a routine taking anything else (`extend_pe(self, x)` takes a tensor, not a length).
fn growth_arguments(parameters: &ast::Parameters, buffer: &str) -> Option<String> {
    let required: Vec<&str> = parameters
        .posonlyargs
        .iter()
        .chain(&parameters.args)
        .skip(1) // self
        .filter(|p| p.default.is_none())
        .map(|p| p.parameter.name.id.as_str())
        .collect();
    let looks_like_length = |name: &str| {
        let name = name.to_ascii_lowercase();
        name == "n"
            || name.starts_with("n_")
            || name.starts_with("num")
            || ["len", "size", "seq", "pos", "max", "count"].iter().any(|word| name.contains(word))
    };
    let (length, rest) = required.split_first()?;
    if !looks_like_length(length) {
        return None;
    }
    let mut passed = String::new();
    for name in rest {
        let property = match *name {
            "device" => "device",
            "dtype" => "dtype",
            _ => return None,
        };
        passed.push_str(&format!(", self.{buffer}.{property}"));
    }
    Some(passed)
}

/// The maximum length a config class gives by default (`max_seq_len: int = 64` in
/// `DecoderConfig`), when the module itself knows none: its field name, literal, and where it is
/// from. The config classes the file defines or imports come first; then the project's, anywhere
/// (a `TrainConfig` in `core/config.py` that no model file imports), the longest where several
/// give the field one.
fn config_max_length(model: &FileModel) -> Option<(&'static str, String, String)> {
    let seen = CONFIG_MAX_LENGTH_NAMES.iter().find_map(|&field| {
        let default = model.config_defaults.get(field)?.positive_integer()?;
        Some((field, default.to_string(), "the project config's default".to_string()))
    });
    seen.or_else(|| {
        CONFIG_MAX_LENGTH_NAMES.iter().find_map(|&field| {
            let (length, class) = model.project_lengths.get(field)?;
            let from = format!("the longest default of the project's config classes, `{class}`'s");
            Some((field, length.to_string(), from))
        })
    })
}

/// The expression holding the maximum length at the end of `__init__`: an attribute set there
/// (`self.max_len`), a parameter that cannot be `None` (`max_len`), or an attribute of a
/// parameter (`config.max_position_embeddings`).
fn max_length_in_init(model: &FileModel, init: usize) -> Option<String> {
    let FunctionNode::Def(def) = model.function(init).node else { return None };
    let text = &model.source.text[def.range()];
    let parameters: Vec<&ast::ParameterWithDefault> = def.parameters.iter_non_variadic_params().collect();
    let uses = |expr: &str| {
        text.match_indices(expr).any(|(at, _)| {
            !text[at + expr.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                && !text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
        })
    };
    let class = model.function(init).class?;
    let set_in_init = self_assignments(model, class).iter().find(|assignment| {
        assignment.method == init && assignment.top_level && MAX_LENGTH_NAMES.contains(&assignment.attr.as_str())
    });
    if let Some(assignment) = set_in_init {
        return Some(format!("self.{}", assignment.attr));
    }
    let never_none = |p: &&ast::ParameterWithDefault| !matches!(p.default.as_deref(), Some(Expr::NoneLiteral(_)));
    if let Some(parameter) = parameters
        .iter()
        .copied()
        .filter(|p| never_none(p))
        .find(|p| MAX_LENGTH_NAMES.contains(&p.parameter.name.id.as_str()))
    {
        return Some(parameter.parameter.name.id.to_string());
    }
    parameters.iter().skip(1).find_map(|p| {
        MAX_LENGTH_NAMES.iter().map(|name| format!("{}.{name}", p.parameter.name.id)).find(|expr| uses(expr))
    })
}
