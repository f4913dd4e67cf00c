//! Spreadsheet number formats, the common subset: fixed decimals, thousands separators,
//! percentages, literal prefixes and suffixes (currency symbols, quoted text), and a separate
//! section for negative numbers (`#,##0;(#,##0)`). Anything else (scientific, fractions, text
//! and date formats, conditions) is left to the general format.

/// Whether a number format code shows a time of day and no date: hours or seconds, and no day
/// or year (quoted text, `[…]` colours and conditions, and escaped characters left out).
pub fn time_only(code: &str) -> bool {
    let mut parts = String::new();
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => chars.by_ref().take_while(|&c| c != '"').for_each(drop),
            '[' => chars.by_ref().take_while(|&c| c != ']').for_each(drop),
            '\\' | '_' | '*' => {
                chars.next();
            }
            c => parts.push(c.to_ascii_lowercase()),
        }
    }
    (parts.contains('h') || parts.contains('s')) && !parts.contains('d') && !parts.contains('y')
}

/// A parsed number format section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Section {
    prefix: String,
    suffix: String,
    decimals: usize,
    grouping: bool,
    percent: bool,
}

/// A parsed number format: the section for positive numbers and zero, and the one for negative
/// numbers if the format has one (then the value is written without its sign).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberFormat {
    positive: Section,
    negative: Option<Section>,
}

/// Most decimals written (formats asking for more are odd, not useful).
const MAX_DECIMALS: usize = 15;

impl NumberFormat {
    /// Parses a format code; `None` for the general format and anything we do not render.
    pub fn parse(code: &str) -> Option<Self> {
        if code.is_empty() || code.eq_ignore_ascii_case("general") {
            return None;
        }
        let sections = split_sections(code);
        let positive = parse_section(sections.first()?)?;
        let negative = match sections.get(1) {
            Some(s) => Some(parse_section(s)?),
            None => None,
        };
        Some(Self { positive, negative })
    }

    /// Writes `value` in this format.
    pub fn format(&self, value: f64) -> String {
        if !value.is_finite() {
            return value.to_string();
        }
        let (section, value, sign) = match &self.negative {
            Some(neg) if value < 0.0 => (neg, -value, ""),
            _ if value < 0.0 => (&self.positive, -value, "-"),
            _ => (&self.positive, value, ""),
        };
        let value = if section.percent {
            value * 100.0
        } else {
            value
        };
        // Excel rounds halves away from zero; `format!` rounds them to even.
        let factor = 10f64.powi(section.decimals as i32);
        let scaled = value * factor;
        let value = if scaled.abs() < 1e17 {
            scaled.round() / factor
        } else {
            value
        };
        let digits = format!("{value:.*}", section.decimals);
        let (int, frac) = digits.split_once('.').unwrap_or((&digits, ""));
        let int = if section.grouping {
            group(int)
        } else {
            int.to_owned()
        };
        // A value that rounds to zero loses its sign.
        let sign = if digits.bytes().all(|b| b == b'0' || b == b'.') {
            ""
        } else {
            sign
        };
        let mut out = String::with_capacity(digits.len() + 8);
        out.push_str(sign);
        out.push_str(&section.prefix);
        out.push_str(&int);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        if section.percent {
            out.push('%');
        }
        out.push_str(&section.suffix);
        out
    }
}

