//! CSV and other delimited text (`csv`): the delimiter (`,` `;` tab or `|`) is the one that gives
//! the head's records one consistent field count; each record becomes one line with its non-empty
//! fields separated by tabs, header included. Quoted fields may hold delimiters and line breaks.

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};

use crate::decode;

/// Delimiters tried, in order of preference on a tie.
const DELIMITERS: [u8; 4] = [b',', b';', b'\t', b'|'];

/// Records of the head examined when sniffing.
const SNIFF_RECORDS: usize = 200;

/// Extracts delimited records.
struct Csv;

impl Extractor for Csv {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let detected = decode::detect_or_fail(input)?;
        let delimiter = delimiter(&detected.head, detected.complete).map_or(b',', |(d, _)| d);
        let text = decode::decode_all(input, &detected);
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes());
        let mut record = csv::StringRecord::new();
        while reader
            .read_record(&mut record)
            .map_err(ExtractError::malformed)?
        {
            let mut first = true;
            for field in record.iter().map(str::trim).filter(|f| !f.is_empty()) {
                if !first {
                    sink.push("\t")?;
                }
                first = false;
                let field = decode::without_controls(field);
                if field.contains(['\n', '\r']) {
                    sink.push(&field.replace("\r\n", " ").replace(['\n', '\r'], " "))?;
                } else {
                    sink.push(&field)?;
                }
            }
            sink.line_break()?;
        }
        Ok(())
    }
}

/// The delimiter that makes the head look like a table, and a score for it: several records
/// (lines, or more with quoted line breaks) share one field count above 1 and have at least two
/// non-empty fields.
fn delimiter(head: &str, complete: bool) -> Option<(u8, u8)> {
    let mut best: Option<(usize, usize, u8)> = None; // (consistent records, fields, delimiter)
    for d in DELIMITERS {
        if d == b'|' && head.lines().any(is_markdown_table_rule) {
            continue;
        }
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(d)
            .has_headers(false)
            .flexible(true)
            .from_reader(head.as_bytes());
        // (field count, non-empty field count) per record.
        let mut shapes: Vec<(usize, usize)> = Vec::new();
        for record in reader.records().take(SNIFF_RECORDS + 1) {
            let Ok(record) = record else { break };
            let filled = record.iter().filter(|f| !f.trim().is_empty()).count();
            shapes.push((record.len(), filled));
        }
        if !complete || shapes.len() > SNIFF_RECORDS {
            // The last record may be cut short.
            shapes.pop();
        }
        let n = shapes.len();
        if n < 2 {
            continue;
        }
        let mut counts: Vec<usize> = shapes.iter().map(|s| s.0).collect();
        counts.sort_unstable();
        let Some(fields) = mode(&counts) else {
            continue;
        };
        if fields < 2 {
            continue;
        }
        let consistent = shapes
            .iter()
            .filter(|&&(len, filled)| len == fields && filled >= 2)
            .count();
        if consistent * 5 < n * 4 {
            continue;
        }
        if best.is_none_or(|(c, f, _)| (consistent, fields) > (c, f)) {
            best = Some((consistent, fields, d));
        }
    }
    best.map(|(consistent, _, d)| (d, if consistent >= 3 { 50 } else { 25 }))
}

/// The most frequent value of a sorted slice (the larger one on a tie).
fn mode(sorted: &[usize]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None; // (frequency, value)
    for run in sorted.chunk_by(|a, b| a == b) {
        if best.is_none_or(|(f, _)| run.len() >= f) {
            best = Some((run.len(), run[0]));
        }
    }
    best.map(|(_, v)| v)
}

/// `|---|:--:|` and the like: a Markdown table, not pipe-separated values.
fn is_markdown_table_rule(line: &str) -> bool {
    let t = line.trim();
    t.contains('|') && t.contains("--") && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn sniff(probe: &Probe<'_>) -> u8 {
    decode::detect(probe.bytes)
        .and_then(|d| delimiter(&d.head, d.complete))
        .map_or(0, |(_, score)| score)
}

inventory::submit! {
    ExtractorInfo {
        id: "csv",
        version: 1,
        media_type: "text/csv",
        sniff,
        make: || Box::new(Csv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{capped, detect, text};

    #[test]
    fn csv_rows_become_lines() {
        let doc = b"Name,Note,Score\nAlice,\"likes, commas\",3\nBob,\"two\nlines\",4\nCarol,,5\n";
        assert_eq!(detect(doc), Some("csv"));
        assert_eq!(
            text("csv", doc),
            "Name\tNote\tScore\nAlice\tlikes, commas\t3\nBob\ttwo lines\t4\nCarol\t5\n"
        );
    }

    #[test]
    fn the_consistent_delimiter_wins() {
        let doc = "Lorem, ipsum; dolor sit; amet\nconsectetur; adipiscing; elit\n\
                   sed, do; eiusmod; tempor incididunt\nut labore; et, dolore; magna aliqua\n";
        assert_eq!(delimiter(doc, true).map(|d| d.0), Some(b';'));
        assert_eq!(detect(doc.as_bytes()), Some("csv"));
        assert_eq!(
            delimiter("a\tb\tc\n1\t2\t3\n4\t5\t6\n", true).map(|d| d.0),
            Some(b'\t')
        );
        assert_eq!(delimiter("a|b\n1|2\n3|4\n", true).map(|d| d.0), Some(b'|'));
        assert!(text("csv", b"a\tb\n1\t2\n3\t4\n").starts_with("a\tb\n1\t2\n"));
    }

    #[test]
    fn prose_and_markdown_tables_are_not_csv() {
        let prose = "Well, Prince, so Genoa and Lucca are now just family estates of the\n\
                     Buonapartes. But I warn you, if you don't tell me that this means war,\n\
                     if you still try to defend the infamies and horrors perpetrated by that\n\
                     Antichrist—I really believe he is Antichrist—I will have nothing more\n";
        assert_eq!(delimiter(prose, true), None);
        assert_eq!(delimiter("| a | b |\n|---|---|\n| 1 | 2 |\n", true), None);
        assert_eq!(delimiter("\tindented\n\tlines\n\tof text\n", true), None);
    }

    #[test]
    fn a_big_table_stops_at_the_cap() {
        let doc = "alpha,beta,gamma\n".repeat(100_000);
        let (out, full) = capped("csv", doc.as_bytes(), 1000);
        assert!(full);
        assert_eq!(out.chars().count(), 1000);
    }
}
