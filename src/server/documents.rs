//! The buffers the editor has open: their text as the editor has it (not the file on disk), their
//! version, and the conversion between byte offsets (tcfix's ranges) and LSP positions (a line
//! and a column counted in UTF-16 code units, or in bytes when the client agreed to UTF-8).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lsp_types::{Position, Range, TextDocumentContentChangeEvent, Url};
use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::Diagnostic;
use crate::model::file::facts::Facts;
/// How an LSP position counts the characters of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The protocol's default: UTF-16 code units (`é` is 1, `😀` is 2).
    Utf16,
    /// Bytes, when the client offers `utf-8` in `general.positionEncodings`.
    Utf8,
}

/// One open buffer.
pub struct Document {
    /// The file's absolute path (for the configuration's globs and the project index).
    pub path: PathBuf,
    pub text: String,
    pub version: i32,
    /// A Python buffer (tcfix has nothing to say about the others the editor opens).
    pub python: bool,
    /// When its diagnostics are next due: set by the first change since the last analysis (see
    /// `DEBOUNCE` in `mod.rs`), cleared by the analysis.
    pub due: Option<Instant>,
    /// The last analysis of a text that parsed: kept while the buffer does not parse.
    pub analysis: Option<Analysis>,
}

/// What the last good analysis found, and for which text.
pub struct Analysis {
    pub version: i32,
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    /// The project index's answer for this buffer, for "fix all" to re-analyse with.
    pub facts: Facts,
}

impl Analysis {
    /// Whether its byte ranges still point into the buffer's text.
    pub fn is_current(&self, document: &Document) -> bool {
        self.version == document.version && self.text == document.text
    }
}

impl Document {
    /// A buffer just opened: its diagnostics are due at once.
    pub fn new(uri: &Url, language: &str, text: String, version: i32) -> Self {
        let path = uri.to_file_path().unwrap_or_else(|_| PathBuf::from(uri.path()));
        let python = language == "python" || crate::discover::is_python(&path);
        Document { path, text, version, python, due: Some(Instant::now()), analysis: None }
    }

    /// Apply `didChange`'s edits in order (a change without a range replaces the whole text);
    /// its diagnostics are due `debounce` after the first change not yet analysed.
    pub fn change(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: Encoding,
        debounce: Duration,
    ) {
        for change in changes {
            match change.range {
                Some(range) => {
                    let lines = LineIndex::new(&self.text);
                    let start = lines.offset(range.start, &self.text, encoding);
                    let end = lines.offset(range.end, &self.text, encoding).max(start);
                    self.text.replace_range(start..end, &change.text);
                }
                None => self.text = change.text,
            }
        }
        self.version = version;
        self.due.get_or_insert_with(|| Instant::now() + debounce);
    }
}

/// Where each line of a text starts. LSP lines end at `\n`, `\r\n` or a lone `\r`.
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &byte) in bytes.iter().enumerate() {
            let ends_line = byte == b'\n' || (byte == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            if ends_line {
                starts.push(i + 1);
            }
        }
        LineIndex { starts }
    }

    /// The LSP position of a byte offset.
    pub fn position(&self, offset: TextSize, text: &str, encoding: Encoding) -> Position {
        let offset = floor_char_boundary(text, offset.to_usize().min(text.len()));
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let before = &text[self.starts[line]..offset];
        let character = match encoding {
            Encoding::Utf16 => before.encode_utf16().count(),
            Encoding::Utf8 => before.len(),
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, range: TextRange, text: &str, encoding: Encoding) -> Range {
        Range::new(self.position(range.start(), text, encoding), self.position(range.end(), text, encoding))
    }

    /// The byte offset of an LSP position. A column past the line's end means its end (the
    /// protocol says so); a line past the last means the end of the text.
    pub fn offset(&self, position: Position, text: &str, encoding: Encoding) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else { return text.len() };
        let end = self.starts.get(position.line as usize + 1).copied().unwrap_or(text.len());
        let line = text[start..end].trim_end_matches(['\n', '\r']);
        let wanted = position.character as usize;
        let mut counted = 0;
        for (at, character) in line.char_indices() {
            if counted >= wanted {
                return start + at;
            }
            counted += match encoding {
                Encoding::Utf16 => character.len_utf16(),
                Encoding::Utf8 => character.len_utf8(),
            };
        }
        start + line.len()
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "x = 'é😀'\r\ny = 1\n\nz\rw";

    #[test]
    fn positions_count_utf16_units_or_bytes() {
        let lines = LineIndex::new(TEXT);
        let after_emoji = TEXT.find("'\r").unwrap();
        assert_eq!(lines.position(TextSize::new(after_emoji as u32), TEXT, Encoding::Utf16), Position::new(0, 8));
        assert_eq!(lines.position(TextSize::new(after_emoji as u32), TEXT, Encoding::Utf8), Position::new(0, 11));
        let y = TEXT.find('y').unwrap();
        assert_eq!(lines.position(TextSize::new(y as u32), TEXT, Encoding::Utf16), Position::new(1, 0));
        let w = TEXT.find('w').unwrap();
        assert_eq!(
            lines.position(TextSize::new(w as u32), TEXT, Encoding::Utf16),
            Position::new(4, 0),
            "a lone \\r ends a line"
        );
    }

    #[test]
    fn offsets_are_the_inverse_of_positions() {
        let lines = LineIndex::new(TEXT);
        for encoding in [Encoding::Utf16, Encoding::Utf8] {
            for (offset, _) in TEXT.char_indices() {
                let position = lines.position(TextSize::new(offset as u32), TEXT, encoding);
                if TEXT[offset..].starts_with('\n') && TEXT[..offset].ends_with('\r') {
                    continue; // between \r and \n: no position names it
                }
                assert_eq!(lines.offset(position, TEXT, encoding), offset, "{position:?} {encoding:?}");
            }
        }
        assert_eq!(lines.offset(Position::new(1, 99), TEXT, Encoding::Utf16), TEXT.find("1\n").unwrap() + 1);
        assert_eq!(lines.offset(Position::new(99, 0), TEXT, Encoding::Utf16), TEXT.len());
    }

    #[test]
    fn incremental_changes_apply_at_utf16_positions() {
        let uri = Url::parse("file:///m.py").unwrap();
        let mut document = Document::new(&uri, "python", "s = 'é😀'\nx = 1\n".to_string(), 1);
        let change = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(0, 7), Position::new(0, 7))),
            range_length: None,
            text: "!".to_string(),
        };
        document.change(2, vec![change], Encoding::Utf16, Duration::ZERO);
        assert_eq!(document.text, "s = 'é😀!'\nx = 1\n");
        assert_eq!(document.version, 2);
    }
}
