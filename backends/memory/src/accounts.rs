//! Workspaces, users and API tokens.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::store::Accounts;
use inlet_core::{
    Error, Result, WorkspaceId,
    token::{ApiToken, User, Workspace},
};
use uuid::Uuid;

#[async_trait]
impl Accounts for MemoryStore {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<()> {
        let mut st = self.state.lock();
        if st.workspaces.iter().any(|w| w.name == workspace.name) {
            return Err(Error::conflict(format!(
                "workspace '{}' exists",
                workspace.name
            )));
        }
        st.workspaces.push(workspace.clone());
        Ok(())
    }

    async fn workspace_by_name(&self, name: &str) -> Result<Option<Workspace>> {
        Ok(self
            .state
            .lock()
            .workspaces
            .iter()
            .find(|w| w.name == name)
            .cloned())
    }

    async fn create_user(&self, user: &User) -> Result<()> {
        let mut st = self.state.lock();
        if st
            .users
            .iter()
            .any(|u| u.email.eq_ignore_ascii_case(&user.email))
        {
            return Err(Error::conflict(format!("user '{}' exists", user.email)));
        }
        st.users.push(user.clone());
        Ok(())
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        Ok(self
            .state
            .lock()
            .users
            .iter()
            .find(|u| u.email.eq_ignore_ascii_case(email))
            .cloned())
    }

    async fn count_users(&self) -> Result<u64> {
        Ok(self.state.lock().users.len() as u64)
    }

    async fn add_api_token(&self, token: &ApiToken) -> Result<()> {
        let mut st = self.state.lock();
        if !st.users.iter().any(|u| u.id == token.user_id) {
            return Err(Error::not_found(format!(
                "user {} not found",
                token.user_id
            )));
        }
        st.tokens.push(token.clone());
        Ok(())
    }

    async fn user_by_token_hash(&self, token_hash: &str) -> Result<Option<User>> {
        let st = self.state.lock();
        Ok(st
            .tokens
            .iter()
            .find(|t| t.token_hash == token_hash)
            .and_then(|t| st.users.iter().find(|u| u.id == t.user_id))
            .cloned())
    }

    async fn workspace_by_id(&self, id: WorkspaceId) -> Result<Option<Workspace>> {
        let st = self.state.lock();
        Ok(st.workspaces.iter().find(|w| w.id == id).cloned())
    }

    async fn set_oauth_enabled(&self, name: &str, enabled: bool) -> Result<bool> {
        let mut st = self.state.lock();
        let Some(w) = st.workspaces.iter_mut().find(|w| w.name == name) else {
            return Ok(false);
        };
        w.oauth_enabled = enabled;
        let workspace = w.id;
        if !enabled {
            st.oauth_tokens.retain(|_, t| t.workspace_id != workspace);
            st.codes.retain(|_, (c, _)| c.workspace_id != workspace);
        }
        Ok(true)
    }

    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>> {
        Ok(self.state.lock().users.iter().find(|u| u.id == id).cloned())
    }

    async fn list_api_tokens(&self, user_id: Uuid) -> Result<Vec<ApiToken>> {
        let st = self.state.lock();
        Ok(st
            .tokens
            .iter()
            .filter(|t| t.user_id == user_id)
            .cloned()
            .collect())
    }

    async fn delete_api_token(&self, user_id: Uuid, token_id: Uuid) -> Result<bool> {
        let mut st = self.state.lock();
        let before = st.tokens.len();
        st.tokens
            .retain(|t| !(t.user_id == user_id && t.id == token_id));
        Ok(st.tokens.len() != before)
    }

    async fn deployment_key(&self, name: &str, candidate: &str) -> Result<String> {
        let mut st = self.state.lock();
        Ok(st
            .keys
            .entry(name.to_string())
            .or_insert_with(|| candidate.to_string())
            .clone())
    }

    async fn set_password_hash(&self, user_id: Uuid, password_hash: &str) -> Result<bool> {
        let mut st = self.state.lock();
        let Some(user) = st.users.iter_mut().find(|u| u.id == user_id) else {
            return Ok(false);
        };
        user.password_hash = password_hash.to_string();
        Ok(true)
    }
}
