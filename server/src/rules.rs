//! The request rules beyond the handlers' types, stated once as JSON Schema keywords: lengths,
//! patterns, ranges, enums and item counts of parameters and JSON body fields. The published
//! document carries them (`api::document` merges them into what poem-openapi generates) and the
//! run-time body check reads them over the operations' own schemas ([`crate::routes`],
//! [`crate::schema`]), so what the document says and what the server refuses cannot drift apart.
//! Each limit is the constant of the code that enforces it (core's, the authorization server's
//! client rules), read here, so a limit is written once.

use inlet_core::{access::MAX_GROUP_ID_CHARS, oauth::KNOWN_SCOPES};
use inlet_oauth::clients::{
    MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_REDIRECT_URI_BYTES, MAX_REDIRECT_URIS,
};
use serde_json::{Value, json};

/// The longest `wait` of the change feed, in seconds.
pub const MAX_WAIT_SECONDS: u64 = 30;
/// Longest identifier or name (externalIds, checksums, tag values), in bytes (docs/decisions.md,
/// input policy); stated with [`bytes`].
const MAX_LINE: usize = inlet_core::input::MAX_ID_BYTES;
/// Longest record URL, as [`MAX_LINE`].
const MAX_URL: usize = inlet_core::input::MAX_URL_BYTES;

/// One line of text as identifiers, names and tag values must be (docs/decisions.md, input
/// policy): no C0 control character or DEL, not blank.
pub const LINE: &str =
    "^[^\\u0000-\\u001F\\u007F]*[^\\s\\u0000-\\u001F\\u007F][^\\u0000-\\u001F\\u007F]*$";

/// JSON text: any character but NUL (docs/decisions.md, input policy).
const NO_NUL: &str = "^[^\\u0000]*$";

/// A tag pair as the tag header carries it: a tag id, `:`, a value, each one non-blank line
/// whose `%` starts a two-digit escape (DESIGN 6).
pub const TAG_PAIR: &str = "^(?:[^\\u0000-\\u001F\\u007F%:]|%[0-9A-Fa-f]{2})*[^\\s\\u0000-\\u001F\\u007F%:](?:[^\\u0000-\\u001F\\u007F%:]|%[0-9A-Fa-f]{2})*:(?:[^\\u0000-\\u001F\\u007F%]|%[0-9A-Fa-f]{2})*[^\\s\\u0000-\\u001F\\u007F%](?:[^\\u0000-\\u001F\\u007F%]|%[0-9A-Fa-f]{2})*$";

/// One character of an access entry's id or e-mail: no whitespace or control character
/// (`char::is_control`: C0, DEL, C1).
const ACCESS_CHAR: &str = "[^\\s\\u0000-\\u001F\\u007F-\\u009F]";

/// An access entry as JSON carries it (`inlet_core::access::Grantee::parse`): `everyone`,
/// `user:<e-mail>` or `group:<externalId>`, prefixes in any case.
fn grantee() -> String {
    format!(
        "^(?:[eE][vV][eE][rR][yY][oO][nN][eE]|[uU][sS][eE][rR]:{c}*@{c}*|\
         [gG][rR][oO][uU][pP]:[^\\u0000-\\u001F\\u007F-\\u009F]*{c}[^\\u0000-\\u001F\\u007F-\\u009F]*)$",
        c = ACCESS_CHAR
    )
}

/// A group member (`inlet_core::access::Member::parse`): a grantee but `everyone`.
fn member() -> String {
    format!(
        "^(?:[uU][sS][eE][rR]:{c}*@{c}*|\
         [gG][rR][oO][uU][pP]:[^\\u0000-\\u001F\\u007F-\\u009F]*{c}[^\\u0000-\\u001F\\u007F-\\u009F]*)$",
        c = ACCESS_CHAR
    )
}

/// The access header: a comma-separated list of entries (possibly empty), visible ASCII with
/// anything else percent-encoded.
fn access_header() -> String {
    let enc = "(?:[\\u0021-\\u0024\\u0026-\\u002B\\u002D-\\u007E]|%(?:2[1-9A-Fa-f]|[3-6][0-9A-Fa-f]|7[0-9A-Ea-e]))";
    let entry = format!(
        "(?:[eE][vV][eE][rR][yY][oO][nN][eE]|[uU][sS][eE][rR]:{enc}*@{enc}*|\
         [gG][rR][oO][uU][pP]:{enc}+)"
    );
    format!("^(?:{entry}(?:[ \\t]*,[ \\t]*{entry})*)?$")
}

