//! Every `--output-format` and `--statistics` on real findings: fixtures from `codemods/` and a
//! few written here, checked through the library (`tcfix::check_source`), never by eye. The
//! JSON and SARIF are parsed back and their positions turned into byte offsets again; the SARIF
//! log is validated against the official SARIF 2.1.0 schema in `tests/data/`.

use std::fs;
use std::path::Path;

use serde_json::Value;
use tcfix::diagnostic::{Diagnostic, Severity};
use tcfix::fix::Safety;
use tcfix::fix::edit::apply_edits;
use tcfix::output::{FileFindings, Format, Order, render, statistics, text};
use tcfix::rules::{RULES, Settings};

/// Fixtures with a safe fix in a loop (critical), unsafe fixes, no fix (with a reason), a medium
/// finding, and CRLF line endings.
const FIXTURES: &[&str] = &[
    "print-in-compiled-code/edge_several_fixes_one_file.py",
    "lazily-grown-buffer/positive_persistent_buffer.py",
    "lazily-grown-buffer/positive_no_max_length.py",
    "stateful-hook/positive_closure_collector_flag.py",
    "stateful-hook/edge_several_fixes_in_one_file.py",
    "opaque-helper-in-compiled-code/edge_crlf_line_endings.py",
];

/// Characters outside ASCII before and inside the finding, on its line: columns count characters.
const NON_ASCII: &str = "import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        print(\"é→ß\", x.shape)
        label = \"日本\"; print(label)
        return x
";

/// A path that GitHub's workflow commands and URIs must escape.
const ODD_PATH: &str = "odd dir,1/a:b%.py";

struct Checked {
    path: String,
    text: String,
    diagnostics: Vec<Diagnostic>,
}

fn check(path: &str, text: String) -> Checked {
    let diagnostics = tcfix::check_source(Path::new(path), &text, &Settings::default()).expect("the fixture parses");
    assert!(!diagnostics.is_empty(), "{path} has no findings: the test would check nothing");
    Checked { path: path.to_string(), text, diagnostics }
}

fn fixtures() -> Vec<Checked> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked: Vec<Checked> = FIXTURES
        .iter()
        .map(|fixture| {
            let path = format!("codemods/{fixture}");
            check(&path, fs::read_to_string(root.join(&path)).expect("the fixture exists"))
        })
        .collect();
    checked.push(check("non_ascii.py", NON_ASCII.to_string()));
    checked.push(check(ODD_PATH, NON_ASCII.to_string()));
    checked
}

fn findings(checked: &[Checked]) -> Vec<FileFindings<'_>> {
    checked.iter().map(|c| FileFindings { path: &c.path, text: &c.text, diagnostics: &c.diagnostics }).collect()
}

/// Every finding in the order the formats must show them: by path, then by position.
fn in_order(checked: &[Checked]) -> Vec<(&Checked, &Diagnostic)> {
    let mut sorted: Vec<&Checked> = checked.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    sorted
        .into_iter()
        .flat_map(|c| {
            let mut diagnostics: Vec<&Diagnostic> = c.diagnostics.iter().collect();
            diagnostics.sort_by_key(|d| (d.range.start(), d.range.end(), d.rule.code));
            diagnostics.into_iter().map(move |d| (c, d))
        })
        .collect()
}

/// The byte offset of a 1-based line and character column, counted independently of tcfix's
/// line index: lines end at `\n` (a `\r` before it belongs to the line).
fn offset(text: &str, line: u64, column: u64) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line as usize - 1).map(str::len).sum();
    let rest = &text[line_start..];
    rest.char_indices().nth(column as usize - 1).map_or(rest.len(), |(at, _)| at) + line_start
}

fn number(value: &Value) -> u64 {
    value.as_u64().unwrap_or_else(|| panic!("not a number: {value}"))
}

fn applicability(safety: Safety) -> &'static str {
    match safety {
        Safety::Safe => "safe",
        Safety::Unsafe => "unsafe",
        Safety::DisplayOnly => "display-only",
    }
}

