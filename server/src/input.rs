//! The input policy at the edge (`inlet_core::input`, docs/decisions.md "Input policy"): before
//! any handler runs, every path segment, query parameter and form field is strictly
//! percent-decoded and must be UTF-8 without control characters, and a JSON body may hold no NUL
//! and must fit the operation's schema in the document ([`crate::schema`]).
//! A refusal is a 400 naming the parameter as the API document does (`externalId`, `q`,
//! `client_id`); the OAuth token endpoints answer it as RFC 6749 `invalid_request`.

use inlet_core::input::{self, Class};
use poem::{Body, Endpoint, IntoResponse, Request, Response, http::StatusCode};
use poem_openapi::registry::MetaParamIn;

use crate::problem::ApiError;

/// Longest query parameter or form field value the policy looks at before refusing (the body
/// limits bound the rest).
const MAX_PARAMETER_BYTES: usize = 64 * 1024;

/// The name of path segment `index`: the parameter of the document's route the path matches
/// (`path parameter externalId`), else "the path".
fn segment_name(path: &str, index: usize) -> String {
    crate::routes::find(path)
        .and_then(|r| r.param_at(index))
        .map_or_else(
            || "the path".to_string(),
            |name| format!("path parameter {name}"),
        )
}

/// Checks the path: each segment strictly percent-decoded, UTF-8, no control character.
fn check_path(path: &str) -> Result<(), String> {
    for (i, raw) in path.split('/').enumerate() {
        if !raw.contains('%') && !raw.bytes().any(|b| b.is_ascii_control()) {
            continue;
        }
        let name = segment_name(path, i);
        let decoded = input::percent_decode(&name, raw).map_err(|e| e.to_string())?;
        input::check(&name, &decoded, Class::Line).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Checks `application/x-www-form-urlencoded` text (a query string or a form body): every name
/// and value strictly decoded (`+` is a space), UTF-8, no control character.
fn check_form(raw: &str, what: &str) -> Result<(), String> {
    for pair in raw.split('&').filter(|p| !p.is_empty()) {
        let (raw_name, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = input::percent_decode(&format!("a {what} name"), &raw_name.replace('+', " "))
            .map_err(|e| e.to_string())?;
        input::check(&format!("a {what} name"), &name, Class::Line).map_err(|e| e.to_string())?;
        let field = format!("{what} {name}");
        if raw_value.len() > MAX_PARAMETER_BYTES {
            return Err(format!(
                "{field} is longer than {MAX_PARAMETER_BYTES} bytes"
            ));
        }
        let value = input::percent_decode(&field, &raw_value.replace('+', " "))
            .map_err(|e| e.to_string())?;
        // A search query is typed (or pasted) text: it may span lines.
        let class = if what == "query parameter" && name == "q" {
            Class::Typed
        } else {
            Class::Line
        };
        input::check(&field, &value, class).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Refuses what the API's operation does not declare, rather than ignore it: a query parameter
/// (`externalchecksum` for `externalChecksum` would erase the stored checksum) or an
/// `X-Service-Object-*` header (`X-Service-Object-Tags` would store no tags); the refusal names
/// it and the name probably meant. OAuth endpoints are left alone (RFC 6749 3.1: unknown
/// parameters are ignored there).
fn check_declared(req: &Request, path: &str, query: &str) -> Result<(), String> {
    if path.starts_with("/oauth/") {
        return Ok(());
    }
    let Some(op) = crate::routes::find(path).and_then(|r| r.operation(req.method().as_str()))
    else {
        return Ok(());
    };
    let unknown = |what: &str, name: &str, known: &[String]| match inlet_core::input::closest(
        name,
        known.iter(),
    ) {
        Some(meant) => format!("unknown {what} \"{name}\"; did you mean \"{meant}\"?"),
        None if known.is_empty() => {
            format!("unknown {what} \"{name}\"; this operation takes none")
        }
        None => format!(
            "unknown {what} \"{name}\"; this operation takes {}",
            known.join(", ")
        ),
    };
    let in_query = crate::routes::declared(op, MetaParamIn::Query);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let raw = pair.split_once('=').map_or(pair, |(n, _)| n);
        let name = input::percent_decode("a query parameter name", &raw.replace('+', " "))
            .map_err(|e| e.to_string())?;
        // `?=` and `?&` name nothing (some clients send an empty query that way).
        if !name.is_empty() && !in_query.contains(&name) {
            return Err(unknown("query parameter", &name, &in_query));
        }
    }
    let in_headers = crate::routes::declared(op, MetaParamIn::Header);
    for name in req.headers().keys() {
        let name = name.as_str();
        if name.starts_with("x-service-object-")
            && !in_headers.iter().any(|h| h.eq_ignore_ascii_case(name))
        {
            let shown: String = name
                .split('-')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join("-");
            return Err(unknown("header", &shown, &in_headers));
        }
    }
    Ok(())
}

/// Whether a JSON text may hold a `\u0000` escape (a raw NUL is invalid JSON anyway): an odd run
/// of backslashes before `u0000`.
fn may_hold_nul(body: &[u8]) -> bool {
    memchr_find(body, b"u0000") || memchr_find(body, b"U0000")
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).enumerate().any(|(i, w)| {
        w.eq_ignore_ascii_case(needle) && {
            let slashes = haystack[..i]
                .iter()
                .rev()
                .take_while(|b| **b == b'\\')
                .count();
            slashes % 2 == 1
        }
    })
}

/// The request's media type, lower-case, without parameters.
fn media_type(req: &Request) -> String {
    req.content_type()
        .and_then(|ct| ct.split(';').next())
        .map(|ct| ct.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Whether errors of this path are RFC 6749 bodies rather than problem+json.
fn is_oauth_endpoint(path: &str) -> bool {
    matches!(path, "/oauth/token" | "/oauth/revoke" | "/oauth/introspect")
}

fn refuse(path: &str, detail: String) -> Response {
    if is_oauth_endpoint(path) {
        let body = serde_json::json!({"error": "invalid_request", "error_description": detail});
        return Response::builder()
            .status(StatusCode::BAD_REQUEST)
            .content_type("application/json; charset=utf-8")
            .header("cache-control", "no-store")
            .body(body.to_string());
    }
    ApiError::bad_request(detail).into_response()
}

/// Middleware: applies the input policy to the path, the query and form or JSON bodies.
pub async fn check_request<E: Endpoint>(next: E, mut req: Request) -> poem::Result<Response> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    if let Err(detail) = check_path(&path)
        .and_then(|()| check_form(&query, "query parameter"))
        .and_then(|()| check_declared(&req, &path, &query))
    {
        return Ok(refuse(&path, detail));
    }
    let media = media_type(&req);
    let is_form = media == "application/x-www-form-urlencoded";
    let is_json = media == "application/json" || media.ends_with("+json");
    let mut refused_body = None;
    if is_form || is_json {
        let body = req.take_body().into_bytes().await?;
        let checked = if is_form {
            match std::str::from_utf8(&body) {
                Ok(text) => check_form(text, "form field"),
                Err(_) => Err("the form body is not UTF-8; percent-encode other bytes".into()),
            }
        } else {
            match serde_json::from_slice::<serde_json::Value>(&body) {
                Ok(value) => {
                    let method = req.method().as_str().to_string();
                    if may_hold_nul(&body) {
                        input::check_json("the JSON body", &value).map_err(|e| e.to_string())
                    } else {
                        Ok(())
                    }
                    .and_then(|()| crate::schema::check_body(&method, &path, &value))
                }
                // Malformed JSON is the payload parser's to report.
                Err(_) => Ok(()),
            }
        };
        match checked {
            Err(detail) if is_form => return Ok(refuse(&path, detail)),
            // A JSON body that breaks the schema is reported only once the caller has been
            // authenticated and authorized (401 and 403 come before 400): the handler gets a
            // body its parser refuses, and that refusal is replaced with our words.
            Err(detail) => {
                refused_body = Some(detail);
                req.set_body(Body::from_bytes(bytes::Bytes::from_static(b"\0")));
            }
            Ok(()) => req.set_body(Body::from_bytes(body)),
        }
    }
    let method = req.method().as_str().to_string();
    match next.call(req).await {
        Ok(response) => Ok(response.into_response()),
        Err(e) => match refused_body {
            Some(detail) if e.is::<poem_openapi::error::ParseRequestPayloadError>() => {
                Ok(refuse(&path, detail))
            }
            _ => Err(crate::problem::explain(e, &method, &path, &query)),
        },
    }
}

/// Characters a path segment carries as they are: RFC 3986 unreserved.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `value` as one percent-encoded path segment (a `/` in an externalId stays in its segment).
pub fn encode_path_segment(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, SEGMENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_named_by_the_template() {
        let e = check_path(
            "/api/v1/sources/0b6c9e1e-6a3e-4b8f-9d5e-1b2c3d4e5f60/objecttypes/0b6c9e1e-6a3e-4b8f-9d5e-1b2c3d4e5f61/objects/a%00b/file",
        )
        .unwrap_err();
        assert!(
            e.starts_with("path parameter externalId contains the control character U+0000"),
            "{e}"
        );
        let e = check_path("/api/v1/nowhere/%ZZ").unwrap_err();
        assert!(
            e.starts_with("the path has a malformed percent-escape"),
            "{e}"
        );
        let e = check_path("/api/v1/x/%FF").unwrap_err();
        assert!(e.contains("not percent-encoded UTF-8"), "{e}");
        check_path("/api/v1/sources/a%20b/%E6%9D%B1").unwrap();
    }

    #[test]
    fn query_and_form_fields_are_strict() {
        check_form("q=two%0Alines%09and%0D%0Atabs", "query parameter").unwrap();
        let e = check_form("q=a%00", "query parameter").unwrap_err();
        assert!(
            e.starts_with("query parameter q contains the control character U+0000"),
            "{e}"
        );
        let e = check_form("externalUrl=100%", "query parameter").unwrap_err();
        assert!(e.contains("write a literal % as %25"), "{e}");
        let e = check_form("client_id=%01x", "form field").unwrap_err();
        assert!(e.starts_with("form field client_id contains"), "{e}");
        check_form(
            "a=b+c&d=%E6%9D%B1&e&&redirect_uri=https%3A%2F%2Fx",
            "form field",
        )
        .unwrap();
    }

    #[test]
    fn nul_escapes_are_spotted() {
        assert!(may_hold_nul(br#"{"a":"\u0000"}"#));
        assert!(may_hold_nul(br#"{"a":"\\\u0000"}"#));
        assert!(!may_hold_nul(br#"{"a":"\\u0000"}"#));
        assert!(!may_hold_nul(br#"{"a":"u0000"}"#));
    }
}
