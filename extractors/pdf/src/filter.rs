//! Stream filters (Flate, LZW, ASCIIHex, ASCII85, RunLength, and the PNG/TIFF predictors),
//! all charged against one [`Budget`] of decompressed bytes so a decompression bomb stops early.
//! Damaged data yields what decoded before the damage and marks the budget as damaged.

use std::{borrow::Cow, cell::Cell};

use flate2::{Decompress, FlushDecompress, Status};
use inlet_core::extract::ExtractError;

use crate::object::{Dict, Object};

/// Bytes decompressed so far against the cap, and whether any stream was damaged.
#[derive(Debug)]
pub(crate) struct Budget {
    remaining: Cell<u64>,
    damaged: Cell<bool>,
}

impl Budget {
    /// A budget of `max` decompressed bytes.
    pub(crate) fn new(max: u64) -> Self {
        Self {
            remaining: Cell::new(max),
            damaged: Cell::new(false),
        }
    }

    /// Bytes still allowed.
    fn remaining(&self) -> u64 {
        self.remaining.get()
    }

    /// Charges `n` bytes, failing once the cap is passed.
    fn charge(&self, n: usize) -> Result<(), ExtractError> {
        let n = n as u64;
        match self.remaining.get().checked_sub(n) {
            Some(left) => {
                self.remaining.set(left);
                Ok(())
            }
            None => {
                self.remaining.set(0);
                Err(ExtractError::LimitExceeded(
                    "decompressed bytes over the cap".to_owned(),
                ))
            }
        }
    }

    /// Notes that some data was damaged.
    pub(crate) fn mark_damaged(&self) {
        self.damaged.set(true);
    }

    /// Whether some data was damaged.
    pub(crate) fn is_damaged(&self) -> bool {
        self.damaged.get()
    }
}

/// One filter of a stream's chain and its parameters.
pub(crate) struct Filter<'d> {
    /// The filter name, e.g. `FlateDecode`.
    pub(crate) name: &'d [u8],
    /// Its `/DecodeParms` dictionary, if any.
    pub(crate) parms: Option<&'d Dict>,
}

/// Applies `filters` in order to `data`.
pub(crate) fn decode(
    data: &[u8],
    filters: &[Filter<'_>],
    budget: &Budget,
) -> Result<Vec<u8>, ExtractError> {
    let mut cur: Option<Vec<u8>> = None;
    for f in filters {
        let input = cur.as_deref().unwrap_or(data);
        let out = match f.name {
            b"FlateDecode" | b"Fl" => {
                let raw = inflate(input, budget)?;
                predict(raw, f.parms)
            }
            b"LZWDecode" | b"LZW" => {
                let early = f
                    .parms
                    .and_then(|p| p.get(b"EarlyChange"))
                    .and_then(Object::as_i64)
                    .unwrap_or(1);
                let raw = lzw(input, early != 0, budget)?;
                predict(raw, f.parms)
            }
            b"ASCIIHexDecode" | b"AHx" => {
                budget.charge(input.len() / 2)?;
                ascii_hex(input)
            }
            b"ASCII85Decode" | b"A85" => {
                budget.charge(input.len())?;
                ascii85(input)
            }
            b"RunLengthDecode" | b"RL" => run_length(input, budget)?,
            b"Crypt" => continue,
            other => {
                return Err(ExtractError::Unsupported(format!(
                    "filter {}",
                    String::from_utf8_lossy(other)
                )));
            }
        };
        cur = Some(out);
    }
    Ok(cur.unwrap_or_else(|| data.to_vec()))
}

fn inflate(data: &[u8], budget: &Budget) -> Result<Vec<u8>, ExtractError> {
    let mut inflater = Inflater::new(Cow::Borrowed(data));
    let mut out = Vec::with_capacity(data.len().saturating_mul(3).min(1 << 20));
    while inflater.fill(&mut out, INFLATE_CHUNK, budget)? {}
    Ok(out)
}

/// Bytes inflated per step; the budget is checked after each.
const INFLATE_CHUNK: usize = 1 << 20;

/// Incremental zlib (or raw deflate) decoding, charged against a [`Budget`] as it goes, so that
/// content streams can be interpreted without holding all of their decoded bytes.
pub(crate) struct Inflater<'d> {
    data: Cow<'d, [u8]>,
    state: Decompress,
    produced: u64,
    done: bool,
}