/// Splits a format code at `;` outside quotes and brackets.
fn split_sections(code: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = code.chars();
    let mut quoted = false;
    let mut bracket = false;
    while let Some(c) = chars.next() {
        let current = out.last_mut();
        let Some(current) = current else { break };
        match c {
            '"' => quoted = !quoted,
            '[' if !quoted => bracket = true,
            ']' if !quoted => bracket = false,
            '\\' if !quoted => {
                current.push(c);
                if let Some(next) = chars.next() {
                    current.push(next);
                }
                continue;
            }
            ';' if !quoted && !bracket => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out
}

/// Parses one section; `None` if it is not a plain number format.
fn parse_section(s: &str) -> Option<Section> {
    let mut section = Section::default();
    let mut chars = s.chars().peekable();
    // Before, in or after the digit placeholders.
    let mut seen_digits = false;
    let mut in_decimals = false;
    let mut after = false;
    let literal = |section: &mut Section, text: &str, after: bool| {
        if after {
            section.suffix.push_str(text);
        } else {
            section.prefix.push_str(text);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '0' | '#' | '?' => {
                if after {
                    return None;
                }
                seen_digits = true;
                if in_decimals {
                    section.decimals += 1;
                }
            }
            '.' if seen_digits || chars.peek().is_some_and(|n| matches!(n, '0' | '#' | '?')) => {
                in_decimals = true;
                seen_digits = true;
            }
            ',' if seen_digits && !after => {
                if chars.peek().is_some_and(|n| matches!(n, '0' | '#' | '?')) {
                    section.grouping = true;
                } else {
                    // Trailing commas scale by thousands: not rendered.
                    return None;
                }
            }
            '%' => {
                section.percent = true;
                after |= seen_digits;
            }
            '"' => {
                let text: String = chars.by_ref().take_while(|&q| q != '"').collect();
                after |= seen_digits;
                literal(&mut section, &text, after);
            }
            '\\' => {
                after |= seen_digits;
                if let Some(next) = chars.next() {
                    literal(&mut section, next.encode_utf8(&mut [0; 4]), after);
                }
            }
            '[' => {
                let inner: String = chars.by_ref().take_while(|&q| q != ']').collect();
                // `[$€-407]` is a currency symbol; colours are dropped; conditions and the
                // rest we do not render.
                if let Some(symbol) = inner.strip_prefix('$') {
                    after |= seen_digits;
                    let symbol = symbol.split('-').next().unwrap_or_default();
                    literal(&mut section, symbol, after);
                } else if !is_colour(&inner) {
                    return None;
                }
            }
            // Padding to the width of the next character, and repetition.
            '_' => {
                chars.next();
                after |= seen_digits;
                literal(&mut section, " ", after);
            }
            '*' => {
                chars.next();
            }
            'E' | 'e' | '/' | '@' => return None,
            c if c.is_alphabetic() && !matches!(c, '€' | '£' | '¥') => return None,
            c => {
                after |= seen_digits;
                literal(&mut section, c.encode_utf8(&mut [0; 4]), after);
            }
        }
    }
    if !seen_digits || section.decimals > MAX_DECIMALS {
        return None;
    }
    section.prefix = section.prefix.trim_start().to_owned();
    section.suffix = section.suffix.trim_end().to_owned();
    Some(section)
}

fn is_colour(inner: &str) -> bool {
    let lower = inner.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "black" | "blue" | "cyan" | "green" | "magenta" | "red" | "white" | "yellow"
    ) || lower.starts_with("color")
}

/// Inserts thousands separators into a run of digits.
fn group(int: &str) -> String {
    let len = int.len();
    let mut out = String::with_capacity(len + len / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (len - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(code: &str, v: f64) -> Option<String> {
        NumberFormat::parse(code).map(|f| f.format(v))
    }

    #[test]
    fn common_formats_render_as_excel_shows_them() {
        assert_eq!(fmt("General", 1.5), None);
        assert_eq!(fmt("0", 2.6).as_deref(), Some("3"));
        assert_eq!(fmt("0.00", 2.0).as_deref(), Some("2.00"));
        assert_eq!(fmt("#,##0", 12553.4).as_deref(), Some("12,553"));
        assert_eq!(fmt("#,##0", -1234567.0).as_deref(), Some("-1,234,567"));
        assert_eq!(fmt("#,##0;(#,##0)", -81.0).as_deref(), Some("(81)"));
        assert_eq!(fmt("#,##0_);(#,##0)", 81.0).as_deref(), Some("81"));
        assert_eq!(fmt("0.0%", 0.1234).as_deref(), Some("12.3%"));
        assert_eq!(fmt("\"$\"#,##0.00", 1234.5).as_deref(), Some("$1,234.50"));
        assert_eq!(fmt("[$€-407]#,##0.00", 3.0).as_deref(), Some("€3.00"));
        assert_eq!(fmt("#,##0\" kg\"", 5.0).as_deref(), Some("5 kg"));
        assert_eq!(fmt("[Red]0.0", 1.25).as_deref(), Some("1.3"));
        assert_eq!(fmt("0.00E+00", 1.0), None);
        assert_eq!(fmt("# ?/?", 1.5), None);
        assert_eq!(fmt("@", 1.0), None);
        assert_eq!(fmt("#,##0,", 1000.0), None);
        assert_eq!(fmt("0.0", -0.01).as_deref(), Some("0.0"));
    }
}
