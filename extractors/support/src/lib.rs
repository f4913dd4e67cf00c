#![doc = include_str!("../README.md")]

#[cfg(feature = "cells")]
pub mod cells;
#[cfg(feature = "ole")]
pub mod metafile;
#[cfg(feature = "ole")]
pub mod ole;
pub mod package;
pub mod properties;
pub mod words;
