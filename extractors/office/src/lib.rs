#![doc = include_str!("../README.md")]

mod docx;
mod ooxml;
mod pptx;
mod xlsx;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
use inlet_extract_testkit as testutil;
