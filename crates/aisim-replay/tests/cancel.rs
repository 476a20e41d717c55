//! A caller's cancel flag (`aisim_core::cancel`, set on Ctrl-C by the
//! Python module) stops a replay between passes, as an input-side error.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use aisim_replay::policy::SpecComposition;
use aisim_replay::{ReplayError, ReplaySpec, Replayer};

#[test]
fn a_set_cancel_flag_stops_a_replay_and_none_lets_it_finish() {
    let replayer = Replayer::new(ReplaySpec::default(), SpecComposition).unwrap();
    let set = Some(Arc::new(AtomicBool::new(true)));
    let e = aisim_core::cancel::with_flag(set, || replayer.run()).unwrap_err();
    assert!(matches!(e, ReplayError::Cancelled), "{e}");
    assert!(!e.is_internal());
    let clear = Some(Arc::new(AtomicBool::new(false)));
    let done = aisim_core::cancel::with_flag(clear, || replayer.run()).unwrap();
    let figures = |r: &aisim_replay::report::ReplayReport| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("host"); // wall-clock times
        v
    };
    assert_eq!(
        figures(&done.report),
        figures(&replayer.run().unwrap().report)
    );
}
