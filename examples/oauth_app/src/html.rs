//! The app's HTML pages. Every value that comes from Inlet or the request is escaped here; the
//! only markup taken from Inlet is the `<mark>` of search snippets, rebuilt from scratch.

use crate::inlet::{Hit, SearchPage};

/// Escapes text for HTML element content and double- or single-quoted attributes.
pub fn escape(s: &str) -> String {
    html_escape::encode_quoted_attribute(s).into_owned()
}

/// The link target of a record's url, escaped for an attribute; `None` unless it is an absolute
/// `http` or `https` URL (a `javascript:` url must never become a link, escaped or not).
pub fn safe_href(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| escape(parsed.as_str()))
}

/// Inverts Inlet's snippet escaping (HTML character references).
fn unescape(s: &str) -> String {
    html_escape::decode_html_entities(s).into_owned()
}

/// A search snippet as safe HTML: Inlet's `<mark>` / `</mark>` are kept, everything between
/// them is unescaped and escaped again, so no other markup can pass.
pub fn snippet(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut open = false;
    let mut rest = s;
    loop {
        let tag = if open { "</mark>" } else { "<mark>" };
        match rest.find(tag) {
            Some(at) => {
                out.push_str(&escape(&unescape(&rest[..at])));
                out.push_str(tag);
                open = !open;
                rest = &rest[at + tag.len()..];
            }
            None => {
                out.push_str(&escape(&unescape(rest)));
                if open {
                    out.push_str("</mark>");
                }
                return out;
            }
        }
    }
}

/// A whole page around `body` (which must already be safe HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n\
         body {{ font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }}\n\
         li {{ margin: .5rem 0; }} small {{ color: #555; display: block; }}\n\
         .error {{ border-left: 4px solid #b00; padding-left: 1rem; }}\n\
         </style>\n</head>\n<body>\n{body}\n</body>\n</html>\n",
        title = escape(title),
    )
}

/// The signed-out start page.
pub fn home() -> String {
    page(
        "Inlet OAuth example",
        "<h1>Inlet OAuth example</h1>\n\
         <p>This application reads your records in Inlet once you allow it to.</p>\n\
         <p><a href=\"login\">Sign in with Inlet</a></p>",
    )
}

/// The records list for a signed-in user.
pub fn records(user: Option<&str>, query: Option<&str>, page_of: &SearchPage) -> String {
    let mut body = String::from("<h1>Your records</h1>\n");
    if let Some(user) = user {
        body.push_str(&format!(
            "<p>Signed in as <strong>{}</strong>.</p>\n",
            escape(user)
        ));
    }
    body.push_str(&format!(
        "<form action=\"records\" method=\"get\"><input type=\"search\" name=\"q\" value=\"{}\" \
         placeholder=\"Search\"> <button type=\"submit\">Search</button></form>\n",
        escape(query.unwrap_or_default())
    ));
    body.push_str(&format!(
        "<p>{} record{} found.</p>\n",
        page_of.total,
        if page_of.total == 1 { "" } else { "s" }
    ));
    if !page_of.results.is_empty() {
        body.push_str("<ul>\n");
        for hit in &page_of.results {
            body.push_str(&record_item(hit, query.is_some()));
        }
        body.push_str("</ul>\n");
    }
    if let Some(cursor) = &page_of.next_cursor {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        if let Some(query) = query {
            q.append_pair("q", query);
        }
        q.append_pair("cursor", cursor);
        body.push_str(&format!(
            "<p><a href=\"records?{}\">Next page</a></p>\n",
            escape(&q.finish())
        ));
    }
    body.push_str(
        "<form action=\"logout\" method=\"post\"><button type=\"submit\">Sign out</button></form>",
    );
    page("Your records", &body)
}

fn record_item(hit: &Hit, with_snippet: bool) -> String {
    let title = if hit.title.is_empty() {
        escape(&hit.external_id)
    } else {
        escape(&hit.title)
    };
    let mut item = match hit.url.as_deref().and_then(safe_href) {
        Some(href) => format!("<li><a href=\"{href}\" rel=\"noopener noreferrer\">{title}</a>"),
        None => format!("<li>{title}"),
    };
    if with_snippet && !hit.snippet.is_empty() {
        item.push_str(&format!("<small>{}</small>", snippet(&hit.snippet)));
    }
    item.push_str("</li>\n");
    item
}

/// An error page: the status, a message and, when `sign_in` is set, a link to sign in again.
pub fn error(status: u16, reason: &str, message: &str, sign_in: bool) -> String {
    let heading = format!("{status} {reason}");
    let mut body = format!(
        "<h1>{}</h1>\n<p class=\"error\">{}</p>\n",
        escape(&heading),
        escape(message)
    );
    if sign_in {
        body.push_str("<p><a href=\"login\">Sign in with Inlet</a></p>\n");
    }
    body.push_str("<p><a href=\"./\">Back to the start page</a></p>");
    page(&heading, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(title: &str, url: Option<&str>, snippet: &str) -> Hit {
        Hit {
            external_id: "x-1".into(),
            title: title.into(),
            url: url.map(str::to_string),
            snippet: snippet.into(),
        }
    }

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">O'Brien & co</a>"#),
            "&lt;a href=&quot;x&quot;&gt;O&#x27;Brien &amp; co&lt;/a&gt;"
        );
    }

    #[test]
    fn only_http_urls_become_links() {
        assert_eq!(
            safe_href("https://files.test/v?a=1&b=\"2\"").as_deref(),
            Some("https://files.test/v?a=1&amp;b=%222%22")
        );
        assert!(safe_href("http://files.test/").is_some());
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<script>",
            "/relative",
            "",
        ] {
            assert_eq!(safe_href(bad), None, "{bad}");
        }
    }

    #[test]
    fn snippets_keep_mark_and_nothing_else() {
        assert_eq!(
            snippet("a &lt;b&gt; <mark>word</mark> &amp; more"),
            "a &lt;b&gt; <mark>word</mark> &amp; more"
        );
        assert_eq!(
            snippet("<script>alert(1)</script> <mark>x"),
            "&lt;script&gt;alert(1)&lt;/script&gt; <mark>x</mark>"
        );
        assert_eq!(
            snippet("<mark><img src=x></mark>"),
            "<mark>&lt;img src=x&gt;</mark>"
        );
    }

    #[test]
    fn record_list_escapes_titles_and_drops_unsafe_links() {
        let page_of = SearchPage {
            total: 2,
            results: vec![
                hit("<b>Q1</b>", Some("https://f.test/?a=1&b=2"), ""),
                hit("evil", Some("javascript:alert(1)"), ""),
            ],
            next_cursor: Some("b2:1".into()),
        };
        let html = records(Some("me@x.test"), Some("a&b"), &page_of);
        assert!(html.contains(
            "<a href=\"https://f.test/?a=1&amp;b=2\" rel=\"noopener noreferrer\">&lt;b&gt;Q1&lt;/b&gt;</a>"
        ));
        assert!(html.contains("<li>evil</li>"));
        assert!(!html.contains("javascript:"));
        assert!(html.contains("value=\"a&amp;b\""));
        assert!(html.contains("href=\"records?q=a%26b&amp;cursor=b2%3A1\""));
        assert!(html.contains("2 records found."));
    }

    #[test]
    fn error_page_escapes_the_message() {
        let html = error(400, "Bad Request", "state <x> does not match", true);
        assert!(html.contains("<h1>400 Bad Request</h1>"));
        assert!(html.contains("state &lt;x&gt; does not match"));
        assert!(html.contains("href=\"login\""));
    }
}
