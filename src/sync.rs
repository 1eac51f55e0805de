//! Locking that survives a panicked holder: node state is replaced whole (a map, a cloud, a
//! graph), so a guard poisoned mid-task still holds a consistent value, and a node must keep
//! serving rather than panic in turn.

use std::sync::{Mutex, MutexGuard};

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