#[test]
fn the_fixtures_cover_every_kind_of_finding() {
    let checked = fixtures();
    let all: Vec<&Diagnostic> = checked.iter().flat_map(|c| &c.diagnostics).collect();
    let safeties: Vec<Option<Safety>> = all.iter().map(|d| d.fix.as_ref().map(|fix| fix.safety)).collect();
    assert!(safeties.contains(&Some(Safety::Safe)) && safeties.contains(&Some(Safety::Unsafe)));
    assert!(all.iter().any(|d| d.fix.is_none() && d.no_fix_reason.is_some()));
    for severity in [Severity::Critical, Severity::High, Severity::Medium] {
        assert!(all.iter().any(|d| d.severity == severity), "no {severity} finding");
    }
    assert!(checked.iter().any(|c| c.text.contains("\r\n")));
}

#[test]
fn full_is_the_default_report_and_concise_drops_the_reasons() {
    let checked = fixtures();
    let files = findings(&checked);
    let mut sorted: Vec<&Checked> = checked.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let expected: String =
        sorted.iter().map(|c| text::diagnostics(&c.path, &c.text, &c.diagnostics, false)).collect::<String>();
    assert_eq!(render(Format::Full, &files, Order::Path, false), expected);
    assert!(expected.contains("    no fix: "));

    let concise = render(Format::Concise, &files, Order::Path, false);
    let finding_lines: Vec<&str> = expected.lines().filter(|line| !line.starts_with("    ")).collect();
    assert_eq!(concise.lines().collect::<Vec<_>>(), finding_lines);
    assert_eq!(concise.lines().count(), in_order(&checked).len());

    // `[*]` follows `--unsafe-fixes`.
    let unsafe_count = |out: &str| out.matches(" [*]\n").count();
    assert!(unsafe_count(&render(Format::Concise, &files, Order::Path, true)) > unsafe_count(&concise));
}

#[test]
fn every_format_is_sorted_and_does_not_depend_on_the_input_order() {
    let checked = fixtures();
    let files = findings(&checked);
    let mut reversed = files.clone();
    reversed.reverse();
    for format in [Format::Full, Format::Concise, Format::Json, Format::Github, Format::Sarif, Format::Markdown] {
        assert_eq!(
            render(format, &files, Order::Path, false),
            render(format, &reversed, Order::Path, false),
            "{format:?}"
        );
    }
    assert_eq!(statistics(&files, false), statistics(&reversed, false));
}

#[test]
fn json_has_every_finding_with_positions_that_point_at_it() {
    let checked = fixtures();
    let out = render(Format::Json, &findings(&checked), Order::Path, false);
    let parsed: Value = serde_json::from_str(&out).expect("valid JSON");
    let objects = parsed.as_array().expect("an array");
    let expected = in_order(&checked);
    assert_eq!(objects.len(), expected.len());

    // Keys in a stable, documented order.
    let first = out.find('{').unwrap();
    let keys = [
        "code",
        "name",
        "category",
        "severity",
        "message",
        "filename",
        "location",
        "end_location",
        "fix",
        "no_fix_reason",
    ];
    let positions: Vec<usize> =
        keys.iter().map(|key| first + out[first..].find(&format!("\"{key}\":")).expect(key)).collect();
    assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "{positions:?}");

    for (object, (file, diagnostic)) in objects.iter().zip(expected) {
        assert_eq!(object["code"], diagnostic.rule.code);
        assert_eq!(object["name"], diagnostic.rule.name);
        assert_eq!(object["category"], diagnostic.rule.category.to_string());
        assert_eq!(object["severity"], diagnostic.severity.to_string());
        assert_eq!(object["message"], diagnostic.message.as_str());
        assert_eq!(object["filename"], file.path.as_str());
        let at = |location: &Value| offset(&file.text, number(&location["row"]), number(&location["column"]));
        assert_eq!(at(&object["location"]), diagnostic.range.start().to_usize(), "{object}");
        assert_eq!(at(&object["end_location"]), diagnostic.range.end().to_usize(), "{object}");
        match (&diagnostic.fix, &object["fix"]) {
            (None, fix) => assert!(fix.is_null()),
            (Some(fix), json) => {
                assert_eq!(json["title"], fix.title.as_str());
                assert_eq!(json["applicability"], applicability(fix.safety));
                let edits = json["edits"].as_array().unwrap();
                assert_eq!(edits.len(), fix.edits.len());
                for (json, edit) in edits.iter().zip(&fix.edits) {
                    assert_eq!(json["content"], edit.content.as_str());
                    assert_eq!(at(&json["location"]), edit.range.start().to_usize());
                    assert_eq!(at(&json["end_location"]), edit.range.end().to_usize());
                }
            }
        }
        assert_eq!(object["no_fix_reason"].as_str(), diagnostic.no_fix_reason.as_deref());
    }
    assert_eq!(render(Format::Json, &[], Order::Path, false).trim(), "[]");
}

