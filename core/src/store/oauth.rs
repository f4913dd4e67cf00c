//! OAuth2 clients and their logos, authorization codes, tokens and login sessions, kept as
//! documents ([`super::Documents`]): this module implements [`OAuthStore`] once for every
//! store.
//!
//! Beside each code and token, index documents list it under its client, its workspace (and a
//! token under its grant), so deleting a client, switching a workspace's OAuth off or revoking
//! a grant finds them; codes, expiring tokens and sessions are also listed by expiry time
//! first, so the expired ones are removed by reading only them. A token or code is written
//! only while its client's document is unchanged ([`DocWrite::check`]), and a client is
//! deleted before its tokens and codes are swept: none is left behind.

use async_trait::async_trait;
use base64::Engine;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::accounts::{WORKSPACES, workspace_named};
use super::documents::{
    ATTEMPTS, DocWrite, Documents, Expect, KeyRange, before, contended, get_as, scan_all, time_key,
};
use crate::{
    Error, Result, WorkspaceId,
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session},
    time::{self, Timestamp},
};

/// Storage of OAuth2 clients, codes, tokens and sessions.
#[async_trait]
pub trait OAuthStore: Send + Sync + 'static {
    /// Stores a new OAuth client.
    async fn create_client(&self, client: &OAuthClient) -> Result<()>;
    /// The client with this id, in any workspace (callers confine it).
    async fn client(&self, id: Uuid) -> Result<Option<OAuthClient>>;
    /// A workspace's clients, oldest first.
    async fn list_clients(&self, workspace_id: WorkspaceId) -> Result<Vec<OAuthClient>>;
    /// Replaces a client's fields but `has_logo` (matched by id and workspace); false when
    /// absent.
    async fn update_client(&self, client: &OAuthClient) -> Result<bool>;
    /// Deletes a client with its logo and every code and token issued to it; false when absent.
    async fn delete_client(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool>;
    /// Stores a client's logo (and sets `has_logo`); false when the client is absent.
    async fn set_client_logo(
        &self,
        workspace_id: WorkspaceId,
        id: Uuid,
        logo: &Logo,
    ) -> Result<bool>;
    /// A client's logo.
    async fn client_logo(&self, id: Uuid) -> Result<Option<Logo>>;
    /// Stores an authorization code (and forgets expired ones); [`crate::Error::NotFound`]
    /// when its client no longer exists.
    async fn save_code(&self, code: &AuthCode) -> Result<()>;
    /// Redeems a code: the first call gets it, later calls learn it was replayed. Atomic.
    async fn redeem_code(&self, code_hash: &str) -> Result<Redemption>;
    /// Stores an issued token (and forgets expired ones); [`crate::Error::NotFound`] when its
    /// client no longer exists.
    async fn save_token(&self, token: &OAuthToken) -> Result<()>;
    /// The token with this hash, unless revoked (expiry is the caller's to check).
    async fn token(&self, token_hash: &str) -> Result<Option<OAuthToken>>;
    /// Revokes one token; returns it if it existed.
    async fn revoke_token(&self, token_hash: &str) -> Result<Option<OAuthToken>>;
    /// Revokes every token of a grant; returns how many.
    async fn revoke_grant(&self, grant_id: Uuid) -> Result<u64>;
    /// Stores a login session (and forgets expired ones).
    async fn save_session(&self, session: &Session) -> Result<()>;
    /// The session with this id hash (expiry is the caller's to check).
    async fn session(&self, id_hash: &str) -> Result<Option<Session>>;
    /// Ends a session.
    async fn delete_session(&self, id_hash: &str) -> Result<()>;
    /// Switches OAuth on or off for a workspace; false when there is no such workspace.
    /// Switching it off also revokes every OAuth token and unused code of the workspace's
    /// clients: switching it on again revives none of them.
    async fn set_oauth_enabled(&self, name: &str, enabled: bool) -> Result<bool>;
}

/// Clients by id.
pub const CLIENTS: &str = "oauth_clients";
/// A workspace's clients, oldest first: `workspace/created/id`.
pub const WORKSPACE_CLIENTS: &str = "oauth_workspace_clients";
/// Logos by client id.
pub const LOGOS: &str = "oauth_logos";
/// Codes by hash.
pub const CODES: &str = "oauth_codes";
/// Tokens by hash.
pub const TOKENS: &str = "oauth_tokens";
/// Sessions by id hash.
pub const SESSIONS: &str = "oauth_sessions";
/// Codes and tokens by owner: `client/<client>/<kind>/<hash>`, `workspace/<ws>/<kind>/<hash>`
/// and `grant/<grant>/token/<hash>`.
pub const OWNED: &str = "oauth_owned";
/// Codes, expiring tokens and sessions by expiry: `<expiry>/<kind>/<hash>`.
pub const EXPIRY: &str = "oauth_expiry";

