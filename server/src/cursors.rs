//! Change-feed cursors sealed (AES-256-GCM, `ring`): a cursor names a position in the write
//! log every workspace shares, so in the clear it would tell a consumer how much the other
//! workspaces write. Sealed under the deployment's key (`Accounts::deployment_key`, the same on
//! every replica), with the workspace as associated data (another workspace's cursor does not
//! open). The nonce is derived from the workspace and the cursor (an HMAC, as SIV modes do), so
//! one position always gives one cursor (a consumer may compare them) and two different
//! cursors never share a nonce.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use inlet_core::{Error, Result, WorkspaceId, changes::Cursor, store::Accounts};
use rand::RngCore;
use ring::{
    aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey},
    hmac,
};

/// The deployment key's name.
const KEY_NAME: &str = "change-feed-cursors";
/// What a sealed cursor starts with.
const PREFIX: &str = "e1.";

/// The keys change-feed cursors are sealed with: the cipher's, and the one nonces are derived
/// with (both derived from the deployment key).
pub struct CursorKey {
    cipher: LessSafeKey,
    nonces: hmac::Key,
}

impl CursorKey {
    /// The deployment's key, made (32 random bytes) and stored on first use.
    pub async fn load(accounts: &dyn Accounts) -> Result<Self> {
        let mut candidate = [0u8; 32];
        rand::rng().fill_bytes(&mut candidate);
        let stored = accounts
            .deployment_key(KEY_NAME, &hex::encode(candidate))
            .await?;
        let bytes = hex::decode(stored.trim())
            .ok()
            .filter(|b| b.len() == 32)
            .ok_or_else(|| Error::backend(std::io::Error::other("the cursor key is damaged")))?;
        Self::from_secret(&bytes)
    }

    fn from_secret(secret: &[u8]) -> Result<Self> {
        let root = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let derive = |label: &[u8]| hmac::sign(&root, label);
        let cipher = UnboundKey::new(&AES_256_GCM, derive(b"cipher").as_ref())
            .map_err(|_| Error::backend(std::io::Error::other("the cursor key is unusable")))?;
        Ok(Self {
            cipher: LessSafeKey::new(cipher),
            nonces: hmac::Key::new(hmac::HMAC_SHA256, derive(b"nonce").as_ref()),
        })
    }

    /// `cursor` sealed for `workspace`.
    pub fn seal(&self, workspace: WorkspaceId, cursor: &Cursor) -> Result<String> {
        let mut data = cursor.encode().into_bytes();
        let mut context = hmac::Context::with_key(&self.nonces);
        context.update(workspace.as_bytes());
        context.update(&data);
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&context.sign().as_ref()[..NONCE_LEN]);
        self.cipher
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(workspace.as_bytes()),
                &mut data,
            )
            .map_err(|_| Error::backend(std::io::Error::other("sealing a cursor failed")))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(out)))
    }

    /// The cursor `text` names, for `workspace`. Cursors given in the clear before they were
    /// sealed are still read (a consumer keeps its cursor across an upgrade).
    pub fn open(&self, workspace: WorkspaceId, text: &str) -> Result<Cursor> {
        let bad = || Error::invalid("cursor is not one this feed returned");
        let Some(sealed) = text.strip_prefix(PREFIX) else {
            return Cursor::parse(text);
        };
        let bytes = URL_SAFE_NO_PAD.decode(sealed).map_err(|_| bad())?;
        if bytes.len() < NONCE_LEN {
            return Err(bad());
        }
        let (nonce, data) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| bad())?;
        let mut data = data.to_vec();
        let plain = self
            .cipher
            .open_in_place(nonce, Aad::from(workspace.as_bytes()), &mut data)
            .map_err(|_| bad())?;
        Cursor::parse(std::str::from_utf8(plain).map_err(|_| bad())?)
    }
}

#[cfg(test)]
mod tests {
    use inlet_core::changes::Cursor;
    use uuid::Uuid;

    use super::*;

    fn key() -> CursorKey {
        CursorKey::from_secret(&[7u8; 32]).expect("key")
    }

    #[test]
    fn cursors_are_sealed_per_workspace_and_hide_positions() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let key = key();
        let cursor = Cursor::Log { after: 123_456 };
        let sealed = key.seal(a, &cursor).expect("seal");
        assert!(
            sealed.starts_with(PREFIX) && !sealed.contains("123456"),
            "{sealed}"
        );
        assert_eq!(
            sealed,
            key.seal(a, &cursor).expect("seal"),
            "one position, one cursor"
        );
        let next = key.seal(a, &Cursor::Log { after: 123_457 }).expect("seal");
        assert_ne!(sealed[..20], next[..20], "another position, another nonce");
        assert_eq!(key.open(a, &sealed).expect("open"), cursor);
        assert!(
            matches!(key.open(b, &sealed), Err(Error::Invalid(_))),
            "another workspace's"
        );
        let mut forged = sealed.clone();
        forged.replace_range(10..11, if &sealed[10..11] == "A" { "B" } else { "A" });
        assert!(matches!(key.open(a, &forged), Err(Error::Invalid(_))));
        // A cursor from before sealing still reads.
        assert_eq!(
            key.open(a, "c42").expect("legacy"),
            Cursor::Log { after: 42 }
        );
    }
}
