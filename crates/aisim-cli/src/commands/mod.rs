//! One module per subcommand.

pub mod cache_lab;
pub mod calibrate;
pub mod compare;
pub mod fleet;
pub mod gen_trace;
pub mod measured;
pub mod profiles;
pub mod replay;
pub mod saturate;
pub mod serve;
pub mod sweep;
mod synthetic;
pub mod validate;
