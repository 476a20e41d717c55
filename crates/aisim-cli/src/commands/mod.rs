//! One module per subcommand.

mod blame;
pub mod fleet;
pub mod gen_trace;
pub mod profiles;
pub mod replay;
mod synthetic;
