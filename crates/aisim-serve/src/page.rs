//! The files the service serves as they are: the web page (no build step,
//! no external script or font) and the OpenAPI document.

/// The web page at `/`.
pub const PAGE: &str = include_str!("page.html");

/// The OpenAPI document at `/api/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");
