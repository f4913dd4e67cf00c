//! Spreadsheet cell values as text, shared by the workbook extractors (`xlsx` in
//! `inlet-extract-office`, `xls` in `inlet-extract-xls`) so that a value reads the same whichever
//! format held it: numbers in their cell's number format when it is a common one ([`NumberFormat`]),
//! else without a trailing `.0`; dates as ISO 8601 (`2023-06-30`, with the time when there is
//! one), a zero in a time-of-day format as midnight (`00:00:00`), durations as `[h]:mm:ss`,
//! booleans as `TRUE`/`FALSE`, errors as Excel shows them (`#DIV/0!`). Each extractor reads its
//! cells' format codes from its own format and hands them over as a [`CellFormat`]. Behind the
//! `cells` feature (it needs `calamine`'s cell types).

mod numfmt;

pub use numfmt::{NumberFormat, time_only};

use calamine::{CellErrorType, Data, DataRef, ExcelDateTime};
use inlet_core::extract::{ExtractError, TextSink};

/// A cell value borrowed from either of `calamine`'s representations.
enum Value<'a> {
    Empty,
    Text(&'a str),
    Int(i64),
    Float(f64),
    Bool(bool),
    DateTime(&'a ExcelDateTime),
    Error(&'a CellErrorType),
}

impl<'a> From<&'a DataRef<'_>> for Value<'a> {
    fn from(value: &'a DataRef<'_>) -> Self {
        match value {
            DataRef::Empty => Value::Empty,
            DataRef::String(s) | DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => {
                Value::Text(s)
            }
            DataRef::SharedString(s) => Value::Text(s),
            DataRef::Int(i) => Value::Int(*i),
            DataRef::Float(f) => Value::Float(*f),
            DataRef::Bool(b) => Value::Bool(*b),
            DataRef::DateTime(d) => Value::DateTime(d),
            DataRef::Error(e) => Value::Error(e),
        }
    }
}

impl<'a> From<&'a Data> for Value<'a> {
    fn from(value: &'a Data) -> Self {
        match value {
            Data::Empty => Value::Empty,
            Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => Value::Text(s),
            Data::Int(i) => Value::Int(*i),
            Data::Float(f) => Value::Float(*f),
            Data::Bool(b) => Value::Bool(*b),
            Data::DateTime(d) => Value::DateTime(d),
            Data::Error(e) => Value::Error(e),
        }
    }
}

/// What a cell's number format code changes in how its value is written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CellFormat {
    /// The number format, when it is one we render.
    number: Option<NumberFormat>,
    /// The code shows a time of day and no date ([`time_only`]).
    time_only: bool,
}

impl CellFormat {
    /// Reads a number format code (`General`, `#,##0.00`, `h:mm:ss`, …).
    pub fn parse(code: &str) -> Self {
        Self {
            number: NumberFormat::parse(code),
            time_only: time_only(code),
        }
    }
}

/// Writes a cell value read by a streaming reader (xlsx), in its cell's `format` when given.
pub fn write_data_ref(
    value: &DataRef<'_>,
    format: Option<&CellFormat>,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    write(Value::from(value), format, sink)
}

/// Writes a cell value of a loaded range (xls), in its cell's `format` when given.
pub fn write_data(
    value: &Data,
    format: Option<&CellFormat>,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    write(Value::from(value), format, sink)
}

fn write(
    value: Value<'_>,
    format: Option<&CellFormat>,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    let shown = format.and_then(|f| f.number.as_ref());
    let time_only = format.is_some_and(|f| f.time_only);
    match (value, shown) {
        (Value::Int(i), Some(shown)) => sink.push(&shown.format(i as f64)),
        (Value::Float(f), Some(shown)) => sink.push(&shown.format(f)),
        // Zero in a time-of-day format is midnight as Excel shows it (`0:00:00`), not the date
        // 1899-12-31 that serial 0 is in a date format.
        (Value::DateTime(d), _) if time_only && d.as_f64() == 0.0 && !d.is_duration() => {
            sink.push("00:00:00")
        }
        (Value::Empty, _) => Ok(()),
        (Value::Text(s), _) => sink.push(s),
        (Value::Int(i), None) => sink.push(&i.to_string()),
        (Value::Float(f), None) => sink.push(&number(f)),
        (Value::Bool(b), _) => sink.push(if b { "TRUE" } else { "FALSE" }),
        (Value::DateTime(d), _) => sink.push(&date_time(d)),
        (Value::Error(e), _) => sink.push(&e.to_string()),
    }
}

/// A number as a spreadsheet shows it in the general format: integers without a fraction,
/// others in the shortest form that reads back the same.
pub fn number(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{f:.0}")
    } else {
        format!("{f}")
    }
}

