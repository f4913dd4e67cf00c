#![doc = include_str!("../README.md")]

#[cfg(feature = "cells")]
pub mod cells;
pub mod package;
pub mod words;
