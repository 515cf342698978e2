//! What the project configures, as the index tells every file: the defaults of its config
//! classes, the longest lengths they give, and the capture options it turns on. Found by
//! `config_defaults` and `dynamo_config`; held by each file's model.

use rustc_hash::FxHashMap as HashMap;

/// A config field's default, as the config class writes it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConfigDefault {
    pub(in crate::model) value: Value,
    /// The literal's source text (`0.0`, `False`).
    pub(in crate::model) text: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(in crate::model) enum Value {
    None,
    Bool(bool),
    Number(f64),
    /// A string's value (`"continuous"`): compared only for equality with another string.
    Str(String),
}

impl ConfigDefault {
    /// The default as a length (`64`), when it is a positive whole number.
    pub fn positive_integer(&self) -> Option<u64> {
        match self.value {
            Value::Number(n) if n >= 1.0 && n.fract() == 0.0 && n < 1e12 => Some(n as u64),
            _ => None,
        }
    }
}

/// Config field name -> default, for the config classes a file sees.
pub type ConfigDefaults = HashMap<String, ConfigDefault>;

/// Config field name -> the largest whole-number default any config class of the project gives
/// it, and that class's qualname (`seq_len` -> 1024 from `ShapeConfig`): where a module knows no
/// maximum length, the longest the project configures is the one that covers every run of it.
pub type ProjectLengths = HashMap<String, (u64, String)>;

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

    pub(in crate::model) fn qualified(self) -> String {
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
