//! OAuth2 clients, logos, codes, tokens and sessions.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::store::OAuthStore;
use inlet_core::{
    Error, Result, WorkspaceId,
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session},
    time::{self},
};
use uuid::Uuid;

#[async_trait]
impl OAuthStore for MemoryStore {
    async fn create_client(&self, client: &OAuthClient) -> Result<()> {
        let mut st = self.state.lock();
        if st.clients.iter().any(|c| c.id == client.id) {
            return Err(Error::conflict(format!("client {} exists", client.id)));
        }
        st.clients.push(client.clone());
        Ok(())
    }

    async fn client(&self, id: Uuid) -> Result<Option<OAuthClient>> {
        Ok(self
            .state
            .lock()
            .clients
            .iter()
            .find(|c| c.id == id)
            .cloned())
    }

    async fn list_clients(&self, workspace_id: WorkspaceId) -> Result<Vec<OAuthClient>> {
        let st = self.state.lock();
        Ok(st
            .clients
            .iter()
            .filter(|c| c.workspace_id == workspace_id)
            .cloned()
            .collect())
    }

    async fn update_client(&self, client: &OAuthClient) -> Result<bool> {
        let mut st = self.state.lock();
        Ok(
            match st
                .clients
                .iter_mut()
                .find(|c| c.id == client.id && c.workspace_id == client.workspace_id)
            {
                Some(c) => {
                    let has_logo = c.has_logo;
                    *c = client.clone();
                    c.has_logo = has_logo;
                    true
                }
                None => false,
            },
        )
    }

    async fn delete_client(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool> {
        let mut st = self.state.lock();
        let before = st.clients.len();
        st.clients
            .retain(|c| !(c.id == id && c.workspace_id == workspace_id));
        if st.clients.len() == before {
            return Ok(false);
        }
        st.logos.remove(&id);
        st.codes.retain(|_, (c, _)| c.client_id != id);
        st.oauth_tokens.retain(|_, t| t.client_id != id);
        Ok(true)
    }

    async fn set_client_logo(
        &self,
        workspace_id: WorkspaceId,
        id: Uuid,
        logo: &Logo,
    ) -> Result<bool> {
        let mut st = self.state.lock();
        let Some(c) = st
            .clients
            .iter_mut()
            .find(|c| c.id == id && c.workspace_id == workspace_id)
        else {
            return Ok(false);
        };
        c.has_logo = true;
        st.logos.insert(id, logo.clone());
        Ok(true)
    }

    async fn client_logo(&self, id: Uuid) -> Result<Option<Logo>> {
        Ok(self.state.lock().logos.get(&id).cloned())
    }

    async fn save_code(&self, code: &AuthCode) -> Result<()> {
        let mut st = self.state.lock();
        let now = time::now();
        st.codes.retain(|_, (c, _)| c.expires_at > now);
        st.codes
            .insert(code.code_hash.clone(), (code.clone(), false));
        Ok(())
    }

    async fn redeem_code(&self, code_hash: &str) -> Result<Redemption> {
        let mut st = self.state.lock();
        Ok(match st.codes.get_mut(code_hash) {
            Some((code, used)) if *used => Redemption::Replayed(code.clone()),
            Some((code, used)) => {
                *used = true;
                Redemption::Redeemed(code.clone())
            }
            None => Redemption::Unknown,
        })
    }

    async fn save_token(&self, token: &OAuthToken) -> Result<()> {
        let mut st = self.state.lock();
        if !st.clients.iter().any(|c| c.id == token.client_id) {
            return Err(Error::not_found(format!(
                "client {} not found",
                token.client_id
            )));
        }
        let now = time::now();
        st.oauth_tokens
            .retain(|_, t| t.expires_at.is_none_or(|at| at > now));
        st.oauth_tokens
            .insert(token.token_hash.clone(), token.clone());
        Ok(())
    }

    async fn token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        Ok(self.state.lock().oauth_tokens.get(token_hash).cloned())
    }

    async fn revoke_token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        Ok(self.state.lock().oauth_tokens.remove(token_hash))
    }

    async fn revoke_grant(&self, grant_id: Uuid) -> Result<u64> {
        let mut st = self.state.lock();
        let before = st.oauth_tokens.len();
        st.oauth_tokens.retain(|_, t| t.grant_id != grant_id);
        Ok((before - st.oauth_tokens.len()) as u64)
    }

    async fn save_session(&self, session: &Session) -> Result<()> {
        let mut st = self.state.lock();
        let now = time::now();
        st.sessions.retain(|_, s| s.expires_at > now);
        st.sessions.insert(session.id_hash.clone(), session.clone());
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> Result<Option<Session>> {
        Ok(self.state.lock().sessions.get(id_hash).cloned())
    }

    async fn delete_session(&self, id_hash: &str) -> Result<()> {
        self.state.lock().sessions.remove(id_hash);
        Ok(())
    }
}