/// An http or https link on one line (record urls; `inlet_core::input::check_url`).
const WEB_URL: &str = "^[hH][tT][tT][pP][sS]?://[^\\u0000-\\u001F\\u007F]+$";

/// OAuth2 scopes as a space-separated list of `inlet_core::oauth::KNOWN_SCOPES`.
fn scopes() -> String {
    let one = KNOWN_SCOPES
        .map(|scope| scope.replace('*', "\\*"))
        .join("|");
    format!("^({one})( ({one}))*$")
}

/// A PKCE code verifier or challenge (RFC 7636).
const PKCE: &str = "^[A-Za-z0-9._~-]{43,128}$";

/// Which operations a parameter rule covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operations {
    /// Every operation with the parameter; the rule applies only where the parameter is a plain
    /// string (no format, no enum).
    Every,
    /// One operation (its operationId); the rule applies to the parameter's items when it is
    /// repeatable, else to the parameter.
    One(&'static str),
}

/// A rule of a parameter.
pub struct ParameterRule {
    /// The operations it covers.
    pub operations: Operations,
    /// Where the parameter is (`path`, `query`, `header`); `None` for anywhere.
    pub location: Option<&'static str>,
    /// The parameter's name as the document writes it.
    pub name: &'static str,
    /// The JSON Schema keywords it adds.
    pub keywords: Value,
}

/// A rule of a body field: the schema it adds keywords to, as a pointer into the document's
/// components (`/components/schemas/ClientIn/properties/redirectUris/items`).
pub struct FieldRule {
    /// Where it applies.
    pub pointer: &'static str,
    /// The JSON Schema keywords it adds.
    pub keywords: Value,
}

/// One non-blank line of at most `max` characters.
fn line(max: usize) -> Value {
    json!({"minLength": 1, "maxLength": max, "pattern": LINE})
}

/// A limit the server counts in UTF-8 bytes: `maxLength` (which JSON Schema counts in
/// characters) and the extension `x-maxBytes`, the tighter of the two for non-ASCII text.
fn bytes(max: usize, mut keywords: Value) -> Value {
    keywords["maxLength"] = json!(max);
    keywords["x-maxBytes"] = json!(max);
    keywords
}

/// An identifier or name: one non-blank line of at most [`MAX_LINE`] bytes.
fn id_line() -> Value {
    bytes(MAX_LINE, json!({"minLength": 1, "pattern": LINE}))
}

/// The parameters' rules, in the order they apply.
pub fn parameter_rules() -> Vec<ParameterRule> {
    let every = |location, name, keywords| ParameterRule {
        operations: Operations::Every,
        location: Some(location),
        name,
        keywords,
    };
    let one = |operation, name, keywords| ParameterRule {
        operations: Operations::One(operation),
        location: None,
        name,
        keywords,
    };
    let feed_cursor = "^(s[0-9]*(\\.[0-9a-f]{32})?|c[0-9]+|x[0-9]+\\.[0-9a-f]{32})$";
    vec![
        every("path", "externalId", id_line()),
        every("query", "externalChecksum", id_line()),
        every(
            "query",
            "externalUrl",
            bytes(MAX_URL, json!({"minLength": 1, "pattern": WEB_URL})),
        ),
        every("header", "If-Match", id_line()),
        one("search", "createdFrom", json!({"format": "date-time"})),
        one("search", "createdTo", json!({"format": "date-time"})),
        one("search", "modifiedFrom", json!({"format": "date-time"})),
        one("search", "modifiedTo", json!({"format": "date-time"})),
        one(
            "search",
            "q",
            json!({"maxLength": inlet_core::search::MAX_QUERY_CHARS,
                   "pattern": "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$"}),
        ),
        one(
            "search",
            "limit",
            json!({"minimum": 1, "maximum": inlet_core::search::MAX_LIMIT}),
        ),
        one("search", "cursor", json!({"pattern": "^[A-Za-z0-9_-]+$"})),
        one("search", "tag", json!({"pattern": TAG_PAIR})),
        one(
            "listObjects",
            "limit",
            json!({"minimum": 1, "maximum": inlet_core::ingest::MAX_PAGE}),
        ),
        one(
            "listObjects",
            "cursor",
            json!({"pattern": "^r1\\.([0-9a-f]{2})*$"}),
        ),
        one(
            "listObjects",
            "modifiedSince",
            json!({"format": "date-time"}),
        ),
        one(
            "listWebhookDeliveries",
            "limit",
            json!({"minimum": 1, "maximum": 1000}),
        ),
        one(
            "listChanges",
            "limit",
            json!({"minimum": 1, "maximum": inlet_core::ingest::MAX_PAGE}),
        ),
        one(
            "listChanges",
            "wait",
            json!({"minimum": 0, "maximum": MAX_WAIT_SECONDS}),
        ),
        one("listChanges", "cursor", json!({"pattern": feed_cursor})),
        one("authorize", "code_challenge", json!({"pattern": PKCE})),
        one("authorize", "scope", json!({"pattern": scopes()})),
        one("authorize", "state", json!({"pattern": LINE})),
        one(
            "uploadFile",
            "X-Service-Object-Access",
            json!({"pattern": access_header()}),
        ),
        one(
            "pushContent",
            "X-Service-Object-Access",
            json!({"pattern": access_header()}),
        ),
        one("putGroup", "groupId", line(MAX_GROUP_ID_CHARS)),
        one("deleteGroup", "groupId", line(MAX_GROUP_ID_CHARS)),
        one("listGroups", "after", line(MAX_GROUP_ID_CHARS)),
        one(
            "listGroups",
            "limit",
            json!({"minimum": 1, "maximum": 1000}),
        ),
    ]
}

