//! The limit on anonymous reads (`delivery.publicReadsPerMinute`, CONTRACT.md section 15):
//! requests acting as an organization's `public` role, counted per client address in fixed
//! one-minute windows.
//!
//! In memory, unlike the database counters of `rate_limit`: public reads are the hottest path
//! of a website's traffic and must cost no more than a keyed read, so no read may write to the
//! database. The price is that each instance counts on its own (a limit per address and
//! instance); behind a load balancer the effective limit is the configured one times the
//! number of instances. The table is bounded: windows that ended are swept out, and when it
//! is still full, addresses it does not hold yet are refused until windows end (it fills only
//! under a flood from that many addresses, when refusing is what protects the service).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use crate::error::{Error, Result};

/// The window every count is kept in.
const WINDOW_MS: i64 = 60_000;

/// The most addresses counted at once (a few tens of bytes each).
pub(crate) const MAX_ADDRESSES: usize = 200_000;

/// Who is counted: an IPv4 address as is, an IPv6 address by its /64 prefix (the block one
/// subscriber usually holds, as the database limits do), or one shared count for requests
/// whose address the door does not know (a router driven without connection information).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Client {
    V4(u32),
    V6Prefix(u64),
    Unknown,
}

impl Client {
    fn of(address: Option<IpAddr>) -> Client {
        match address.map(|a| a.to_canonical()) {
            Some(IpAddr::V4(v4)) => Client::V4(u32::from(v4)),
            Some(IpAddr::V6(v6)) => Client::V6Prefix((u128::from(v6) >> 64) as u64),
            None => Client::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started_at: i64,
    hits: u32,
}

/// Fixed-window counters of anonymous reads per client.
#[derive(Debug)]
pub(crate) struct PublicReadLimiter {
    /// Reads per window and client; 0 turns the limit off.
    per_minute: u32,
    capacity: usize,
    windows: Mutex<HashMap<Client, Window>>,
}

impl PublicReadLimiter {
    pub(crate) fn new(per_minute: u32) -> Self {
        PublicReadLimiter::with_capacity(per_minute, MAX_ADDRESSES)
    }

    fn with_capacity(per_minute: u32, capacity: usize) -> Self {
        PublicReadLimiter {
            per_minute,
            capacity,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one anonymous read from `address` at `now` (Unix milliseconds); past the limit
    /// it is refused with [`Error::TooManyRequests`] and the seconds until the window ends.
    /// Refused reads count too, so hammering does not reopen the window early.
    pub(crate) fn hit(&self, address: Option<IpAddr>, now: i64) -> Result<()> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let client = Client::of(address);
        // A poisoned lock only means another request panicked mid-count: the counts are still
        // counts, so keep limiting with them.
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if !windows.contains_key(&client) && windows.len() >= self.capacity {
            windows.retain(|_, w| now - w.started_at < WINDOW_MS);
            if windows.len() >= self.capacity {
                let oldest = windows.values().map(|w| w.started_at).min().unwrap_or(now);
                return Err(too_many(oldest + WINDOW_MS - now));
            }
        }
        let window = windows.entry(client).or_insert(Window {
            started_at: now,
            hits: 0,
        });
        if now - window.started_at >= WINDOW_MS {
            *window = Window {
                started_at: now,
                hits: 0,
            };
        }
        window.hits = window.hits.saturating_add(1);
        if window.hits > self.per_minute {
            return Err(too_many(window.started_at + WINDOW_MS - now));
        }
        Ok(())
    }
}

/// The refusal, with the wait rounded up to whole seconds (at least one).
fn too_many(wait_ms: i64) -> Error {
    let secs = (wait_ms.max(0) + 999) / 1000;
    Error::TooManyRequests {
        retry_after_secs: secs.max(1) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    fn retry_after(r: Result<()>) -> u64 {
        match r {
            Err(Error::TooManyRequests { retry_after_secs }) => retry_after_secs,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn the_read_past_the_limit_waits_for_the_window() {
        let limiter = PublicReadLimiter::new(3);
        for _ in 0..3 {
            limiter.hit(ip("192.0.2.1"), 1_000).unwrap();
        }
        assert_eq!(retry_after(limiter.hit(ip("192.0.2.1"), 1_000)), 60);
        assert_eq!(retry_after(limiter.hit(ip("192.0.2.1"), 30_500)), 31);
        // Another address has its own count; the window's end reopens the first.
        limiter.hit(ip("192.0.2.2"), 30_500).unwrap();
        limiter.hit(ip("192.0.2.1"), 61_000).unwrap();
    }

    #[test]
    fn ipv6_counts_by_its_64_prefix_and_ipv4_mapped_as_ipv4() {
        let limiter = PublicReadLimiter::new(1);
        limiter.hit(ip("2001:db8:1:2::1"), 0).unwrap();
        assert!(limiter.hit(ip("2001:db8:1:2:ffff::9"), 0).is_err());
        limiter.hit(ip("2001:db8:1:3::1"), 0).unwrap();
        limiter.hit(ip("192.0.2.7"), 0).unwrap();
        assert!(limiter.hit(ip("::ffff:192.0.2.7"), 0).is_err());
    }

    #[test]
    fn zero_turns_the_limit_off() {
        let limiter = PublicReadLimiter::new(0);
        for _ in 0..1_000 {
            limiter.hit(None, 0).unwrap();
        }
    }

    #[test]
    fn the_table_is_bounded_and_sweeps_ended_windows() {
        let limiter = PublicReadLimiter::with_capacity(10, 2);
        limiter.hit(ip("192.0.2.1"), 0).unwrap();
        limiter.hit(ip("192.0.2.2"), 10_000).unwrap();
        // Full: a third address waits until the oldest window ends; known ones still count.
        assert_eq!(retry_after(limiter.hit(ip("192.0.2.3"), 20_000)), 40);
        limiter.hit(ip("192.0.2.2"), 20_000).unwrap();
        // Once the first window ended it is swept out and the newcomer is counted.
        limiter.hit(ip("192.0.2.3"), 60_000).unwrap();
        assert_eq!(limiter.windows.lock().unwrap().len(), 2);
    }
}