/// Expired documents removed per write.
const PURGE_PAGE: usize = 200;

/// A code as stored: the code and whether it was redeemed.
#[derive(Debug, Serialize, Deserialize)]
pub struct CodeDoc {
    /// The code as issued.
    pub code: AuthCode,
    /// Whether it was redeemed.
    pub used: bool,
}

/// A logo as stored: the bytes in base64.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogoDoc {
    /// [`Logo::content_type`].
    pub content_type: String,
    /// [`Logo::bytes`], base64.
    pub data: String,
}

fn empty() -> serde_json::Value {
    serde_json::Value::Null
}

fn owned(kind: &str, what: &str, owner: impl ToString, hash: &str) -> String {
    format!("{kind}/{}/{what}/{hash}", owner.to_string())
}

fn expiry_key(at: &Timestamp, what: &str, hash: &str) -> String {
    format!("{}/{what}/{hash}", time_key(at))
}

/// The writes that store a new client with its place in its workspace's list.
pub fn client_writes(c: &OAuthClient) -> Result<Vec<DocWrite>> {
    Ok(vec![
        DocWrite::put(CLIENTS, c.id.to_string(), c, Expect::Absent)?,
        DocWrite::put(WORKSPACE_CLIENTS, client_list_key(c), &empty(), Expect::Any)?,
    ])
}

fn client_list_key(c: &OAuthClient) -> String {
    format!("{}/{}/{}", c.workspace_id, time_key(&c.created_date), c.id)
}

/// The write that stores a logo.
pub fn logo_write(client_id: Uuid, logo: &Logo) -> Result<DocWrite> {
    let doc = LogoDoc {
        content_type: logo.content_type.clone(),
        data: base64::engine::general_purpose::STANDARD.encode(&logo.bytes),
    };
    DocWrite::put(LOGOS, client_id.to_string(), &doc, Expect::Any)
}

/// The writes that store a code (`used` as given) with its index entries.
pub fn code_writes(code: &AuthCode, used: bool) -> Result<Vec<DocWrite>> {
    let doc = CodeDoc {
        code: code.clone(),
        used,
    };
    let h = &code.code_hash;
    Ok(vec![
        DocWrite::put(CODES, h, &doc, Expect::Any)?,
        DocWrite::put(
            OWNED,
            owned("client", "code", code.client_id, h),
            &empty(),
            Expect::Any,
        )?,
        DocWrite::put(
            OWNED,
            owned("workspace", "code", code.workspace_id, h),
            &empty(),
            Expect::Any,
        )?,
        DocWrite::put(
            EXPIRY,
            expiry_key(&code.expires_at, "code", h),
            &empty(),
            Expect::Any,
        )?,
    ])
}

/// The writes that store a token with its index entries.
pub fn token_writes(t: &OAuthToken) -> Result<Vec<DocWrite>> {
    let h = &t.token_hash;
    let mut writes = vec![
        DocWrite::put(TOKENS, h, t, Expect::Any)?,
        DocWrite::put(
            OWNED,
            owned("client", "token", t.client_id, h),
            &empty(),
            Expect::Any,
        )?,
        DocWrite::put(
            OWNED,
            owned("workspace", "token", t.workspace_id, h),
            &empty(),
            Expect::Any,
        )?,
        DocWrite::put(
            OWNED,
            owned("grant", "token", t.grant_id, h),
            &empty(),
            Expect::Any,
        )?,
    ];
    if let Some(at) = &t.expires_at {
        writes.push(DocWrite::put(
            EXPIRY,
            expiry_key(at, "token", h),
            &empty(),
            Expect::Any,
        )?);
    }
    Ok(writes)
}

/// The writes that store a session with its expiry entry.
pub fn session_writes(s: &Session) -> Result<Vec<DocWrite>> {
    Ok(vec![
        DocWrite::put(SESSIONS, &s.id_hash, s, Expect::Any)?,
        DocWrite::put(
            EXPIRY,
            expiry_key(&s.expires_at, "session", &s.id_hash),
            &empty(),
            Expect::Any,
        )?,
    ])
}

