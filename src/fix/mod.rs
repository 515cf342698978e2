//! Fixes as byte-range edits on the original text, and their application.

pub mod apply;
pub mod dynamo_config;
pub mod edit;
pub mod text;
pub mod torch_api;

pub use edit::{Edit, Fix, Safety};
