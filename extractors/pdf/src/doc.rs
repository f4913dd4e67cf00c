//! The document: cross-reference tables and streams (with `/Prev` chains and hybrid files),
//! object streams, lazy object loading, decryption, stream decoding and the page list. A file
//! whose cross-reference data is missing or wrong is indexed by scanning for `N G obj` instead.
//!
//! Every walk is bounded: reference chains by [`MAX_REF_CHAIN`], `/Prev` chains and page trees
//! by visited sets, so cyclic or self-referencing objects cannot loop.

use std::{
    borrow::Cow,
    cell::{Cell, OnceCell, RefCell},
    collections::{HashMap, HashSet},
    rc::Rc,
};

use inlet_core::extract::ExtractError;
use memchr::memmem;

use crate::{
    crypt::Crypt,
    filter::{self, Budget, Filter, Inflater},
    object::{Dict, Lexer, Object, Stream, is_white},
};

/// References followed in a row before giving up (`1 0 obj 2 0 R`, `2 0 obj 1 0 R`...).
const MAX_REF_CHAIN: usize = 16;

/// Outline (bookmark) entries read at most.
const MAX_OUTLINE_ITEMS: usize = 10_000;

/// Objects loaded inside one another at most (stream lengths that are streams with lengths...).
const MAX_LOAD_NESTING: usize = 8;

/// Page tree depth at most.
const MAX_PAGE_TREE_DEPTH: usize = 64;

/// Where an object lives.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// At this byte offset of the file.
    Offset(usize),
    /// Inside an object stream, at this index.
    Compressed { stream: u32, index: u32 },
}

/// A decoded object stream: its data and each object's start in it.
#[derive(Debug)]
struct ObjStm {
    data: Vec<u8>,
    offsets: Vec<(u32, usize)>,
}

/// Decoded stream data, delivered piece by piece.
pub(crate) enum StreamReader<'a> {
    /// Data decoded at once (or not encoded), handed out in pieces.
    Bytes {
        /// The data.
        data: Cow<'a, [u8]>,
        /// How much was handed out.
        at: usize,
    },
    /// A Flate stream inflated as it is read.
    Inflate(Inflater<'a>),
}

impl StreamReader<'_> {
    /// Appends up to about `max` more bytes to `out`; `false` once everything was delivered.
    pub(crate) fn fill(
        &mut self,
        out: &mut Vec<u8>,
        max: usize,
        budget: &Budget,
    ) -> Result<bool, ExtractError> {
        match self {
            StreamReader::Bytes { data, at } => {
                let end = at.saturating_add(max).min(data.len());
                out.extend_from_slice(data.get(*at..end).unwrap_or_default());
                *at = end;
                Ok(end < data.len())
            }
            StreamReader::Inflate(inflater) => inflater.fill(out, max, budget),
        }
    }
}

/// An image codec filter left undone (its name and `/DecodeParms`): the data is that codec's
/// own format.
pub(crate) type ImageCodec = (Vec<u8>, Option<Dict>);

/// An opened PDF.
pub(crate) struct Document<'a> {
    data: &'a [u8],
    /// Offset of `%PDF-`: files with junk in front have offsets relative to it.
    base: usize,
    xref: HashMap<u32, Entry>,
    trailer: Dict,
    crypt: Option<Crypt>,
    /// Decompression budget and damage flag.
    pub(crate) budget: Budget,
    objstms: RefCell<HashMap<u32, Rc<ObjStm>>>,
    /// Object offsets found by scanning the file, built when the xref fails us.
    scanned: OnceCell<HashMap<u32, Entry>>,
    /// Object streams being decoded (an object stream inside itself is a cycle).
    decoding: RefCell<HashSet<u32>>,
    /// Objects being loaded inside one another (a stream's `/Length` is an object too).
    loading: Cell<usize>,
    /// Whether the file is being scanned (no object lookup may start another scan).
    scanning: Cell<bool>,
}

fn malformed(what: &str) -> ExtractError {
    ExtractError::Malformed(what.to_owned())
}

