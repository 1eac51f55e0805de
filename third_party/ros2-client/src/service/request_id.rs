//! Re-export owned request id (module path kept for DDS service code).
pub use crate::request_id::*;
