//! Models defined in a test module: a reference implementation the tests compare against, the toy
//! model of an eager check. A test module that compiles nothing runs them eagerly; they run
//! compiled only if another file compiles them (a runner the test hands the model to), which a
//! run over part of the project cannot see. So their findings stay, low, and say when they are real.
//!
//! A test module is a file pytest collects (`test_*.py`, `*_test.py`) holding tests of its own (a
//! `test_*` function, a `Test*` class or a `unittest.TestCase` with a `test_*` method) that imports
//! pytest or unittest or lies in a `tests` folder: timm ships model code as
//! `layers/test_time_pool.py`, and a library may define `def test_time_augment(model, x)`.

use ruff_python_ast::Stmt;
use ruff_text_size::TextRange;

use crate::discover::is_test_file;
use crate::model::compiled::compile_calls::compiles_anything;
use crate::model::file::FileModel;
use crate::model::file::imports::last_segment;

const CONDITION: &str = "only if another file compiles this test's model: the test module compiles nothing \
    itself, so its tests run the model eagerly";

/// For each of `ranges`, the condition above when the file is a test module that runs nothing
/// through Dynamo.
pub fn off_unless_compiled_elsewhere(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    let eager = is_test_module(model) && !runs_dynamo(model);
    vec![eager.then(|| CONDITION.to_string()); ranges.len()]
}

fn is_test_module(model: &FileModel) -> bool {
    let path = &model.source.path;
    let suite = model.source.parsed.suite();
    let in_tests_folder = path.parent().is_some_and(|dir| dir.components().any(|part| part.as_os_str() == "tests"));
    is_test_file(path) && holds_tests(suite) && (in_tests_folder || imports_a_test_framework(suite))
}

fn holds_tests(suite: &[Stmt]) -> bool {
    let is_test = |stmt: &Stmt| matches!(stmt, Stmt::FunctionDef(def) if def.name.starts_with("test_"));
    suite.iter().any(|stmt| match stmt {
        Stmt::FunctionDef(_) => is_test(stmt),
        Stmt::ClassDef(class) => {
            let test_case =
                class.bases().iter().any(|base| last_segment(base).is_some_and(|name| name.ends_with("TestCase")));
            (class.name.starts_with("Test") || test_case) && class.body.iter().any(is_test)
        }
        _ => false,
    })
}

fn imports_a_test_framework(suite: &[Stmt]) -> bool {
    let is_framework = |module: &str| matches!(module.split('.').next(), Some("pytest" | "unittest"));
    suite.iter().any(|stmt| match stmt {
        Stmt::Import(import) => import.names.iter().any(|alias| is_framework(&alias.name)),
        Stmt::ImportFrom(import) => import.module.as_ref().is_some_and(|module| is_framework(module)),
        _ => false,
    })
}

/// Whether the file runs a model through Dynamo: compiles it, or hands it to
/// `torch._dynamo.explain`, `optimize_assert` or `torch.export` (read from the text and the
/// imports, on the safe side: `from torch import export` is enough).
fn runs_dynamo(model: &FileModel) -> bool {
    let text = &model.source.text;
    let explains = text.contains("_dynamo") && (text.contains("explain(") || text.contains("optimize_assert("));
    let exports = model.imports.bindings().any(|(_, full)| full.starts_with("torch.export"));
    explains || exports || text.contains("torch.export") || text.contains("torch_compile") || compiles_anything(model)
}

#[cfg(test)]
mod tests {
    use crate::project::findings_of_texts;

    /// Each finding as "path severity line", over files checked together.
    fn findings(files: &[(&str, &str)]) -> Vec<String> {
        let found = findings_of_texts(files);
        let mut found: Vec<String> =
            found.iter().map(|(path, line, d)| format!("{} {:?} {line}", path.display(), d.severity)).collect();
        found.sort();
        found
    }

    const REFERENCE: &str = "import torch\nfrom torch import nn\n\nclass Reference(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n";
    const TEST: &str = "\ndef test_reference():\n    assert Reference()(torch.ones(2)).shape == (2,)\n";

    #[test]
    fn a_test_modules_model_is_low_when_the_test_compiles_nothing() {
        let test = format!("{REFERENCE}{TEST}");
        assert_eq!(findings(&[("tests/test_reference.py", &test)]), ["tests/test_reference.py Low 6"]);
        // Through unittest, outside a tests folder.
        let unittest = format!(
            "{REFERENCE}\nimport unittest\n\nclass Check(unittest.TestCase):\n    def test_shape(self):\n        Reference()(torch.ones(2))\n"
        );
        assert_eq!(findings(&[("pkg/reference_test.py", &unittest)]), ["pkg/reference_test.py Low 6"]);
    }

    #[test]
    fn what_is_no_eager_test_module_keeps_its_severity() {
        // The test compiles the model itself, or hands it to explain.
        let compiled = format!("{REFERENCE}\ndef test_reference():\n    torch.compile(Reference())(torch.ones(2))\n");
        assert_eq!(findings(&[("tests/test_reference.py", &compiled)]), ["tests/test_reference.py High 6"]);
        let explained =
            format!("{REFERENCE}\ndef test_breaks():\n    torch._dynamo.explain(Reference())(torch.ones(2))\n");
        assert_eq!(findings(&[("tests/test_reference.py", &explained)]), ["tests/test_reference.py High 6"]);
        // A shared helper without tests of its own: a test may compile what it holds.
        assert_eq!(findings(&[("tests/helpers.py", REFERENCE)]), ["tests/helpers.py High 6"]);
        // Model code with a pytest name and a `test_` function, outside tests and without a framework.
        let library = format!("{REFERENCE}\ndef test_time_augment(model, x):\n    return model(x.flip(-1))\n");
        assert_eq!(findings(&[("pkg/test_time_augment.py", &library)]), ["pkg/test_time_augment.py High 6"]);
    }
}
