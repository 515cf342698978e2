//! TCF108 deprecated-sdp-kernel: `torch.backends.cuda.sdp_kernel(...)` is deprecated (a
//! FutureWarning on every use) and, in compiled code, breaks the graph (GB0208: the context
//! manager is a torch.* call that returns no tensor). The fix writes what `sdp_kernel` itself does
//! in torch 2.15: `torch.nn.attention.sdpa_kernel([...])` with the enabled backends, in the order
//! FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH, CUDNN_ATTENTION.
//! A test file that never calls `torch.compile` runs the modules it defines eagerly: there the call
//! breaks nothing tcfix is about, and a deprecation note would fail a pre-commit run for a file
//! that never compiles: it is not reported.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::discover::is_test_file;
use crate::fix::text::{NEW_MODULE_IMPORT, torch_name_at};
use crate::fix::torch_api::TorchVersion;
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compile_calls::compiles_anything;
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF108",
    name: "deprecated-sdp-kernel",
    summary: "replace torch.backends.cuda.sdp_kernel with torch.nn.attention.sdpa_kernel",
    explanation: include_str!("../../codemods/deprecated-sdp-kernel/README.md"),
    hazard: "The deprecated `torch.backends.cuda.sdp_kernel` context manager breaks the graph in compiled code.",
    why: "Dynamo cannot trace the old context manager (GB0208), so the attention it wraps runs between two graphs, \
              and everywhere it warns that it will be removed.",
    category: Category::GraphBreak,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &["sdp_kernel"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Region(start);

const SDP_KERNEL: &str = "torch.backends.cuda.sdp_kernel";

/// `sdp_kernel`'s parameters in order, and the backend each one enables (torch 2.15's mapping).
const FLAGS: [(&str, &str); 4] = [
    ("enable_flash", "FLASH_ATTENTION"),
    ("enable_math", "MATH"),
    ("enable_mem_efficient", "EFFICIENT_ATTENTION"),
    ("enable_cudnn", "CUDNN_ATTENTION"),
];

/// The order in which `sdp_kernel` appends the backends to its list.
const BACKEND_ORDER: [&str; 4] = ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH", "CUDNN_ATTENTION"];

fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    let model = checker.model;
    let skipped = is_test_file(&model.source.path) && !compiles_anything(model);
    Box::new(SdpKernelCalls { checker, skipped, seen: HashSet::default(), found: Vec::new() })
}

/// The `sdp_kernel` calls of the file: those in compiled code met in the checker's walk, the
/// others found among the file's calls once the region is walked.
struct SdpKernelCalls<'c, 'a> {
    checker: &'c Checker<'a>,
    /// A test file that compiles nothing: nothing is reported.
    skipped: bool,
    /// The calls already reported (a function the region reaches twice shows them again).
    seen: HashSet<TextRange>,
    found: Vec<Diagnostic>,
}

impl<'a> RegionHooks<'a> for SdpKernelCalls<'_, 'a> {
    fn start(&mut self, _function: &Function<'_, 'a>) -> bool {
        !self.skipped
    }

    fn expr(&mut self, function: &Function<'_, 'a>, expr: &'a Expr, site: Site) -> bool {
        let model = self.checker.model;
        if let Expr::Call(call) = expr
            && is_sdp_kernel(model, call)
            && self.seen.insert(call.range())
        {
            let message = format!(
                "`{}` is deprecated, and in {} it breaks the graph (GB0208)",
                shown(model, call),
                function.describe()
            );
            let diagnostic = function.graph_break(Diagnostic::new(&RULE, call.range(), message), site);
            self.found.push(with_fix(self.checker, diagnostic, call));
        }
        true
    }

    fn finish(mut self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        if self.skipped {
            return;
        }
        let model = self.checker.model;
        // Outside compiled code the old context manager only warns: reported, at low severity, so
        // one run moves a project off it.
        for &call in &model.calls {
            if !is_sdp_kernel(model, call) || !self.seen.insert(call.range()) {
                continue;
            }
            let message = format!(
                "`{}` is deprecated (a FutureWarning on every use); this code is not compiled, so it breaks no graph here",
                shown(model, call)
            );
            let diagnostic = Diagnostic::new(&RULE, call.range(), message).with_severity(Severity::Low);
            self.found.push(with_fix(self.checker, diagnostic, call));
        }
        diagnostics.append(&mut self.found);
    }
}

fn shown(model: &FileModel, call: &ast::ExprCall) -> String {
    let func = &model.source.text[call.func.range()];
    format!("{func}(...)")
}

fn is_sdp_kernel(model: &FileModel, call: &ast::ExprCall) -> bool {
    model.imports.qualified_name(&call.func).as_deref() == Some(SDP_KERNEL)
}