#[test]
fn json_columns_count_characters() {
    let checked = [check("non_ascii.py", NON_ASCII.to_string())];
    let parsed: Value = serde_json::from_str(&render(Format::Json, &findings(&checked), Order::Path, false)).unwrap();
    let second = &parsed[1];
    // `        label = "日本"; print(label)`: `print` is the 23rd character, the 27th byte.
    assert_eq!((number(&second["location"]["row"]), number(&second["location"]["column"])), (8, 23));
    let first = &parsed[0];
    let width = number(&first["end_location"]["column"]) - number(&first["location"]["column"]);
    assert_eq!(width as usize, "print(\"é→ß\", x.shape)".chars().count());
}

#[test]
fn github_annotations_escape_what_the_runner_reads() {
    let checked = fixtures();
    let out = render(Format::Github, &findings(&checked), Order::Path, false);
    let expected = in_order(&checked);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), expected.len(), "one command per finding, no raw newline inside one");
    for (line, (file, diagnostic)) in lines.iter().zip(expected) {
        let command = match diagnostic.severity {
            Severity::Critical | Severity::High => "error",
            Severity::Medium => "warning",
            Severity::Low => "notice",
        };
        let (properties, message) = line[2..].split_once("::").expect("`::command properties::message`");
        let (name, properties) = properties.split_once(' ').unwrap();
        assert_eq!(name, command);
        let properties: Vec<(&str, &str)> = properties.split(',').map(|p| p.split_once('=').unwrap()).collect();
        let names: Vec<&str> = properties.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["file", "line", "col", "endLine", "endColumn", "title"]);
        let file_property = properties[0].1;
        if file.path == ODD_PATH {
            assert_eq!(file_property, "odd dir%2C1/a%3Ab%25.py");
        } else {
            assert_eq!(file_property, file.path);
        }
        let title = format!("{} ({})", diagnostic.rule.code, diagnostic.rule.name);
        assert_eq!(properties[5].1, title);
        let line_number: u64 = properties[1].1.parse().unwrap();
        let column: u64 = properties[2].1.parse().unwrap();
        assert_eq!(offset(&file.text, line_number, column), diagnostic.range.start().to_usize());
        let unescaped = message.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%");
        assert!(unescaped.starts_with(&format!("{} {}", diagnostic.severity, diagnostic.message)), "{line}");
        assert!(!message.contains('\r'));
        if let Some(fix) = &diagnostic.fix {
            assert!(unescaped.ends_with(&format!(": {}", fix.title)), "{line}");
        }
        if let Some(reason) = &diagnostic.no_fix_reason {
            assert!(unescaped.ends_with(&format!("\nNo fix: {reason}")), "{line}");
        }
    }
    assert!(out.contains("%0AFix (`tcfix --apply`): ") && out.contains("%0ANo fix: "));
}

fn sarif_schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, log: &Value) {
    let errors: Vec<String> = validator.iter_errors(log).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "the SARIF log breaks the schema:\n{}", errors.join("\n"));
}

#[test]
fn sarif_is_valid_against_the_official_schema() {
    let validator = sarif_schema();
    let checked = fixtures();
    for unsafe_fixes in [false, true] {
        let log: Value =
            serde_json::from_str(&render(Format::Sarif, &findings(&checked), Order::Path, unsafe_fixes)).unwrap();
        assert_valid(&validator, &log);
    }
    let empty: Value = serde_json::from_str(&render(Format::Sarif, &[], Order::Path, false)).unwrap();
    assert_valid(&validator, &empty);
    assert_eq!(empty["runs"][0]["results"], Value::Array(vec![]));

    // The validator does reject what the schema forbids.
    let mut broken: Value =
        serde_json::from_str(&render(Format::Sarif, &findings(&checked), Order::Path, false)).unwrap();
    broken["runs"][0]["results"][0]["level"] = Value::from("critical");
    assert!(!validator.is_valid(&broken));
    broken["runs"][0]["results"][0]["level"] = Value::from("error");
    assert!(validator.is_valid(&broken));
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = Value::from(0);
    assert!(!validator.is_valid(&broken));
    // Formats are checked too: `informationUri` must be an absolute URI.
    let mut relative: Value = serde_json::from_str(&render(Format::Sarif, &[], Order::Path, false)).unwrap();
    relative["runs"][0]["tool"]["driver"]["informationUri"] = Value::from("tcfix/README.md");
    assert!(!validator.is_valid(&relative));
}

