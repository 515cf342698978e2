//! Patch files for review: one combined patch (`--patch FILE`), or a series with one patch per
//! rule in `git format-patch` form (`--patch-dir DIR`), so `git am DIR/*.patch` makes one
//! reviewable commit per rule, each explaining its hazard and listing its sites. The patches are
//! the user's, as `git format-patch` would write them: their `From:` is the user's git identity,
//! and a `Generated-by:` trailer names tcfix.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::rules::Rule;

/// One rule's changes, made on top of the previous rule's.
pub struct RulePatch {
    pub rule: &'static Rule,
    /// Unified diffs, one per changed file, in path order.
    pub diffs: Vec<String>,
    /// `path:line: message` for each fixed hazard.
    pub sites: Vec<String>,
}

/// `Name <email>` as a mail header holds it, as `git format-patch` writes it: a name with
/// characters outside ASCII is RFC 2047-encoded, one with RFC 822 specials (`.`, `,`...) quoted.
pub fn mail_address(name: &str, email: &str) -> String {
    let name = if !name.is_ascii() {
        let mut encoded = String::from("=?UTF-8?q?");
        for byte in name.bytes() {
            match byte {
                b' ' => encoded.push_str("=20"),
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'!' | b'*' | b'+' | b'-' | b'/' => {
                    encoded.push(byte as char)
                }
                _ => encoded.push_str(&format!("={byte:02X}")),
            }
        }
        encoded + "?="
    } else if name.contains(|c: char| "()<>[]:;@\\,.\"".contains(c)) {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        name.to_string()
    };
    format!("{name} <{email}>")
}

/// The trailer that names tcfix in its commits and patches.
pub fn trailer() -> String {
    format!("Generated-by: tcfix {}", env!("CARGO_PKG_VERSION"))
}

/// `0001-TCF101-guard-print-and-logging-calls-in-compiled-code.patch` and its text; `author` is
/// `Name <email>`.
pub fn format_patch(
    number: usize,
    total: usize,
    patch: &RulePatch,
    author: &str,
    date: &Timestamp,
) -> (String, String) {
    let rule = patch.rule;
    let slug: String = rule
        .summary
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let name = format!("{number:04}-{}-{slug}.patch", rule.code);
    let mut text = String::new();
    text.push_str("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n");
    text.push_str(&format!("From: {author}\n"));
    text.push_str(&format!("Date: {}\n", date.rfc2822()));
    text.push_str(&format!("Subject: [PATCH {number}/{total}] {}: {}\n\n", rule.code, rule.summary));
    text.push_str(&format!("{} ({}): {}\n\n", rule.code, rule.name, first_paragraph(rule.explanation)));
    text.push_str(&format!("Fixed {} {}:\n", patch.sites.len(), if patch.sites.len() == 1 { "site" } else { "sites" }));
    for site in &patch.sites {
        text.push_str(&format!("- {site}\n"));
    }
    text.push_str(&format!("\n{}\n---\n\n", trailer()));
    for diff in &patch.diffs {
        text.push_str(diff);
    }
    text.push_str(&format!("-- \ntcfix {}\n\n", env!("CARGO_PKG_VERSION")));
    (name, text)
}

/// The first paragraph of a rule's README, as one line (the summary under its title).
fn first_paragraph(readme: &str) -> String {
    readme
        .split("\n\n")
        .map(str::trim)
        .find(|paragraph| !paragraph.is_empty() && !paragraph.starts_with('#'))
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A UTC time, for patch dates and branch names (no time zone database needed).
pub struct Timestamp {
    seconds: i64,
}

pub fn utc_timestamp() -> Timestamp {
    let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    Timestamp { seconds }
}

impl Timestamp {
    /// `(year, month, day, hour, minute, second, weekday)`; weekday 0 is Sunday.
    fn parts(&self) -> (i64, u32, u32, u32, u32, u32, usize) {
        let days = self.seconds.div_euclid(86_400);
        let time = self.seconds.rem_euclid(86_400) as u32;
        // Howard Hinnant's days-to-civil.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        let weekday = (days + 4).rem_euclid(7) as usize;
        (year, month, day, time / 3600, time / 60 % 60, time % 60, weekday)
    }

    /// `Sat, 21 Nov 2026 20:15:00 +0000`.
    pub fn rfc2822(&self) -> String {
        const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
        const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        let (year, month, day, hour, minute, second, weekday) = self.parts();
        format!(
            "{}, {day:02} {} {year} {hour:02}:{minute:02}:{second:02} +0000",
            DAYS[weekday],
            MONTHS[month as usize - 1]
        )
    }

    /// `20261121-201500`.
    pub fn compact(&self) -> String {
        let (year, month, day, hour, minute, second, _) = self.parts();
        format!("{year}{month:02}{day:02}-{hour:02}{minute:02}{second:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        let epoch = Timestamp { seconds: 0 };
        assert_eq!(epoch.rfc2822(), "Thu, 01 Jan 1970 00:00:00 +0000");
        let day = Timestamp { seconds: 1_795_292_100 }; // 2026-11-21 20:15:00 UTC
        assert_eq!(day.rfc2822(), "Sat, 21 Nov 2026 20:15:00 +0000");
        assert_eq!(day.compact(), "20261121-201500");
        let leap = Timestamp { seconds: 951_782_400 }; // 2000-02-29
        assert_eq!(leap.compact(), "20000229-000000");
    }

    #[test]
    fn authors_are_written_as_mail_headers() {
        assert_eq!(mail_address("Ada Lovelace", "ada@example.com"), "Ada Lovelace <ada@example.com>");
        assert_eq!(mail_address("Ada L. Lovelace", "a@x"), "\"Ada L. Lovelace\" <a@x>");
        assert_eq!(mail_address("Zoë", "z@x"), "=?UTF-8?q?Zo=C3=AB?= <z@x>");
    }
}
