//! The storage contract, one small trait per concept; a backend implements each in a module of
//! its own. [`RecordStore`] (sources, syncs, records, folders, groups, the write log, jobs),
//! [`TokenStore`] (accounts, OAuth state, rate limits) and [`crate::webhook::WebhookStore`] name the
//! sets the server holds; every type implementing the parts implements them. What is the same
//! on every store is built here on the [`Documents`] primitive ([`Folders`], [`Groups`],
//! [`Accounts`], [`OAuthStore`], [`Jobs`], [`RateLimits`], the webhook registrations): a
//! backend implements [`Documents`], [`Sources`], [`Syncs`], [`Records`], [`WriteLog`] and
//! [`crate::webhook::Deliveries`] (docs/contributors.md counts the methods) and gets those.

pub mod accounts;
pub mod deletion;
pub mod documents;
pub mod folders;
pub mod groups;
pub mod jobs;
pub mod log;
pub mod oauth;
pub mod rate_limits;
pub mod records;
pub mod sources;
pub mod syncs;
pub mod webhooks;

pub use accounts::Accounts;
pub use documents::Documents;
pub use folders::Folders;
pub use groups::Groups;
pub use jobs::Jobs;
pub use log::WriteLog;
pub use oauth::OAuthStore;
pub use rate_limits::RateLimits;
pub use records::Records;
pub use sources::Sources;
pub use syncs::Syncs;

/// Every store trait, for calling store methods on a concrete store
/// (`use inlet_core::store::prelude::*;`); through `dyn RecordStore` or `dyn TokenStore` they
/// need no import.
pub mod prelude {
    pub use super::{
        Accounts, Documents, Folders, Groups, Jobs, OAuthStore, RateLimits, RecordStore, Records,
        Sources, Syncs, TokenStore, WriteLog,
    };
}

/// Everything a store of sources, syncs, records, folders and groups provides, with its write
/// log and the background jobs that work on its records.
pub trait RecordStore:
    Documents + Sources + Syncs + Records + Folders + Groups + WriteLog + Jobs
{
}

impl<T: Documents + Sources + Syncs + Records + Folders + Groups + WriteLog + Jobs + ?Sized>
    RecordStore for T
{
}

/// Everything a store of accounts, OAuth state and rate limits provides.
pub trait TokenStore: Documents + Accounts + OAuthStore + RateLimits {}

impl<T: Documents + Accounts + OAuthStore + RateLimits + ?Sized> TokenStore for T {}
