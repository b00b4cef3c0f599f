//! The client's address: the socket peer, or, when the peer is a trusted proxy, the address
//! the proxies recorded in `X-Forwarded-For` (`server.trustedProxies`). Anything a client can
//! write itself is never believed, so rate limits cannot be dodged by sending a header.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;

/// A trusted proxy: one address, or a block in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedProxy {
    network: IpAddr,
    prefix: u8,
}

impl TrustedProxy {
    pub fn parse(text: &str) -> Result<TrustedProxy, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .parse()
            .map_err(|_| format!("`{text}` is not an IP address or CIDR block"))?;
        let network = network.to_canonical();
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{text}` has a prefix length outside 0 to {max}"))?,
        };
        Ok(TrustedProxy { network, prefix })
    }

    fn contains(&self, address: IpAddr) -> bool {
        match (self.network, address.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(a)) => same_prefix(
                u128::from(u32::from(net)) << 96,
                u128::from(u32::from(a)) << 96,
                self.prefix,
            ),
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                same_prefix(u128::from(net), u128::from(a), self.prefix)
            }
            _ => false,
        }
    }
}

fn same_prefix(a: u128, b: u128, prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    a & mask == b & mask
}

/// The client's address. From a trusted peer, `X-Forwarded-For` is read from the right (each
/// proxy appends the address it saw) past every trusted proxy; the first address not trusted is
/// the client. An entry that is not an address ends the walk at the last address known.
pub fn resolve(
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    trusted: &[TrustedProxy],
) -> Option<IpAddr> {
    let mut client = peer?.ip().to_canonical();
    let is_trusted = |a: IpAddr| trusted.iter().any(|t| t.contains(a));
    if !is_trusted(client) {
        return Some(client);
    }
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    for entry in forwarded.into_iter().rev() {
        let Some(hop) = parse_hop(entry) else { break };
        client = hop;
        if !is_trusted(hop) {
            break;
        }
    }
    Some(client)
}

/// `1.2.3.4`, `2001:db8::1`, or with a port (`1.2.3.4:5678`, `[2001:db8::1]:5678`).
fn parse_hop(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .or_else(|_| entry.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|a| a.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn peer(ip: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(ip.parse().unwrap(), 4000))
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn proxies(list: &[&str]) -> Vec<TrustedProxy> {
        list.iter()
            .map(|p| TrustedProxy::parse(p).unwrap())
            .collect()
    }

    #[test]
    fn blocks_match_by_prefix() {
        let block = TrustedProxy::parse("10.1.0.0/16").unwrap();
        assert!(block.contains("10.1.200.3".parse().unwrap()));
        assert!(block.contains("::ffff:10.1.0.1".parse().unwrap()));
        assert!(!block.contains("10.2.0.1".parse().unwrap()));
        assert!(!block.contains("::1".parse().unwrap()));
        assert!(
            TrustedProxy::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        let v6 = TrustedProxy::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
        assert!(
            TrustedProxy::parse("127.0.0.1")
                .unwrap()
                .contains("127.0.0.1".parse().unwrap())
        );
        for bad in ["", "10.0.0.0/33", "::/129", "proxy.local", "10.0.0.0/x"] {
            assert!(TrustedProxy::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn forwarded_addresses_count_only_from_trusted_peers() {
        let headers = forwarded(&["203.0.113.9"]);
        // No proxy trusted: the header is the client's own words.
        assert_eq!(
            resolve(peer("10.0.0.2"), &headers, &[]),
            "10.0.0.2".parse().ok()
        );
        let trusted = proxies(&["10.0.0.0/8"]);
        assert_eq!(
            resolve(peer("10.0.0.2"), &headers, &trusted),
            "203.0.113.9".parse().ok()
        );
        // A peer outside the list is the client, whatever it forwards.
        assert_eq!(
            resolve(peer("198.51.100.1"), &headers, &trusted),
            "198.51.100.1".parse().ok()
        );
        assert_eq!(resolve(None, &headers, &trusted), None);
    }

    #[test]
    fn the_walk_stops_at_the_first_untrusted_hop_from_the_right() {
        let trusted = proxies(&["10.0.0.0/8"]);
        // The client wrote a fake first entry; the proxies appended the real ones.
        let headers = forwarded(&["1.1.1.1, 203.0.113.9", "10.0.0.7"]);
        assert_eq!(
            resolve(peer("10.0.0.2"), &headers, &trusted),
            "203.0.113.9".parse().ok()
        );
        // Garbage ends the walk at the last address known.
        let headers = forwarded(&["203.0.113.9, nonsense, 10.0.0.7"]);
        assert_eq!(
            resolve(peer("10.0.0.2"), &headers, &trusted),
            "10.0.0.7".parse().ok()
        );
        // Ports and brackets are accepted.
        let headers = forwarded(&["[2001:db8::5]:443"]);
        assert_eq!(
            resolve(peer("10.0.0.2"), &headers, &trusted),
            "2001:db8::5".parse().ok()
        );
        // No header: the proxy itself.
        assert_eq!(
            resolve(peer("10.0.0.2"), &HeaderMap::new(), &trusted),
            "10.0.0.2".parse().ok()
        );
    }
}