#[test]
fn sarif_describes_every_rule_and_every_finding() {
    let checked = fixtures();
    let log: Value = serde_json::from_str(&render(Format::Sarif, &findings(&checked), Order::Path, false)).unwrap();
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().unwrap().ends_with("sarif-schema-2.1.0.json"));
    let run = &log["runs"][0];
    assert_eq!(log["runs"].as_array().unwrap().len(), 1);
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "tcfix");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    assert!(driver["informationUri"].as_str().unwrap().starts_with("https://"));
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), RULES.len());
    for (descriptor, rule) in rules.iter().zip(RULES) {
        assert_eq!(descriptor["id"], rule.code);
        assert_eq!(descriptor["name"], rule.name);
        assert_eq!(descriptor["properties"]["category"], rule.category.to_string());
        let short = descriptor["shortDescription"]["text"].as_str().unwrap();
        let full = descriptor["fullDescription"]["text"].as_str().unwrap();
        assert!(!short.is_empty() && full.len() > short.len() && !full.contains('\n'), "{full}");
        let readme =
            fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("codemods/{}/README.md", rule.name)))
                .unwrap();
        // The full description is the README's first paragraph.
        let first_words: String = full.split(' ').take(6).collect::<Vec<_>>().join(" ");
        assert!(readme.replace('\n', " ").contains(&first_words), "{first_words}");
        assert_eq!(descriptor["help"]["markdown"], readme.as_str());
    }

    let results = run["results"].as_array().unwrap();
    let expected = in_order(&checked);
    assert_eq!(results.len(), expected.len());
    for (result, (file, diagnostic)) in results.iter().zip(expected) {
        assert_eq!(result["ruleId"], diagnostic.rule.code);
        let index = number(&result["ruleIndex"]) as usize;
        assert_eq!(rules[index]["id"], diagnostic.rule.code);
        let level = match diagnostic.severity {
            Severity::Critical | Severity::High => "error",
            Severity::Medium => "warning",
            Severity::Low => "note",
        };
        assert_eq!(result["level"], level);
        assert_eq!(result["message"]["text"], diagnostic.message.as_str());
        let location = &result["locations"][0]["physicalLocation"];
        let uri = location["artifactLocation"]["uri"].as_str().unwrap();
        if file.path == ODD_PATH {
            assert_eq!(uri, "odd%20dir%2C1/a%3Ab%25.py");
        } else {
            assert_eq!(uri, file.path);
        }
        let region = &location["region"];
        let start = offset(&file.text, number(&region["startLine"]), number(&region["startColumn"]));
        let end = offset(&file.text, number(&region["endLine"]), number(&region["endColumn"]));
        assert_eq!((start, end), (diagnostic.range.start().to_usize(), diagnostic.range.end().to_usize()));

        match &diagnostic.fix {
            None => assert!(result.get("fixes").is_none()),
            Some(fix) => {
                let sarif_fix = &result["fixes"][0];
                assert_eq!(sarif_fix["description"]["text"], fix.title.as_str());
                assert_eq!(sarif_fix["properties"]["applicability"], applicability(fix.safety));
                let change = &sarif_fix["artifactChanges"][0];
                assert_eq!(change["artifactLocation"]["uri"], uri);
                // Applying the replacements as a SARIF consumer would gives the fixed file.
                let mut fixed = file.text.clone();
                let mut replacements: Vec<(usize, usize, String)> = change["replacements"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|replacement| {
                        let deleted = &replacement["deletedRegion"];
                        let start = offset(&file.text, number(&deleted["startLine"]), number(&deleted["startColumn"]));
                        let end = offset(&file.text, number(&deleted["endLine"]), number(&deleted["endColumn"]));
                        let inserted = replacement["insertedContent"]["text"].as_str().unwrap_or_default();
                        (start, end, inserted.to_string())
                    })
                    .collect();
                replacements.sort_by_key(|(start, end, _)| std::cmp::Reverse((*start, *end)));
                for (start, end, inserted) in replacements {
                    fixed.replace_range(start..end, &inserted);
                }
                assert_eq!(fixed, apply_edits(&file.text, &fix.edits.iter().collect::<Vec<_>>()));
            }
        }
        assert_eq!(result["properties"]["severity"], diagnostic.severity.to_string());
        assert_eq!(result["properties"]["noFixReason"].as_str(), diagnostic.no_fix_reason.as_deref());
    }
}

