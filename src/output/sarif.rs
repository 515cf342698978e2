//! `--output-format sarif`: a SARIF 2.1.0 log with one run, for GitHub code scanning and other
//! SARIF viewers. The driver lists every rule (with its codemod README as help), each finding is
//! a result, and a finding's fix is a SARIF fix: its edits as replacements of regions of the
//! original file (an insertion is an empty region). Columns count characters, which the run
//! declares with `columnKind: unicodeCodePoints`. `partialFingerprints` carries the baseline's
//! fingerprint under `tcfix/v1`.

use serde::Serialize;

use super::first_paragraph;
use super::{FileFindings, Locator, Position, applicability, by_file};
use crate::diagnostic::{Diagnostic, Severity};
use crate::evidence::observed::RuntimeRecord;
use crate::evidence::runtime_rule::is_runtime_only;
use crate::fix::Fix;
use crate::rules::{RULES, Rule};

/// The schema the log declares: the OASIS SARIF 2.1.0 schema (errata 01).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Where to read about tcfix: the package's repository when Cargo.toml names one.
const INFORMATION_URI: &str = if env!("CARGO_PKG_REPOSITORY").is_empty() {
    "https://crates.io/crates/tcfix"
} else {
    env!("CARGO_PKG_REPOSITORY")
};

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    information_uri: &'static str,
    rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportingDescriptor {
    id: &'static str,
    name: &'static str,
    short_description: Text,
    full_description: Text,
    help: Help,
    properties: RuleProperties,
}

/// A `message` or plain `multiformatMessageString`.
#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help {
    text: &'static str,
    markdown: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    category: String,
    tags: [String; 2],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
    level: &'static str,
    message: Text,
    locations: [Location<'a>; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<SarifFix<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial_fingerprints: Option<Fingerprints<'a>>,
    properties: ResultProperties<'a>,
}

/// The finding's baseline fingerprint (see `baseline`), so that code scanning follows a finding
/// across commits that move it, as `--baseline` does.
#[derive(Serialize)]
struct Fingerprints<'a> {
    #[serde(rename = "tcfix/v1")]
    tcfix: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    physical_location: PhysicalLocation<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation<'a> {
    artifact_location: &'a ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

impl Region {
    fn new(start: Position, end: Position) -> Self {
        Self { start_line: start.line, start_column: start.column, end_line: end.line, end_column: end.column }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifFix<'a> {
    description: Text,
    artifact_changes: [ArtifactChange<'a>; 1],
    properties: FixProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange<'a> {
    artifact_location: &'a ArtifactLocation,
    replacements: Vec<Replacement<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement<'a> {
    deleted_region: Region,
    #[serde(skip_serializing_if = "Option::is_none")]
    inserted_content: Option<InsertedContent<'a>>,
}

#[derive(Serialize)]
struct InsertedContent<'a> {
    text: &'a str,
}

#[derive(Serialize)]
struct FixProperties {
    applicability: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties<'a> {
    severity: String,
    category: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    no_fix_reason: Option<&'a str>,
    /// With --trace: what the run saw here.
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime: Option<RuntimeRecord<'a>>,
}

pub fn render(files: &[FileFindings]) -> String {
    let grouped = by_file(files);
    let artifacts: Vec<ArtifactLocation> =
        grouped.iter().map(|(file, _)| ArtifactLocation { uri: file_uri(file.path) }).collect();
    let mut results = Vec::new();
    for ((file, diagnostics), artifact) in grouped.iter().zip(&artifacts) {
        let locator = Locator::new(file.text);
        results.extend(diagnostics.iter().map(|diagnostic| result(artifact, &locator, diagnostic)));
    }
    let log = Log {
        schema: SCHEMA_URI,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "tcfix",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: INFORMATION_URI,
                    rules: RULES.iter().map(|rule| descriptor(rule)).collect(),
                },
            },
            column_kind: "unicodeCodePoints",
            results,
        }],
    };
    let mut out = serde_json::to_string_pretty(&log).expect("the SARIF log serializes");
    out.push('\n');
    out
}