fn with_fix(checker: &Checker, diagnostic: Diagnostic, call: &ast::ExprCall) -> Diagnostic {
    if checker.settings.target_torch < TorchVersion(2, 3) {
        return diagnostic.without_fix(
            "`torch.nn.attention.sdpa_kernel` arrived in torch 2.3 and the project targets an older torch",
        );
    }
    let backends = match enabled_backends(call) {
        Ok(backends) => backends,
        Err(why) => return diagnostic.without_fix(why),
    };
    let model = checker.model;
    if model.source.text[call.range()].contains('#') && has_comment(model, call) {
        return diagnostic.without_fix("the call holds comments that the rewrite would drop: rewrite it by hand");
    }
    let names = AttentionNames::of(model);
    let torch_at_call = torch_name_at(model, call.start());
    let torch = &torch_at_call.name;
    let needs_torch = names.sdpa_kernel.is_none() || names.sdp_backend.is_none();
    let sdpa_kernel = names.sdpa_kernel.clone().unwrap_or_else(|| format!("{torch}.nn.attention.sdpa_kernel"));
    let backend = names.sdp_backend.clone().unwrap_or_else(|| format!("{torch}.nn.attention.SDPBackend"));
    let list: Vec<String> = backends.iter().map(|b| format!("{backend}.{b}")).collect();
    let replacement = format!("{sdpa_kernel}([{}])", list.join(", "));
    let mut edits = vec![Edit::replace(call.range(), replacement)];
    let title = format!("Use `{sdpa_kernel}` with the backends `sdp_kernel` enabled");
    if needs_torch && torch_at_call.new_module_import {
        edits.extend(torch_at_call.import);
        return diagnostic.with_fix(Fix::new(format!("{title} ({NEW_MODULE_IMPORT})"), Safety::Unsafe, edits));
    }
    if needs_torch {
        edits.extend(torch_at_call.import);
    }
    diagnostic.with_fix(Fix::new(title, Safety::Safe, edits))
}

fn has_comment(model: &FileModel, call: &ast::ExprCall) -> bool {
    model.source.parsed.tokens().in_range(call.range()).iter().any(|token| token.kind() == TokenKind::Comment)
}

/// The backends the call enables, in `sdp_kernel`'s order; an error saying why when an argument is
/// not a literal `True`/`False`.
fn enabled_backends(call: &ast::ExprCall) -> Result<Vec<&'static str>, String> {
    let mut enabled = [true; 4];
    let arguments = &call.arguments;
    if arguments.args.len() > FLAGS.len() {
        return Err("`sdp_kernel` takes four flags; this call passes more".to_string());
    }
    for (index, value) in arguments.args.iter().enumerate() {
        enabled[index] = literal_flag(value, FLAGS[index].0)?;
    }
    for keyword in &arguments.keywords {
        let Some(name) = &keyword.arg else {
            return Err("the flags come from `**kwargs`: write the backend list by hand".to_string());
        };
        let Some(index) = FLAGS.iter().position(|(flag, _)| *flag == name.id.as_str()) else {
            return Err(format!("`{}` is not a flag of `sdp_kernel`", name.id));
        };
        enabled[index] = literal_flag(&keyword.value, FLAGS[index].0)?;
    }
    Ok(BACKEND_ORDER
        .iter()
        .filter(|backend| FLAGS.iter().zip(enabled).any(|((_, b), on)| on && b == *backend))
        .copied()
        .collect())
}

fn literal_flag(value: &Expr, flag: &str) -> Result<bool, String> {
    match value {
        Expr::BooleanLiteral(literal) => Ok(literal.value),
        Expr::Starred(_) => Err("the flags come from `*args`: write the backend list by hand".to_string()),
        _ => Err(format!(
            "`{flag}` is not a literal True/False, so the backends are known only at run time: build the list for `torch.nn.attention.sdpa_kernel` from it by hand"
        )),
    }
}

/// Names the file already binds at module level to `sdpa_kernel` and `SDPBackend`.
#[derive(Default)]
struct AttentionNames {
    sdpa_kernel: Option<String>,
    sdp_backend: Option<String>,
}

impl AttentionNames {
    fn of(model: &FileModel) -> Self {
        let mut names = Self::default();
        for stmt in model.source.parsed.suite() {
            let Stmt::ImportFrom(import) = stmt else { continue };
            let module = import.module.as_ref().map(|m| m.id.as_str());
            if import.level != 0 || !matches!(module, Some("torch.nn.attention")) {
                continue;
            }
            for alias in &import.names {
                let local = alias.asname.as_ref().unwrap_or(&alias.name).id.to_string();
                match alias.name.id.as_str() {
                    "sdpa_kernel" => names.sdpa_kernel = Some(local),
                    "SDPBackend" => names.sdp_backend = Some(local),
                    _ => {}
                }
            }
        }
        names
    }
}
