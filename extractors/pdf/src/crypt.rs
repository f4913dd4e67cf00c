//! The standard security handler with the empty user password (files that only restrict
//! permissions, "copy protected"): RC4 (revisions 2–4), AES-128 (AESV2) and AES-256 (AESV3,
//! revisions 5 and 6). Files that need a real user password are reported as unsupported.

use aes::cipher::{BlockDecrypt, KeyInit, generic_array::GenericArray};
use inlet_core::extract::ExtractError;
use md5::{Digest, Md5};
use sha2::{Sha256, Sha384, Sha512};

use crate::object::{Dict, Object};

/// Padding string of the standard security handler (PDF 1.7, 7.6.3.3).
const PAD: [u8; 32] = [
    0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
    0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
];

/// How strings or streams are encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    None,
    Rc4,
    Aes128,
    Aes256,
}

/// A file key and the methods for streams and strings.
#[derive(Debug, Clone)]
pub(crate) struct Crypt {
    key: Vec<u8>,
    streams: Method,
    strings: Method,
}

fn unsupported(what: &str) -> ExtractError {
    ExtractError::Unsupported(what.to_owned())
}

fn bytes<'a>(d: &'a Dict, key: &[u8]) -> &'a [u8] {
    match d.get(key) {
        Some(Object::Str(s)) => s,
        _ => &[],
    }
}

impl Crypt {
    /// Derives the file key for the empty user password from the `/Encrypt` dictionary and the
    /// first `/ID` string.
    pub(crate) fn new(enc: &Dict, id0: &[u8]) -> Result<Self, ExtractError> {
        if !enc.name_is(b"Filter", b"Standard") {
            return Err(unsupported("encryption handler other than Standard"));
        }
        let int = |k: &[u8]| enc.get(k).and_then(Object::as_i64);
        let v = int(b"V").unwrap_or(0);
        let r = int(b"R").unwrap_or(2);
        let o = bytes(enc, b"O");
        let u = bytes(enc, b"U");
        let (streams, strings) = match v {
            1 | 2 => (Method::Rc4, Method::Rc4),
            4 | 5 => {
                let method = |key: &[u8]| -> Method {
                    let Some(name) = enc.get(key).and_then(Object::as_name) else {
                        return Method::None;
                    };
                    if name == b"Identity" {
                        return Method::None;
                    }
                    let cfm = enc
                        .get(b"CF")
                        .and_then(Object::as_dict)
                        .and_then(|cf| cf.get(name))
                        .and_then(Object::as_dict)
                        .and_then(|f| f.get(b"CFM"))
                        .and_then(Object::as_name);
                    match cfm {
                        Some(b"V2") => Method::Rc4,
                        Some(b"AESV2") => Method::Aes128,
                        Some(b"AESV3") => Method::Aes256,
                        _ => Method::None,
                    }
                };
                (method(b"StmF"), method(b"StrF"))
            }
            _ => return Err(unsupported("encryption version")),
        };
        let key = if r >= 5 {
            key_r6(enc, u, r)?
        } else {
            let len = if r == 2 {
                5
            } else {
                (int(b"Length").unwrap_or(40) / 8).clamp(5, 16) as usize
            };
            let p = int(b"P").unwrap_or(0) as i32;
            let mut h = Md5::new();
            h.update(PAD);
            h.update(o);
            h.update(p.to_le_bytes());
            h.update(id0);
            let encrypt_metadata =
                !matches!(enc.get(b"EncryptMetadata"), Some(Object::Bool(false)));
            if r >= 4 && !encrypt_metadata {
                h.update([0xff; 4]);
            }
            let mut key = h.finalize().to_vec();
            if r >= 3 {
                for _ in 0..50 {
                    key = Md5::digest(&key[..len]).to_vec();
                }
            }
            key.truncate(len);
            if !user_password_is_empty(&key, u, r, id0) {
                return Err(unsupported("encrypted with a user password"));
            }
            key
        };
        Ok(Self {
            key,
            streams,
            strings,
        })
    }

    /// Decrypts a string of object `id`.
    pub(crate) fn string(&self, id: (u32, u16), data: &[u8]) -> Vec<u8> {
        self.apply(self.strings, id, data)
    }

