//! `--output-format json`: a JSON array with one object per finding, for scripts. The keys
//! follow ruff's JSON output where they mean the same (`code`, `message`, `filename`,
//! `location`/`end_location` with 1-based `row`/`column`, `fix.applicability`, `edits`), always
//! in the order of the structs below.

use serde::Serialize;

use super::{FileFindings, Locator, Position, applicability, by_file};
use crate::diagnostic::Diagnostic;
use crate::evidence::observed::RuntimeRecord;
use crate::evidence::runtime_rule::is_runtime_only;
use crate::fix::Fix;

#[derive(Serialize)]
struct JsonFinding<'a> {
    code: &'static str,
    name: &'static str,
    category: String,
    severity: String,
    message: &'a str,
    filename: &'a str,
    location: Location,
    end_location: Location,
    fix: Option<JsonFix<'a>>,
    no_fix_reason: Option<&'a str>,
    /// With --trace: what the run saw here.
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime: Option<RuntimeRecord<'a>>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    applicability: &'static str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    content: &'a str,
    location: Location,
    end_location: Location,
}

#[derive(Serialize)]
struct Location {
    row: usize,
    column: usize,
}

impl From<Position> for Location {
    fn from(position: Position) -> Self {
        Self { row: position.line, column: position.column }
    }
}

pub fn render(files: &[FileFindings]) -> String {
    let mut findings = Vec::new();
    for (file, diagnostics) in by_file(files) {
        let locator = Locator::new(file.text);
        findings.extend(diagnostics.into_iter().map(|diagnostic| json_finding(file.path, &locator, diagnostic)));
    }
    let mut out = serde_json::to_string_pretty(&findings).expect("findings serialize");
    out.push('\n');
    out
}

fn json_finding<'a>(path: &'a str, locator: &Locator, diagnostic: &'a Diagnostic) -> JsonFinding<'a> {
    JsonFinding {
        code: diagnostic.rule.code,
        name: diagnostic.rule.name,
        category: diagnostic.rule.category.to_string(),
        severity: diagnostic.severity.to_string(),
        message: &diagnostic.message,
        filename: path,
        location: locator.position(diagnostic.range.start()).into(),
        end_location: locator.position(diagnostic.range.end()).into(),
        fix: diagnostic.fix.as_ref().map(|fix| json_fix(locator, fix)),
        no_fix_reason: diagnostic.no_fix_reason.as_deref(),
        runtime: diagnostic.runtime.as_ref().map(|runtime| runtime.record(is_runtime_only(diagnostic.rule))),
    }
}

fn json_fix<'a>(locator: &Locator, fix: &'a Fix) -> JsonFix<'a> {
    JsonFix {
        title: &fix.title,
        applicability: applicability(fix.safety),
        edits: fix
            .edits
            .iter()
            .map(|edit| JsonEdit {
                content: &edit.content,
                location: locator.position(edit.range.start()).into(),
                end_location: locator.position(edit.range.end()).into(),
            })
            .collect(),
    }
}
