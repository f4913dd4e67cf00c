//! Inlet extractor for EPUB (work in progress: registers nothing yet).
