//! OLE2 compound files (the container of .doc, .xls, .ppt and .msg): reading a stream whole
//! under the input's decompression budget.

use std::io::{Cursor, Read};

use inlet_core::extract::ExtractError;

/// Reads the stream `name` whole, refusing one larger than what is left of `budget`, which is
/// charged with what was read.
pub fn read_stream(
    file: &mut cfb::CompoundFile<Cursor<&[u8]>>,
    name: &str,
    budget: &mut u64,
) -> Result<Vec<u8>, ExtractError> {
    let stream = file
        .open_stream(name)
        .map_err(|e| ExtractError::Malformed(format!("{name}: {e}")))?;
    if stream.len() > *budget {
        return Err(ExtractError::LimitExceeded(format!(
            "{name} stream too large"
        )));
    }
    let mut out = Vec::new();
    stream
        .take(*budget)
        .read_to_end(&mut out)
        .map_err(|e| ExtractError::Malformed(format!("{name}: {e}")))?;
    *budget -= out.len() as u64;
    Ok(out)
}