fn code_deletes(code: &AuthCode) -> Vec<DocWrite> {
    let h = &code.code_hash;
    vec![
        DocWrite::delete(CODES, h, Expect::Any),
        DocWrite::delete(
            OWNED,
            owned("client", "code", code.client_id, h),
            Expect::Any,
        ),
        DocWrite::delete(
            OWNED,
            owned("workspace", "code", code.workspace_id, h),
            Expect::Any,
        ),
        DocWrite::delete(EXPIRY, expiry_key(&code.expires_at, "code", h), Expect::Any),
    ]
}

fn token_deletes(t: &OAuthToken) -> Vec<DocWrite> {
    let h = &t.token_hash;
    let mut writes = vec![
        DocWrite::delete(TOKENS, h, Expect::Any),
        DocWrite::delete(OWNED, owned("client", "token", t.client_id, h), Expect::Any),
        DocWrite::delete(
            OWNED,
            owned("workspace", "token", t.workspace_id, h),
            Expect::Any,
        ),
        DocWrite::delete(OWNED, owned("grant", "token", t.grant_id, h), Expect::Any),
    ];
    if let Some(at) = &t.expires_at {
        writes.push(DocWrite::delete(
            EXPIRY,
            expiry_key(at, "token", h),
            Expect::Any,
        ));
    }
    writes
}

fn session_deletes(s: &Session) -> Vec<DocWrite> {
    vec![
        DocWrite::delete(SESSIONS, &s.id_hash, Expect::Any),
        DocWrite::delete(
            EXPIRY,
            expiry_key(&s.expires_at, "session", &s.id_hash),
            Expect::Any,
        ),
    ]
}

/// Deletes the codes and tokens listed under `prefix` of [`OWNED`] (`client/<id>/`,
/// `workspace/<id>/`, `grant/<id>/`); answers how many tokens went.
async fn sweep<S: Documents + ?Sized>(store: &S, prefix: &str) -> Result<u64> {
    let mut tokens = 0;
    for entry in scan_all(
        store,
        OWNED,
        KeyRange {
            prefix,
            after: None,
        },
    )
    .await?
    {
        let rest = &entry.key[prefix.len()..];
        let Some((what, hash)) = rest.split_once('/') else {
            continue;
        };
        // Every batch that deletes a code or token deletes its own document first, so two
        // of them over one token lock its rows in one order. An index entry whose document is
        // gone goes alone.
        let writes = match what {
            "token" => match get_as::<_, OAuthToken>(store, TOKENS, hash).await? {
                Some((t, _)) => {
                    tokens += 1;
                    token_deletes(&t)
                }
                None => vec![DocWrite::delete(OWNED, entry.key.clone(), Expect::Any)],
            },
            _ => match get_as::<_, CodeDoc>(store, CODES, hash).await? {
                Some((c, _)) => code_deletes(&c.code),
                None => vec![DocWrite::delete(OWNED, entry.key.clone(), Expect::Any)],
            },
        };
        store.write_documents(&writes).await?;
    }
    Ok(tokens)
}

/// Revokes every OAuth token and unused code of a workspace ([`super::Accounts::set_oauth_enabled`]).
pub async fn revoke_workspace<S: Documents + ?Sized>(
    store: &S,
    workspace_id: WorkspaceId,
) -> Result<()> {
    sweep(store, &format!("workspace/{workspace_id}/")).await?;
    Ok(())
}

