//! The Dynamo options that let it trace values it otherwise breaks on, and whether a file turns
//! them on (`torch._dynamo.config.capture_scalar_outputs = True`). Such a setting holds for every
//! compiled call in the process once the file has run, so TCF103 and TCF106 do not report what it
//! makes traceable, wherever in the project it is written (`Captures`).

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::FileModel;

/// A Dynamo option that captures data-dependent values as unbacked symbols instead of breaking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
    /// `capture_scalar_outputs`: `.item()`, `.tolist()`, `int(t)` give symbolic Python numbers.
    ScalarOutputs,
    /// `capture_dynamic_output_shape_ops`: `nonzero()`, `x[mask]`, `unique()` give tensors of
    /// symbolic size.
    DynamicOutputShapeOps,
}

impl Capture {
    /// The option's name in `torch._dynamo.config`.
    pub fn option(self) -> &'static str {
        match self {
            Capture::ScalarOutputs => "capture_scalar_outputs",
            Capture::DynamicOutputShapeOps => "capture_dynamic_output_shape_ops",
        }
    }

    fn qualified(self) -> String {
        format!("torch._dynamo.config.{}", self.option())
    }

    /// The option by its name in `torch._dynamo.config`.
    pub fn named(option: &str) -> Option<Capture> {
        [Capture::ScalarOutputs, Capture::DynamicOutputShapeOps].into_iter().find(|capture| capture.option() == option)
    }

    /// What the option lets Dynamo trace, for the comment above the setting.
    pub fn traces(self) -> &'static str {
        match self {
            Capture::ScalarOutputs => "`.item()`/`.tolist()`",
            Capture::DynamicOutputShapeOps => "data-dependent shapes (`nonzero()`, `x[mask]`)",
        }
    }
}

/// What a file, or the whole project, does with the capture options. A setting is one fact for
/// the whole process, so the project's is what every file's findings are judged by: the options
/// some file turns on, and the file that calls `torch.compile`, where one setting would go (a
/// library module that flips it would flip it for everyone who imports it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Captures {
    pub scalar_outputs: bool,
    pub dynamic_output_shape_ops: bool,
    /// The path of the script that compiles (the first by path, tests aside); none in a library.
    pub compiled_in: Option<String>,
    /// The file is a script: its settings hold in its own process only.
    pub script: bool,
}

impl Captures {
    pub fn of(model: &FileModel) -> Self {
        let path = &model.source.path;
        let script = is_script(model);
        let compiles =
            !crate::discover::is_test_file(path) && script && crate::model::compile_calls::compiles_anything(model);
        Captures {
            scalar_outputs: sets(model, Capture::ScalarOutputs),
            dynamic_output_shape_ops: sets(model, Capture::DynamicOutputShapeOps),
            compiled_in: compiles.then(|| path.display().to_string()),
            script,
        }
    }

    /// The project's: an option a package module sets (whoever imports it gets it), or one that
    /// every compiling script sets (a script's setting holds in its own process only: one
    /// benchmark that sets it says nothing of the training script); and the first script that
    /// compiles.
    pub fn of_project<'c>(files: impl Iterator<Item = &'c Captures>) -> Self {
        let files: Vec<&Captures> = files.collect();
        let compiling: Vec<&&Captures> = files.iter().filter(|file| file.compiled_in.is_some()).collect();
        let holds = |capture: Capture| {
            files.iter().any(|file| !file.script && file.sets(capture))
                || (!compiling.is_empty() && compiling.iter().all(|file| file.sets(capture)))
        };
        Captures {
            scalar_outputs: holds(Capture::ScalarOutputs),
            dynamic_output_shape_ops: holds(Capture::DynamicOutputShapeOps),
            compiled_in: compiling.iter().filter_map(|file| file.compiled_in.clone()).min(),
            script: false,
        }
    }

    pub fn sets(&self, capture: Capture) -> bool {
        match capture {
            Capture::ScalarOutputs => self.scalar_outputs,
            Capture::DynamicOutputShapeOps => self.dynamic_output_shape_ops,
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

/// `test_x`, `setUp`, `setup_method`: a test's own code (pytest, unittest).
pub fn is_test(name: &str) -> bool {
    name == "test"
        || name.starts_with("test_")
        || matches!(name, "setUp" | "setUpClass" | "setup_method" | "setup_class" | "setup_module" | "setup_function")
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