impl<'a> Document<'a> {
    /// Opens `data`, reading the cross-reference data or, failing that, scanning for objects.
    pub(crate) fn open(data: &'a [u8], max_decompressed: u64) -> Result<Self, ExtractError> {
        let base = memmem::find(&data[..data.len().min(1024)], b"%PDF-")
            .ok_or_else(|| malformed("no %PDF- header"))?;
        let mut doc = Document {
            data,
            base,
            xref: HashMap::new(),
            trailer: Dict::default(),
            crypt: None,
            budget: Budget::new(max_decompressed),
            objstms: RefCell::new(HashMap::new()),
            scanned: OnceCell::new(),
            decoding: RefCell::new(HashSet::new()),
            loading: Cell::new(0),
            scanning: Cell::new(false),
        };
        let read = doc.read_xref_chain();
        if read.is_err() || doc.trailer.get(b"Root").is_none() || doc.catalog().is_none() {
            doc.budget.mark_damaged();
            doc.rebuild_from_scan();
        }
        if let Some(enc) = doc.trailer.get(b"Encrypt").cloned() {
            let enc = doc.resolve(&enc).into_owned();
            let id0 = match doc.trailer.get(b"ID").and_then(Object::as_array) {
                Some([Object::Str(s), ..]) => s.clone(),
                _ => Vec::new(),
            };
            if let Some(enc) = enc.as_dict() {
                doc.crypt = Some(Crypt::new(enc, &id0)?);
            }
        }
        Ok(doc)
    }

    /// The document catalog.
    pub(crate) fn catalog(&self) -> Option<Dict> {
        let root = self.trailer.get(b"Root")?;
        match self.resolve(root).into_owned() {
            Object::Dict(d) => Some(d),
            _ => None,
        }
    }

    fn startxref(&self) -> Option<usize> {
        let tail_start = self.data.len().saturating_sub(2048);
        let tail = &self.data[tail_start..];
        let at = memmem::rfind(tail, b"startxref")?;
        let mut lx = Lexer::new(tail, at + b"startxref".len());
        usize::try_from(lx.uint()?).ok()
    }

    fn read_xref_chain(&mut self) -> Result<(), ExtractError> {
        let mut next = self.startxref().map(|o| o + self.base);
        let mut seen = HashSet::new();
        let mut first = true;
        while let Some(offset) = next.take() {
            if !seen.insert(offset) || offset >= self.data.len() {
                break;
            }
            let trailer = self.read_xref_section(offset)?;
            if let Some(stm) = trailer.get(b"XRefStm").and_then(Object::as_i64) {
                // Hybrid file: the stream holds the compressed objects of this section.
                if let Ok(off) = usize::try_from(stm) {
                    let off = off + self.base;
                    if seen.insert(off) {
                        let _ = self.read_xref_section(off);
                    }
                }
            }
            next = trailer
                .get(b"Prev")
                .and_then(Object::as_i64)
                .and_then(|p| usize::try_from(p).ok())
                .map(|p| p + self.base);
            if first {
                self.trailer = trailer;
                first = false;
            } else {
                for (k, v) in trailer.0 {
                    if self.trailer.get(&k).is_none() {
                        self.trailer.0.push((k, v));
                    }
                }
            }
        }
        if first {
            return Err(malformed("no cross-reference data"));
        }
        Ok(())
    }

