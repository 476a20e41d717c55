//! One module per subcommand.

pub mod profiles;
