//! Streaming multipart uploads: the request body is parsed as it arrives and the file part is
//! spooled to an anonymous temporary file, so a file is never held whole in memory while it is
//! received; the size limit answers 413 as soon as it is passed.

use std::io::{Read, Seek, SeekFrom};

use inlet_core::input;
use multer::{Constraints, Multipart, SizeLimit};
use percent_encoding::percent_decode_str;
use poem::{Request, RequestBody};
use poem_openapi::{
    payload::{ParsePayload, Payload},
    registry::{MetaSchema, MetaSchemaRef, Registry},
    types::{Type, multipart::Upload},
};
use tokio::io::AsyncWriteExt;

use crate::{config::MULTIPART_OVERHEAD_BYTES, problem::ApiError};

/// The one named part a multipart body must carry: the document shows it and the handler looks
/// for it by this name.
pub trait NamedPart: Send + Sync + 'static {
    /// The part's name.
    const NAME: &'static str;
    /// What the part holds, as the document says.
    const DESCRIPTION: &'static str;
}

/// The part of a record upload (spec 4.4): `file`.
pub struct RecordFile;

impl NamedPart for RecordFile {
    const NAME: &'static str = "file";
    const DESCRIPTION: &'static str =
        "The file. Its format is detected from its bytes; the part's file name becomes the title.";
}

/// A `multipart/form-data` request body, not yet read: handlers authorize and validate first,
/// then stream it with [`FileUpload::parts`]. `P` is the part the document shows.
pub struct FileUpload<P = RecordFile> {
    body: poem::Body,
    boundary: String,
    _part: std::marker::PhantomData<P>,
}

impl<P: NamedPart> Payload for FileUpload<P> {
    const CONTENT_TYPE: &'static str = "multipart/form-data";

    fn check_content_type(content_type: &str) -> bool {
        content_type
            .parse::<mime::Mime>()
            .is_ok_and(|m| m.type_() == "multipart" && m.subtype() == "form-data")
    }

    fn schema_ref() -> MetaSchemaRef {
        let part = Upload::schema_ref().merge(MetaSchema {
            description: Some(P::DESCRIPTION),
            ..MetaSchema::ANY
        });
        MetaSchemaRef::Inline(Box::new(MetaSchema {
            required: vec![P::NAME],
            properties: vec![(P::NAME, part)],
            ..MetaSchema::new("object")
        }))
    }

    fn register(registry: &mut Registry) {
        Upload::register(registry);
    }
}

impl<P: NamedPart> ParsePayload for FileUpload<P> {
    const IS_REQUIRED: bool = true;

    async fn from_request(request: &Request, body: &mut RequestBody) -> poem::Result<Self> {
        let content_type = request.content_type().unwrap_or_default();
        let boundary = multer::parse_boundary(content_type).map_err(|_| {
            ApiError::bad_request("Content-Type multipart/form-data needs a boundary parameter")
        })?;
        Ok(Self {
            body: body.take()?,
            boundary,
            _part: std::marker::PhantomData,
        })
    }
}

// The trailing comma selects the macro's arm that does not recurse by an unqualified name.
poem_openapi::impl_apirequest_for_payload!(FileUpload<P>, P: NamedPart);

/// One received part.
#[derive(Debug)]
pub struct Part {
    /// The part's name.
    pub name: String,
    /// The file name from `filename*` (RFC 5987) or `filename`.
    pub file_name: Option<String>,
    /// The content, spooled to disk.
    pub file: SpooledFile,
}

/// A part's bytes in an anonymous temporary file (removed when dropped).
#[derive(Debug)]
pub struct SpooledFile {
    file: std::fs::File,
    /// Size in bytes.
    pub len: u64,
}

impl SpooledFile {
    /// The first `n` bytes (fewer when the file is shorter), to tell its format.
    pub fn head(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        self.file.seek(SeekFrom::Start(0))?;
        let mut buf = Vec::with_capacity(n);
        (&mut self.file).take(n as u64).read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// Reads the whole file into memory on a blocking thread, leaving the file as it was.
    pub async fn bytes(&self) -> std::io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let file = self.file.try_clone()?;
        let len = usize::try_from(self.len).map_err(std::io::Error::other)?;
        tokio::task::spawn_blocking(move || {
            let mut buf = vec![0; len];
            file.read_exact_at(&mut buf, 0)?;
            Ok(buf)
        })
        .await
        .map_err(std::io::Error::other)?
    }

    /// Reads the whole file into memory (on a blocking thread).
    pub fn read_all(mut self) -> std::io::Result<Vec<u8>> {
        self.file.seek(SeekFrom::Start(0))?;
        let mut buf = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        self.file.read_to_end(&mut buf)?;
        Ok(buf)
    }
}

