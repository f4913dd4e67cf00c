//! Inlet extractor for OpenDocument text (odt) (work in progress: registers nothing yet).
