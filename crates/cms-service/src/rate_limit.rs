//! Rate limits on the routes that guess or spend on behalf of anyone (sign-in, sign-up,
//! password-reset requests, public plugin routes such as form submissions) and on the
//! assistant's turns (each one spends on the model backend): fixed windows counted in the database, so every instance on one PostgreSQL shares
//! one limit (CONTRACT.md section 3).
//!
//! Counters are keyed only on identifiers the door vouches for: the client address (the socket
//! peer, or a forwarded address from a trusted proxy, as the door decides) and the e-mail the
//! request names. Neither is stored in clear: the key holds an HMAC under the auth secret.

use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use cms_core::Email;

use crate::Inner;
use crate::error::{Error, Result};
use crate::secret::Purpose;

/// The limits and their window (`auth.rateLimit.*`). A limit of 0 turns that counter off.
#[derive(Debug, Clone)]
pub struct RateLimitSettings {
    pub window: Duration,
    /// Attempts per window for one e-mail address, per route.
    pub per_email: u32,
    /// Attempts per window from one client address, per route.
    pub per_address: u32,
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        RateLimitSettings {
            window: Duration::from_secs(60),
            per_email: 10,
            per_address: 30,
        }
    }
}

/// The limited routes; each counts on its own, so sign-up attempts do not use up sign-ins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limited {
    SignIn,
    SignUp,
    PasswordReset,
    /// Two-factor codes: the second step of sign-in, and confirming an enrolment.
    TwoFactor,
    /// Assistant turns, per user, in [`AGENT_WINDOW`].
    AgentTurn,
}

/// The window of the assistant's turn limit (`agent.turnsPerMinute`).
pub const AGENT_WINDOW: Duration = Duration::from_secs(60);

/// The window of the per-minute limits on public routes ([`RateLimitService::hit_public_route`]).
const PUBLIC_ROUTE_WINDOW: Duration = Duration::from_secs(60);

impl Limited {
    fn name(self) -> &'static str {
        match self {
            Limited::SignIn => "signIn",
            Limited::SignUp => "signUp",
            Limited::PasswordReset => "passwordReset",
            Limited::TwoFactor => "twoFactor",
            Limited::AgentTurn => "agentTurn",
        }
    }
}

pub struct RateLimitService<'a> {
    inner: &'a Inner,
}

