//! How the store writes numbers and texts into blobs, and reads them back:
//! hashes and MinHash values little-endian, long main texts deflated.

use crate::{Error, Result};

pub(crate) fn encode_u64s(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub(crate) fn encode_u32s(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Main texts of at least this many bytes are stored deflated (shorter
/// ones gain too little). Up to schema 10 only texts of 2 KB or more were:
/// a shorter one seemed to fit in the SQLite page its row filled anyway,
/// but with the shingle set rebuilt from the text (the `stored` module) the
/// text is most of a row, and deflating a 200-word text halves it.
pub(crate) const DEFLATE_FROM: usize = 256;

/// A main text as stored: raw deflate, level 2. On the WCXB pages' texts
/// (zlib-rs, one core) level 1 is 1.9 times smaller at 150 MB/s, level 2
/// 2.5 times at 100 MB/s, level 6 2.7 times at 70 MB/s.
pub(crate) fn deflate(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::DeflateEncoder::new(Vec::with_capacity(text.len() / 2), flate2::Compression::new(2));
    enc.write_all(text.as_bytes()).and_then(|()| enc.finish()).expect("writing to a Vec cannot fail")
}

pub(crate) fn inflate(blob: &[u8], page_id: i64) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::DeflateDecoder::new(blob)
        .read_to_string(&mut text)
        .map_err(|e| Error::Corrupt { page_id, reason: format!("stored text: {e}") })?;
    Ok(text)
}

pub(crate) fn decode_u64s(blob: &[u8], page_id: i64) -> Result<Vec<u64>> {
    if !blob.len().is_multiple_of(8) {
        return Err(Error::Corrupt { page_id, reason: format!("shingle blob of {} bytes", blob.len()) });
    }
    Ok(blob.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

pub(crate) fn decode_u32s(blob: &[u8], page_id: i64) -> Result<Vec<u32>> {
    if !blob.len().is_multiple_of(4) {
        return Err(Error::Corrupt { page_id, reason: format!("MinHash blob of {} bytes", blob.len()) });
    }
    Ok(blob.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
}