impl<P> FileUpload<P> {
    /// Receives every part, spooling each to disk. A part over `max_part_bytes` or a request body
    /// over that plus [`MULTIPART_OVERHEAD_BYTES`] is 413; a malformed body is 400.
    pub async fn parts(self, max_part_bytes: u64) -> Result<Vec<Part>, ApiError> {
        let limits = Constraints::new().size_limit(
            SizeLimit::new().whole_stream(max_part_bytes.saturating_add(MULTIPART_OVERHEAD_BYTES)),
        );
        let mut multipart =
            Multipart::with_constraints(self.body.into_bytes_stream(), self.boundary, limits);
        let mut parts = Vec::new();
        while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
            if parts.len() == MAX_PARTS {
                return Err(ApiError::bad_request(format!(
                    "a multipart upload carries at most {MAX_PARTS} parts (a RECORD upload one \
                     named '{}', a STRUCTURED one two)",
                    RecordFile::NAME
                )));
            }
            let name = field.name().unwrap_or_default().to_string();
            input::check_line("a multipart part name", &name, MAX_NAME_BYTES)?;
            let file_name =
                file_name(field.headers()).or_else(|| field.file_name().map(Into::into));
            if let Some(f) = &file_name {
                input::check_line(
                    &format!("the file name of multipart part '{name}'"),
                    f,
                    MAX_NAME_BYTES,
                )?;
            }
            let std_file = tempfile::tempfile().map_err(ApiError::internal)?;
            let mut file = tokio::fs::File::from_std(std_file);
            let mut len = 0u64;
            while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                len += chunk.len() as u64;
                if len > max_part_bytes {
                    return Err(too_large(max_part_bytes));
                }
                file.write_all(&chunk).await.map_err(ApiError::internal)?;
            }
            file.flush().await.map_err(ApiError::internal)?;
            parts.push(Part {
                name,
                file_name,
                file: SpooledFile {
                    file: file.into_std().await,
                    len,
                },
            });
        }
        Ok(parts)
    }
}

/// Most parts one multipart upload may carry; checked before a part is spooled, so a request
/// with thousands of parts cannot hold thousands of temporary files.
pub const MAX_PARTS: usize = 8;
/// Longest part name or file name, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;

fn too_large(max: u64) -> ApiError {
    ApiError::too_large(format!(
        "the file exceeds the maximum upload size of {max} bytes"
    ))
}

fn multipart_error(e: multer::Error) -> ApiError {
    match e {
        multer::Error::StreamSizeExceeded { limit }
        | multer::Error::FieldSizeExceeded { limit, .. } => {
            too_large(limit.saturating_sub(MULTIPART_OVERHEAD_BYTES))
        }
        other => ApiError::bad_request(format!("malformed multipart body: {other}")),
    }
}

/// The file name of a part: `filename*` (RFC 5987, `charset''percent-encoded`) when present,
/// else `filename`.
fn file_name(headers: &poem::http::HeaderMap) -> Option<String> {
    let cd = headers.get(poem::http::header::CONTENT_DISPOSITION)?;
    let cd = String::from_utf8_lossy(cd.as_bytes());
    cd.split(';').find_map(|param| {
        let (key, value) = param.trim().split_once('=')?;
        if !key.trim().eq_ignore_ascii_case("filename*") {
            return None;
        }
        let value = value.trim().trim_matches('"');
        let (charset, rest) = value.split_once('\'')?;
        let (_lang, encoded) = rest.split_once('\'')?;
        let bytes: Vec<u8> = percent_decode_str(encoded).collect();
        if charset.eq_ignore_ascii_case("utf-8") {
            String::from_utf8(bytes).ok()
        } else {
            // ISO-8859-1 is the only other charset RFC 5987 requires.
            Some(bytes.iter().map(|&b| char::from(b)).collect())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(cd: &str) -> poem::http::HeaderMap {
        let mut h = poem::http::HeaderMap::new();
        h.insert(
            poem::http::header::CONTENT_DISPOSITION,
            poem::http::HeaderValue::from_bytes(cd.as_bytes()).unwrap(),
        );
        h
    }

    #[test]
    fn extended_file_name_wins() {
        let h = headers(
            r#"form-data; name="file"; filename="a.txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20(1).pdf"#,
        );
        assert_eq!(file_name(&h).as_deref(), Some("Résumé (1).pdf"));
        let h = headers(r#"form-data; name="file"; filename*=iso-8859-1'en'caf%E9.txt"#);
        assert_eq!(file_name(&h).as_deref(), Some("café.txt"));
        assert_eq!(
            file_name(&headers(r#"form-data; name="file"; filename="a.txt""#)),
            None
        );
    }
}