    /// Reads one xref table or stream at `offset`, adding entries not yet known; returns its
    /// trailer dictionary.
    fn read_xref_section(&mut self, offset: usize) -> Result<Dict, ExtractError> {
        let mut lx = Lexer::new(self.data, offset);
        if lx.keyword(b"xref") {
            loop {
                lx.skip_ws();
                if lx.keyword(b"trailer") {
                    return match lx.object()? {
                        Object::Dict(d) => Ok(d),
                        _ => Err(malformed("bad trailer")),
                    };
                }
                let (Some(start), Some(count)) = (lx.uint(), lx.uint()) else {
                    return Err(malformed("bad xref subsection"));
                };
                for i in 0..count {
                    let (Some(off), Some(_generation)) = (lx.uint(), lx.uint()) else {
                        return Err(malformed("bad xref entry"));
                    };
                    lx.skip_ws();
                    let kind = lx.word();
                    let num = u32::try_from(start + i).map_err(|_| malformed("xref number"))?;
                    if kind == b"n"
                        && off > 0
                        && let Ok(off) = usize::try_from(off)
                    {
                        self.xref
                            .entry(num)
                            .or_insert(Entry::Offset(off + self.base));
                    } else {
                        // Free entries still shadow older definitions.
                        self.xref.entry(num).or_insert(Entry::Offset(usize::MAX));
                    }
                }
            }
        }
        // An xref stream.
        let (_, obj) = self.parse_indirect_at(offset)?;
        let Object::Stream(stream) = obj else {
            return Err(malformed("startxref points at no xref"));
        };
        let data = self.stream_data(&stream)?;
        let d = &stream.dict;
        let widths: Vec<usize> = d
            .get(b"W")
            .and_then(Object::as_array)
            .map(|w| {
                w.iter()
                    .map(|x| x.as_i64().unwrap_or(0).clamp(0, 8) as usize)
                    .collect()
            })
            .unwrap_or_default();
        if widths.len() < 3 {
            return Err(malformed("xref stream without /W"));
        }
        let size = d.get(b"Size").and_then(Object::as_i64).unwrap_or(0).max(0);
        let index: Vec<i64> = match d.get(b"Index").and_then(Object::as_array) {
            Some(a) => a.iter().filter_map(Object::as_i64).collect(),
            None => vec![0, size],
        };
        let row = widths[0] + widths[1] + widths[2];
        if row == 0 {
            return Err(malformed("xref stream rows of width 0"));
        }
        let field = |bytes: &[u8]| bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        let mut rows = data.chunks_exact(row);
        for pair in index.chunks_exact(2) {
            let (start, count) = (pair[0].max(0) as u64, pair[1].max(0) as u64);
            for i in 0..count {
                let Some(r) = rows.next() else { break };
                let kind = if widths[0] == 0 {
                    1
                } else {
                    field(&r[..widths[0]])
                };
                let a = field(&r[widths[0]..widths[0] + widths[1]]);
                let b = field(&r[widths[0] + widths[1]..]);
                let Ok(num) = u32::try_from(start + i) else {
                    break;
                };
                let entry = match kind {
                    1 => match usize::try_from(a) {
                        Ok(off) if off > 0 => Entry::Offset(off + self.base),
                        _ => continue,
                    },
                    2 => Entry::Compressed {
                        stream: u32::try_from(a).unwrap_or(u32::MAX),
                        index: u32::try_from(b).unwrap_or(u32::MAX),
                    },
                    _ => Entry::Offset(usize::MAX),
                };
                self.xref.entry(num).or_insert(entry);
            }
        }
        Ok(stream.dict)
    }

    /// Indexes the file by scanning for `N G obj`, and finds a trailer with a `/Root`.
    fn rebuild_from_scan(&mut self) {
        let scanned = self.scan().clone();
        for (num, e) in scanned {
            self.xref.insert(num, e);
        }
        let root_ok = self.trailer.get(b"Root").is_some() && self.catalog().is_some();
        if root_ok {
            return;
        }
        // The last `trailer` dictionary with a /Root, else any /Type /Catalog object.
        let mut from = self.data.len();
        while let Some(at) = memmem::rfind(&self.data[..from], b"trailer") {
            let mut lx = Lexer::new(self.data, at + b"trailer".len());
            if let Ok(Object::Dict(d)) = lx.object()
                && d.get(b"Root").is_some()
            {
                for (k, v) in d.0 {
                    if k != b"Prev" {
                        self.trailer.0.retain(|(key, _)| *key != k);
                        self.trailer.0.push((k, v));
                    }
                }
                if self.catalog().is_some() {
                    return;
                }
            }
            from = at;
        }
        let mut nums: Vec<u32> = self.xref.keys().copied().collect();
        nums.sort_unstable();
        for num in nums {
            if let Some(obj) = self.get(num)
                && obj
                    .as_dict()
                    .is_some_and(|d| d.name_is(b"Type", b"Catalog"))
            {
                self.trailer.0.retain(|(key, _)| key != b"Root");
                self.trailer.0.push((b"Root".to_vec(), Object::Ref(num, 0)));
                return;
            }
        }
    }

    /// Object offsets found by scanning the whole file (later definitions win), including the
    /// objects inside object streams.
    fn scan(&self) -> &HashMap<u32, Entry> {
        self.scanned.get_or_init(|| {
            self.scanning.set(true);
            let found = self.scan_objects();
            self.scanning.set(false);
            found
        })
    }

