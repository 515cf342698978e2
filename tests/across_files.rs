//! Findings that depend on what the project's other files do: tcfix indexes every file it is
//! given, and a file's findings change when another file calls, builds or sets what it defines.
//!
//! Flags of `forward`: a branch on a flag argument is low ("only when `forward` is called with
//! `use_cache=True`") only while no caller tcfix can see may set the flag: a class another file
//! imports may be built there and called with it.
//!
//! Uncalled setters: a branch on an attribute that `__init__` leaves None and that only an uncalled
//! method sets is dead, so what it does is not reported; as soon as any file of the project names
//! that method (or sets the attribute), it may run, and the finding is back.

use std::fs;
use std::path::Path;
use std::process::Command;

/// What `tcfix --isolated pkg` prints on a project made of `files` (path, text).
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

const DROPOUT: &str = "import torch
from torch import nn


class SharedDropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        self.uses = 0
        self.masks = None

    def share_masks(self):
        self.masks = []

    def next_p(self):
        if self.masks is not None:
            self.uses += 1
        return self.p

    def forward(self, x):
        return nn.functional.dropout(x, self.next_p(), self.training)
";

#[test]
fn a_counter_only_an_uncalled_method_turns_on_is_not_reported() {
    let out = findings(&[("pkg/__init__.py", ""), ("pkg/dropout.py", DROPOUT)]);
    assert!(!out.contains("TCF203"), "{out}");
}

#[test]
fn calling_the_method_from_another_file_brings_the_finding_back() {
    let trainer = "from .dropout import SharedDropout\n\n\ndef prepare(model):\n    model.drop.share_masks()\n";
    let out = findings(&[("pkg/__init__.py", ""), ("pkg/dropout.py", DROPOUT), ("pkg/trainer.py", trainer)]);
    assert!(out.contains("TCF203") && out.contains("self.uses += 1"), "{out}");
}

#[test]
fn setting_the_attribute_from_another_file_brings_the_finding_back() {
    let trainer = "def prepare(model):\n    model.drop.masks = []\n";
    let out = findings(&[("pkg/__init__.py", ""), ("pkg/dropout.py", DROPOUT), ("pkg/trainer.py", trainer)]);
    assert!(out.contains("TCF203"), "{out}");
}

#[test]
fn calling_the_method_in_the_same_file_keeps_the_finding() {
    let called =
        DROPOUT.replace("        return nn.functional", "        self.share_masks()\n        return nn.functional");
    let out = findings(&[("pkg/__init__.py", ""), ("pkg/dropout.py", &called)]);
    assert!(out.contains("TCF203"), "{out}");
}

/// A table grown on demand, in a file that imports no config class.
const GROWING_TABLE: &str = "import torch
from torch import nn


