//! Spreadsheet number formats, the common subset: fixed decimals, thousands separators,
//! percentages, literal prefixes and suffixes (currency symbols, quoted text), scientific
//! (`0.00E+00`, and engineering `##0.0E+0`) and fraction (`# ?/?`, `# ??/??`, `# ?/8`) forms,
//! and a separate section for negative numbers (`#,##0;(#,##0)`). Anything else (text and date
//! formats, conditions) is left to the general format.

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
    /// A scientific or fraction form instead of fixed decimals.
    form: Option<Form>,
}

/// The forms of a number other than fixed decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `0.00E+00`: `int` integer digit placeholders (with a `#` among them, the exponent is a
    /// multiple of `int`: engineering notation), at least `exponent` exponent digits, and `+`
    /// shown for positive exponents when `plus`.
    Scientific {
        int: usize,
        engineering: bool,
        exponent: usize,
        plus: bool,
    },
    /// `# ?/?`: a whole part when `whole`, then a fraction over a fixed `denominator` or the
    /// closest one under `10^digits`.
    Fraction {
        whole: bool,
        digits: usize,
        denominator: Option<u32>,
    },
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
        if let Some(form) = section.form {
            let shown = form.format(value, section.decimals);
            let sign = if shown.bytes().all(|b| matches!(b, b'0' | b'.' | b' ')) {
                ""
            } else {
                sign
            };
            return format!("{sign}{}{shown}{}", section.prefix, section.suffix);
        }
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

impl Form {
    /// Reads a section's scientific or fraction form from its placeholders (quoted text and
    /// brackets left out): `None` when it has neither, or when it is not one we render.
    fn parse(s: &str) -> Option<Option<Self>> {
        let mut bare = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => chars.by_ref().take_while(|&c| c != '"').for_each(drop),
                '[' => chars.by_ref().take_while(|&c| c != ']').for_each(drop),
                '\\' | '_' | '*' => {
                    chars.next();
                }
                c => bare.push(c),
            }
        }
        let placeholder = |c: char| matches!(c, '0' | '#' | '?');
        if let Some(e) = bare.find(['E', 'e']) {
            let (mantissa, exponent) = (&bare[..e], &bare[e + 1..]);
            let plus = exponent.starts_with('+');
            if !plus && !exponent.starts_with('-') {
                return None;
            }
            let digits = exponent[1..]
                .chars()
                .take_while(|&c| placeholder(c))
                .count();
            let int_part = mantissa.split('.').next().unwrap_or_default();
            let int = int_part.chars().filter(|&c| placeholder(c)).count();
            if digits == 0 || int == 0 || bare.contains('/') {
                return None;
            }
            return Some(Some(Form::Scientific {
                int,
                engineering: int > 1 && int_part.contains('#'),
                exponent: digits,
                plus,
            }));
        }
        let Some(slash) = bare.find('/') else {
            return Some(None);
        };
        let (before, after) = (bare[..slash].trim_end(), bare[slash + 1..].trim_start());
        let numerator = before.len() - before.trim_end_matches(placeholder).len();
        let whole = before[..before.len() - numerator].chars().any(placeholder);
        let fixed: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
        let digits = after.chars().take_while(|&c| placeholder(c)).count();
        let denominator = if digits == 0 {
            Some(
                fixed
                    .parse::<u32>()
                    .ok()
                    .filter(|&d| d > 0 && d < 100_000)?,
            )
        } else {
            None
        };
        if numerator == 0 || digits > 4 || before.contains('.') {
            return None;
        }
        Some(Some(Form::Fraction {
            whole,
            digits,
            denominator,
        }))
    }

    /// Writes a non-negative `value` in this form with `decimals` mantissa decimals.
    fn format(self, value: f64, decimals: usize) -> String {
        match self {
            Form::Scientific {
                int,
                engineering,
                exponent: digits,
                plus,
            } => {
                let mut exp = if value == 0.0 {
                    0
                } else {
                    value.log10().floor() as i32
                };
                exp = if engineering {
                    exp.div_euclid(int as i32) * int as i32
                } else {
                    exp - (int as i32 - 1)
                };
                let mut mantissa = value / 10f64.powi(exp);
                let factor = 10f64.powi(decimals as i32);
                mantissa = (mantissa * factor).round() / factor;
                // Rounding up to the next power of ten moves the exponent.
                let step = if engineering { int as i32 } else { 1 };
                if value != 0.0 && mantissa >= 10f64.powi(int as i32) {
                    mantissa /= 10f64.powi(step);
                    exp += step;
                }
                let sign = if exp < 0 {
                    "-"
                } else if plus {
                    "+"
                } else {
                    ""
                };
                format!(
                    "{mantissa:.decimals$}E{sign}{:0digits$}",
                    exp.unsigned_abs()
                )
            }
            Form::Fraction {
                whole,
                digits,
                denominator,
            } => {
                let (int, frac) = if whole {
                    (value.trunc(), value.fract())
                } else {
                    (0.0, value)
                };
                let (mut num, den) = match denominator {
                    Some(d) => ((frac * f64::from(d)).round(), f64::from(d)),
                    None => closest_fraction(frac, 10u32.pow(digits as u32) - 1),
                };
                let mut int = int;
                if whole && num >= den {
                    int += 1.0;
                    num -= den;
                }
                match (whole, num == 0.0) {
                    (true, true) => format!("{int:.0}"),
                    (true, false) if int == 0.0 => format!("{num:.0}/{den:.0}"),
                    (true, false) => format!("{int:.0} {num:.0}/{den:.0}"),
                    (false, true) => "0".to_owned(),
                    (false, false) => format!("{num:.0}/{den:.0}"),
                }
            }
        }
    }
}