    /// Decrypts the raw data of stream object `id`.
    pub(crate) fn stream(&self, id: (u32, u16), data: &[u8]) -> Vec<u8> {
        self.apply(self.streams, id, data)
    }

    /// Decrypts every string inside `obj` (read as part of object `id`).
    pub(crate) fn strings_in(&self, id: (u32, u16), obj: &mut Object) {
        if self.strings == Method::None {
            return;
        }
        match obj {
            Object::Str(s) => *s = self.string(id, s),
            Object::Array(items) => items.iter_mut().for_each(|o| self.strings_in(id, o)),
            Object::Dict(d) => d.0.iter_mut().for_each(|(_, o)| self.strings_in(id, o)),
            Object::Stream(s) => s
                .dict
                .0
                .iter_mut()
                .for_each(|(_, o)| self.strings_in(id, o)),
            _ => {}
        }
    }

    fn apply(&self, method: Method, (num, generation): (u32, u16), data: &[u8]) -> Vec<u8> {
        match method {
            Method::None => data.to_vec(),
            Method::Aes256 => aes_cbc(&self.key, data),
            Method::Rc4 | Method::Aes128 => {
                let mut h = Md5::new();
                h.update(&self.key);
                h.update(&num.to_le_bytes()[..3]);
                h.update(generation.to_le_bytes());
                if method == Method::Aes128 {
                    h.update(b"sAlT");
                }
                let digest = h.finalize();
                let key = &digest[..(self.key.len() + 5).min(16)];
                if method == Method::Rc4 {
                    rc4(key, data)
                } else {
                    aes_cbc(key, data)
                }
            }
        }
    }
}

/// Checks the `/U` entry against the empty user password (algorithms 4 and 5).
fn user_password_is_empty(key: &[u8], u: &[u8], r: i64, id0: &[u8]) -> bool {
    if u.len() < 16 {
        // Nothing to check against; try anyway.
        return true;
    }
    if r == 2 {
        return rc4(key, &PAD).get(..16) == u.get(..16);
    }
    let mut h = Md5::new();
    h.update(PAD);
    h.update(id0);
    let mut x = rc4(key, &h.finalize());
    for i in 1..=19u8 {
        let k: Vec<u8> = key.iter().map(|b| b ^ i).collect();
        x = rc4(&k, &x);
    }
    x.get(..16) == u.get(..16)
}

/// The AES-256 file key for the empty user password (revision 5 and 6, from `/UE`).
fn key_r6(enc: &Dict, u: &[u8], r: i64) -> Result<Vec<u8>, ExtractError> {
    let ue = bytes(enc, b"UE");
    if u.len() < 48 || ue.len() < 32 {
        return Err(unsupported("AES-256 encryption without U/UE"));
    }
    let hash = |input: &[u8], extra: &[u8]| -> Vec<u8> {
        if r == 5 {
            let mut h = Sha256::new();
            h.update(input);
            h.update(extra);
            h.finalize().to_vec()
        } else {
            hash_2b(input, extra)
        }
    };
    if hash(&u[32..40], &[]) != u[..32] {
        return Err(unsupported("encrypted with a user password"));
    }
    let ikey = hash(&u[40..48], &[]);
    // UE is the file key encrypted with AES-256 in CBC mode, zero IV, no padding.
    let mut iv_data = vec![0u8; 16];
    iv_data.extend_from_slice(&ue[..32]);
    let key = aes_cbc_raw(&ikey, &iv_data);
    if key.len() != 32 {
        return Err(unsupported("AES-256 key"));
    }
    Ok(key)
}

/// Algorithm 2.B of ISO 32000-2 (revision 6 hash) with an empty password.
fn hash_2b(salt: &[u8], extra: &[u8]) -> Vec<u8> {
    let mut k = {
        let mut h = Sha256::new();
        h.update(salt);
        h.update(extra);
        h.finalize().to_vec()
    };
    let mut round = 0u32;
    loop {
        let mut k1 = Vec::with_capacity(64 * (k.len() + extra.len()));
        for _ in 0..64 {
            k1.extend_from_slice(&k);
            k1.extend_from_slice(extra);
        }
        let Some(e) = aes128_cbc_encrypt(&k[..16], &k[16..32], &k1) else {
            return k;
        };
        let m = e[..16].iter().map(|&b| u32::from(b)).sum::<u32>() % 3;
        k = match m {
            0 => Sha256::digest(&e).to_vec(),
            1 => Sha384::digest(&e).to_vec(),
            _ => Sha512::digest(&e).to_vec(),
        };
        round += 1;
        let last = e.last().copied().unwrap_or(0);
        if round >= 64 && u32::from(last) <= round - 32 {
            break;
        }
        if round > 1024 {
            break;
        }
    }
    k.truncate(32);
    k
}