impl<'a> RateLimitService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        RateLimitService { inner }
    }

    /// Counts one attempt at `route` from `address` for `email` (either may be unknown), and
    /// refuses it with [`Error::TooManyRequests`] when a counter is past its limit. Every
    /// attempt counts, refused ones included, so hammering does not reopen the window early.
    pub async fn hit(
        &self,
        route: Limited,
        address: Option<&str>,
        email: Option<&str>,
    ) -> Result<()> {
        let limits = &self.inner.settings.rate_limit;
        let mut counters = Vec::with_capacity(2);
        if let Some(address) = address.and_then(address_identifier)
            && limits.per_address > 0
        {
            counters.push((
                self.key(route.name(), "address", &address),
                limits.per_address,
            ));
        }
        if let Some(email) = email.and_then(email_identifier)
            && limits.per_email > 0
        {
            counters.push((self.key(route.name(), "email", &email), limits.per_email));
        }
        self.count(counters, limits.window).await
    }

    /// Counts one request from the client `address` to the public route `route` (a name of
    /// the caller's choosing, `forms.submit`: each name counts on its own), refused with
    /// [`Error::TooManyRequests`] past `per_minute` requests in [`PUBLIC_ROUTE_WINDOW`]; 0 turns
    /// the limit off, and an unknown address is not counted. For routes anyone may call, such
    /// as a plugin's: the counters are those of the sign-in limits, shared by every instance.
    pub async fn hit_public_route(
        &self,
        route: &str,
        address: Option<&str>,
        per_minute: u32,
    ) -> Result<()> {
        let Some(address) = address.and_then(address_identifier) else {
            return Ok(());
        };
        if per_minute == 0 {
            return Ok(());
        }
        let key = self.key(&format!("public.{route}"), "address", &address);
        self.count(vec![(key, per_minute)], PUBLIC_ROUTE_WINDOW)
            .await
    }

    /// Counts one assistant turn of `user_id`, refused past `per_minute` turns in
    /// [`AGENT_WINDOW`]; 0 turns the limit off. For the assistant (crate `cms-agent`), which
    /// counts a turn after every other check of its request.
    pub async fn hit_agent_turn(&self, user_id: &str, per_minute: u32) -> Result<()> {
        if per_minute == 0 {
            return Ok(());
        }
        let key = self.key(Limited::AgentTurn.name(), "user", user_id);
        self.count(vec![(key, per_minute)], AGENT_WINDOW).await
    }

    /// Counts one hit on each counter, each in a fixed `window`, and refuses with the longest
    /// wait when one is past its limit.
    async fn count(&self, counters: Vec<(String, u32)>, window: Duration) -> Result<()> {
        if counters.is_empty() {
            return Ok(());
        }
        let window_ms = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
        let now = self.inner.clock.now().millis();
        let expired_before = now.saturating_sub(window_ms);

        let mut tx = self.inner.store.write().await?;
        // Only counters past the longest window are removed, whichever limit asks.
        let longest = (self.inner.settings.rate_limit.window)
            .max(AGENT_WINDOW)
            .max(PUBLIC_ROUTE_WINDOW);
        let longest_ms = i64::try_from(longest.as_millis()).unwrap_or(i64::MAX);
        if self.purge_due(now, longest_ms) {
            tx.purge_rate_limits(now.saturating_sub(longest_ms)).await?;
        }
        let mut wait_ms: Option<i64> = None;
        for (key, limit) in counters {
            let count = tx.hit_rate_limit(&key, now, expired_before).await?;
            if count.hits > i64::from(limit) {
                let left = count.window_start.saturating_add(window_ms) - now;
                wait_ms = Some(wait_ms.map_or(left, |w| w.max(left)));
            }
        }
        tx.commit().await?;
        match wait_ms {
            None => Ok(()),
            Some(ms) => Err(Error::TooManyRequests {
                retry_after_secs: retry_after_secs(ms, window_ms),
            }),
        }
    }

    /// `<route>.<kind>:<hmac>`: the identifier itself is never stored.
    fn key(&self, route: &str, kind: &str, identifier: &str) -> String {
        let hash = self.inner.secret.hash_hex(Purpose::RateLimit, identifier);
        format!("{route}.{kind}:{hash}")
    }

    /// Expired counters are removed at most once a window per process, by whichever attempt
    /// comes first: no background task, and the table stays as small as the live windows.
    fn purge_due(&self, now: i64, window_ms: i64) -> bool {
        let last = &self.inner.rate_limit_purged_at;
        let previous = last.load(Ordering::Relaxed);
        now.saturating_sub(previous) >= window_ms
            && last
                .compare_exchange(previous, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Whole seconds until the window ends, rounded up, within 1 and the window (another
/// instance's clock may be a little ahead of ours).
fn retry_after_secs(wait_ms: i64, window_ms: i64) -> u64 {
    let secs = (wait_ms.clamp(1, window_ms.max(1)) + 999) / 1000;
    secs.max(1) as u64
}

/// The e-mail as the account would store it; an address that does not parse still counts, as
/// typed (trimmed, lowercased), so malformed guesses are limited too.
fn email_identifier(raw: &str) -> Option<String> {
    let normalised = match Email::parse(raw) {
        Some(email) => email.as_str().to_string(),
        None => raw.trim().to_lowercase(),
    };
    (!normalised.is_empty()).then_some(normalised)
}

/// An IPv4 address as is; an IPv6 address by its /64 prefix, the block one subscriber
/// usually holds, so rotating through one's own prefix does not escape the limit.
fn address_identifier(raw: &str) -> Option<String> {
    match raw.trim().parse::<IpAddr>().ok()?.to_canonical() {
        IpAddr::V4(v4) => Some(v4.to_string()),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            Some(format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_normalised() {
        assert_eq!(
            email_identifier(" Ada@Example.com ").as_deref(),
            Some("ada@example.com")
        );
        assert_eq!(
            email_identifier(" NotAnEmail ").as_deref(),
            Some("notanemail")
        );
        assert_eq!(email_identifier("   "), None);
        assert_eq!(address_identifier("10.0.0.1").as_deref(), Some("10.0.0.1"));
        assert_eq!(
            address_identifier("::ffff:10.0.0.1").as_deref(),
            Some("10.0.0.1")
        );
        assert_eq!(
            address_identifier("2001:db8:1:2:aaaa::1").as_deref(),
            address_identifier("2001:db8:1:2:bbbb::9").as_deref()
        );
        assert_ne!(
            address_identifier("2001:db8:1:2::1"),
            address_identifier("2001:db8:1:3::1")
        );
        assert_eq!(address_identifier("not an address"), None);
    }

    #[test]
    fn retry_after_is_whole_seconds_within_the_window() {
        assert_eq!(retry_after_secs(1, 60_000), 1);
        assert_eq!(retry_after_secs(1_001, 60_000), 2);
        assert_eq!(retry_after_secs(60_000, 60_000), 60);
        assert_eq!(retry_after_secs(90_000, 60_000), 60);
        assert_eq!(retry_after_secs(-5, 60_000), 1);
    }
}
