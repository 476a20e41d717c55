//! Numeric flags of every subcommand: a negative value is a value, not an
//! unknown flag, so it reaches the flag's own check (`--workers -1` is
//! "invalid value '-1' for '--workers': `-1` is negative: a count is expected",
//! not clap's "unexpected argument" with a misleading tip).

use std::any::TypeId;

use clap::builder::ValueParser;
use clap::{Arg, Command};

/// `cmd` and all its subcommands with negative values allowed on every flag
/// that takes a value, and one clear parser for every unsigned integer flag.
/// That parser replaces the flag's own, so a range given to clap
/// (`value_parser!(u32).range(1..)`) would be lost: check ranges where the
/// value is used, as the specs do.
pub fn with_number_checks(cmd: Command) -> Command {
    cmd.mut_args(number_checks)
        .mut_subcommands(with_number_checks)
}

fn number_checks(arg: Arg) -> Arg {
    if !arg.get_action().takes_values() {
        return arg;
    }
    let id = arg.get_value_parser().type_id();
    let arg = arg.allow_negative_numbers(true);
    macro_rules! whole_parsers {
        ($($t:ty),*) => {
            $( if id == TypeId::of::<$t>() { return arg.value_parser(ValueParser::new(whole::<$t>)); } )*
        };
    }
    whole_parsers!(u8, u16, u32, u64, usize);
    // A float's value may start with a hyphen (`-inf`, `-1e3`): it reaches
    // the flag's own check, which names the flag, never clap's "unexpected
    // argument".
    if id == TypeId::of::<f64>() {
        return arg.allow_hyphen_values(true);
    }
    arg
}

use aisim_lab::jobs::count::whole;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_u32_parses_and_nothing_outside_does(v in any::<i64>()) {
            let parsed = whole::<u32>(&v.to_string());
            match u32::try_from(v) {
                Ok(n) => prop_assert_eq!(parsed, Ok(n)),
                Err(_) if v < 0 => prop_assert_eq!(parsed.unwrap_err(), format!("`{v}` is negative: a count is expected")),
                Err(_) => prop_assert_eq!(parsed.unwrap_err(), format!("`{v}` is out of range (at most 4294967295)")),
            }
        }

        #[test]
        fn every_u64_round_trips(v in any::<u64>()) {
            prop_assert_eq!(whole::<u64>(&v.to_string()), Ok(v));
        }

        #[test]
        fn float_forms_of_whole_numbers_read_as_in_a_trace(v in 0u32..1_000_000) {
            prop_assert_eq!(whole::<u32>(&format!("{v}.0")), Ok(v));
            prop_assert_eq!(whole::<u32>(&format!("{v}e0")), Ok(v));
            prop_assert_eq!(whole::<u32>(&format!("{v}00e-2")), Ok(v));
        }
    }

    #[test]
    fn whole_numbers_name_what_is_wrong() {
        assert_eq!(whole::<u32>("7"), Ok(7));
        assert_eq!(whole::<u32>("0"), Ok(0));
        assert_eq!(whole::<u8>("255"), Ok(255));
        assert_eq!(whole::<u64>("1e6"), Ok(1_000_000));
        assert_eq!(
            whole::<u32>("-1").unwrap_err(),
            "`-1` is negative: a count is expected"
        );
        assert_eq!(
            whole::<u8>("256").unwrap_err(),
            "`256` is out of range (at most 255)"
        );
        assert_eq!(
            whole::<u64>("99999999999999999999").unwrap_err(),
            "`99999999999999999999` is out of range (at most 18446744073709551615)"
        );
        assert_eq!(
            whole::<u32>("1e300").unwrap_err(),
            "`1e300` is out of range (at most 4294967295)"
        );
        assert_eq!(
            whole::<u32>("1.5").unwrap_err(),
            "`1.5` is not a whole number"
        );
        assert!(whole::<u32>("nan").unwrap_err().contains("`nan`"));
        assert!(whole::<u32>("").is_err());
    }
}