fn aes128_cbc_encrypt(key: &[u8], iv: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    use aes::cipher::BlockEncrypt;
    let cipher = aes::Aes128::new_from_slice(key).ok()?;
    let mut prev: [u8; 16] = iv.try_into().ok()?;
    let mut out = Vec::with_capacity(data.len());
    for chunk in data.chunks_exact(16) {
        let mut block = [0u8; 16];
        for i in 0..16 {
            block[i] = chunk[i] ^ prev[i];
        }
        let mut b = GenericArray::from(block);
        cipher.encrypt_block(&mut b);
        prev = b.into();
        out.extend_from_slice(&prev);
    }
    Some(out)
}

/// AES-CBC with the IV in the first 16 bytes and PKCS#7 padding removed.
fn aes_cbc(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = aes_cbc_raw(key, data);
    if let Some(&pad) = out.last()
        && (1..=16).contains(&pad)
        && out.len() >= usize::from(pad)
    {
        out.truncate(out.len() - usize::from(pad));
    }
    out
}

/// AES-CBC with the IV in the first 16 bytes, padding kept. Wrong key sizes yield nothing.
fn aes_cbc_raw(key: &[u8], data: &[u8]) -> Vec<u8> {
    if data.len() < 32 {
        return Vec::new();
    }
    let (iv, body) = data.split_at(16);
    let mut prev: [u8; 16] = iv.try_into().unwrap_or([0; 16]);
    let mut out = Vec::with_capacity(body.len());
    let mut run = |decrypt: &dyn Fn(&mut GenericArray<u8, aes::cipher::consts::U16>)| {
        for chunk in body.chunks_exact(16) {
            let mut b = GenericArray::clone_from_slice(chunk);
            decrypt(&mut b);
            for i in 0..16 {
                out.push(b[i] ^ prev[i]);
            }
            prev.copy_from_slice(chunk);
        }
    };
    match key.len() {
        16 => {
            if let Ok(c) = aes::Aes128::new_from_slice(key) {
                run(&|b| c.decrypt_block(b));
            }
        }
        32 => {
            if let Ok(c) = aes::Aes256::new_from_slice(key) {
                run(&|b| c.decrypt_block(b));
            }
        }
        _ => {}
    }
    out
}

/// RC4 (symmetric).
fn rc4(key: &[u8], data: &[u8]) -> Vec<u8> {
    if key.is_empty() {
        return data.to_vec();
    }
    let mut s: [u8; 256] = std::array::from_fn(|i| i as u8);
    let mut j: u8 = 0;
    for i in 0..256 {
        j = j.wrapping_add(s[i]).wrapping_add(key[i % key.len()]);
        s.swap(i, usize::from(j));
    }
    let (mut i, mut j) = (0u8, 0u8);
    data.iter()
        .map(|&b| {
            i = i.wrapping_add(1);
            j = j.wrapping_add(s[usize::from(i)]);
            s.swap(usize::from(i), usize::from(j));
            let k = s[usize::from(s[usize::from(i)].wrapping_add(s[usize::from(j)]))];
            b ^ k
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rc4_matches_a_known_vector() {
        // "Key" / "Plaintext" from the RC4 Wikipedia test vectors.
        assert_eq!(
            rc4(b"Key", b"Plaintext"),
            [0xBB, 0xF3, 0x16, 0xE8, 0xD9, 0x40, 0xAF, 0x0A, 0xD3]
        );
    }

    #[test]
    fn aes_cbc_round_trips() {
        let key = [7u8; 16];
        let iv = [1u8; 16];
        let plain =
            b"sixteen byte msg\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10";
        let enc = aes128_cbc_encrypt(&key, &iv, plain).unwrap();
        let mut data = iv.to_vec();
        data.extend_from_slice(&enc);
        assert_eq!(aes_cbc(&key, &data), b"sixteen byte msg");
    }
}