    fn scan_objects(&self) -> HashMap<u32, Entry> {
        {
            let mut found = HashMap::new();
            let data = self.data;
            for at in memmem::find_iter(data, b"obj") {
                if data
                    .get(at + 3)
                    .is_some_and(|&b| !is_white(b) && b != b'<' && b != b'[')
                {
                    continue;
                }
                // Walk back over "N G ".
                let mut i = at;
                let mut nums = [0usize; 2];
                let mut ok = true;
                for slot in (0..2).rev() {
                    let ws_end = i;
                    while i > 0 && is_white(data[i - 1]) {
                        i -= 1;
                    }
                    if i == ws_end {
                        ok = false;
                        break;
                    }
                    let digits_end = i;
                    while i > 0 && data[i - 1].is_ascii_digit() && digits_end - i < 10 {
                        i -= 1;
                    }
                    if i == digits_end {
                        ok = false;
                        break;
                    }
                    nums[slot] = i;
                }
                if !ok
                    || (i > 0
                        && !is_white(data[i - 1])
                        && !matches!(data[i - 1], b'>' | b')' | b']' | b'}'))
                {
                    continue;
                }
                let mut lx = Lexer::new(data, nums[0]);
                if let Some(num) = lx.uint().and_then(|n| u32::try_from(n).ok()) {
                    found.insert(num, Entry::Offset(nums[0]));
                }
            }
            // Objects inside object streams, unless also defined directly.
            let mut stream_nums: Vec<u32> = found
                .iter()
                .filter_map(|(&num, e)| match *e {
                    Entry::Offset(off) => {
                        let head = &data[off..data.len().min(off + 256)];
                        memmem::find(head, b"/ObjStm").map(|_| num)
                    }
                    Entry::Compressed { .. } => None,
                })
                .collect();
            stream_nums.sort_unstable();
            for sn in stream_nums {
                let Some(Entry::Offset(off)) = found.get(&sn).copied() else {
                    continue;
                };
                let Ok((_, Object::Stream(s))) = self.parse_indirect_at(off) else {
                    continue;
                };
                let Ok(stm) = self.decode_objstm(&s) else {
                    continue;
                };
                for (index, &(num, _)) in stm.offsets.iter().enumerate() {
                    found.entry(num).or_insert(Entry::Compressed {
                        stream: sn,
                        index: u32::try_from(index).unwrap_or(u32::MAX),
                    });
                }
            }
            found
        }
    }

    /// Parses `N G obj <object> [stream]` at `offset`.
    fn parse_indirect_at(&self, offset: usize) -> Result<((u32, u16), Object), ExtractError> {
        let mut lx = Lexer::new(self.data, offset);
        let num = lx.uint().ok_or_else(|| malformed("no object number"))?;
        let generation = lx.uint().ok_or_else(|| malformed("no generation"))?;
        if !lx.keyword(b"obj") {
            return Err(malformed("no obj keyword"));
        }
        let id = (
            u32::try_from(num).map_err(|_| malformed("object number"))?,
            u16::try_from(generation).unwrap_or(0),
        );
        let obj = lx.object()?;
        let Object::Dict(dict) = obj else {
            return Ok((id, obj));
        };
        if !lx.keyword(b"stream") {
            return Ok((id, Object::Dict(dict)));
        }
        // The data starts after the EOL that follows `stream`.
        let mut start = lx.pos;
        if self.data.get(start) == Some(&b'\r') {
            start += 1;
        }
        if self.data.get(start) == Some(&b'\n') {
            start += 1;
        }
        let declared = match dict.get(b"Length") {
            Some(Object::Int(n)) => usize::try_from(*n).ok(),
            Some(r @ Object::Ref(rn, _)) if *rn != id.0 => self
                .resolve(r)
                .as_i64()
                .and_then(|n| usize::try_from(n).ok()),
            _ => None,
        };
        let valid = declared.and_then(|len| {
            let end = start.checked_add(len)?;
            let after = self.data.get(end..)?;
            let after = &after[..after.len().min(32)];
            let skip = after.iter().take_while(|&&b| is_white(b)).count();
            after[skip..].starts_with(b"endstream").then_some(end)
        });
        let end = match valid {
            Some(end) => end,
            None => {
                let rest = &self.data[start.min(self.data.len())..];
                match memmem::find(rest, b"endstream") {
                    Some(i) => {
                        let mut end = start + i;
                        if end > start && self.data[end - 1] == b'\n' {
                            end -= 1;
                        }
                        if end > start && self.data[end - 1] == b'\r' {
                            end -= 1;
                        }
                        end
                    }
                    None => {
                        self.budget.mark_damaged();
                        self.data.len()
                    }
                }
            }
        };
        Ok((
            id,
            Object::Stream(Stream {
                dict,
                start: start.min(end),
                end,
                id,
            }),
        ))
    }

