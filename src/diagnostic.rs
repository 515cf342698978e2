//! A finding: which hazard, where, how bad, and how to fix it.

use std::fmt;

use ruff_text_size::TextRange;

use crate::fix::Fix;
use crate::rules::rule::Rule;

/// How much the hazard costs on the hot path.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Low,
    Medium,
    High,
    /// A graph break inside a loop body: Dynamo then runs the whole frame eagerly.
    Critical,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        })
    }
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub rule: &'static Rule,
    pub range: TextRange,
    pub message: String,
    pub severity: Severity,
    pub fix: Option<Fix>,
    /// Why a fixable-looking hazard has no fix ("the buffer has no known maximum length").
    pub no_fix_reason: Option<String>,
    /// Identifies the finding across edits that move it (see `baseline::fingerprint`); set once
    /// the file's findings are known, empty before.
    pub fingerprint: String,
    /// What a traced run saw here (`--trace`, `--torch-logs`); `None` without a log, or when the
    /// run did not compile the code.
    pub runtime: Option<crate::evidence::Runtime>,
    /// The process-wide option that removes the finding, grouped with the others it removes
    /// (`fix::dynamo_config`): written once where the project compiles, not in this file.
    pub setting: Option<crate::fix::dynamo_config::ProjectSetting>,
}

impl Diagnostic {
    pub fn new(rule: &'static Rule, range: TextRange, message: impl Into<String>) -> Self {
        Self {
            rule,
            range,
            message: message.into(),
            severity: Severity::High,
            fix: None,
            no_fix_reason: None,
            fingerprint: String::new(),
            runtime: None,
            setting: None,
        }
    }

    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    pub fn without_fix(mut self, reason: impl Into<String>) -> Self {
        self.no_fix_reason = Some(reason.into());
        self
    }

    /// A finding one process-wide option removes: no edit here, the advice instead, and the
    /// setting to group it by.
    pub fn removed_by(mut self, setting: crate::fix::dynamo_config::ProjectSetting, path: &std::path::Path) -> Self {
        self.no_fix_reason = Some(setting.advice(path));
        self.setting = Some(setting);
        self
    }
}

/// The first line of a piece of code, shortened to quote it in a message.
pub fn snippet(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim_end();
    if line.len() < text.len() || line.chars().count() > 60 {
        let short: String = line.chars().take(57).collect();
        format!("{}…", short.trim_end())
    } else {
        line.to_string()
    }
}
