//! The Dynamo options that let it trace values it otherwise breaks on, and whether a file turns
//! them on (`torch._dynamo.config.capture_scalar_outputs = True`). Such a setting holds for every
//! compiled call in the process once the file has run, so TCF103 and TCF106 do not report what it
//! makes traceable, wherever in the project it is written (`Captures`).

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::compiled::compile_calls::{compiles_anything, is_test};
use crate::model::file::FileModel;
use crate::model::file::configured::{Capture, Captures};
impl Captures {
    /// The file's.
    pub fn of(model: &FileModel) -> Self {
        let path = &model.source.path;
        let script = is_script(model);
        let compiles = !crate::discover::is_test_file(path) && script && compiles_anything(model);
        Captures {
            scalar_outputs: sets(model, Capture::ScalarOutputs),
            dynamic_output_shape_ops: sets(model, Capture::DynamicOutputShapeOps),
            compiled_in: compiles.then(|| path.display().to_string()),
            script,
        }
    }
}

/// Whether the file turns `capture` on: an assignment of a true constant to the option, through
/// any import of it (`torch._dynamo.config.X`, `import torch._dynamo as dynamo` then
/// `dynamo.config.X`, `from torch._dynamo import config` then `config.X`), at module level or in a
/// function or method (a script's `main`, a trainer's `setup`, that sets it before compiling) other
/// than a test's: a test's setting says nothing of how the project's code is compiled.
pub fn sets(model: &FileModel, capture: Capture) -> bool {
    if !model.source.text.contains(capture.option()) {
        return false;
    }
    let qualified = capture.qualified();
    any_setting(model.source.parsed.suite(), &|target| model.imports.refers_to(target, &qualified))
}

fn any_setting(body: &[Stmt], is_option: &dyn Fn(&Expr) -> bool) -> bool {
    body.iter().any(|stmt| match stmt {
        Stmt::Assign(assign) => is_true(&assign.value) && assign.targets.iter().any(is_option),
        Stmt::AnnAssign(assign) => assign.value.as_deref().is_some_and(is_true) && is_option(&assign.target),
        Stmt::If(if_stmt) => {
            any_setting(&if_stmt.body, is_option)
                || if_stmt.elif_else_clauses.iter().any(|clause| any_setting(&clause.body, is_option))
        }
        Stmt::Try(try_stmt) => {
            any_setting(&try_stmt.body, is_option)
                || any_setting(&try_stmt.orelse, is_option)
                || any_setting(&try_stmt.finalbody, is_option)
        }
        Stmt::With(with) => any_setting(&with.body, is_option),
        Stmt::For(for_stmt) => any_setting(&for_stmt.body, is_option),
        Stmt::While(while_stmt) => any_setting(&while_stmt.body, is_option),
        Stmt::ClassDef(class) => any_setting(&class.body, is_option),
        Stmt::FunctionDef(def) if !is_test(def.name.as_str()) => any_setting(&def.body, is_option),
        _ => false,
    })
}

/// A file run as a program, where a process-wide setting belongs: one with an `if __name__ ==
/// "__main__":` block, or one outside any package (no `__init__.py` beside it). A module of a
/// package that compiles (timm's `optim/kron.py` compiles its update at import) is imported by
/// everyone who imports the package: a setting there would flip the option for all of them.
fn is_script(model: &FileModel) -> bool {
    let main_guard = model.source.parsed.suite().iter().any(|stmt| {
        matches!(stmt, Stmt::If(if_stmt) if matches!(if_stmt.test.as_ref(), Expr::Compare(compare)
            if matches!(compare.left.as_ref(), Expr::Name(name) if name.id.as_str() == "__name__")))
    });
    let in_package = model.source.path.parent().is_some_and(|dir| dir.join("__init__.py").exists());
    main_guard || !in_package
}

/// `True`, or a non-zero number.
fn is_true(value: &Expr) -> bool {
    match value {
        Expr::BooleanLiteral(literal) => literal.value,
        Expr::NumberLiteral(number) => match &number.value {
            ast::Number::Int(int) => int.as_u64() != Some(0),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::source::SourceFile;

    fn sets_in(text: &str, capture: Capture) -> bool {
        let source = SourceFile::parse(Path::new("m.py"), text.to_string()).unwrap();
        let model = FileModel::build(&source, "m");
        sets(&model, capture)
    }

    #[test]
    fn the_setting_is_recognised_through_any_import() {
        let plain = "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n";
        assert!(sets_in(plain, Capture::ScalarOutputs));
        assert!(!sets_in(plain, Capture::DynamicOutputShapeOps));
        let aliased = "import torch._dynamo as dynamo\ndynamo.config.capture_dynamic_output_shape_ops = True\n";
        assert!(sets_in(aliased, Capture::DynamicOutputShapeOps));
        let config = "from torch._dynamo import config\nconfig.capture_scalar_outputs = 1\n";
        assert!(sets_in(config, Capture::ScalarOutputs));
        let in_main = "import torch\ndef main():\n    torch._dynamo.config.capture_scalar_outputs = True\n";
        assert!(sets_in(in_main, Capture::ScalarOutputs));
        let in_test = "import torch\ndef test_scalars():\n    torch._dynamo.config.capture_scalar_outputs = True\n";
        assert!(!sets_in(in_test, Capture::ScalarOutputs), "a test sets it for itself alone");
    }

    #[test]
    fn turning_it_off_or_another_object_is_not_the_setting() {
        assert!(!sets_in(
            "import torch\ntorch._dynamo.config.capture_scalar_outputs = False\n",
            Capture::ScalarOutputs
        ));
        assert!(!sets_in("config = {}\nconfig.capture_scalar_outputs = True\n", Capture::ScalarOutputs));
    }
}
