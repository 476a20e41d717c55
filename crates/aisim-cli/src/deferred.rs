//! `Deferred`: a subcommand's flags built only when the command line may
//! use them. Building every subcommand's flags took most of the
//! millisecond that parsing a command line cost, for the one subcommand
//! used.
//!
//! When the first argument names a subcommand (`only_build`), the other
//! subcommands' flags are left to clap's `Command::defer`, which builds them
//! if clap ever needs them (it does not: it parses the named subcommand
//! alone). Every other command line (`aisim --help`, `aisim help replay`, a
//! typo, a flag first) builds them all, as does a program that never calls
//! `only_build` (the tests). The named subcommand is built where and as it
//! always was, so its help, usage and errors are byte for byte the same.

use std::sync::OnceLock;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use crate::numbers;

/// The subcommand the command line names first, when `only_build` was told.
static NAMED: OnceLock<String> = OnceLock::new();

/// Builds only the flags of the subcommand `name` from now on (the caller
/// has checked that the first argument names it).
pub fn only_build(name: &str) {
    let _ = NAMED.set(name.to_string());
}

/// The flags `T`, deferred unless the command line may use them.
#[derive(Debug)]
pub struct Deferred<T>(pub T);

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Deferred)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

impl<T: Args> Args for Deferred<T> {
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }

    fn augment_args(cmd: Command) -> Command {
        if builds_now(&cmd) {
            T::augment_args(cmd)
        } else {
            cmd.defer(flags::<T>)
        }
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        if builds_now(&cmd) {
            T::augment_args_for_update(cmd)
        } else {
            cmd.defer(flags_for_update::<T>)
        }
    }
}

/// Whether `cmd`'s flags are built now: it is the named subcommand, or the
/// command line names none, or nobody said.
fn builds_now(cmd: &Command) -> bool {
    NAMED.get().is_none_or(|named| named == cmd.get_name())
}

/// `T`'s flags when clap builds them late: with the number checks that
/// every flag gets (`numbers::with_number_checks` could not reach them
/// before), and the subcommand's own description kept (`T`'s would
/// replace it). Not reached when the first argument names a subcommand.
fn flags<T: Args>(cmd: Command) -> Command {
    keep_about(cmd, T::augment_args)
}

fn flags_for_update<T: Args>(cmd: Command) -> Command {
    keep_about(cmd, T::augment_args_for_update)
}

fn keep_about(cmd: Command, augment: fn(Command) -> Command) -> Command {
    let (about, long_about) = (cmd.get_about().cloned(), cmd.get_long_about().cloned());
    let mut cmd = numbers::with_number_checks(augment(cmd));
    if let Some(about) = about {
        cmd = cmd.about(about);
    }
    if let Some(long_about) = long_about {
        cmd = cmd.long_about(long_about);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe's own description, which a subcommand's must win over.
    #[derive(Debug, clap::Parser)]
    struct Probe {
        /// A count.
        #[arg(long)]
        n: u32,
    }

    fn probe() -> Command {
        Command::new("probe")
            .about("The subcommand's own words.")
            .long_about("The subcommand's own words, at length.")
    }

    #[test]
    fn flags_built_late_keep_the_description_and_check_numbers() {
        let late = flags::<Probe>(probe());
        assert_eq!(
            late.get_about().map(ToString::to_string).as_deref(),
            Some("The subcommand's own words.")
        );
        assert_eq!(
            late.get_long_about().map(ToString::to_string).as_deref(),
            Some("The subcommand's own words, at length.")
        );
        assert!(late.get_arguments().any(|a| a.get_id() == "n"));
        let negative = late
            .clone()
            .try_get_matches_from(["probe", "--n", "-3"])
            .unwrap_err()
            .to_string();
        assert!(negative.contains("`-3` is negative"), "{negative}");
        let m = late.try_get_matches_from(["probe", "--n", "7"]).unwrap();
        assert_eq!(Probe::from_arg_matches(&m).unwrap().n, 7);
    }

    #[test]
    fn without_a_named_subcommand_every_flag_is_built_at_once() {
        // Nothing here calls `only_build`, so no test depends on its order.
        assert!(NAMED.get().is_none());
        let cmd = <Deferred<Probe> as Args>::augment_args(probe());
        assert!(cmd.get_arguments().any(|a| a.get_id() == "n"));
        let m = cmd.try_get_matches_from(["probe", "--n", "7"]).unwrap();
        assert_eq!(Deferred::<Probe>::from_arg_matches(&m).unwrap().0.n, 7);
    }
}
