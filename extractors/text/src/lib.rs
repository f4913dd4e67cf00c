#![doc = include_str!("../README.md")]

mod decode;
mod delimited;
mod html;
mod json;
mod markdown;
mod markup;
mod plain;
mod tags;
mod words;
mod xml;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod limits_tests;

#[cfg(test)]
use inlet_extract_testkit as testutil;