/// Operations whose form body is required: the OAuth endpoints need their parameters, and the
/// form body is the documented way to send them (the query string works too, as spec 4.3 shows,
/// but cannot be stated as an alternative).
pub const BODY_REQUIRED: &[&str] = &["token", "revokeToken", "introspectToken"];

/// The body fields' rules (`clients::validate`, source validation, the webhook and batch
/// limits), in the order they apply.
pub fn field_rules() -> Vec<FieldRule> {
    let rule = |pointer, keywords| FieldRule { pointer, keywords };
    // JSON text may hold any character but NUL; an item breaking the externalId rules fails
    // alone (its own 400 in the answer).
    let no_nul = || json!({"pattern": NO_NUL});
    // A template is bounded by construction (`inlet_core::template`); the document states its
    // length, and its field references (which no keyword can count) in words.
    let template =
        || json!({"maxLength": inlet_core::template::MAX_TEMPLATE_CHARS, "pattern": NO_NUL});
    // OAuth parameters are identifiers: one non-blank line each (the input policy).
    let oauth_line = || json!({"pattern": LINE});
    vec![
        rule(
            "/components/schemas/ClientIn/properties/name",
            line(MAX_NAME_CHARS),
        ),
        rule(
            "/components/schemas/ClientIn/properties/description",
            json!({"maxLength": MAX_DESCRIPTION_CHARS, "pattern": NO_NUL}),
        ),
        rule(
            "/components/schemas/ClientIn/properties/bottomDescription",
            json!({"maxLength": MAX_DESCRIPTION_CHARS, "pattern": NO_NUL}),
        ),
        rule(
            "/components/schemas/ClientIn/properties/redirectUris",
            json!({"minItems": 1, "maxItems": MAX_REDIRECT_URIS}),
        ),
        rule(
            "/components/schemas/ClientIn/properties/redirectUris/items",
            bytes(
                MAX_REDIRECT_URI_BYTES,
                json!({"format": "uri", "pattern": "^[hH][tT][tT][pP][sS]?://[^#\\s]+$"}),
            ),
        ),
        rule(
            "/components/schemas/Templates/properties/titleTemplate",
            template(),
        ),
        rule(
            "/components/schemas/Templates/properties/externalUrlTemplate",
            template(),
        ),
        rule(
            "/components/schemas/Templates/properties/searchTemplate",
            template(),
        ),
        rule(
            "/components/schemas/ClientIn/properties/scopes",
            json!({"minItems": 1}),
        ),
        rule(
            "/components/schemas/WebhookIn/properties/url",
            bytes(
                inlet_core::webhook::MAX_URL_BYTES,
                json!({"format": "uri", "pattern": "^[hH][tT][tT][pP][sS]?://[^#@\\s/?]+[^#\\s]*$"}),
            ),
        ),
        rule(
            "/components/schemas/WebhookIn/properties/events",
            json!({"minItems": 1, "maxItems": inlet_core::webhook::Event::ALL.len(),
                   "uniqueItems": true}),
        ),
        rule(
            "/components/schemas/WebhookIn/properties/events/items",
            json!({"enum": inlet_core::webhook::Event::ALL.map(|e| e.name())}),
        ),
        rule(
            "/components/schemas/ReextractionIn/properties/format",
            json!({"enum": inlet_extractors::registry().formats().collect::<Vec<_>>()}),
        ),
        rule(
            "/components/schemas/BatchIds/properties/externalIds",
            json!({"maxItems": inlet_core::ingest::MAX_BATCH}),
        ),
        rule(
            "/components/schemas/BatchTouch/properties/objects",
            json!({"maxItems": inlet_core::ingest::MAX_BATCH}),
        ),
        rule(
            "/components/schemas/BatchIds/properties/externalIds/items",
            no_nul(),
        ),
        rule(
            "/components/schemas/BatchTouchObject/properties/externalId",
            no_nul(),
        ),
        rule(
            "/components/schemas/BatchTouchObject/properties/ifMatch",
            no_nul(),
        ),
        rule(
            "/components/schemas/AccessList/properties/access",
            json!({"maxItems": inlet_core::access::MAX_GRANTEES}),
        ),
        rule(
            "/components/schemas/AccessList/properties/access/items",
            json!({"maxLength": inlet_core::access::MAX_GRANTEE_CHARS, "pattern": grantee()}),
        ),
        rule(
            "/components/schemas/BatchAccess/properties/objects",
            json!({"maxItems": inlet_core::ingest::MAX_BATCH}),
        ),
        rule(
            "/components/schemas/BatchAccessObject/properties/externalId",
            no_nul(),
        ),
        rule(
            "/components/schemas/BatchAccessObject/properties/access",
            json!({"maxItems": inlet_core::access::MAX_GRANTEES}),
        ),
        rule(
            "/components/schemas/BatchAccessObject/properties/access/items",
            json!({"maxLength": inlet_core::access::MAX_GRANTEE_CHARS, "pattern": grantee()}),
        ),
        rule(
            "/components/schemas/GroupIn/properties/members",
            json!({"maxItems": inlet_core::access::MAX_MEMBERS}),
        ),
        rule(
            "/components/schemas/GroupIn/properties/members/items",
            json!({"maxLength": inlet_core::access::MAX_GRANTEE_CHARS, "pattern": member()}),
        ),
        rule(
            "/components/schemas/ClientIn/properties/scopes/items",
            json!({"enum": KNOWN_SCOPES}),
        ),
        rule(
            "/components/schemas/Application/properties/objectTypes",
            json!({"minItems": 1}),
        ),
        rule(
            "/components/schemas/FieldInput/properties/contentSelector",
            json!({"pattern": "^(/[^/]*)*$"}),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/grant_type",
            json!({"enum": ["authorization_code", "refresh_token"]}),
        ),
        rule(
            "/components/schemas/TokenLookup/properties/token_type_hint",
            json!({"enum": ["access_token", "refresh_token"]}),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/code",
            oauth_line(),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/redirect_uri",
            oauth_line(),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/refresh_token",
            oauth_line(),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/code_verifier",
            json!({"pattern": PKCE}),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/scope",
            json!({"pattern": scopes()}),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/client_id",
            oauth_line(),
        ),
        rule(
            "/components/schemas/TokenRequest/properties/client_secret",
            oauth_line(),
        ),
        rule(
            "/components/schemas/TokenLookup/properties/token",
            oauth_line(),
        ),
        rule(
            "/components/schemas/TokenLookup/properties/client_id",
            oauth_line(),
        ),
        rule(
            "/components/schemas/TokenLookup/properties/client_secret",
            oauth_line(),
        ),
    ]
}

/// The rule of a JSON request field that names or identifies something (`name`, `externalId`,
/// `parentExternalId`, `contentSelector` of the source definition's inputs, folders and tag
/// references), applied after [`field_rules`] and only where the field is a plain string.
pub fn naming_rule(schema: &str, field: &str) -> Option<Value> {
    let naming_schema = schema.ends_with("Input")
        || ["CreateSource", "PatchSource", "FolderIn", "TagConfigRef"].contains(&schema);
    if !naming_schema {
        return None;
    }
    match field {
        "name" if schema == "FolderIn" => Some(line(inlet_core::folder::MAX_NAME_CHARS)),
        "name" | "externalId" | "parentExternalId" => Some(id_line()),
        "contentSelector" => Some(bytes(MAX_LINE, json!({}))),
        _ => None,
    }
}