impl<'d> Inflater<'d> {
    /// An inflater over compressed `data`.
    pub(crate) fn new(data: Cow<'d, [u8]>) -> Self {
        let zlib = data.len() >= 2
            && data[0] & 0x0f == 8
            && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0;
        Self {
            data,
            state: Decompress::new(zlib),
            produced: 0,
            done: false,
        }
    }

    /// Appends up to about `max` decoded bytes to `out`; `false` once the stream has ended
    /// (damaged data ends it early, keeping what decoded).
    pub(crate) fn fill(
        &mut self,
        out: &mut Vec<u8>,
        max: usize,
        budget: &Budget,
    ) -> Result<bool, ExtractError> {
        if self.done {
            return Ok(false);
        }
        let start = out.len();
        let target = start.saturating_add(max.max(1));
        while out.len() < target {
            if out.len() == out.capacity() {
                out.reserve((target - out.len()).min(max.max(4096)));
            }
            let in_before = self.state.total_in();
            let out_before = self.state.total_out();
            let consumed = usize::try_from(in_before).unwrap_or(usize::MAX);
            let rest = self.data.get(consumed..).unwrap_or_default();
            match self.state.decompress_vec(rest, out, FlushDecompress::None) {
                Ok(Status::StreamEnd) => {
                    self.done = true;
                    break;
                }
                Ok(_) => {
                    if self.state.total_in() == in_before
                        && self.state.total_out() == out_before
                        && out.len() < out.capacity()
                    {
                        // Input ran out before the end of the stream: truncated.
                        if !rest.is_empty() || self.produced + (out.len() - start) as u64 == 0 {
                            budget.mark_damaged();
                        }
                        self.done = true;
                        break;
                    }
                }
                Err(_) => {
                    // Corrupt data: keep what decoded (common in real files, e.g. a bad checksum).
                    if self.produced + (out.len() - start) as u64 == 0 {
                        budget.mark_damaged();
                    }
                    self.done = true;
                    break;
                }
            }
        }
        let n = out.len() - start;
        self.produced += n as u64;
        budget.charge(n)?;
        Ok(!self.done)
    }
}

fn lzw(data: &[u8], early_change: bool, budget: &Budget) -> Result<Vec<u8>, ExtractError> {
    use weezl::{BitOrder, LzwStatus, decode::Decoder};
    let mut dec = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut input = data;
    loop {
        let r = dec.decode_bytes(input, &mut buf);
        input = input.get(r.consumed_in..).unwrap_or_default();
        out.extend_from_slice(buf.get(..r.consumed_out).unwrap_or_default());
        if out.len() as u64 > budget.remaining() {
            return budget.charge(out.len()).map(|()| Vec::new());
        }
        match r.status {
            Ok(LzwStatus::Ok) if r.consumed_in + r.consumed_out > 0 => {}
            Ok(_) => break,
            Err(_) => {
                if out.is_empty() {
                    budget.mark_damaged();
                }
                break;
            }
        }
    }
    budget.charge(out.len())?;
    Ok(out)
}

fn predict(data: Vec<u8>, parms: Option<&Dict>) -> Vec<u8> {
    let Some(parms) = parms else {
        return data;
    };
    let int = |key: &[u8], default: i64| parms.get(key).and_then(Object::as_i64).unwrap_or(default);
    let predictor = int(b"Predictor", 1);
    if predictor < 2 {
        return data;
    }
    let colors = int(b"Colors", 1).clamp(1, 32) as usize;
    let bpc = int(b"BitsPerComponent", 8).clamp(1, 16) as usize;
    let columns = int(b"Columns", 1).clamp(1, 1 << 24) as usize;
    let bpp = (colors * bpc).div_ceil(8).max(1);
    let row_len = (colors * bpc * columns).div_ceil(8);
    if row_len == 0 || row_len > 1 << 24 {
        return data;
    }
    if predictor == 2 {
        let mut data = data;
        if bpc == 8 {
            for row in data.chunks_mut(row_len) {
                for i in bpp..row.len() {
                    row[i] = row[i].wrapping_add(row[i - bpp]);
                }
            }
        }
        return data;
    }
    let mut out = Vec::with_capacity(data.len());
    let mut prev = vec![0u8; row_len];
    for chunk in data.chunks(row_len + 1) {
        let Some((&kind, row)) = chunk.split_first() else {
            break;
        };
        let mut cur = row.to_vec();
        cur.resize(row_len, 0);
        for i in 0..row_len {
            let left = if i >= bpp { cur[i - bpp] } else { 0 };
            let up = prev[i];
            let up_left = if i >= bpp { prev[i - bpp] } else { 0 };
            cur[i] = match kind {
                1 => cur[i].wrapping_add(left),
                2 => cur[i].wrapping_add(up),
                3 => cur[i].wrapping_add(((u16::from(left) + u16::from(up)) / 2) as u8),
                4 => cur[i].wrapping_add(paeth(left, up, up_left)),
                _ => cur[i],
            };
        }
        out.extend_from_slice(&cur[..row.len().min(row_len)]);
        prev = cur;
    }
    out
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

fn ascii_hex(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 2);
    let mut high: Option<u8> = None;
    for &b in data {
        if b == b'>' {
            break;
        }
        let v = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => continue,
        };
        match high.take() {
            Some(h) => out.push(h << 4 | v),
            None => high = Some(v),
        }
    }
    if let Some(h) = high {
        out.push(h << 4);
    }
    out
}

fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut group = [0u8; 5];
    let mut n = 0;
    let mut body = data;
    if body.starts_with(b"<~") {
        body = &body[2..];
    }
    for &b in body {
        match b {
            b'~' => break,
            b'z' if n == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group[n] = b - b'!';
                n += 1;
                if n == 5 {
                    let v = group.iter().fold(0u32, |acc, &d| {
                        acc.wrapping_mul(85).wrapping_add(u32::from(d))
                    });
                    out.extend_from_slice(&v.to_be_bytes());
                    n = 0;
                }
            }
            _ => {}
        }
    }
    if n > 1 {
        for g in group.iter_mut().skip(n) {
            *g = 84;
        }
        let v = group.iter().fold(0u32, |acc, &d| {
            acc.wrapping_mul(85).wrapping_add(u32::from(d))
        });
        out.extend_from_slice(&v.to_be_bytes()[..n - 1]);
    }
    out
}

fn run_length(data: &[u8], budget: &Budget) -> Result<Vec<u8>, ExtractError> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&len) = data.get(i) {
        i += 1;
        match len {
            0..=127 => {
                let n = usize::from(len) + 1;
                let end = (i + n).min(data.len());
                out.extend_from_slice(&data[i..end]);
                i = end;
            }
            128 => break,
            _ => {
                let Some(&b) = data.get(i) else { break };
                i += 1;
                out.extend(std::iter::repeat_n(b, 257 - usize::from(len)));
            }
        }
        if out.len() as u64 > budget.remaining() {
            return budget.charge(out.len()).map(|()| Vec::new());
        }
    }
    budget.charge(out.len())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn flate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn run(data: &[u8], name: &[u8], budget: &Budget) -> Result<Vec<u8>, ExtractError> {
        decode(data, &[Filter { name, parms: None }], budget)
    }

    #[test]
    fn flate_round_trips_and_truncation_keeps_the_prefix() {
        let text = b"BT /F1 12 Tf (Hello) Tj ET ".repeat(1000);
        let z = flate(&text);
        let b = Budget::new(u64::MAX);
        assert_eq!(run(&z, b"FlateDecode", &b).unwrap(), text);
        let cut = run(&z[..z.len() / 2], b"FlateDecode", &b).unwrap();
        assert!(!cut.is_empty() && text.starts_with(&cut));
    }

    #[test]
    fn a_flate_bomb_stops_at_the_budget() {
        let z = flate(&vec![0u8; 50 << 20]);
        let b = Budget::new(1 << 20);
        assert!(matches!(
            run(&z, b"FlateDecode", &b),
            Err(ExtractError::LimitExceeded(_))
        ));
    }

    #[test]
    fn ascii_filters_decode() {
        let b = Budget::new(u64::MAX);
        assert_eq!(run(b"48 65 6c6C6f>", b"AHx", &b).unwrap(), b"Hello");
        assert_eq!(
            run(b"87cURD]i,\"Ebo80~>", b"A85", &b).unwrap(),
            b"Hello World!"
        );
        assert_eq!(
            run(&[2, b'a', b'b', b'c', 254, b'x', 128], b"RL", &b).unwrap(),
            b"abcxxx"
        );
    }

    #[test]
    fn png_up_predictor_is_undone() {
        let mut parms = Dict::default();
        parms.0.push((b"Predictor".to_vec(), Object::Int(12)));
        parms.0.push((b"Columns".to_vec(), Object::Int(2)));
        let data = vec![2, 1, 2, 2, 1, 1];
        assert_eq!(predict(data, Some(&parms)), vec![1, 2, 2, 3]);
    }
}
