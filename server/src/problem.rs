//! The catch-all that turns framework errors into problem bodies in the API's words: parameter
//! names as the published document writes them, what was expected, and what to do. The problem
//! type itself is [`inlet_http::problem`], shared with the authorization server.

use poem::{IntoResponse, Response, http::StatusCode};

pub use inlet_http::problem::{ApiError, PROBLEM_JSON, Problem, Reason};

/// The detail of a 401 on endpoints that take either scheme.
const AUTH_REQUIRED: &str = "authentication required: HTTP Basic with your e-mail and API token \
                             (curl -u you@example.com:TOKEN), or an OAuth2 access token as \
                             `Authorization: Bearer`";

/// What a parameter of this name must be, in the API's words.
fn expected(name: &str, reason: &str) -> String {
    let lower = reason.to_ascii_lowercase();
    if lower.contains("uuid") {
        return match name {
            "sourceId" => {
                "a UUID: the source's `id` from the create-source answer, not its externalId".into()
            }
            "objectTypeId" => "a UUID: an object type's `id` (`sourceObjectTypes[].id` of the \
                               create-source answer), not its externalId"
                .into(),
            "tagConfigId" | "facetId" => format!(
                "a UUID: the `id` of a {} in the create-source answer",
                if name == "facetId" {
                    "facet"
                } else {
                    "tag config"
                }
            ),
            _ => "a UUID: the `id` the API answered when it was created".into(),
        };
    }
    if lower.contains("minimum(0)") {
        return "a number of 0 or more".into();
    }
    if lower.contains("integer") {
        return match name {
            "syncNumber" => "an integer: the `syncNumber` the open-sync answer gave".into(),
            _ => "an integer".into(),
        };
    }
    if lower.contains("boolean") {
        return "true or false".into();
    }
    if lower.contains("date-time") {
        return "an RFC 3339 timestamp such as 2026-11-22T10:42:10.123+00:00".into();
    }
    if name == "match" {
        return "`any` (records holding any word, best first; the default) or `all` (records \
                holding every word)"
            .into();
    }
    "a valid value for it (see the API reference at /docs)".into()
}

/// A value as a detail quotes it: JSON-escaped, at most 60 characters.
/// How many characters of an unmatched path a 404 shows.
const MAX_PATH_SHOWN: usize = 2048;

fn quoted(value: &str) -> String {
    let cut: String = value.chars().take(60).collect();
    let more = if cut.len() < value.len() { "…" } else { "" };
    format!("{}{more}", serde_json::Value::String(cut))
}

