//! The HTML of the browser half of the flow: login, consent and error pages. Plain HTML with
//! inline CSS (no scripts); every interpolated value is escaped.

use std::fmt::Write;

use inlet_core::html::escape as esc;

const STYLE: &str = r#"
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;
 background:linear-gradient(160deg,#eef2f7 0%,#dfe7f1 100%);
 font:15px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1d2733}
.card{width:100%;max-width:420px;margin:24px;background:#fff;border-radius:14px;
 box-shadow:0 10px 30px rgba(23,43,77,.12),0 1px 3px rgba(23,43,77,.08);padding:32px 32px 24px}
.brand{display:flex;align-items:center;gap:8px;font-weight:600;color:#3b5b84;font-size:13px;
 letter-spacing:.08em;text-transform:uppercase;margin-bottom:20px}
.brand i{display:inline-block;width:10px;height:10px;border-radius:3px;background:#2f6fdf}
h1{font-size:20px;margin:0 0 6px}
p{margin:0 0 14px;color:#4a5868}
.app{display:flex;align-items:center;gap:14px;margin-bottom:18px}
.app img,.app .ph{width:56px;height:56px;border-radius:12px;object-fit:contain;background:#f3f6fa;
 border:1px solid #e3e9f0;flex:none}
.app .ph{display:flex;align-items:center;justify-content:center;font-size:24px;font-weight:700;color:#2f6fdf}
.app h1{margin:0}
.who{font-size:13px;color:#6b7888;margin-top:2px}
ul.scopes{list-style:none;padding:0;margin:0 0 18px;border:1px solid #e3e9f0;border-radius:10px}
ul.scopes li{padding:10px 14px;border-top:1px solid #eef2f6}
ul.scopes li:first-child{border-top:0}
ul.scopes b{display:block;font-weight:600}
ul.scopes span{font-size:13px;color:#6b7888}
label{display:block;font-size:13px;font-weight:600;margin:12px 0 6px}
input[type=email],input[type=password]{width:100%;padding:10px 12px;border:1px solid #c9d3df;border-radius:8px;font:inherit}
input:focus{outline:2px solid #2f6fdf33;border-color:#2f6fdf}
.buttons{display:flex;gap:10px;margin-top:20px}
button{flex:1;padding:11px 14px;border-radius:8px;font:inherit;font-weight:600;cursor:pointer;border:1px solid transparent}
.primary{background:#2f6fdf;color:#fff}
.primary:hover{background:#2459b8}
.secondary{background:#fff;color:#1d2733;border-color:#c9d3df}
.secondary:hover{background:#f3f6fa}
.error{background:#fdecec;color:#9b1c1c;border:1px solid #f5c2c2;border-radius:8px;padding:10px 12px;margin-bottom:14px;font-size:14px}
.fine{font-size:12px;color:#7a8796;margin-top:18px;border-top:1px solid #eef2f6;padding-top:12px}
"#;

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} · Inlet</title><style>{STYLE}</style></head>\
         <body><main class=\"card\"><div class=\"brand\"><i></i>Inlet</div>{body}</main></body></html>",
        esc(title)
    )
}

/// Hidden inputs carrying the authorization request through a form.
pub fn hidden(fields: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (name, value) in fields {
        let _ = write!(
            out,
            "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
            esc(name),
            esc(value)
        );
    }
    out
}

/// The error page shown instead of redirecting (unknown client or redirect URI).
pub fn error(title: &str, detail: &str) -> String {
    page(
        title,
        &format!(
            "<h1>{}</h1><p>{}</p><p class=\"fine\">If you followed a link from an application, \
             tell its developers; nothing was shared.</p>",
            esc(title),
            esc(detail)
        ),
    )
}

/// What the login page shows about the application asking.
pub struct AppView<'a> {
    /// The client's display name.
    pub name: &'a str,
    /// The client's description.
    pub description: &'a str,
    /// Text at the bottom of the consent page.
    pub bottom_description: &'a str,
    /// URL of the client's logo, if it has one.
    pub logo_url: Option<String>,
}

fn app_header(app: &AppView<'_>, subtitle: &str) -> String {
    let logo = match &app.logo_url {
        Some(url) => format!("<img src=\"{}\" alt=\"{} logo\">", esc(url), esc(app.name)),
        None => format!(
            "<div class=\"ph\" aria-hidden=\"true\">{}</div>",
            esc(&app
                .name
                .chars()
                .next()
                .unwrap_or('?')
                .to_uppercase()
                .to_string())
        ),
    };
    format!(
        "<div class=\"app\">{logo}<div><h1>{}</h1><div class=\"who\">{}</div></div></div>",
        esc(app.name),
        esc(subtitle)
    )
}

/// The login form (fields `email` and `password`).
pub fn login(app: &AppView<'_>, hidden_fields: &str, message: Option<&str>, email: &str) -> String {
    let message = message
        .map(|m| format!("<div class=\"error\" role=\"alert\">{}</div>", esc(m)))
        .unwrap_or_default();
    page(
        "Sign in",
        &format!(
            "{}<p>Sign in to your Inlet workspace to continue to <b>{}</b>.</p>{message}\
             <form method=\"post\" action=\"/oauth/authorize\">{hidden_fields}\
             <input type=\"hidden\" name=\"step\" value=\"login\">\
             <label for=\"email\">E-mail</label>\
             <input id=\"email\" type=\"email\" name=\"email\" value=\"{}\" autocomplete=\"username\" required autofocus>\
             <label for=\"password\">Password</label>\
             <input id=\"password\" type=\"password\" name=\"password\" autocomplete=\"current-password\" required>\
             <div class=\"buttons\"><button class=\"primary\" type=\"submit\">Sign in</button></div></form>",
            app_header(app, "wants to access your Inlet workspace"),
            esc(app.name),
            esc(email),
        ),
    )
}

/// Human descriptions of the scopes.
fn scope_text(scope: &str) -> (&'static str, &'static str) {
    match scope {
        "read:*" => (
            "Read your sources and records",
            "See sources, files, metadata and search results.",
        ),
        _ => (
            "Read and write your sources and records",
            "Create sources, run syncs, upload, change and delete files and records.",
        ),
    }
}

/// The consent page with approve and deny buttons.
pub fn consent(
    app: &AppView<'_>,
    email: &str,
    scopes: &[String],
    hidden_fields: &str,
    csrf: &str,
) -> String {
    let mut items = String::new();
    let mut seen = Vec::new();
    for s in scopes {
        let (title, text) = scope_text(s);
        if seen.contains(&title) {
            continue;
        }
        seen.push(title);
        let _ = write!(
            items,
            "<li><b>{}</b><span>{} <code>{}</code></span></li>",
            esc(title),
            esc(text),
            esc(s)
        );
    }
    let bottom = if app.bottom_description.is_empty() {
        String::new()
    } else {
        format!("<p class=\"fine\">{}</p>", esc(app.bottom_description))
    };
    page(
        "Authorize",
        &format!(
            "{}<p>{}</p><p><b>{}</b> is asking to:</p><ul class=\"scopes\">{items}</ul>\
             <form method=\"post\" action=\"/oauth/authorize\">{hidden_fields}\
             <input type=\"hidden\" name=\"step\" value=\"consent\">\
             <input type=\"hidden\" name=\"csrf_token\" value=\"{}\">\
             <div class=\"buttons\">\
             <button class=\"secondary\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button>\
             <button class=\"primary\" type=\"submit\" name=\"decision\" value=\"approve\">Allow access</button>\
             </div></form>{bottom}",
            app_header(app, &format!("Signed in as {email}")),
            esc(app.description),
            esc(app.name),
            esc(csrf),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_in_every_value() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let app = AppView {
            name: "<script>",
            description: "d",
            bottom_description: "<b>",
            logo_url: None,
        };
        let html = consent(&app, "a@b", &["default".into()], "", "\"csrf");
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;b&gt;"));
        assert!(html.contains("&quot;csrf"));
    }
}
