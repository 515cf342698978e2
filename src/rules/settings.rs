//! What a run asks of the rules: which are enabled (`--select` / `--ignore`, per-file ignores),
//! and the options that shape their findings and fixes.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use crate::config::{Config, Nearest};
use crate::diagnostic::Severity;
use crate::fix::torch_api::TorchVersion;
use crate::rules::rule::Rule;

#[derive(Debug, Clone)]
pub struct Settings {
    /// Attribute names on `self` that hold opaque helper objects (tokenizers and the like).
    pub opaque_helpers: Vec<String>,
    pub selection: Selection,
    /// The oldest torch the fixed code must run on.
    pub target_torch: TorchVersion,
    /// Findings less severe than this are dropped (`--min-severity`).
    pub min_severity: Severity,
    /// The configuration file's per-file ignores, if any.
    pub config: Option<Arc<Config>>,
    /// The configuration nearest each file, where it is not `config` (a project of a monorepo),
    /// with the command line's choices to lay over it.
    pub nearest: Option<Arc<(Nearest, CommandLine)>>,
}

/// What the command line chooses over any configuration file.
#[derive(Debug, Clone, Default)]
pub struct CommandLine {
    pub select: Vec<String>,
    pub ignore: Vec<String>,
    pub min_severity: Option<Severity>,
}

impl Settings {
    /// The settings of `config` with the command line's choices over them (`--select` replaces
    /// the file's `select`; `--ignore` adds to its `ignore`).
    pub fn from_config(config: &Arc<Config>, command_line: &CommandLine) -> Settings {
        let options = &config.options;
        let defaults = Settings::default();
        let select = match command_line.select.is_empty() {
            true => options.select.clone().unwrap_or_default(),
            false => command_line.select.clone(),
        };
        Settings {
            selection: Selection {
                select,
                ignore: options.ignore.iter().flatten().chain(&command_line.ignore).cloned().collect(),
            },
            opaque_helpers: defaults
                .opaque_helpers
                .iter()
                .chain(options.opaque_helpers.iter().flatten())
                .cloned()
                .collect(),
            target_torch: config.target_torch.unwrap_or(defaults.target_torch),
            min_severity: command_line.min_severity.or(options.min_severity).unwrap_or_default(),
            config: Some(Arc::clone(config)),
            ..defaults
        }
    }

    /// The settings for one file: those of its nearest configuration (these, unless a nearer one
    /// was found), less the rules `per-file-ignores` turns off for it.
    pub fn for_file(&self, path: &Path) -> Cow<'_, Settings> {
        let mut settings = Cow::Borrowed(self);
        if let Some((nearest, command_line)) = self.nearest.as_deref()
            && let Some(config) = nearest.of(path)
            && !self.config.as_ref().is_some_and(|own| Arc::ptr_eq(own, config))
        {
            settings = Cow::Owned(Settings::from_config(config, command_line));
        }
        let ignored = settings.config.as_ref().map(|config| config.ignored_for(path)).unwrap_or_default();
        if !ignored.is_empty() {
            settings.to_mut().selection.ignore.extend(ignored);
        }
        settings
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            opaque_helpers: ["tokenizer", "processor", "image_processor", "feature_extractor"]
                .map(String::from)
                .to_vec(),
            selection: Selection::default(),
            target_torch: TorchVersion::DEFAULT,
            min_severity: Severity::Low,
            config: None,
            nearest: None,
        }
    }
}

/// `--select` / `--ignore`: by code, code prefix (`TCF1`), name or category (`recompile`).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Selection {
    pub fn enabled(&self, rule: &Rule) -> bool {
        let matches = |selector: &String| Selection::matches(selector, rule);
        (self.select.is_empty() || self.select.iter().any(matches)) && !self.ignore.iter().any(matches)
    }

    /// Whether a selector list (`# noqa: TCF101, TCF2`) names the rule.
    pub fn names(selectors: &[String], rule: &Rule) -> bool {
        selectors.iter().any(|selector| Selection::matches(selector, rule))
    }

    /// Whether one selector names the rule: `ALL`, its name, a prefix of its code, its category.
    pub fn matches(selector: &str, rule: &Rule) -> bool {
        selector == "ALL"
            || selector.eq_ignore_ascii_case(rule.name)
            || rule.code.starts_with(&selector.to_ascii_uppercase())
            || selector.eq_ignore_ascii_case(rule.category.selector())
    }
}
