//! What an OAuth2 client's registration may hold: the rules the client maintenance endpoints
//! check before anything is stored, and the logo types the consent page shows. The published
//! document states the same limits from these constants.

use inlet_core::{Error, Result, oauth};

/// Longest client name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest description or bottomDescription, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 4000;
/// Most redirect URIs per client.
pub const MAX_REDIRECT_URIS: usize = 20;
/// Longest redirect URI, in bytes.
pub const MAX_REDIRECT_URI_BYTES: usize = 2048;

/// A client's settings as an administrator saves them.
#[derive(Debug, Clone, Copy)]
pub struct ClientSettings<'a> {
    /// Shown on the consent page; required.
    pub name: &'a str,
    /// Shown above the consent buttons.
    pub description: &'a str,
    /// Shown below them.
    pub bottom_description: &'a str,
    /// Where codes may be sent (RFC 6749 3.1.2).
    pub redirect_uris: &'a [String],
    /// What the client may ask for.
    pub scopes: &'a [String],
}

fn check_text(field: &str, value: &str, max: usize, required: bool) -> Result<()> {
    if required && value.trim().is_empty() {
        return Err(Error::invalid(format!("{field} must not be empty")));
    }
    if value.chars().count() > max {
        return Err(Error::invalid(format!(
            "{field} is longer than {max} characters"
        )));
    }
    Ok(())
}

/// Checks a registration: text lengths, one to [`MAX_REDIRECT_URIS`] absolute `http` or
/// `https` redirect URIs without fragment, and at least one known scope.
pub fn check(settings: &ClientSettings<'_>) -> Result<()> {
    check_text("name", settings.name, MAX_NAME_CHARS, true)?;
    check_text(
        "description",
        settings.description,
        MAX_DESCRIPTION_CHARS,
        false,
    )?;
    check_text(
        "bottomDescription",
        settings.bottom_description,
        MAX_DESCRIPTION_CHARS,
        false,
    )?;
    if settings.redirect_uris.is_empty() {
        return Err(Error::invalid("redirectUris must name at least one URI"));
    }
    if settings.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(Error::invalid(format!(
            "at most {MAX_REDIRECT_URIS} redirectUris"
        )));
    }
    for uri in settings.redirect_uris {
        if uri.len() > MAX_REDIRECT_URI_BYTES {
            return Err(Error::invalid(format!(
                "redirect URI longer than {MAX_REDIRECT_URI_BYTES} bytes"
            )));
        }
        let parsed = url::Url::parse(uri).map_err(|e| {
            Error::invalid(format!("redirect URI '{uri}' is not an absolute URI: {e}"))
        })?;
        if parsed.fragment().is_some() {
            return Err(Error::invalid(format!(
                "redirect URI '{uri}' must not have a fragment (RFC 6749 3.1.2)"
            )));
        }
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::invalid(format!(
                "redirect URI scheme '{}' is not allowed: use http or https (a native app \
                 listens on a loopback address, RFC 8252)",
                parsed.scheme()
            )));
        }
    }
    if settings.scopes.is_empty() {
        return Err(Error::invalid("scopes must name at least one scope"));
    }
    if let Some(unknown) = oauth::unknown_scope(settings.scopes) {
        return Err(Error::invalid(format!(
            "unknown scope '{unknown}': use default, *:* or read:*"
        )));
    }
    Ok(())
}

/// The image type of `bytes` by its signature, if it is one the consent page shows.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_told_by_their_bytes() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(image_type(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(image_type(b"GIF89a..."), Some("image/gif"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type(b"<svg xmlns=...>"), None);
        assert_eq!(image_type(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(image_type(b""), None);
    }
}