/// Every finding in the markdown report's order: worst first, then by path and position.
fn by_severity(checked: &[Checked]) -> Vec<(&Checked, &Diagnostic)> {
    let mut found = in_order(checked);
    found.sort_by_key(|(_, diagnostic)| std::cmp::Reverse(diagnostic.severity));
    found
}

/// The text of a fenced block that starts with `opening` in `body`.
fn fenced<'a>(body: &'a str, opening: &str) -> Option<&'a str> {
    let start = body.find(opening)? + opening.len();
    let end = start + body[start..].find("\n```").unwrap() + 1;
    Some(&body[start..end])
}

#[test]
fn markdown_report_has_the_table_and_a_section_per_finding_worst_first() {
    let checked = fixtures();
    let files = findings(&checked);
    let out = render(Format::Markdown, &files, Order::Path, false);
    let expected = by_severity(&checked);
    assert!(out.starts_with("## tcfix"), "{out}");
    assert!(out.chars().count() <= tcfix::output::markdown::COMMENT_CHARS);

    // The table: a row per category found, a column per severity, and the counts.
    assert!(out.contains("| category | critical | high | medium | low | total |\n|---|---:|---:|---:|---:|---:|\n"));
    let all: Vec<&Diagnostic> = expected.iter().map(|(_, d)| *d).collect();
    let count = |pick: &dyn Fn(&Diagnostic) -> bool| all.iter().filter(|d| pick(d)).count();
    let mut categories: Vec<String> = all.iter().map(|d| d.rule.category.to_string()).collect();
    categories.sort();
    categories.dedup();
    for category in categories.iter().map(String::as_str).chain(["**total**"]) {
        let in_row = |d: &Diagnostic| category == "**total**" || d.rule.category.to_string() == category;
        let cells: Vec<String> = [Severity::Critical, Severity::High, Severity::Medium, Severity::Low]
            .iter()
            .map(|severity| count(&|d| in_row(d) && d.severity == *severity).to_string())
            .chain([count(&|d| in_row(d)).to_string()])
            .collect();
        let row = format!("| {category} | {} |\n", cells.join(" | "));
        assert!(out.contains(&row), "no row {row:?} in\n{out}");
    }
    // The table comes before the first finding, and a heading per severity found.
    assert!(out.find("| **total** |").unwrap() < out.find("\n#### ").unwrap());
    assert!(out.contains("\n### Critical (") && out.contains("\n### High (") && out.contains("\n### Medium ("));

    // One section per finding, worst first, each with its rule, severity, why, and fix or reason.
    let sections: Vec<&str> = out.split("\n#### ").skip(1).collect();
    assert_eq!(sections.len(), expected.len());
    let mut suggestions = 0;
    for (section, (file, diagnostic)) in sections.iter().zip(&expected) {
        let (heading, body) = section.split_once('\n').unwrap();
        assert!(heading.contains(&file.path.to_string()), "{heading}");
        assert!(heading.ends_with(&format!("{} {}", diagnostic.rule.code, diagnostic.rule.name)), "{heading}");
        assert!(body.contains(&format!("**{}** · {}", diagnostic.severity, diagnostic.rule.category)));
        assert!(body.contains("**Why it hurts:** "));
        let body = body.split("\n### ").next().unwrap();
        match &diagnostic.fix {
            Some(fix) => {
                assert!(body.contains("**Fix** ("), "{body}");
                let fixed = apply_edits(&file.text, &fix.edits.iter().collect::<Vec<_>>());
                if let Some(suggestion) = fenced(body, "```suggestion\n") {
                    // A suggestion is the new text of the lines it says it replaces.
                    suggestions += 1;
                    assert_eq!(fix.safety, Safety::Safe);
                    let lines = body.split("Replaces line").nth(1).unwrap().split(':').next().unwrap();
                    let lines: Vec<usize> =
                        lines.trim_start_matches('s').trim().split('–').map(|n| n.parse().unwrap()).collect();
                    let (first, last) = (lines[0], *lines.last().unwrap());
                    let original: Vec<&str> = file.text.split_inclusive('\n').collect();
                    let ending = if file.text.contains("\r\n") { "\r\n" } else { "\n" };
                    let replaced: String = original[..first - 1].concat()
                        + &suggestion.trim_end_matches('\n').replace('\n', ending)
                        + ending
                        + &original[last..].concat();
                    assert_eq!(replaced, fixed, "{body}");
                } else {
                    // The diff is the file with this one fix applied.
                    let diff = fenced(body, "```diff\n").expect("a diff or a suggestion");
                    assert_eq!(diff, tcfix::diff::unified_diff(&file.path, &file.text, &fixed));
                    assert!(diff.contains(&format!("--- a/{}", file.path)) && diff.contains("\n+"));
                }
            }
            None => {
                assert!(!body.contains("```diff") && !body.contains("```suggestion"));
                if let Some(reason) = &diagnostic.no_fix_reason {
                    assert!(body.contains("**No fix:** "), "{body}");
                    let words = reason.split(' ').next().unwrap().trim_matches('`');
                    assert!(body.contains(words));
                }
            }
        }
    }
    assert!(suggestions > 0, "some safe fix is a suggestion");
    let fixes = all.iter().filter(|d| d.fix.is_some()).count();
    assert_eq!(out.matches("```diff\n").count() + out.matches("```suggestion\n").count(), fixes);
    assert!(!out.contains("not shown"), "everything fits");

    assert!(render(Format::Markdown, &[], Order::Path, false).contains("No hazards found."));
}