class PositionTable(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.register_buffer(\"table\", torch.empty((0, dim)), persistent=False)

    def _grow(self, seq_len, device, dtype):
        if seq_len > self.table.shape[0]:
            self.table = torch.zeros((seq_len, self.dim), device=device, dtype=dtype)

    def forward(self, x):
        self._grow(x.shape[1], device=x.device, dtype=x.dtype)
        return x + self.table[: x.shape[1]]
";

const TRAIN_CONFIG: &str = "from dataclasses import dataclass


@dataclass
class TrainConfig:
    epochs: int = 3
    seq_len: int = 128
";

/// Where the project keeps its config (a `TrainConfig` in `core/config.py` that no model file
/// imports), its length is the one a lazily grown table is pre-grown to; without it, there is no
/// length to pre-grow to.
#[test]
fn a_grown_table_takes_its_length_from_a_config_class_of_another_file() {
    let alone = findings(&[("pkg/__init__.py", ""), ("pkg/layers/positions.py", GROWING_TABLE)]);
    assert!(alone.contains("TCF201") && alone.contains("no fix: pass the maximum length to `__init__`"), "{alone}");
    let with_config = findings(&[
        ("pkg/__init__.py", ""),
        ("pkg/layers/positions.py", GROWING_TABLE),
        ("pkg/core/config.py", TRAIN_CONFIG),
    ]);
    assert!(
        with_config.contains(
            "unsafe fix (--unsafe-fixes): Call `self._grow(128, self.table.device, self.table.dtype)` at the end of \
             `__init__`"
        ) && with_config.contains("`TrainConfig`'s `seq_len = 128`"),
        "{with_config}"
    );
}

const DECODER: &str = "from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.mix = nn.Linear(8, 8)

    def forward(self, embeds):
        return self.mix(embeds)
";

/// The merge writes image features into embeddings that only the decoder's own class, in another
/// file, shows to be a tensor: `self.decoder.embed` is an `nn.Embedding` there.
const MERGING_MODEL: &str = "from torch import nn

from .decoder import Decoder


class Merger(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()
        self.proj = nn.Linear(4, 8)

    def _merge(self, input_ids, embeds, image_feats):
        mask = input_ids == 3
        embeds[mask] = image_feats
        return embeds

    def forward(self, input_ids, patches):
        embeds = self.decoder.embed(input_ids)
        embeds = self._merge(input_ids, embeds, self.proj(patches))
        return self.decoder(embeds)
";

/// Tensor-ness flows through the project index: a submodule's class of another file says which
/// of its attributes are torch.nn modules, so what they return is a tensor; without that file
/// nothing says so, and nothing is reported.
#[test]
fn a_submodule_of_a_class_of_another_file_returns_tensors() {
    let with_decoder =
        findings(&[("pkg/__init__.py", ""), ("pkg/decoder.py", DECODER), ("pkg/merger.py", MERGING_MODEL)]);
    assert!(with_decoder.contains("pkg/merger.py:14:9: TCF105 high `embeds[mask] = ...`"), "{with_decoder}");
    let alone = findings(&[("pkg/__init__.py", ""), ("pkg/merger.py", MERGING_MODEL)]);
    assert!(!alone.contains("TCF105"), "{alone}");
}

/// timm's layout: `trace_utils` binds `_assert` to `torch._assert`, the package re-exports it,
/// and a model imports it from the package.
const TRACE_UTILS: &str = "try:
    from torch import _assert
except ImportError:
    def _assert(condition: bool, message: str):
        assert condition, message
";

const LAYERS_INIT: &str = "from .trace_utils import _assert
";

const PATCH_EMBED: &str = "import torch
from torch import nn

from pkg.layers import _assert


class PatchEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 8, 4, 4)

    def forward(self, x):
        B, C, H, W = x.shape
        _assert(H % 4 == 0, f\"Input height ({H}) should be divisible by 4\")
        return self.proj(x)
";

/// The fix builds the message only when the check fails; it is Safe for a check known to do
/// nothing when its condition holds: that this one is `torch._assert` is known from the file that
/// binds it, through the package that re-exports it. Without that file the check is unknown, and
/// the fix is Unsafe.
#[test]
fn a_check_re_exported_from_another_file_gets_the_safe_fix() {
    let project = [
        ("pkg/__init__.py", ""),
        ("pkg/layers/__init__.py", LAYERS_INIT),
        ("pkg/layers/trace_utils.py", TRACE_UTILS),
        ("pkg/models/__init__.py", ""),
        ("pkg/models/patch_embed.py", PATCH_EMBED),
    ];
    let with_check = findings(&project);
    let finding = "pkg/models/patch_embed.py:14:29: TCF209 medium";
    assert!(with_check.contains(finding) && with_check.contains("sequence length) [*]"), "{with_check}");
    assert!(!with_check.contains("unsafe fix"), "{with_check}");
    let without = findings(&[project[0], project[3], project[4]]);
    assert!(without.contains(finding) && without.contains("tcfix does not know `_assert`"), "{without}");
}

/// transformers' layout: `utils/checks.py` defines a check whose message may be a callable, the
/// `utils` package re-exports it, and a model imports it from the package.
const CHECKS: &str = "from collections.abc import Callable


def require(condition, message: str | Callable[[], str]) -> None:
    if not condition:
        raise ValueError(message() if callable(message) else message)
";

const MERGER: &str = "import torch
from torch import nn

from ..utils import require


class Merger(nn.Module):
    def forward(self, ids, image):
        slots = ids == 3
        require(slots.sum() * image.shape[-1] == image.numel(), f\"{image.shape[0]} image features\")
        return image * 2
";

/// The message is passed as a lambda (Safe) because the check's own signature, in another file and
/// through a re-export, accepts a callable there; without that file nothing says it does, and the
/// message keeps the fix it had (none: the condition reads a tensor).
#[test]
fn a_check_of_another_file_that_takes_a_callable_message_gets_the_lambda() {
    let project = [
        ("pkg/__init__.py", ""),
        ("pkg/utils/__init__.py", "from .checks import require\n"),
        ("pkg/utils/checks.py", CHECKS),
        ("pkg/models/__init__.py", ""),
        ("pkg/models/merger.py", MERGER),
    ];
    let finding = "pkg/models/merger.py:10:65: TCF209 medium";
    let with_check = findings(&project);
    assert!(with_check.contains(finding) && with_check.contains("sequence length) [*]"), "{with_check}");
    assert!(!with_check.contains("unsafe fix"), "{with_check}");
    let without = findings(&[project[0], project[3], project[4]]);
    assert!(without.contains(finding) && without.contains("no fix: the condition reads a tensor"), "{without}");
}

/// A resampling helper whose warning is off unless a caller asks for it. Measured under torch
/// 2.15 (the same shape, a head compiled with `backend="eager"`, two calls): no caller passing
/// `warn`: 0 breaks, 1 graph; a caller passing `warn=True`: a break per call.
const RESAMPLE: &str = "import warnings

import torch.nn.functional as F


def resample(x, size=None, mode=\"nearest\", warn=False):
    if warn:
        if size is not None and x.shape[-1] * 2 < size[-1]:
            warnings.warn(\"upsampling more than twice\")
    return F.interpolate(x, size=size, mode=mode)
";

/// A head that calls the helper with `call`.
fn head_calling(call: &str) -> String {
    format!(
        "from torch import nn

from .resampling import resample


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        return {call}
"
    )
}

#[test]
fn a_flag_no_caller_of_another_file_passes_stays_off() {
    let project = |call: &str| {
        findings(&[("pkg/__init__.py", ""), ("pkg/resampling.py", RESAMPLE), ("pkg/head.py", &head_calling(call))])
    };
    let warning = "pkg/resampling.py:9:13: TCF101";
    for unset in ["resample(self.conv(x), size=(8, 8))", "resample(self.conv(x), (8, 8), \"bilinear\", warn=False)"] {
        let off = project(unset);
        assert!(!off.contains(warning), "{unset}: {off}");
    }
    // Passed by keyword or in its place, through `**options`, or the helper handed on: it may run.
    for set in [
        "resample(self.conv(x), size=(8, 8), warn=True)",
        "resample(self.conv(x), (8, 8), \"nearest\", True)",
        "resample(self.conv(x), **self.options)",
        "self.conv(x) if resample is None else self.apply(resample, x)",
    ] {
        let on = project(set);
        assert!(on.contains(warning), "{set}: {on}");
    }
}
