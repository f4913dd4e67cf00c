//! PDF objects and the lexer that reads them from bytes, for both the file body (with indirect
//! references) and content streams (with operators). Nesting is bounded by [`MAX_NESTING`], so
//! hostile input cannot overflow the stack.

use inlet_core::extract::ExtractError;

/// Arrays and dictionaries nested deeper than this are refused as malformed.
pub(crate) const MAX_NESTING: usize = 64;

/// A PDF object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Object {
    /// `null`, and anything unreadable in its place.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A real number.
    Real(f64),
    /// A name, without the slash, `#xx` escapes resolved.
    Name(Vec<u8>),
    /// A literal or hexadecimal string, escapes resolved.
    Str(Vec<u8>),
    /// An array.
    Array(Vec<Object>),
    /// A dictionary.
    Dict(Dict),
    /// An indirect reference: object and generation number.
    Ref(u32, u16),
    /// A stream: its dictionary and where its raw bytes lie in the file.
    Stream(Stream),
}

impl Object {
    /// The number, if this is one.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match *self {
            Object::Int(i) => Some(i as f64),
            Object::Real(r) => Some(r),
            _ => None,
        }
    }

    /// The number as `f32`, if this is one.
    pub(crate) fn as_f32(&self) -> Option<f32> {
        self.as_f64().map(|v| v as f32)
    }

    /// The integer, if this is one (reals are truncated).
    pub(crate) fn as_i64(&self) -> Option<i64> {
        match *self {
            Object::Int(i) => Some(i),
            Object::Real(r) if r.is_finite() => Some(r as i64),
            _ => None,
        }
    }

    /// The name, if this is one.
    pub(crate) fn as_name(&self) -> Option<&[u8]> {
        match self {
            Object::Name(n) => Some(n),
            _ => None,
        }
    }

    /// The dictionary, if this is one (a stream's dictionary too).
    pub(crate) fn as_dict(&self) -> Option<&Dict> {
        match self {
            Object::Dict(d) => Some(d),
            Object::Stream(s) => Some(&s.dict),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub(crate) fn as_array(&self) -> Option<&[Object]> {
        match self {
            Object::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// A dictionary: keys in file order (dictionaries are small, a scan beats hashing).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Dict(pub(crate) Vec<(Vec<u8>, Object)>);

impl Dict {
    /// The value under `key`, unresolved.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&Object> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` names `value` (e.g. `/Type /Page`).
    pub(crate) fn name_is(&self, key: &[u8], value: &[u8]) -> bool {
        self.get(key).and_then(Object::as_name) == Some(value)
    }
}

/// A stream: dictionary, the raw (still filtered and maybe encrypted) bytes' range in the file,
/// and the indirect object it was read as (for decryption).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stream {
    /// The stream dictionary.
    pub(crate) dict: Dict,
    /// Start of the raw data in the file.
    pub(crate) start: usize,
    /// End of the raw data in the file.
    pub(crate) end: usize,
    /// Object and generation number of the stream object.
    pub(crate) id: (u32, u16),
}

/// A lexical item of a content stream: an operand or an operator.
#[derive(Debug)]
pub(crate) enum Token<'a> {
    /// An operand.
    Obj(Object),
    /// An operator (any other bare word).
    Op(&'a [u8]),
}

/// Whether `b` is PDF white space.
pub(crate) fn is_white(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t' | b'\x0c' | b'\0')
}

/// Whether `b` is a PDF delimiter.
pub(crate) fn is_delim(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(b: u8) -> bool {
    !is_white(b) && !is_delim(b)
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn malformed(what: &str) -> ExtractError {
    ExtractError::Malformed(what.to_owned())
}

/// A cursor over PDF bytes.
#[derive(Debug, Clone)]
pub(crate) struct Lexer<'a> {
    /// The bytes read.
    pub(crate) data: &'a [u8],
    /// The current position.
    pub(crate) pos: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at `pos`.
    pub(crate) fn new(data: &'a [u8], pos: usize) -> Self {
        Self { data, pos }
    }

    /// Skips white space and comments.
    pub(crate) fn skip_ws(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if is_white(b) {
                self.pos += 1;
            } else if b == b'%' {
                while let Some(&c) = self.data.get(self.pos) {
                    if c == b'\n' || c == b'\r' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// The next bare word (regular characters), without consuming white space after it.
    pub(crate) fn word(&mut self) -> &'a [u8] {
        let start = self.pos;
        while self.data.get(self.pos).is_some_and(|&b| is_regular(b)) {
            self.pos += 1;
        }
        &self.data[start..self.pos]
    }

    /// Reads an unsigned integer at the current position (after white space).
    pub(crate) fn uint(&mut self) -> Option<u64> {
        self.skip_ws();
        let start = self.pos;
        let mut v: u64 = 0;
        while let Some(&b) = self.data.get(self.pos) {
            if !b.is_ascii_digit() {
                break;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            self.pos += 1;
        }
        (self.pos > start).then_some(v)
    }

    /// Consumes `kw` (after white space) if it is next and ends there.
    pub(crate) fn keyword(&mut self, kw: &[u8]) -> bool {
        self.skip_ws();
        let end = self.pos + kw.len();
        if self.data.get(self.pos..end) == Some(kw)
            && self.data.get(end).is_none_or(|&b| !is_regular(b))
        {
            self.pos = end;
            true
        } else {
            false
        }
    }

    /// Parses one object of the file body; `N G R` is read as a reference.
    pub(crate) fn object(&mut self) -> Result<Object, ExtractError> {
        self.object_at_depth(0, true)
    }

    /// Reads the next token of a content stream; `None` at the end.
    pub(crate) fn token(&mut self) -> Result<Option<Token<'a>>, ExtractError> {
        self.skip_ws();
        let Some(&b) = self.data.get(self.pos) else {
            return Ok(None);
        };
        if is_regular(b) && !(b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.')) {
            let w = self.word();
            return Ok(Some(match w {
                b"true" => Token::Obj(Object::Bool(true)),
                b"false" => Token::Obj(Object::Bool(false)),
                b"null" => Token::Obj(Object::Null),
                _ => Token::Op(w),
            }));
        }
        if matches!(b, b')' | b'>' | b']' | b'}' | b'{') {
            // Stray closing delimiters (and PostScript braces): an operator nobody handles.
            self.pos += 1;
            return Ok(Some(Token::Op(&self.data[self.pos - 1..self.pos])));
        }
        self.object_at_depth(0, false).map(|o| Some(Token::Obj(o)))
    }

    fn object_at_depth(&mut self, depth: usize, refs: bool) -> Result<Object, ExtractError> {
        if depth > MAX_NESTING {
            return Err(malformed("objects nested too deeply"));
        }
        self.skip_ws();
        let Some(&b) = self.data.get(self.pos) else {
            return Err(malformed("unexpected end of data"));
        };
        match b {
            b'/' => {
                self.pos += 1;
                Ok(Object::Name(self.name()))
            }
            b'(' => {
                self.pos += 1;
                Ok(Object::Str(self.literal_string()))
            }
            b'<' if self.data.get(self.pos + 1) == Some(&b'<') => {
                self.pos += 2;
                self.dict(depth, refs).map(Object::Dict)
            }
            b'<' => {
                self.pos += 1;
                Ok(Object::Str(self.hex_string()))
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    match self.data.get(self.pos) {
                        None => return Err(malformed("unterminated array")),
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Object::Array(items));
                        }
                        Some(b')' | b'>' | b'}' | b'{') => self.pos += 1,
                        Some(_) => items.push(self.object_at_depth(depth + 1, refs)?),
                    }
                }
            }
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                let num = self.number();
                if refs
                    && let Object::Int(n) = num
                    && let Some(r) = self.reference_after(n)
                {
                    return Ok(r);
                }
                Ok(num)
            }
            _ => {
                let w = self.word();
                match w {
                    b"true" => Ok(Object::Bool(true)),
                    b"false" => Ok(Object::Bool(false)),
                    b"null" => Ok(Object::Null),
                    b"" => {
                        // A delimiter where an object should be: skip it.
                        self.pos += 1;
                        Ok(Object::Null)
                    }
                    _ => Err(malformed("unexpected keyword")),
                }
            }
        }
    }

    /// After an integer `n`: `G R` makes it a reference; otherwise the position is restored.
    fn reference_after(&mut self, n: i64) -> Option<Object> {
        let save = self.pos;
        let num = u32::try_from(n).ok();
        let r = (|| {
            let num = num?;
            let mut probe = self.clone();
            probe.skip_ws();
            if !probe.data.get(probe.pos)?.is_ascii_digit() {
                return None;
            }
            let g = probe.uint()?;
            if !probe.keyword(b"R") {
                return None;
            }
            self.pos = probe.pos;
            Some(Object::Ref(num, u16::try_from(g).unwrap_or(0)))
        })();
        if r.is_none() {
            self.pos = save;
        }
        r
    }

    fn dict(&mut self, depth: usize, refs: bool) -> Result<Dict, ExtractError> {
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            match self.data.get(self.pos) {
                None => return Err(malformed("unterminated dictionary")),
                Some(b'>') => {
                    self.pos += 1;
                    if self.data.get(self.pos) == Some(&b'>') {
                        self.pos += 1;
                    }
                    return Ok(Dict(entries));
                }
                Some(b'/') => {
                    self.pos += 1;
                    let key = self.name();
                    self.skip_ws();
                    if matches!(self.data.get(self.pos), Some(b'>') | None) {
                        // A key without a value.
                        continue;
                    }
                    let value = self.object_at_depth(depth + 1, refs)?;
                    entries.push((key, value));
                }
                Some(_) => {
                    // Not a key: read and drop it, or stop at a keyword such as `endobj`.
                    let save = self.pos;
                    if self.object_at_depth(depth + 1, refs).is_err() || self.pos == save {
                        return Err(malformed("bad dictionary key"));
                    }
                }
            }
        }
    }

    fn name(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(&b) = self.data.get(self.pos) {
            if !is_regular(b) {
                break;
            }
            self.pos += 1;
            if b == b'#'
                && let (Some(h), Some(l)) = (
                    self.data.get(self.pos).copied().and_then(hex_val),
                    self.data.get(self.pos + 1).copied().and_then(hex_val),
                )
            {
                out.push(h << 4 | l);
                self.pos += 2;
                continue;
            }
            out.push(b);
        }
        out
    }

    fn number(&mut self) -> Object {
        let start = self.pos;
        let mut neg = false;
        while let Some(&b) = self.data.get(self.pos) {
            match b {
                b'-' => neg = !neg,
                b'+' => {}
                _ => break,
            }
            self.pos += 1;
        }
        let mut int: i64 = 0;
        let mut overflow = false;
        let mut digits = 0usize;
        while let Some(&b) = self.data.get(self.pos) {
            if !b.is_ascii_digit() {
                break;
            }
            match int
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(b - b'0')))
            {
                Some(v) => int = v,
                None => overflow = true,
            }
            digits += 1;
            self.pos += 1;
        }
        if self.data.get(self.pos) != Some(&b'.') && !overflow {
            if digits == 0 {
                // A lone sign: skip to the next delimiter so the lexer advances.
                while self.data.get(self.pos).is_some_and(|&b| is_regular(b)) {
                    self.pos += 1;
                }
                if self.pos == start {
                    self.pos += 1;
                }
                return Object::Int(0);
            }
            return Object::Int(if neg { -int } else { int });
        }
        let mut frac = 0f64;
        let mut scale = 1f64;
        if self.data.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            while let Some(&b) = self.data.get(self.pos) {
                if !b.is_ascii_digit() {
                    break;
                }
                if scale > 1e-15 {
                    scale /= 10.0;
                    frac += f64::from(b - b'0') * scale;
                }
                self.pos += 1;
            }
        }
        // Garbage such as a second dot: skip it rather than stall.
        while self
            .data
            .get(self.pos)
            .is_some_and(|&b| b == b'.' || b.is_ascii_digit())
        {
            self.pos += 1;
        }
        let int_part = if overflow { f64::MAX } else { int as f64 };
        let v = int_part + frac;
        Object::Real(if neg { -v } else { v })
    }

    fn literal_string(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut depth = 1usize;
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            match b {
                b'(' => {
                    depth += 1;
                    out.push(b);
                }
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return out;
                    }
                    out.push(b);
                }
                b'\\' => {
                    let Some(&e) = self.data.get(self.pos) else {
                        break;
                    };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'\r' => {
                            if self.data.get(self.pos) == Some(&b'\n') {
                                self.pos += 1;
                            }
                        }
                        b'\n' => {}
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.data.get(self.pos) {
                                    Some(&d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push((v & 0xff) as u8);
                        }
                        _ => out.push(e),
                    }
                }
                _ => out.push(b),
            }
        }
        out
    }

    fn hex_string(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut high: Option<u8> = None;
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            if b == b'>' {
                break;
            }
            if let Some(v) = hex_val(b) {
                match high.take() {
                    Some(h) => out.push(h << 4 | v),
                    None => high = Some(v),
                }
            }
        }
        if let Some(h) = high {
            out.push(h << 4);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Object {
        Lexer::new(s.as_bytes(), 0).object().unwrap()
    }

    #[test]
    fn parses_the_basic_objects() {
        assert_eq!(parse("  42 "), Object::Int(42));
        assert_eq!(parse("-.5"), Object::Real(-0.5));
        assert_eq!(parse("/A#20B"), Object::Name(b"A B".to_vec()));
        assert_eq!(parse("(a\\(b\\)\\101)"), Object::Str(b"a(b)A".to_vec()));
        assert_eq!(parse("<48 6 >"), Object::Str(b"H`".to_vec()));
        assert_eq!(parse("12 0 R"), Object::Ref(12, 0));
        assert_eq!(
            parse("[1 2 R 3]"),
            Object::Array(vec![Object::Ref(1, 2), Object::Int(3)])
        );
        let d = parse("<</Type /Page /Kids [1 0 R] /N null>>");
        let d = d.as_dict().unwrap();
        assert!(d.name_is(b"Type", b"Page"));
        assert_eq!(
            d.get(b"Kids"),
            Some(&Object::Array(vec![Object::Ref(1, 0)]))
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(100_000);
        assert!(Lexer::new(deep.as_bytes(), 0).object().is_err());
        let deep = "<</A ".repeat(100_000);
        assert!(Lexer::new(deep.as_bytes(), 0).object().is_err());
    }

    #[test]
    fn content_tokens_split_operands_and_operators() {
        let mut lx = Lexer::new(b"BT /F1 12 Tf (Hi) Tj [(a) -250 (b)] TJ ET", 0);
        let mut ops = Vec::new();
        while let Some(t) = lx.token().unwrap() {
            if let Token::Op(op) = t {
                ops.push(String::from_utf8_lossy(op).into_owned());
            }
        }
        assert_eq!(ops, ["BT", "Tf", "Tj", "TJ", "ET"]);
    }

    #[test]
    fn garbage_never_stalls_the_lexer() {
        let junk = b"-- +. 1.2.3 ) ] } { >> \xff\xfe /";
        let mut lx = Lexer::new(junk, 0);
        let mut n = 0;
        while let Ok(Some(_)) = lx.token() {
            n += 1;
            assert!(n < 100);
        }
    }
}
