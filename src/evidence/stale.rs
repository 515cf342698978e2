//! A log recorded before the code changed. Dynamo's tracebacks quote each user line under its
//! `File "...", line N` entry; where a quoted line of a checked file is not what that line holds
//! now, the run saw other code, and its events are joined to lines that may have moved. That is
//! said as a warning, once per file. The quoted text is the evidence, not file times: a checkout,
//! a copy or a container resets modification times, while an edited line shows in its text.

use std::path::PathBuf;

use super::Evidence;
use super::paths::PathMap;

/// A user line as a log quotes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotedLine {
    pub file: String,
    pub line: usize,
    /// Stripped of indentation and trailing blanks.
    pub text: String,
}

/// The `File "PATH", line N, in NAME` entries of a Dynamo message with the source line Python
/// prints under each (when it printed one).
pub fn quoted_lines(message: &str) -> Vec<QuotedLine> {
    let lines: Vec<&str> = message.lines().map(str::trim).collect();
    let mut quoted = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("File \"") else { continue };
        let Some((file, rest)) = rest.split_once("\", line ") else { continue };
        let number = rest.split_once(", in ").map_or(rest, |(number, _)| number);
        let Ok(number) = number.trim().parse() else { continue };
        let Some(text) = lines.get(index + 1) else { continue };
        let markers = |c: char| matches!(c, '^' | '~' | ' ');
        if text.is_empty() || text.starts_with("File \"") || text.chars().all(markers) {
            continue;
        }
        quoted.push(QuotedLine { file: file.to_string(), line: number, text: text.to_string() });
    }
    quoted
}

/// One warning per checked file whose current text differs from a line the logs quote:
/// `files` are the checked files' paths, `shown` how each is displayed.
pub fn warnings(evidence: &Evidence, files: &[PathBuf], shown: &[String]) -> Vec<String> {
    let map = PathMap::new(files);
    let mut texts: Vec<Option<Vec<String>>> = vec![None; files.len()];
    let mut differing: Vec<Vec<&QuotedLine>> = vec![Vec::new(); files.len()];
    for quoted in &evidence.quoted {
        let Some(file) = map.resolve(&quoted.file) else { continue };
        let lines = texts[file].get_or_insert_with(|| {
            std::fs::read_to_string(&files[file])
                .unwrap_or_default()
                .lines()
                .map(|line| line.trim().to_string())
                .collect()
        });
        let now = lines.get(quoted.line.wrapping_sub(1)).map(String::as_str);
        if now != Some(quoted.text.as_str()) && !differing[file].contains(&quoted) {
            differing[file].push(quoted);
        }
    }
    let mut warnings = Vec::new();
    for (file, quoted) in differing.iter_mut().enumerate() {
        quoted.sort_by_key(|quoted| quoted.line);
        let Some(first) = quoted.first() else { continue };
        let lines = texts[file].as_deref().unwrap_or_default();
        let now = lines
            .get(first.line.wrapping_sub(1))
            .map_or("past the end of the file".to_string(), |now| format!("`{now}`"));
        let more = match quoted.len() {
            1 => String::new(),
            count => format!(" ({} more lines differ)", count - 1),
        };
        warnings.push(format!(
            "{}: the log was recorded on other code: line {} ran as `{}`, and is now {now}{more}; record the run \
             again for findings joined to the right lines",
            shown[file], first.line, first.text
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceback_quotes_each_user_line_under_its_file_entry() {
        let message = "User code traceback:
  File \"/w/models/net.py\", line 43, in main
    compiled(torch.randn(2, 4))
    ~~~~~~~~^^^^^^^^^^^^^^^^^^^
  File \"/w/models/net.py\", line 18, in forward
    print(\"x\", x.shape)
  File \"<frozen>\", line 3, in f
";
        assert_eq!(
            quoted_lines(message),
            [
                QuotedLine { file: "/w/models/net.py".into(), line: 43, text: "compiled(torch.randn(2, 4))".into() },
                QuotedLine { file: "/w/models/net.py".into(), line: 18, text: "print(\"x\", x.shape)".into() },
            ]
        );
    }
}