/// The media types an operation's body may have.
fn accepted_media(method: &str, path: &str) -> Vec<String> {
    crate::routes::find(path)
        .and_then(|r| r.operation(method))
        .and_then(|op| op.request.as_ref())
        .map(|request| {
            request
                .content
                .iter()
                .map(|c| {
                    let m = c.content_type;
                    m.split(';').next().unwrap_or(m).trim().to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Rewrites a framework error of the request `method path` in the API's words: parameters named
/// as the document names them, what was expected, and what to do. Errors already in our words
/// pass through.
pub fn explain(err: poem::Error, method: &str, path: &str, query: &str) -> poem::Error {
    use poem_openapi::error::{
        ContentTypeError, ParseMultipartError, ParseParamError, ParsePathError,
        ParseRequestPayloadError,
    };
    if err.is::<ApiError>() {
        return err;
    }
    let detail = if let Some(e) = err.downcast_ref::<ParsePathError>() {
        // poem-openapi numbers path parameters (`param0`) in the order the template has them.
        let route = crate::routes::find(path);
        let index = e
            .name
            .strip_prefix("param")
            .and_then(|n| n.parse::<usize>().ok());
        let name = route
            .zip(index)
            .and_then(|(r, i)| r.param_names().nth(i))
            .unwrap_or(e.name);
        let got = route
            .and_then(|r| {
                path.split('/')
                    .enumerate()
                    .find(|(i, _)| r.param_at(*i) == Some(name))
            })
            .map(|(_, raw)| format!(" (got {})", quoted(raw)))
            .unwrap_or_default();
        format!(
            "path parameter {name} must be {}{got}",
            expected(name, &e.reason)
        )
    } else if let Some(e) = err.downcast_ref::<ParseParamError>() {
        let got = query
            .split('&')
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| *k == e.name)
            .map(|(_, v)| format!(" (got {})", quoted(v)))
            .unwrap_or_default();
        let place = if query
            .split('&')
            .any(|p| p.split('=').next() == Some(e.name))
        {
            "query parameter"
        } else {
            "parameter"
        };
        format!(
            "{place} {} must be {}{got}",
            e.name,
            expected(e.name, &e.reason)
        )
    } else if let Some(e) = err.downcast_ref::<ParseRequestPayloadError>() {
        if e.reason.contains("Expected input type") || e.reason.contains("occurred while parsing") {
            "the request body does not match the operation's schema; see the API reference at \
             /docs"
                .to_string()
        } else {
            format!("the request body is not valid JSON: {}", e.reason)
        }
    } else if let Some(e) = err.downcast_ref::<ParseMultipartError>() {
        format!("malformed multipart body: {}", e.reason)
    } else if let Some(e) = err.downcast_ref::<ContentTypeError>() {
        let accepted = accepted_media(method, path);
        let how = if accepted.iter().any(|m| m == "multipart/form-data") {
            "send multipart/form-data with the file in a part named `file`".to_string()
        } else if accepted.is_empty() {
            "send no body".to_string()
        } else {
            format!(
                "send the body as {} (set Content-Type)",
                accepted.join(" or ")
            )
        };
        match e {
            ContentTypeError::NotSupported { content_type } => {
                format!(
                    "Content-Type {} is not accepted here: {how}",
                    quoted(content_type)
                )
            }
            ContentTypeError::ExpectContentType => {
                format!("the request has no Content-Type: {how}")
            }
        }
    } else if err.status() == StatusCode::UNAUTHORIZED {
        let basic_only = crate::routes::find(path)
            .and_then(|r| r.operation(method))
            .is_some_and(|op| {
                !op.security.is_empty()
                    && op.security.iter().all(|req| req.contains_key("basicAuth"))
            });
        if basic_only {
            "this endpoint takes HTTP Basic only: a workspace user's e-mail and API token \
             (curl -u you@example.com:TOKEN); OAuth2 Bearer tokens are not accepted here"
                .to_string()
        } else {
            AUTH_REQUIRED.to_string()
        }
    } else if err.status() == StatusCode::NOT_FOUND {
        let whole = serde_json::Value::String(path.chars().take(MAX_PATH_SHOWN).collect());
        match crate::routes::split_param(path) {
            Some((route, name, value)) => format!(
                "no endpoint {method} {whole}; if {name} is {}, percent-encode each '/' in it \
                 as %2F ({})",
                serde_json::Value::String(value.clone()),
                route
                    .template
                    .replace(&format!("{{{name}}}"), &value.replace('/', "%2F"))
            ),
            None => format!("no endpoint {method} {whole}; the API reference is at /docs"),
        }
    } else if err.status() == StatusCode::METHOD_NOT_ALLOWED {
        let allowed = crate::routes::find(path)
            .map(crate::routes::Route::methods)
            .unwrap_or_default();
        format!(
            "{method} is not allowed on {}; it allows {}",
            quoted(path),
            allowed.join(", ")
        )
    } else {
        return err;
    };
    ApiError::new(err.status(), detail).into()
}

/// Turns any error leaving the app into a problem+json response (framework errors such as a bad
/// path parameter, malformed JSON, an unknown route or missing credentials included).
pub async fn catch_all(err: poem::Error) -> Response {
    if err.is::<ApiError>() {
        return err.into_response();
    }
    let status = err.status();
    let detail = err.to_string();
    if status.is_server_error() {
        return ApiError::internal(detail).into_response();
    }
    let detail = if status == StatusCode::UNAUTHORIZED {
        AUTH_REQUIRED.to_string()
    } else {
        detail
    };
    ApiError::new(status, detail).into_response()
}