#[test]
fn markdown_report_is_capped_and_says_how_many_were_left_out() {
    use tcfix::output::markdown::{Review, review};
    let checked = fixtures();
    let files = findings(&checked);
    let total = in_order(&checked).len();
    let full = review(&files, false, &Review { max_chars: 0, ..Review::default() });
    let mut counted = 0;
    for cap in [2_500, 3_000, 5_000, 9_000] {
        assert!(full.chars().count() > cap, "the cap must bite");
        let out = review(&files, false, &Review { max_chars: cap, ..Review::default() });
        assert!(out.chars().count() <= cap, "{} > {cap}", out.chars().count());
        assert!(out.contains("| **total** |"), "the table always comes first");
        let in_full = out.matches("\n#### ").count();
        let one_line = out.lines().filter(|line| line.starts_with("- `")).count();
        assert!(in_full > 0 && one_line > 0, "some in full, the next one line each: {out}");
        // The first findings are the worst.
        assert!(out.contains("\n### Critical (") && by_severity(&checked)[0].1.severity == Severity::Critical);
        // The last line counts what was left out, if anything was.
        let last = out.lines().last().unwrap();
        let left: usize = match last.strip_prefix("**") {
            Some(count) => count.split(' ').next().unwrap().parse().unwrap(),
            None => 0,
        };
        assert_eq!(in_full + one_line + left, total, "{out}");
        if left > 0 {
            counted += 1;
            assert!(last.contains("not shown") && last.contains("`--markdown-max-chars 0`"), "{last}");
            assert!(last.contains(&format!("{},{:03} characters", cap / 1000, cap % 1000)), "{last}");
            assert!(!last.contains("pull-request comment"), "a cap of {cap} is no comment's size: {last}");
        }
    }
    assert!(counted > 0, "some cap leaves findings out");
    let scoped = review(
        &files,
        false,
        &Review { scope: Some("Only lines changed since `main` are reported."), ..Review::default() },
    );
    assert!(scoped.starts_with("## tcfix: torch.compile hazards\n\nOnly lines changed since `main` are reported.\n\n"));
}

