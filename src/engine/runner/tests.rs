//! The run's order drawn at random, and the gate that keeps `jobs` trials at once.

use super::*;

#[test]
fn a_shuffled_order_is_a_permutation_drawn_anew_each_time() {
    let first = shuffled(64).unwrap();
    let mut sorted = first.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..64).collect::<Vec<_>>());
    // Two orders of 64 agree by chance once in 64! draws: a seed that
    // repeats (a fixed one, or a clock read twice in one tick) shows.
    let draws: Vec<Vec<usize>> = (0..8).map(|_| shuffled(64).unwrap()).collect();
    assert!(draws.iter().all(|d| *d != first), "{first:?}");
    assert_ne!(first, sorted, "not shuffled at all");
}

#[test]
fn a_trial_keeps_its_job_however_long_it_runs_unless_it_sleeps() {
    let watch = Watch::default();
    let working = Working::new(1);
    let first = working.enter(&watch);
    let second_started = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let _second = working.enter(&watch);
            second_started.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(!second_started.load(Ordering::SeqCst));
        drop(first);
    });
    assert!(second_started.load(Ordering::SeqCst));
    assert_eq!(*working.running.lock().unwrap(), 0);
}
