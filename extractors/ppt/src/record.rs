//! PowerPoint binary records (MS-PPT 2.3.1): an 8-byte header — version and instance, type,
//! length — then the data, which for a container (version `0xF`) is more records. Records are
//! views into the stream: nothing is allocated from a length field, and a length that runs past
//! its container ends the container's records with [`Damaged`].

/// A record whose length runs past the end of its container or stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Damaged;

/// One record: its type, instance and data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record<'a> {
    /// `recType`.
    pub typ: u16,
    /// `recInstance`.
    pub instance: u16,
    /// Whether the record is a container (`recVer` = `0xF`).
    pub container: bool,
    /// The record's data (its children for a container).
    pub data: &'a [u8],
}

/// Size of a record header.
pub(crate) const HEADER: usize = 8;

/// A little-endian `u32` at `at`, if the bytes are there.
pub(crate) fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        data.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

impl<'a> Record<'a> {
    /// The record starting at `offset` of `stream`; `Err` if it does not fit.
    pub fn at(stream: &'a [u8], offset: usize) -> Result<Self, Damaged> {
        let head = stream
            .get(offset..offset.checked_add(HEADER).ok_or(Damaged)?)
            .ok_or(Damaged)?;
        let ver_inst = u16::from_le_bytes([head[0], head[1]]);
        let typ = u16::from_le_bytes([head[2], head[3]]);
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        let start = offset + HEADER;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| start.checked_add(l))
            .filter(|&e| e <= stream.len())
            .ok_or(Damaged)?;
        Ok(Self {
            typ,
            instance: ver_inst >> 4,
            container: ver_inst & 0xF == 0xF,
            data: &stream[start..end],
        })
    }

    /// The records inside this one (none unless it is a container).
    pub fn children(&self) -> Children<'a> {
        Children {
            data: if self.container { self.data } else { &[] },
            at: 0,
        }
    }
}

/// The records of a container, in order; a record running past the end is yielded as
/// `Err(Damaged)` once, and ends the iteration.
pub(crate) struct Children<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Children<'a> {
    /// The records of a whole stream (the top level).
    pub fn of(data: &'a [u8]) -> Self {
        Self { data, at: 0 }
    }
}

impl<'a> Iterator for Children<'a> {
    type Item = Result<Record<'a>, Damaged>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.data.len() {
            return None;
        }
        match Record::at(self.data, self.at) {
            Ok(r) => {
                self.at += HEADER + r.data.len();
                Some(Ok(r))
            }
            Err(d) => {
                self.at = self.data.len();
                Some(Err(d))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(ver_inst: u16, typ: u16, len: u32) -> Vec<u8> {
        let mut out = ver_inst.to_le_bytes().to_vec();
        out.extend(typ.to_le_bytes());
        out.extend(len.to_le_bytes());
        out
    }

    #[test]
    fn containers_yield_their_children_and_stop_at_damage() {
        let mut child = header(0x0000, 0x0FA8, 2);
        child.extend(b"hi");
        let mut stream = header(0x001F, 0x0FF0, child.len() as u32);
        stream.extend(&child);
        let top = Record::at(&stream, 0).unwrap();
        assert!(top.container);
        assert_eq!(top.instance, 1);
        let kids: Vec<_> = top.children().collect();
        assert_eq!(kids.len(), 1);
        assert_eq!(kids[0].unwrap().data, b"hi");
        // A length past the end.
        let bad = header(0x000F, 0x03E8, u32::MAX);
        assert_eq!(Record::at(&bad, 0).unwrap_err(), Damaged);
        let mut two = child.clone();
        two.extend(header(0, 0x0FA8, 100));
        let all: Vec<_> = Children::of(&two).collect();
        assert!(all[0].is_ok() && all[1].is_err() && all.len() == 2);
        assert!(Record::at(&stream, usize::MAX).is_err());
    }
}