#[test]
fn sarif_carries_the_baseline_fingerprint() {
    let checked = fixtures();
    let log: Value = serde_json::from_str(&render(Format::Sarif, &findings(&checked), Order::Path, false)).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let mut seen = std::collections::HashSet::new();
    for (result, (file, diagnostic)) in results.iter().zip(in_order(&checked)) {
        let fingerprint = result["partialFingerprints"]["tcfix/v1"].as_str().unwrap();
        assert_eq!(fingerprint, diagnostic.fingerprint);
        assert!(seen.insert((file.path.clone(), diagnostic.rule.code, fingerprint.to_string())), "{fingerprint}");
    }
}

#[test]
fn statistics_count_per_rule_most_frequent_first() {
    let checked = fixtures();
    let files = findings(&checked);
    let out = statistics(&files, false);
    let all: Vec<&Diagnostic> = checked.iter().flat_map(|c| &c.diagnostics).collect();
    let lines: Vec<&str> = out.lines().collect();
    let mut codes: Vec<&str> = all.iter().map(|d| d.rule.code).collect();
    codes.sort();
    codes.dedup();
    assert_eq!(lines.len(), codes.len());
    let mut previous = usize::MAX;
    for line in lines {
        let fields: Vec<&str> = line.split('\t').collect();
        let count: usize = fields[0].trim().parse().unwrap();
        let code = fields[1].trim();
        let of_rule: Vec<&&Diagnostic> = all.iter().filter(|d| d.rule.code == code).collect();
        assert_eq!(count, of_rule.len(), "{line}");
        assert!(count <= previous);
        previous = count;
        let fixable = of_rule.iter().filter(|d| d.fix.as_ref().is_some_and(|fix| fix.is_applicable(false))).count();
        let marker = match fixable {
            0 => "[ ] ",
            _ if fixable == count => "[*] ",
            _ => "[-] ",
        };
        assert_eq!(fields[2].trim_end(), format!("{marker}{}", of_rule[0].rule.name), "{line}");
        // Then what the findings carry, whatever the flags: the four counts add up to the total.
        let with =
            |safety: Option<Safety>| of_rule.iter().filter(|d| d.fix.as_ref().map(|f| f.safety) == safety).count();
        let carried: Vec<String> = fields[3..].iter().map(|field| field.trim().to_string()).collect();
        assert_eq!(
            carried,
            [
                format!("{} safe", with(Some(Safety::Safe))),
                format!("{} unsafe", with(Some(Safety::Unsafe))),
                format!("{} display-only", with(Some(Safety::DisplayOnly))),
                format!("{} no fix", with(None)),
            ],
            "{line}"
        );
    }
    assert_eq!(statistics(&[], false), "");
}

#[test]
fn statistics_columns_line_up() {
    let checked = fixtures();
    let files = findings(&checked);
    let out = statistics(&files, true);
    // Every line has the same fields, each (but the last) padded to one width across the lines, so
    // the table reads as columns wherever the tab stops are.
    let rows: Vec<Vec<&str>> = out.lines().map(|line| line.split('\t').collect()).collect();
    assert!(rows.len() > 3);
    assert!(rows.iter().all(|row| row.len() == 7), "{out}");
    for column in 0..6 {
        let widths: Vec<usize> = rows.iter().map(|row| row[column].chars().count()).collect();
        assert!(widths.windows(2).all(|w| w[0] == w[1]), "column {column} of\n{out}");
    }
}

/// A print of `.item()` is both TCF101 and TCF103, and both rules offer the same guard: the review
/// shows one suggestion block for the line, not two identical ones to click; and "why it hurts"
/// speaks of loops only where the finding is in one (the message says so then).
#[test]
fn markdown_shows_one_suggestion_per_change_and_no_loop_where_there_is_none() {
    let text = "import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        print(\"loss\", x.sum().item())
        return x
";
    let checked = vec![check("models/model.py", text.to_string())];
    let codes: Vec<&str> = checked[0].diagnostics.iter().map(|d| d.rule.code).collect();
    assert_eq!(codes, ["TCF101", "TCF103"], "both rules find the line");
    let out = tcfix::output::markdown::render(&findings(&checked), false);
    assert_eq!(out.matches("```suggestion").count(), 1, "{out}");
    assert!(out.contains("The same change as the suggestion under `models/model.py:7` TCF101 (line 7)."), "{out}");
    assert!(!out.to_lowercase().contains("loop"), "{out}");
}