/// A date, a date and time, a time of day, or a duration.
pub fn date_time(d: &ExcelDateTime) -> String {
    if d.is_duration() {
        let total = (d.as_f64() * 86_400.0).round();
        if !total.is_finite() || total.abs() > 1e12 {
            return number(d.as_f64());
        }
        let sign = if total < 0.0 { "-" } else { "" };
        let secs = total.abs() as u64;
        return format!(
            "{sign}{}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        );
    }
    let (y, mo, day, h, mi, s, _) = d.to_ymd_hms_milli();
    if d.as_f64().fract() == 0.0 {
        format!("{y:04}-{mo:02}-{day:02}")
    } else if d.as_f64() < 1.0 && d.as_f64() >= 0.0 {
        format!("{h:02}:{mi:02}:{s:02}")
    } else {
        format!("{y:04}-{mo:02}-{day:02} {h:02}:{mi:02}:{s:02}")
    }
}

/// The format code of a built-in number format id (ECMA-376 Part 1, 18.8.30), for workbooks
/// that refer to one without writing it out (BIFF's XF records); `None` for other ids.
pub fn builtin_format_code(id: u16) -> Option<&'static str> {
    Some(match id {
        0 => "General",
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        9 => "0%",
        10 => "0.00%",
        11 => "0.00E+00",
        12 => "# ?/?",
        13 => "# ??/??",
        14 => "mm-dd-yy",
        15 => "d-mmm-yy",
        16 => "d-mmm",
        17 => "mmm-yy",
        18 => "h:mm AM/PM",
        19 => "h:mm:ss AM/PM",
        20 => "h:mm",
        21 => "h:mm:ss",
        22 => "m/d/yy h:mm",
        37 => "#,##0 ;(#,##0)",
        38 => "#,##0 ;[Red](#,##0)",
        39 => "#,##0.00;(#,##0.00)",
        40 => "#,##0.00;[Red](#,##0.00)",
        45 => "mm:ss",
        46 => "[h]:mm:ss",
        47 => "mmss.0",
        48 => "##0.0E+0",
        49 => "@",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use calamine::ExcelDateTimeType;
    use inlet_core::extract::Limits;

    fn written(value: &Data, format: Option<&str>) -> String {
        let format = format.map(CellFormat::parse);
        let mut sink = TextSink::new(&Limits::default());
        write_data(value, format.as_ref(), &mut sink).unwrap();
        sink.into_text()
    }

    #[test]
    fn numbers_and_dates_print_as_a_spreadsheet_shows_them() {
        assert_eq!(number(14.0), "14");
        assert_eq!(number(-3.0), "-3");
        assert_eq!(number(0.1), "0.1");
        assert_eq!(number(1234.5678), "1234.5678");
        assert_eq!(number(1e20), "100000000000000000000");
        let date = ExcelDateTime::new(45107.0, ExcelDateTimeType::DateTime, false);
        assert_eq!(date_time(&date), "2023-06-30");
        let dt = ExcelDateTime::new(45107.5, ExcelDateTimeType::DateTime, false);
        assert_eq!(date_time(&dt), "2023-06-30 12:00:00");
        let time = ExcelDateTime::new(0.75, ExcelDateTimeType::DateTime, false);
        assert_eq!(date_time(&time), "18:00:00");
        let span = ExcelDateTime::new(1.5, ExcelDateTimeType::TimeDelta, false);
        assert_eq!(date_time(&span), "36:00:00");
    }

    #[test]
    fn values_of_either_representation_read_the_same() {
        assert_eq!(written(&Data::Float(12553.4), Some("#,##0")), "12,553");
        assert_eq!(written(&Data::Int(-81), Some("#,##0;(#,##0)")), "(81)");
        assert_eq!(written(&Data::Float(2.5), None), "2.5");
        assert_eq!(written(&Data::Bool(true), Some("0.00")), "TRUE");
        assert_eq!(written(&Data::Error(CellErrorType::Div0), None), "#DIV/0!");
        let shared = DataRef::SharedString("shared");
        let mut sink = TextSink::new(&Limits::default());
        write_data_ref(&shared, None, &mut sink).unwrap();
        write_data_ref(&DataRef::Int(7), Some(&CellFormat::parse("0.0")), &mut sink).unwrap();
        assert_eq!(sink.as_str(), "shared7.0");
        assert_eq!(builtin_format_code(3), Some("#,##0"));
        assert_eq!(builtin_format_code(164), None);
    }

    #[test]
    fn zero_in_a_time_of_day_format_is_midnight() {
        let zero = |kind| Data::DateTime(ExcelDateTime::new(0.0, kind, false));
        let date = ExcelDateTimeType::DateTime;
        assert_eq!(written(&zero(date), Some("h:mm:ss")), "00:00:00");
        assert_eq!(written(&zero(date), Some("H:MM:SS;@")), "00:00:00");
        assert_eq!(written(&zero(date), Some("[$-409]h:mm AM/PM")), "00:00:00");
        // Serial 0 with a date in the format, or without a format, stays the date Excel shows.
        assert_eq!(written(&zero(date), Some("DD/MM/YY")), "1899-12-31");
        assert_eq!(written(&zero(date), Some("m/d/yy h:mm")), "1899-12-31");
        assert_eq!(written(&zero(date), None), "1899-12-31");
        // A zero duration is a duration; other times of day are unchanged.
        let span = zero(ExcelDateTimeType::TimeDelta);
        assert_eq!(written(&span, Some("[h]:mm:ss")), "0:00:00");
        let evening = Data::DateTime(ExcelDateTime::new(0.75, date, false));
        assert_eq!(written(&evening, Some("h:mm:ss")), "18:00:00");
    }
}
