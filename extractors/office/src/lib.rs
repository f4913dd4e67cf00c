//! Inlet extractor for Office Open XML: docx, pptx, xlsx (work in progress: registers nothing yet).
