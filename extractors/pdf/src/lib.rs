//! Inlet extractor for PDF (text layer) (work in progress: registers nothing yet).
