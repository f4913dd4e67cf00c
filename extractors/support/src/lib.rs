#![doc = include_str!("../README.md")]

pub mod package;
pub mod words;