fn descriptor(rule: &'static Rule) -> ReportingDescriptor {
    let paragraph = first_paragraph(rule.explanation);
    ReportingDescriptor {
        id: rule.code,
        name: rule.name,
        short_description: Text { text: rule.hazard.to_string() },
        full_description: Text { text: if paragraph.is_empty() { rule.summary.to_string() } else { paragraph } },
        help: Help { text: rule.explanation, markdown: rule.explanation },
        properties: RuleProperties {
            category: rule.category.to_string(),
            tags: ["torch.compile".to_string(), rule.category.to_string()],
        },
    }
}

fn result<'a>(artifact: &'a ArtifactLocation, locator: &Locator, diagnostic: &'a Diagnostic) -> SarifResult<'a> {
    let region = Region::new(locator.position(diagnostic.range.start()), locator.position(diagnostic.range.end()));
    SarifResult {
        rule_id: diagnostic.rule.code,
        rule_index: RULES.iter().position(|rule| rule.code == diagnostic.rule.code),
        level: level(diagnostic.severity),
        message: Text { text: diagnostic.message.clone() },
        locations: [Location { physical_location: PhysicalLocation { artifact_location: artifact, region } }],
        fixes: diagnostic
            .fix
            .iter()
            .filter(|fix| !fix.edits.is_empty())
            .map(|fix| sarif_fix(artifact, locator, fix))
            .collect(),
        partial_fingerprints: (!diagnostic.fingerprint.is_empty())
            .then_some(Fingerprints { tcfix: &diagnostic.fingerprint }),
        properties: ResultProperties {
            severity: diagnostic.severity.to_string(),
            category: diagnostic.rule.category.to_string(),
            no_fix_reason: diagnostic.no_fix_reason.as_deref(),
            runtime: diagnostic.runtime.as_ref().map(|runtime| runtime.record(is_runtime_only(diagnostic.rule))),
        },
    }
}

fn sarif_fix<'a>(artifact: &'a ArtifactLocation, locator: &Locator, fix: &'a Fix) -> SarifFix<'a> {
    let replacements = fix
        .edits
        .iter()
        .map(|edit| Replacement {
            deleted_region: Region::new(locator.position(edit.range.start()), locator.position(edit.range.end())),
            inserted_content: (!edit.content.is_empty()).then_some(InsertedContent { text: &edit.content }),
        })
        .collect();
    SarifFix {
        description: Text { text: fix.title.clone() },
        artifact_changes: [ArtifactChange { artifact_location: artifact, replacements }],
        properties: FixProperties { applicability: applicability(fix.safety) },
    }
}

/// critical and high are errors, medium warnings, low notes.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// A shown path as a URI reference: relative paths stay relative (code scanning resolves them
/// against the repository root), absolute ones become `file://` URIs; everything but unreserved
/// characters and `/` is percent-encoded.
fn file_uri(path: &str) -> String {
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    let (mut uri, rest) = if drive {
        (format!("file:///{}:", &path[..1]), &path[2..])
    } else if path.starts_with('/') {
        ("file://".to_string(), path)
    } else {
        (String::new(), path)
    };
    for byte in rest.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(file_uri("models/vlm.py"), "models/vlm.py");
        assert_eq!(file_uri("my models/a:b#1.py"), "my%20models/a%3Ab%231.py");
        assert_eq!(file_uri("módulo.py"), "m%C3%B3dulo.py");
        assert_eq!(file_uri("/abs/x y.py"), "file:///abs/x%20y.py");
        assert_eq!(file_uri("C:/src/x.py"), "file:///C:/src/x.py");
    }

    #[test]
    fn levels_follow_severity() {
        assert_eq!(level(Severity::Critical), "error");
        assert_eq!(level(Severity::High), "error");
        assert_eq!(level(Severity::Medium), "warning");
        assert_eq!(level(Severity::Low), "note");
    }
}
