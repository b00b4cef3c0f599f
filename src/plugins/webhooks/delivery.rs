//! One webhook delivery attempt: the POST the service made (signed, with its headers), bounded
//! by a timeout, to a target that may be refused for resolving to a private address
//! (CONTRACT.md section 11), reporting the receiver's status for the delivery log.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use cms_service::webhooks::Outgoing;

/// Where and how deliveries go.
#[derive(Debug, Clone)]
pub struct DeliveryPolicy {
    /// Bound on one attempt, connection included (10 s by default).
    pub timeout: Duration,
    /// Refuse targets that resolve to loopback, private, link-local or otherwise internal
    /// addresses (`plugins.webhooksDenyPrivateTargets`).
    pub deny_private_targets: bool,
}

/// How one attempt went.
#[derive(Debug)]
pub struct Attempt {
    /// The status the receiver answered, when it answered.
    pub status: Option<u16>,
    /// `Err` (a failed attempt, retried by the queue) on a refused target, a transport
    /// failure, a timeout or a non-2xx answer, saying which.
    pub result: Result<(), String>,
}

impl Attempt {
    fn failed(error: String) -> Attempt {
        Attempt {
            status: None,
            result: Err(error),
        }
    }
}

/// The HTTP client of every delivery, built once: connections to a receiver are kept and
/// reused across deliveries. With private targets denied, the client resolves names through
/// [`PublicOnly`], so the addresses it connects to are the very ones that were checked.
pub struct Deliverer {
    /// The client, or why it could not be built (each attempt then fails saying so).
    client: Result<reqwest::Client, String>,
    policy: DeliveryPolicy,
}

impl Deliverer {
    pub fn new(policy: DeliveryPolicy) -> Self {
        let mut builder = reqwest::Client::builder()
            .timeout(policy.timeout)
            .redirect(reqwest::redirect::Policy::none());
        if policy.deny_private_targets {
            builder = builder.dns_resolver(PublicOnly);
        }
        let client = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"));
        Deliverer { client, policy }
    }

    pub fn policy(&self) -> &DeliveryPolicy {
        &self.policy
    }

    /// Sends one attempt. The timeout bounds the whole attempt, the name's resolution
    /// included.
    pub async fn send(&self, outgoing: &Outgoing) -> Attempt {
        tokio::time::timeout(self.policy.timeout, self.attempt(outgoing))
            .await
            .unwrap_or_else(|_| Attempt::failed(timed_out(&self.policy)))
    }

    async fn attempt(&self, outgoing: &Outgoing) -> Attempt {
        match self.request(outgoing) {
            Ok(request) => match request.send().await {
                Ok(response) => answered(response.status()),
                Err(e) => Attempt::failed(self.transport_error(&e)),
            },
            Err(refused) => Attempt::failed(refused),
        }
    }

    /// The request, or why it may not be sent: a URL that is not http(s), or an address
    /// written in it that is internal while private targets are denied.
    fn request(&self, outgoing: &Outgoing) -> Result<reqwest::RequestBuilder, String> {
        let client = self.client.as_ref().map_err(Clone::clone)?;
        let url = reqwest::Url::parse(&outgoing.url)
            .map_err(|e| format!("the webhook url `{}` is not a URL: {e}", outgoing.url))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "the webhook url must be http or https, not `{}`",
                url.scheme()
            ));
        }
        // An address written in the URL is connected to without a resolver: judged here.
        if self.policy.deny_private_targets
            && let Some(ip) = literal_address(&url)
            && is_internal(ip)
        {
            return Err(refusal(&ip.to_string(), &[ip]));
        }
        let mut request = client.post(url).header("content-type", "application/json");
        for (name, value) in &outgoing.headers {
            request = request.header(*name, value);
        }
        Ok(request.body(outgoing.body.clone()))
    }

    /// A failed request, said as plainly as its cause allows: a refusal of [`PublicOnly`] is
    /// reported as itself, deep as reqwest wraps it.
    fn transport_error(&self, error: &reqwest::Error) -> String {
        if error.is_timeout() {
            return timed_out(&self.policy);
        }
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
        let mut chain = Vec::new();
        while let Some(cause) = source {
            if let Some(refused) = cause.downcast_ref::<InternalTarget>() {
                return refused.0.clone();
            }
            chain.push(cause.to_string());
            source = cause.source();
        }
        chain.dedup();
        format!(
            "the webhook target could not be reached: {}",
            chain.join(": ")
        )
    }
}

/// A 2xx answer delivers; any other (a redirect included: none is followed) fails the attempt.
fn answered(status: reqwest::StatusCode) -> Attempt {
    Attempt {
        status: Some(status.as_u16()),
        result: if status.is_success() {
            Ok(())
        } else {
            Err(format!("the webhook target answered {status}"))
        },
    }
}

fn timed_out(policy: &DeliveryPolicy) -> String {
    format!(
        "the webhook target did not answer within {:?}",
        policy.timeout
    )
}

/// The address a URL names literally (`http://10.0.0.1/`, `http://[::1]/`), if it does.
fn literal_address(url: &reqwest::Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// A resolver that drops every internal address ([`is_internal`]) from what the system
/// resolver answers, and fails when nothing is left. The client connects only to what it
/// returns, so a name cannot pass the check with one address and connect to another.
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            // The port is the URL's; reqwest puts it in place of this 0.
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public = public_only(&found);
            if public.is_empty() {
                let ips: Vec<IpAddr> = found.iter().map(SocketAddr::ip).collect();
                return Err(Box::new(InternalTarget(refusal(&host, &ips))) as _);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The addresses a webhook may reach, in the resolver's order.
fn public_only(found: &[SocketAddr]) -> Vec<SocketAddr> {
    found
        .iter()
        .copied()
        .filter(|a| !is_internal(a.ip()))
        .collect()
}

fn refusal(host: &str, ips: &[IpAddr]) -> String {
    let ips: Vec<String> = ips.iter().map(IpAddr::to_string).collect();
    let what = match ips.as_slice() {
        [] => "no address".to_string(),
        [one] if one == host => format!("{one}, an internal address,"),
        _ => format!("{} (internal addresses only)", ips.join(", ")),
    };
    format!(
        "the webhook target {host} resolves to {what} and plugins.webhooksDenyPrivateTargets \
         is on"
    )
}

/// [`PublicOnly`]'s refusal, recognised in the error reqwest wraps it in.
#[derive(Debug)]
struct InternalTarget(String);

impl std::fmt::Display for InternalTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InternalTarget {}

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
mod tests;
