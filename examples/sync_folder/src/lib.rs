#![doc = include_str!("../README.md")]

pub mod api;
pub mod cli;
pub mod local;
pub mod plan;
pub mod run;
pub mod summary;
pub mod wire;
