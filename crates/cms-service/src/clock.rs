//! Time, behind a trait so a host application (or a test) can run the service at any moment.

use std::sync::atomic::{AtomicI64, Ordering};

use cms_core::Timestamp;

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Timestamp;
}

/// The real clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        chrono::Utc::now().into()
    }
}

/// A clock that reads the system time plus an offset that can be moved forward, e.g. to see an
/// API key expire without waiting days.
#[derive(Default)]
pub struct OffsetClock {
    offset_ms: AtomicI64,
}

impl OffsetClock {
    pub fn advance_millis(&self, ms: i64) {
        self.offset_ms.fetch_add(ms, Ordering::SeqCst);
    }

    pub fn advance_days(&self, days: i64) {
        self.offset_ms
            .fetch_add(days * 86_400_000, Ordering::SeqCst);
    }
}

impl Clock for OffsetClock {
    fn now(&self) -> Timestamp {
        SystemClock
            .now()
            .plus_millis(self.offset_ms.load(Ordering::SeqCst))
    }
}
