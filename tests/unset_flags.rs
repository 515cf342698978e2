//! A branch on a flag argument of `forward` is low ("only when `forward` is called with
//! `use_cache=True`") only while no caller tcfix can see may set the flag: a class another file
//! imports may be built there and called with it.

use std::fs;
use std::path::Path;
use std::process::Command;

const TEXT_MODEL: &str = "import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class TextModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, use_cache: bool | None = None):
        if use_cache:
            logger.warning(\"caching\")
        return self.proj(x)
";

const VISION_TEXT_MODEL: &str = "from torch import nn

from .text import TextModel


class VisionTextModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = TextModel()

    def forward(self, x):
        return self.text(x, use_cache=True)
";

fn findings(files: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(path, text).expect("write");
    }
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["--isolated", "pkg"])
        .current_dir(Path::new(dir.path()))
        .output()
        .expect("tcfix runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_flag_no_caller_sets_makes_the_branch_low_with_its_condition() {
    let out = findings(&[("pkg/__init__.py", ""), ("pkg/text.py", TEXT_MODEL)]);
    assert!(
        out.starts_with(
            "pkg/text.py:16:13: TCF101 low `logger.warning()` in `TextModel.forward` breaks the graph; \
             only when `forward` is called with `use_cache=True` (None by default)"
        ),
        "{out}"
    );
}

#[test]
fn a_class_another_file_imports_keeps_its_severity() {
    let out =
        findings(&[("pkg/__init__.py", ""), ("pkg/text.py", TEXT_MODEL), ("pkg/vision_text.py", VISION_TEXT_MODEL)]);
    assert!(
        out.starts_with(
            "pkg/text.py:16:13: TCF101 high `logger.warning()` in `TextModel.forward` breaks the graph [*]"
        ),
        "{out}"
    );
}