/// Removes codes, tokens and sessions whose expiry has passed, oldest first.
async fn forget_expired<S: Documents + ?Sized>(store: &S) -> Result<()> {
    let now = time_key(&time::now());
    let mut writes = Vec::new();
    for entry in before(store, EXPIRY, &now, PURGE_PAGE).await? {
        let mut parts = entry.key.splitn(3, '/');
        let (_, what, hash) = (
            parts.next(),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        // The document first, as every batch deleting one does; the entry alone when it is gone.
        let gone = || vec![DocWrite::delete(EXPIRY, entry.key.clone(), Expect::Any)];
        writes.extend(match what {
            "code" => match get_as::<_, CodeDoc>(store, CODES, hash).await? {
                Some((c, _)) => code_deletes(&c.code),
                None => gone(),
            },
            "token" => match get_as::<_, OAuthToken>(store, TOKENS, hash).await? {
                Some((t, _)) => token_deletes(&t),
                None => gone(),
            },
            _ => match get_as::<_, Session>(store, SESSIONS, hash).await? {
                Some((s, _)) => session_deletes(&s),
                None => gone(),
            },
        });
    }
    // One batch for the page.
    if !writes.is_empty() {
        store.write_documents(&writes).await?;
    }
    Ok(())
}

/// Writes `writes` (a code or token of `client_id` in `workspace_id`) while the client's and
/// the workspace's documents are unchanged: `NotFound` when the client is gone, `Forbidden`
/// when the workspace's OAuth is off. So no code or token is written after its client's
/// deletion or its workspace's switch-off, whose sweeps find every one written before.
async fn for_client<S: Documents + ?Sized>(
    store: &S,
    client_id: Uuid,
    workspace_id: WorkspaceId,
    writes: Vec<DocWrite>,
) -> Result<()> {
    for _ in 0..ATTEMPTS {
        let Some(client) = store.get_document(CLIENTS, &client_id.to_string()).await? else {
            return Err(Error::not_found(format!("client {client_id} not found")));
        };
        let Some((workspace, ws_revision)) =
            get_as::<_, crate::token::Workspace>(store, WORKSPACES, &workspace_id.to_string())
                .await?
        else {
            return Err(Error::not_found(format!(
                "workspace {workspace_id} not found"
            )));
        };
        if !workspace.oauth_enabled {
            return Err(Error::Forbidden(OAUTH_OFF.into()));
        }
        let mut batch = vec![
            DocWrite::check(
                CLIENTS,
                client_id.to_string(),
                Expect::Revision(client.revision),
            ),
            DocWrite::check(
                WORKSPACES,
                workspace_id.to_string(),
                Expect::Revision(ws_revision),
            ),
        ];
        batch.extend(writes.iter().cloned());
        if store.write_documents(&batch).await? {
            return Ok(());
        }
    }
    Err(Error::Unavailable(
        "the client is being changed; try again".into(),
    ))
}

/// Why a code or token is refused for a workspace whose OAuth is off.
pub const OAUTH_OFF: &str = "OAuth is disabled for this workspace";

/// Applies `change` to the client `id` of `workspace_id` and stores it; false when absent.
async fn change_client<S: Documents + ?Sized>(
    store: &S,
    workspace_id: WorkspaceId,
    id: Uuid,
    change: impl Fn(&mut OAuthClient) + Send + Sync,
    extra: Vec<DocWrite>,
) -> Result<bool> {
    for _ in 0..ATTEMPTS {
        let Some((mut c, revision)) =
            get_as::<_, OAuthClient>(store, CLIENTS, &id.to_string()).await?
        else {
            return Ok(false);
        };
        if c.workspace_id != workspace_id {
            return Ok(false);
        }
        change(&mut c);
        let mut batch = vec![DocWrite::put(
            CLIENTS,
            id.to_string(),
            &c,
            Expect::Revision(revision),
        )?];
        batch.extend(extra.iter().cloned());
        if store.write_documents(&batch).await? {
            return Ok(true);
        }
    }
    Err(Error::Unavailable(
        "the client is being changed; try again".into(),
    ))
}

#[async_trait]
impl<S: Documents + ?Sized> OAuthStore for S {
    async fn create_client(&self, client: &OAuthClient) -> Result<()> {
        if self.write_documents(&client_writes(client)?).await? {
            return Ok(());
        }
        Err(Error::conflict(format!("client {} exists", client.id)))
    }

    async fn client(&self, id: Uuid) -> Result<Option<OAuthClient>> {
        Ok(get_as(self, CLIENTS, &id.to_string())
            .await?
            .map(|(c, _)| c))
    }

    async fn list_clients(&self, workspace_id: WorkspaceId) -> Result<Vec<OAuthClient>> {
        let prefix = format!("{workspace_id}/");
        let mut out = Vec::new();
        for entry in scan_all(
            self,
            WORKSPACE_CLIENTS,
            KeyRange {
                prefix: &prefix,
                after: None,
            },
        )
        .await?
        {
            let id = entry.key.rsplit('/').next().unwrap_or_default();
            if let Some(c) = get_as::<_, OAuthClient>(self, CLIENTS, id).await? {
                out.push(c.0);
            }
        }
        Ok(out)
    }

    async fn update_client(&self, client: &OAuthClient) -> Result<bool> {
        let new = client.clone();
        change_client(
            self,
            client.workspace_id,
            client.id,
            move |c| {
                let has_logo = c.has_logo;
                *c = new.clone();
                c.has_logo = has_logo;
            },
            Vec::new(),
        )
        .await
    }

    async fn delete_client(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool> {
        for _ in 0..ATTEMPTS {
            let Some((client, revision)) =
                get_as::<_, OAuthClient>(self, CLIENTS, &id.to_string()).await?
            else {
                return Ok(false);
            };
            if client.workspace_id != workspace_id {
                return Ok(false);
            }
            let batch = [
                DocWrite::delete(CLIENTS, id.to_string(), Expect::Revision(revision)),
                DocWrite::delete(WORKSPACE_CLIENTS, client_list_key(&client), Expect::Any),
                DocWrite::delete(LOGOS, id.to_string(), Expect::Any),
            ];
            // Changed meanwhile: read it again.
            if self.write_documents(&batch).await? {
                // No code or token is written for a client once it is gone: sweep what was.
                sweep(self, &format!("client/{id}/")).await?;
                return Ok(true);
            }
        }
        Err(contended())
    }

    async fn set_client_logo(
        &self,
        workspace_id: WorkspaceId,
        id: Uuid,
        logo: &Logo,
    ) -> Result<bool> {
        change_client(
            self,
            workspace_id,
            id,
            |c| c.has_logo = true,
            vec![logo_write(id, logo)?],
        )
        .await
    }

    async fn client_logo(&self, id: Uuid) -> Result<Option<Logo>> {
        let Some((doc, _)) = get_as::<_, LogoDoc>(self, LOGOS, &id.to_string()).await? else {
            return Ok(None);
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(doc.data)
            .map_err(Error::backend)?;
        Ok(Some(Logo {
            content_type: doc.content_type,
            bytes,
        }))
    }

    async fn save_code(&self, code: &AuthCode) -> Result<()> {
        forget_expired(self).await?;
        for_client(
            self,
            code.client_id,
            code.workspace_id,
            code_writes(code, false)?,
        )
        .await
    }

    async fn redeem_code(&self, code_hash: &str) -> Result<Redemption> {
        for _ in 0..ATTEMPTS {
            let Some((doc, revision)) = get_as::<_, CodeDoc>(self, CODES, code_hash).await? else {
                return Ok(Redemption::Unknown);
            };
            if doc.used {
                return Ok(Redemption::Replayed(doc.code));
            }
            let used = CodeDoc {
                code: doc.code.clone(),
                used: true,
            };
            let write = DocWrite::put(CODES, code_hash, &used, Expect::Revision(revision))?;
            if self.write_documents(&[write]).await? {
                return Ok(Redemption::Redeemed(doc.code));
            }
        }
        Err(Error::Unavailable(
            "the code is being redeemed; try again".into(),
        ))
    }

    async fn save_token(&self, token: &OAuthToken) -> Result<()> {
        forget_expired(self).await?;
        for_client(
            self,
            token.client_id,
            token.workspace_id,
            token_writes(token)?,
        )
        .await
    }

    async fn token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        Ok(get_as(self, TOKENS, token_hash).await?.map(|(t, _)| t))
    }

    async fn revoke_token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        for _ in 0..ATTEMPTS {
            let Some((t, revision)) = get_as::<_, OAuthToken>(self, TOKENS, token_hash).await?
            else {
                return Ok(None);
            };
            let mut writes = token_deletes(&t);
            writes[0] = DocWrite::delete(TOKENS, token_hash, Expect::Revision(revision));
            if self.write_documents(&writes).await? {
                return Ok(Some(t));
            }
        }
        Err(Error::Unavailable(
            "the token is being changed; try again".into(),
        ))
    }

    async fn revoke_grant(&self, grant_id: Uuid) -> Result<u64> {
        sweep(self, &format!("grant/{grant_id}/")).await
    }

    async fn save_session(&self, session: &Session) -> Result<()> {
        forget_expired(self).await?;
        self.write_documents(&session_writes(session)?).await?;
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> Result<Option<Session>> {
        Ok(get_as(self, SESSIONS, id_hash).await?.map(|(s, _)| s))
    }

    async fn set_oauth_enabled(&self, name: &str, enabled: bool) -> Result<bool> {
        for _ in 0..ATTEMPTS {
            let Some((mut w, revision)) = workspace_named(self, name).await? else {
                return Ok(false);
            };
            if enabled && !w.oauth_enabled {
                // While it was off no code or token could be written ([`for_client`]): what
                // is listed under the workspace is left from a sweep cut short. It goes first.
                revoke_workspace(self, w.id).await?;
            }
            w.oauth_enabled = enabled;
            let write =
                DocWrite::put(WORKSPACES, w.id.to_string(), &w, Expect::Revision(revision))?;
            if self.write_documents(&[write]).await? {
                if !enabled {
                    // Every code and token written before the switch is listed under the
                    // workspace; none is written after it.
                    revoke_workspace(self, w.id).await?;
                }
                return Ok(true);
            }
        }
        Err(contended())
    }

    async fn delete_session(&self, id_hash: &str) -> Result<()> {
        if let Some((s, _)) = get_as::<_, Session>(self, SESSIONS, id_hash).await? {
            self.write_documents(&session_deletes(&s)).await?;
        }
        Ok(())
    }
}
