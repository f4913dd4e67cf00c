//! Inlet extractor for legacy Word binary (.doc) (work in progress: registers nothing yet).