    /// Loads object `num` (`None` if missing or unreadable).
    pub(crate) fn get(&self, num: u32) -> Option<Object> {
        let depth = self.loading.get();
        if depth >= MAX_LOAD_NESTING {
            self.budget.mark_damaged();
            return None;
        }
        self.loading.set(depth + 1);
        let found = self.get_unguarded(num);
        self.loading.set(depth);
        found
    }

    fn get_unguarded(&self, num: u32) -> Option<Object> {
        let entry = self.xref.get(&num).copied();
        if let Some(obj) = entry.and_then(|e| self.load(num, e)) {
            return Some(obj);
        }
        if self.scanning.get() {
            return None;
        }
        // The xref was wrong or silent: look where a scan found the object.
        let fallback = self.scan().get(&num).copied()?;
        self.budget.mark_damaged();
        self.load(num, fallback)
    }

    fn load(&self, num: u32, entry: Entry) -> Option<Object> {
        match entry {
            Entry::Offset(off) => {
                if off >= self.data.len() {
                    return None;
                }
                let (id, mut obj) = self.parse_indirect_at(off).ok()?;
                if id.0 != num {
                    return None;
                }
                if let Some(c) = &self.crypt {
                    c.strings_in(id, &mut obj);
                }
                Some(obj)
            }
            Entry::Compressed { stream, index } => {
                let stm = self.objstm(stream)?;
                let &(n, off) = stm.offsets.get(usize::try_from(index).ok()?)?;
                let (n, off) = if n == num {
                    (n, off)
                } else {
                    *stm.offsets.iter().find(|(n, _)| *n == num)?
                };
                let _ = n;
                Lexer::new(&stm.data, off).object().ok()
            }
        }
    }

    fn objstm(&self, num: u32) -> Option<Rc<ObjStm>> {
        if let Some(s) = self.objstms.borrow().get(&num) {
            return Some(Rc::clone(s));
        }
        if !self.decoding.borrow_mut().insert(num) {
            return None;
        }
        let stm = (|| {
            let entry = self.xref.get(&num).copied()?;
            let Entry::Offset(off) = entry else {
                return None;
            };
            let (_, Object::Stream(s)) = self.parse_indirect_at(off).ok()? else {
                return None;
            };
            self.decode_objstm(&s).ok()
        })();
        self.decoding.borrow_mut().remove(&num);
        let stm = Rc::new(stm?);
        self.objstms.borrow_mut().insert(num, Rc::clone(&stm));
        Some(stm)
    }

    fn decode_objstm(&self, s: &Stream) -> Result<ObjStm, ExtractError> {
        let data = self.stream_data(s)?;
        let n = s
            .dict
            .get(b"N")
            .and_then(Object::as_i64)
            .unwrap_or(0)
            .max(0);
        let first = s
            .dict
            .get(b"First")
            .and_then(Object::as_i64)
            .and_then(|f| usize::try_from(f).ok())
            .unwrap_or(0);
        let mut lx = Lexer::new(&data, 0);
        let mut offsets = Vec::new();
        for _ in 0..n {
            let (Some(num), Some(off)) = (lx.uint(), lx.uint()) else {
                break;
            };
            let (Ok(num), Ok(off)) = (u32::try_from(num), usize::try_from(off)) else {
                break;
            };
            offsets.push((num, first.saturating_add(off)));
        }
        Ok(ObjStm { data, offsets })
    }

