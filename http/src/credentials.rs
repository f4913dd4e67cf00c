//! Credentials: API-token and password hashing, new secrets, and the cache of verified API
//! tokens that spares the store a read per request.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use argon2::{
    Argon2,
    password_hash::{PasswordHasher, SaltString},
};
use inlet_core::{Error, token::User};
use parking_lot::Mutex;
use rand::{Rng, distr::Alphanumeric};
use sha2::{Digest, Sha256};

/// How long a verified API token is trusted without asking the store again. A token revoked on
/// another replica stops working there within this time; the replica that revokes forgets at once.
pub const CREDENTIAL_CACHE_TTL: Duration = Duration::from_secs(5);
/// Verified tokens remembered per process before the cache starts over.
const CREDENTIAL_CACHE_ENTRIES: usize = 10_000;

/// Verified API tokens (by hash) with the user they belong to, for [`CREDENTIAL_CACHE_TTL`].
/// Only successes are kept, so a wrong token always reaches the store.
#[derive(Debug, Default)]
pub struct CredentialCache {
    entries: Mutex<HashMap<String, (User, Instant)>>,
}

impl CredentialCache {
    /// The user a verified token (by hash) belongs to, while trusted.
    pub fn get(&self, hash: &str) -> Option<User> {
        let entries = self.entries.lock();
        entries
            .get(hash)
            .filter(|(_, at)| at.elapsed() < CREDENTIAL_CACHE_TTL)
            .map(|(u, _)| u.clone())
    }

    /// Remembers a verified token's user.
    pub fn put(&self, hash: String, user: User) {
        let mut entries = self.entries.lock();
        if entries.len() >= CREDENTIAL_CACHE_ENTRIES {
            entries.clear();
        }
        entries.insert(hash, (user, Instant::now()));
    }

    /// Forgets every cached credential (after a revocation on this replica).
    pub fn clear(&self) {
        self.entries.lock().clear();
    }
}

/// Lowercase hex SHA-256 of a secret, as API tokens are stored.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A new random secret (API tokens, client secrets, sessions, codes): 64 hex characters
/// (256 bits).
pub fn new_secret() -> String {
    hex::encode(rand::rng().random::<[u8; 32]>())
}

/// A new random password of 24 letters and digits.
pub fn new_password() -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(24)
        .map(char::from)
        .collect()
}

/// Whether `password` is the one `hash` (a PHC string) was made from. CPU work (argon2): call it
/// off the async workers.
pub fn password_matches(hash: &str, password: &str) -> bool {
    argon2::PasswordHash::new(hash).is_ok_and(|h| {
        argon2::PasswordVerifier::verify_password(&Argon2::default(), password.as_bytes(), &h)
            .is_ok()
    })
}

/// argon2id hash (PHC string) of a password.
pub fn hash_password(password: &str) -> Result<String, Error> {
    let salt = SaltString::encode_b64(&rand::rng().random::<[u8; 16]>())
        .map_err(|e| Error::invalid(format!("cannot make a salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::invalid(format!("cannot hash password: {e}")))
}