/// The fraction closest to `value` (in `0..`) with a denominator up to `max`, as Excel writes
/// a `?/?` format: numerator and denominator.
fn closest_fraction(value: f64, max: u32) -> (f64, f64) {
    let mut best = (value.round(), 1.0, (value - value.round()).abs());
    for d in 2..=max.max(1) {
        let d = f64::from(d);
        let n = (value * d).round();
        let err = (value - n / d).abs();
        if err < best.2 - 1e-12 {
            best = (n, d, err);
        }
    }
    (best.0, best.1)
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

/// Parses one section; `None` if it is not a number format we render.
fn parse_section(s: &str) -> Option<Section> {
    let form = Form::parse(s)?;
    if let Some(form) = form {
        return special_section(s, form);
    }
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

/// A scientific or fraction section: its `form`, the mantissa's decimals, and the literal text
/// before the first and after the last placeholder (colours left out).
fn special_section(s: &str, form: Form) -> Option<Section> {
    let mut section = Section {
        form: Some(form),
        ..Section::default()
    };
    let mut chars = s.chars().peekable();
    let mut seen_digits = false;
    let mut in_decimals = false;
    let mut literal = String::new();
    while let Some(c) = chars.next() {
        match c {
            '0' | '#' | '?' => {
                if !seen_digits {
                    section.prefix = std::mem::take(&mut literal);
                }
                literal.clear();
                seen_digits = true;
                if in_decimals {
                    section.decimals += 1;
                }
            }
            '.' if seen_digits && matches!(form, Form::Scientific { .. }) => in_decimals = true,
            'E' | 'e' => {
                in_decimals = false;
                chars.next();
                literal.clear();
            }
            '"' => literal.extend(chars.by_ref().take_while(|&q| q != '"')),
            '\\' => literal.extend(chars.next()),
            '[' => {
                let inner: String = chars.by_ref().take_while(|&q| q != ']').collect();
                if let Some(symbol) = inner.strip_prefix('$') {
                    literal.push_str(symbol.split('-').next().unwrap_or_default());
                } else if !is_colour(&inner) {
                    return None;
                }
            }
            '_' | '*' => {
                chars.next();
            }
            '%' => section.percent = true,
            c if c.is_ascii_digit() || c == '/' || c == ' ' => literal.clear(),
            c if c.is_alphabetic() && !matches!(c, '€' | '£' | '¥') => return None,
            c => literal.push(c),
        }
    }
    section.suffix = literal.trim_end().to_owned();
    section.prefix = section.prefix.trim_start().to_owned();
    (section.decimals <= MAX_DECIMALS).then_some(section)
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
        assert_eq!(fmt("0.00E+00", 1.0).as_deref(), Some("1.00E+00"));
        assert_eq!(fmt("@", 1.0), None);
        assert_eq!(fmt("#,##0,", 1000.0), None);
        assert_eq!(fmt("0.0", -0.01).as_deref(), Some("0.0"));
    }

    #[test]
    fn scientific_and_fraction_forms_render_as_excel_shows_them() {
        // The first rows are Apache POI's FmtTest.xls, as Excel (and Tika) show it.
        for (code, value, shown) in [
            ("0.00E+00", 123456.12, "1.23E+05"),
            ("0.00E+00", -123456.12, "-1.23E+05"),
            ("0.00E+00", 0.0, "0.00E+00"),
            ("##0.0E+0", 123456.12, "123.5E+3"),
            ("##0.0E+0", 0.0, "0.0E+0"),
            ("0.0E+00", 0.00012, "1.2E-04"),
            ("0.0E+00", 9.99, "1.0E+01"),
            ("0.0E-00", 12.0, "1.2E01"),
            ("# ?/?", 123456.12, "123456 1/8"),
            ("# ??/??", 123456.12, "123456 3/25"),
            ("# ??/??", -123456.12, "-123456 3/25"),
            ("# ?/?", 0.0, "0"),
            ("# ?/?", 2.0, "2"),
            ("# ?/?", 0.5, "1/2"),
            ("# ?/?", 1.99, "2"),
            ("?/?", 1.5, "3/2"),
            ("# ?/8", 2.3, "2 2/8"),
            ("# ?/16\" in\"", 1.25, "1 4/16 in"),
        ] {
            assert_eq!(fmt(code, value).as_deref(), Some(shown), "{code} {value}");
        }
        assert_eq!(fmt("0.0E+0 ?/?", 1.0), None);
    }
}