    /// Follows references (a bounded number of times) to the object they name; anything
    /// unresolvable becomes `Null`.
    pub(crate) fn resolve<'o>(&self, obj: &'o Object) -> Cow<'o, Object> {
        let mut cur = Cow::Borrowed(obj);
        for _ in 0..MAX_REF_CHAIN {
            match *cur {
                Object::Ref(num, _) => {
                    cur = Cow::Owned(self.get(num).unwrap_or(Object::Null));
                }
                _ => return cur,
            }
        }
        Cow::Owned(Object::Null)
    }

    /// `dict[key]`, resolved.
    pub(crate) fn get_in<'o>(&self, dict: &'o Dict, key: &[u8]) -> Option<Cow<'o, Object>> {
        let v = dict.get(key)?;
        let r = self.resolve(v);
        (!matches!(*r, Object::Null)).then_some(r)
    }

    /// The raw data of a stream, decrypted.
    fn raw_data(&self, s: &Stream) -> Result<Cow<'a, [u8]>, ExtractError> {
        let raw = self
            .data
            .get(s.start..s.end)
            .ok_or_else(|| malformed("stream out of the file"))?;
        Ok(match &self.crypt {
            Some(c) if !s.dict.name_is(b"Type", b"XRef") => Cow::Owned(c.stream(s.id, raw)),
            _ => Cow::Borrowed(raw),
        })
    }

    /// Calls `f` with the filter chain of a stream.
    fn with_filters<T>(&self, s: &Stream, f: impl FnOnce(&[Filter<'_>]) -> T) -> T {
        let filters = self.get_in(&s.dict, b"Filter");
        let parms = self.get_in(&s.dict, b"DecodeParms");
        let names: Vec<&[u8]> = match filters.as_deref() {
            Some(Object::Name(n)) => vec![n],
            Some(Object::Array(a)) => a.iter().filter_map(Object::as_name).collect(),
            _ => Vec::new(),
        };
        let parms: Vec<Option<&Dict>> = match parms.as_deref() {
            Some(Object::Dict(d)) => vec![Some(d)],
            Some(Object::Array(a)) => a.iter().map(Object::as_dict).collect(),
            _ => Vec::new(),
        };
        let chain: Vec<Filter<'_>> = names
            .iter()
            .enumerate()
            .map(|(i, name)| Filter {
                name,
                parms: parms.get(i).copied().flatten(),
            })
            .collect();
        f(&chain)
    }

    /// The decoded (decrypted, unfiltered) data of a stream.
    pub(crate) fn stream_data(&self, s: &Stream) -> Result<Vec<u8>, ExtractError> {
        let raw = self.raw_data(s)?;
        self.with_filters(s, |chain| filter::decode(&raw, chain, &self.budget))
    }

    /// An image stream's data with every filter applied but a final image codec (DCT, JPX,
    /// CCITTFax, JBIG2), which is answered with its parameters: the codec's own bytes are what
    /// an image file holds.
    pub(crate) fn image_data(
        &self,
        s: &Stream,
    ) -> Result<(Vec<u8>, Option<ImageCodec>), ExtractError> {
        let raw = self.raw_data(s)?;
        self.with_filters(s, |chain| {
            let codec = chain.last().filter(|f| {
                matches!(
                    f.name,
                    b"DCTDecode"
                        | b"DCT"
                        | b"JPXDecode"
                        | b"CCITTFaxDecode"
                        | b"CCF"
                        | b"JBIG2Decode"
                )
            });
            let plain = if codec.is_some() {
                &chain[..chain.len() - 1]
            } else {
                chain
            };
            let data = filter::decode(&raw, plain, &self.budget)?;
            Ok((data, codec.map(|f| (f.name.to_vec(), f.parms.cloned()))))
        })
    }

    /// A reader of a stream's decoded data in pieces: a plain Flate stream (every content
    /// stream in practice) is inflated as it is read; anything else is decoded at once.
    pub(crate) fn stream_reader(&self, s: &Stream) -> Result<StreamReader<'a>, ExtractError> {
        let raw = self.raw_data(s)?;
        let plain_flate = self.with_filters(s, |chain| match chain {
            [f] => {
                matches!(f.name, b"FlateDecode" | b"Fl")
                    && f.parms
                        .and_then(|p| p.get(b"Predictor"))
                        .and_then(Object::as_i64)
                        .is_none_or(|p| p < 2)
            }
            _ => false,
        });
        if plain_flate {
            return Ok(StreamReader::Inflate(Inflater::new(raw)));
        }
        let data = self.with_filters(s, |chain| {
            if chain.is_empty() {
                Ok(raw)
            } else {
                filter::decode(&raw, chain, &self.budget).map(Cow::Owned)
            }
        })?;
        Ok(StreamReader::Bytes { data, at: 0 })
    }

    /// The pages in order: each page dictionary with inherited attributes filled in.
    pub(crate) fn pages(&self) -> Vec<Dict> {
        let mut out = Vec::new();
        let mut visited = HashSet::new();
        if let Some(cat) = self.catalog()
            && let Some(root) = cat.get(b"Pages")
        {
            self.walk_pages(root, &Dict::default(), 0, &mut visited, &mut out);
        }
        if out.is_empty() {
            // No usable page tree (damaged file): take every page object found, in file order.
            let mut found: Vec<(usize, Dict)> = Vec::new();
            let mut entries: Vec<(u32, Entry)> =
                self.scan().iter().map(|(&n, &e)| (n, e)).collect();
            entries.sort_unstable_by_key(|&(n, _)| n);
            for (num, e) in entries {
                let pos = match e {
                    Entry::Offset(off) => off,
                    Entry::Compressed { .. } => usize::MAX,
                };
                if let Some(Object::Dict(d)) = self.get(num)
                    && d.name_is(b"Type", b"Page")
                {
                    found.push((pos, d));
                }
            }
            found.sort_by_key(|(pos, _)| *pos);
            out = found.into_iter().map(|(_, d)| d).collect();
        }
        out
    }

    fn walk_pages(
        &self,
        node: &Object,
        inherited: &Dict,
        depth: usize,
        visited: &mut HashSet<u32>,
        out: &mut Vec<Dict>,
    ) {
        if depth > MAX_PAGE_TREE_DEPTH {
            self.budget.mark_damaged();
            return;
        }
        if let Object::Ref(num, _) = node
            && !visited.insert(*num)
        {
            self.budget.mark_damaged();
            return;
        }
        let resolved = self.resolve(node);
        let Some(dict) = resolved.as_dict() else {
            return;
        };
        let mut inh = inherited.clone();
        for key in [&b"Resources"[..], b"MediaBox", b"CropBox", b"Rotate"] {
            if let Some(v) = dict.get(key) {
                inh.0.retain(|(k, _)| k != key);
                inh.0.push((key.to_vec(), v.clone()));
            }
        }
        let kids = self.get_in(dict, b"Kids");
        match kids.as_deref().and_then(Object::as_array) {
            Some(kids) if !dict.name_is(b"Type", b"Page") => {
                for kid in kids {
                    self.walk_pages(kid, &inh, depth + 1, visited, out);
                }
            }
            _ => {
                let mut page = dict.clone();
                for (k, v) in inh.0 {
                    if page.get(&k).is_none() {
                        page.0.push((k, v));
                    }
                }
                out.push(page);
            }
        }
    }

    /// Titles of the document outline (bookmarks) in order, depth first.
    /// A text entry of the document information dictionary (`Title`, `Author`, ...).
    pub(crate) fn info(&self, key: &[u8]) -> Option<String> {
        let info = self.trailer.get(b"Info")?;
        let info = self.resolve(info);
        match self.get_in(info.as_dict()?, key).as_deref() {
            Some(Object::Str(t)) => {
                let t = crate::encoding::text_string(t);
                let t = t.trim();
                (!t.is_empty()).then(|| t.to_owned())
            }
            _ => None,
        }
    }

    pub(crate) fn outline_titles(&self) -> Vec<String> {
        let mut titles = Vec::new();
        let Some(cat) = self.catalog() else {
            return titles;
        };
        let Some(outlines) = self.get_in(&cat, b"Outlines") else {
            return titles;
        };
        let mut visited = HashSet::new();
        // Depth-first with an explicit stack: siblings still to visit, innermost last.
        let mut stack: Vec<Object> = Vec::new();
        if let Some(first) = outlines.as_dict().and_then(|d| d.get(b"First")) {
            stack.push(first.clone());
        }
        while let Some(item) = stack.pop() {
            if titles.len() >= MAX_OUTLINE_ITEMS {
                break;
            }
            if let Object::Ref(num, _) = item
                && !visited.insert(num)
            {
                continue;
            }
            let resolved = self.resolve(&item);
            let Some(d) = resolved.as_dict() else {
                continue;
            };
            if let Some(Object::Str(t)) = self.get_in(d, b"Title").as_deref() {
                let t = crate::encoding::text_string(t);
                let t = t.trim();
                if !t.is_empty() {
                    titles.push(t.to_owned());
                }
            }
            if let Some(next) = d.get(b"Next") {
                stack.push(next.clone());
            }
            if let Some(first) = d.get(b"First") {
                stack.push(first.clone());
            }
        }
        titles
    }
}
