//! One webhook delivery: the signed POST, bounded by a timeout, to a target that may be refused
//! for resolving to a private address (CONTRACT.md section 11).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Where and how deliveries go.
#[derive(Debug, Clone)]
pub struct DeliveryPolicy {
    /// Bound on one attempt, connection included (10 s by default).
    pub timeout: Duration,
    /// Refuse targets that resolve to loopback, private, link-local or otherwise internal
    /// addresses (`plugins.webhooksDenyPrivateTargets`).
    pub deny_private_targets: bool,
}

/// One request to send.
pub struct Delivery<'a> {
    pub url: &'a str,
    pub secret: Option<&'a str>,
    pub event_type: &'a str,
    /// The delivery's id: the job that carries it, the same on every retry.
    pub delivery_id: &'a str,
    pub body: Vec<u8>,
}

/// `sha256=<hex HMAC-SHA-256 of body under secret>`: what `x-cms-signature` carries.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(body);
    format!(
        "sha256={}",
        cms_core::hex::encode(&mac.finalize().into_bytes())
    )
}

/// Sends one delivery; `Err` (a failed attempt, retried by the queue) on a refused target, a
/// transport failure, a timeout or a non-2xx answer. The timeout bounds the whole attempt,
/// the name's resolution for the private-target check included.
pub async fn send(policy: &DeliveryPolicy, delivery: Delivery<'_>) -> Result<(), String> {
    tokio::time::timeout(policy.timeout, attempt(policy, delivery))
        .await
        .unwrap_or_else(|_| Err(timed_out(policy)))
}

fn timed_out(policy: &DeliveryPolicy) -> String {
    format!(
        "the webhook target did not answer within {:?}",
        policy.timeout
    )
}

async fn attempt(policy: &DeliveryPolicy, delivery: Delivery<'_>) -> Result<(), String> {
    let url = reqwest::Url::parse(delivery.url)
        .map_err(|e| format!("the webhook url `{}` is not a URL: {e}", delivery.url))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the webhook url must be http or https, not `{}`",
            url.scheme()
        ));
    }
    let mut client = reqwest::Client::builder()
        .timeout(policy.timeout)
        .redirect(reqwest::redirect::Policy::none());
    if policy.deny_private_targets {
        // Resolved once, checked, and pinned: the request goes to the addresses that were
        // checked, so a name cannot resolve to a public address for the check and a private
        // one for the connection.
        let host = url.host_str().unwrap_or_default().to_string();
        let addresses = resolve(&url).await?;
        if let Some(private) = addresses.iter().find(|a| is_internal(a.ip())) {
            return Err(format!(
                "the webhook target {host} resolves to {}, an internal address, and \
                 plugins.webhooksDenyPrivateTargets is on",
                private.ip()
            ));
        }
        client = client.resolve_to_addrs(&host, &addresses);
    }
    let client = client
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("x-cms-event", delivery.event_type)
        .header("x-cms-delivery", delivery.delivery_id);
    if let Some(secret) = delivery.secret.filter(|s| !s.is_empty()) {
        request = request.header("x-cms-signature", signature(secret, &delivery.body));
    }
    let response = request.body(delivery.body).send().await.map_err(|e| {
        if e.is_timeout() {
            timed_out(policy)
        } else {
            format!("the webhook target could not be reached: {e}")
        }
    })?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the webhook target answered {status}"))
    }
}

async fn resolve(url: &reqwest::Url) -> Result<Vec<SocketAddr>, String> {
    let host = url
        .host_str()
        .ok_or_else(|| "the webhook url names no host".to_string())?;
    let port = url.port_or_known_default().unwrap_or(80);
    // `[::1]` comes back bracketed from the URL; the resolver wants the bare address.
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("the webhook host {host} does not resolve: {e}"))?
        .collect();
    if addresses.is_empty() {
        return Err(format!("the webhook host {host} resolves to no address"));
    }
    Ok(addresses)
}

/// Whether an address is one a webhook must not reach when private targets are denied: the
/// machine itself, private networks, link-local, shared (CGNAT), unspecified, multicast,
/// broadcast, benchmarking, documentation and reserved ranges; an IPv4-mapped, -compatible or
/// NAT64 (`64:ff9b::/96`) IPv6 address is judged by the IPv4 address inside it.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => match v6
            .to_ipv4_mapped()
            .or_else(|| compatible_v4(v6))
            .or_else(|| nat64_v4(v6))
        {
            Some(v4) => is_internal_v4(v4),
            None => is_internal_v6(v6),
        },
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // 100.64.0.0/10, shared address space (carrier-grade NAT).
        || (a == 100 && (64..128).contains(&b))
        // 198.18.0.0/15, benchmarking.
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // fc00::/7 unique local, fe80::/10 link-local, 2001:db8::/32 documentation.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
}

/// `64:ff9b::a.b.c.d`, the well-known NAT64 prefix (RFC 6052): on a NAT64 network it reaches
/// the IPv4 address inside.
fn nat64_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    (s[..6] == [0x64, 0xff9b, 0, 0, 0, 0])
        .then(|| Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
}

/// `::a.b.c.d`, the deprecated IPv4-compatible form (not `::` or `::1`).
fn compatible_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    (s[..6] == [0; 6] && (s[6] != 0 || s[7] > 1))
        .then(|| Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_recognised_in_every_form() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::127.0.0.1",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
        ] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn the_signature_is_the_hex_hmac_of_the_body() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[tokio::test]
    async fn private_targets_are_refused_after_resolution_when_denied() {
        let policy = DeliveryPolicy {
            timeout: Duration::from_secs(1),
            deny_private_targets: true,
        };
        for url in [
            "http://127.0.0.1:9/hook",
            "http://localhost:9/hook",
            "http://[::ffff:127.0.0.1]:9/hook",
        ] {
            let error = send(
                &policy,
                Delivery {
                    url,
                    secret: None,
                    event_type: "document.published",
                    delivery_id: "d",
                    body: b"{}".to_vec(),
                },
            )
            .await
            .unwrap_err();
            assert!(error.contains("internal address"), "{url}: {error}");
        }
        let error = send(
            &policy,
            Delivery {
                url: "ftp://example.com/x",
                secret: None,
                event_type: "t",
                delivery_id: "d",
                body: Vec::new(),
            },
        )
        .await
        .unwrap_err();
        assert!(error.contains("http or https"), "{error}");
    }
}
