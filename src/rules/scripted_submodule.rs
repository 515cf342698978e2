//! TCF109 scripted-submodule: `self.x = torch.jit.script(Module(...))` in a module's `__init__`,
//! with `self.x(...)` called from compiled code. Dynamo cannot trace a ScriptModule: the frame that
//! calls it is not compiled at all and runs eagerly. The fix drops the `torch.jit.script(...)`
//! wrapper (unsafe: TorchScript-only behaviour and exported methods may differ).

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::{self as ast, Expr, ExprContext};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::{init_method, self_assignments};
use crate::model::file::module::is_self;
use crate::model::compiled::reach::describe;
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF109",
    name: "scripted-submodule",
    summary: "drop torch.jit.script around submodules of compiled modules",
    explanation: include_str!("../../codemods/scripted-submodule/README.md"),
    hazard: "A `torch.jit.script` submodule called from compiled code makes Dynamo skip the calling frame.",
    why: "Dynamo cannot trace a ScriptModule, so the frame that calls it (often the whole forward) runs eagerly \
              and compiling it gains nothing.",
    category: Category::GraphBreak,
    fixes: &[Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Region(start);

fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(ScriptCalls { checker, scripted: HashMap::default(), first_caller: HashMap::default() })
}

/// The calls of scripted submodules in the region's compiled code, found in the checker's walk.
struct ScriptCalls<'c, 'a> {
    checker: &'c Checker<'a>,
    /// By class, whether its `__init__` assigns a `torch.jit.script(...)` to an attribute.
    scripted: HashMap<usize, bool>,
    /// By class and attribute, the first of the class's compiled functions that calls
    /// `self.<attr>(...)` (the region is walked in source order, as `region_functions_of` lists).
    first_caller: HashMap<(usize, &'a str), usize>,
}

impl<'a> RegionHooks<'a> for ScriptCalls<'_, 'a> {
    fn start(&mut self, function: &Function<'_, 'a>) -> bool {
        let model = self.checker.model;
        let Some(class) = model.self_class(function.id) else { return false };
        *self.scripted.entry(class).or_insert_with(|| scripts_submodule(model, class))
    }

    fn expr(&mut self, function: &Function<'_, 'a>, expr: &'a Expr, _site: Site) -> bool {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(attr) = call.func.as_ref()
            && attr.ctx == ExprContext::Load
            && is_self(&attr.value)
            && let Some(class) = self.checker.model.self_class(function.id)
        {
            self.first_caller.entry((class, attr.attr.id.as_str())).or_insert(function.id);
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let model = self.checker.model;
        for (class, info) in model.classes.iter().enumerate() {
            if !info.is_module {
                continue;
            }
            let Some(init) = init_method(model, class) else { continue };
            for assignment in self_assignments(model, class) {
                if assignment.method != init {
                    continue;
                }
                let Some(Expr::Call(script)) = assignment.value() else { continue };
                if !is_jit_script(model, script) {
                    continue;
                }
                let Some(&function) = self.first_caller.get(&(class, assignment.attr.as_str())) else { continue };
                let message = format!(
                    "`self.{}` is a `torch.jit.script` module called from {}: Dynamo cannot trace a ScriptModule and runs that frame eagerly",
                    assignment.attr,
                    describe(model, function)
                );
                // Critical wherever the call sits: the frame runs eagerly already, loop or not.
                let diagnostic = Diagnostic::new(&RULE, script.range(), message).with_severity(Severity::Critical);
                diagnostics.push(with_fix(model, diagnostic, script));
            }
        }
    }
}

/// Whether the class's `__init__` assigns a `torch.jit.script(...)` to an attribute.
fn scripts_submodule(model: &FileModel, class: usize) -> bool {
    let Some(init) = init_method(model, class) else { return false };
    self_assignments(model, class).iter().any(|assignment| {
        assignment.method == init && matches!(assignment.value(), Some(Expr::Call(script)) if is_jit_script(model, script))
    })
}

fn is_jit_script(model: &FileModel, call: &ast::ExprCall) -> bool {
    matches!(model.imports.qualified_name(&call.func).as_deref(), Some("torch.jit.script"))
}

/// The script call replaced by its argument, when it has exactly one positional argument.
fn with_fix(model: &FileModel, diagnostic: Diagnostic, script: &ast::ExprCall) -> Diagnostic {
    let [argument] = script.arguments.args.as_ref() else {
        return diagnostic.without_fix("the `torch.jit.script` call has other arguments: remove the wrapper by hand");
    };
    if !script.arguments.keywords.is_empty() || argument.is_starred_expr() {
        return diagnostic.without_fix("the `torch.jit.script` call has other arguments: remove the wrapper by hand");
    }
    let text = &model.source.text;
    let edits = if text[script.range()].contains(['\n', '\r', '#']) {
        // Spread over lines or holding comments: drop only `torch.jit.script`, so its parentheses
        // keep the lines together and every comment stays. A trailing comma would make a tuple.
        if text[TextRange::new(argument.end(), script.end())].contains(',') {
            return diagnostic.without_fix("the call ends with a trailing comma: remove the wrapper by hand");
        }
        vec![Edit::replace(script.func.range(), "")]
    } else {
        vec![Edit::replace(script.range(), &text[argument.range()])]
    };
    let title = "Drop the `torch.jit.script` wrapper (unsafe: TorchScript-only behaviour, such as `@torch.jit.export` methods and scripted type refinement, is gone)";
    diagnostic.with_fix(Fix::new(title, Safety::Unsafe, edits))
}

