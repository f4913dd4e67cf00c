//! Inlet extractor for Rich Text Format (work in progress: registers nothing yet).
