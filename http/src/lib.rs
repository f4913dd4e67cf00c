//! The HTTP edge that the API server and the authorization server share: errors as
//! `application/problem+json` ([`problem`]) and the hashing and caching of credentials
//! ([`credentials`]). Neither knows routes or handlers.

pub mod credentials;
pub mod problem;
