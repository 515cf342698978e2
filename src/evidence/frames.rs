//! Compiled frames as the user knows them: the function a compile's code object is. Dynamo
//! compiles the code after a graph break as a resume function, `torch_dynamo_resume_in_forward_at_15`,
//! which is still `forward` to the person reading the report.

use ruff_python_ast::{self as ast, Stmt};
use ruff_source_file::LineIndex;
use ruff_text_size::Ranged;

/// `torch_dynamo_resume_in_forward_at_15` -> `forward`; any other name as it is.
pub fn user_function(co_name: &str) -> &str {
    co_name
        .strip_prefix("torch_dynamo_resume_in_")
        .and_then(|rest| rest.rsplit_once("_at_").map(|(name, _)| name))
        .unwrap_or(co_name)
}

/// `torch_dynamo_resume_in_forward_at_1445` -> 1445: the line of the graph break whose code
/// after it this frame is.
pub fn resumed_after(co_name: &str) -> Option<usize> {
    co_name.strip_prefix("torch_dynamo_resume_in_")?.rsplit_once("_at_")?.1.parse().ok()
}

/// A compiled frame placed in a checked file: the function's first line and qualified name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FrameRef {
    pub file: usize,
    pub first_line: usize,
    pub qualname: String,
}

/// A function of a file: its name and its lines, decorators included.
#[derive(Debug)]
pub struct FunctionSpan {
    pub name: String,
    /// `FlakyNet.forward`: the classes and functions around it, then its name.
    pub qualname: String,
    pub first_line: usize,
    pub last_line: usize,
}

/// Every function and method of a Python text (nested ones too); none if it does not parse.
pub fn functions(text: &str) -> Vec<FunctionSpan> {
    let Ok(parsed) = ruff_python_parser::parse_module(text) else { return Vec::new() };
    let lines = LineIndex::from_source_text(text);
    let mut spans = Vec::new();
    collect(&parsed.syntax().body, text, &lines, "", &mut spans);
    spans
}

fn collect(body: &[Stmt], text: &str, lines: &LineIndex, outer: &str, spans: &mut Vec<FunctionSpan>) {
    let inside = |name: &str| if outer.is_empty() { name.to_string() } else { format!("{outer}.{name}") };
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(def) => {
                let start = def.decorator_list.first().map_or(def.start(), |decorator| decorator.start());
                spans.push(FunctionSpan {
                    name: def.name.to_string(),
                    qualname: inside(&def.name),
                    first_line: lines.line_column(start, text).line.get(),
                    last_line: lines.line_column(def.end(), text).line.get(),
                });
                collect(&def.body, text, lines, &inside(&def.name), spans);
            }
            Stmt::ClassDef(class) => collect(&class.body, text, lines, &inside(&class.name), spans),
            Stmt::If(ast::StmtIf { body, elif_else_clauses, .. }) => {
                collect(body, text, lines, outer, spans);
                elif_else_clauses.iter().for_each(|clause| collect(&clause.body, text, lines, outer, spans));
            }
            Stmt::Try(ast::StmtTry { body, handlers, orelse, finalbody, .. }) => {
                collect(body, text, lines, outer, spans);
                for handler in handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    collect(&handler.body, text, lines, outer, spans);
                }
                collect(orelse, text, lines, outer, spans);
                collect(finalbody, text, lines, outer, spans);
            }
            _ => {}
        }
    }
}

/// The innermost function called `name` whose lines hold `line`.
pub fn function_at<'a>(spans: &'a [FunctionSpan], name: &str, line: usize) -> Option<&'a FunctionSpan> {
    spans
        .iter()
        .filter(|span| span.name == name && span.first_line <= line && line <= span.last_line)
        .min_by_key(|span| span.last_line - span.first_line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resume_function_is_the_function_it_resumes() {
        assert_eq!(user_function("torch_dynamo_resume_in_forward_at_15"), "forward");
        assert_eq!(user_function("torch_dynamo_resume_in_step_at_fn_at_9"), "step_at_fn");
        assert_eq!(resumed_after("torch_dynamo_resume_in_step_at_fn_at_9"), Some(9));
        assert_eq!(resumed_after("forward"), None);
        assert_eq!(user_function("forward"), "forward");
    }

    #[test]
    fn methods_and_nested_functions_have_their_lines() {
        let text =
            "class A:\n    @dec\n    def forward(self, x):\n        def inner():\n            pass\n        return x\n";
        let spans = functions(text);
        let forward = function_at(&spans, "forward", 6).unwrap();
        assert_eq!((forward.first_line, forward.last_line), (2, 6));
        assert_eq!(forward.qualname, "A.forward");
        assert_eq!(function_at(&spans, "inner", 5).unwrap().first_line, 4);
        assert!(function_at(&spans, "forward", 1).is_none());
    }
}
