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

/// The resolver's filter, on the ranges CONTRACT.md section 11 names and their neighbours.
#[test]
fn the_resolver_keeps_only_public_addresses() {
    let table = [
        ("10.0.0.1", false),
        ("10.255.255.255", false),
        ("172.16.0.1", false),
        ("172.31.255.254", false),
        ("172.32.0.1", true),
        ("192.168.0.1", false),
        ("192.169.0.1", true),
        ("127.0.0.1", false),
        ("127.8.9.10", false),
        ("169.254.169.254", false),
        ("0.0.0.0", false),
        ("::1", false),
        ("fe80::1", false),
        ("febf::1", false),
        ("fc00::1", false),
        ("fdff::1", false),
        ("::ffff:10.0.0.1", false),
        ("::ffff:127.0.0.1", false),
        ("8.8.8.8", true),
        ("93.184.216.34", true),
        ("11.0.0.1", true),
        ("2606:4700::1111", true),
        ("::ffff:8.8.8.8", true),
    ];
    let found: Vec<SocketAddr> = table
        .iter()
        .map(|(ip, _)| SocketAddr::new(ip.parse().unwrap(), 443))
        .collect();
    let kept = public_only(&found);
    for (address, (ip, public)) in found.iter().zip(table) {
        assert_eq!(kept.contains(address), public, "{ip}");
    }
    // The resolver's order is kept.
    let expected: Vec<SocketAddr> = found
        .iter()
        .zip(table)
        .filter(|(_, (_, public))| *public)
        .map(|(a, _)| *a)
        .collect();
    assert_eq!(kept, expected);
}

fn delivery(url: &str) -> Outgoing {
    Outgoing {
        url: url.to_string(),
        headers: vec![("x-cms-event", "document.published".into())],
        body: b"{}".to_vec(),
    }
}

#[tokio::test]
async fn private_targets_are_refused_after_resolution_when_denied() {
    let deliverer = Deliverer::new(DeliveryPolicy {
        timeout: Duration::from_secs(1),
        deny_private_targets: true,
    });
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://[::1]:9/hook",
        "http://[::ffff:127.0.0.1]:9/hook",
        "http://10.0.0.1:9/hook",
    ] {
        let attempt = deliverer.send(&delivery(url)).await;
        assert_eq!(attempt.status, None, "{url}: never sent");
        let error = attempt.result.unwrap_err();
        assert!(error.contains("internal address"), "{url}: {error}");
        assert!(
            error.contains("plugins.webhooksDenyPrivateTargets"),
            "{url}: {error}"
        );
    }
    let error = deliverer
        .send(&delivery("ftp://example.com/x"))
        .await
        .result
        .unwrap_err();
    assert!(error.contains("http or https"), "{error}");
}

#[tokio::test]
async fn without_the_deny_loopback_is_reached_by_name() {
    let deliverer = Deliverer::new(DeliveryPolicy {
        timeout: Duration::from_secs(1),
        deny_private_targets: false,
    });
    // Port 9 (discard) is closed here: the attempt fails connecting, not by refusal.
    let attempt = deliverer.send(&delivery("http://localhost:9/hook")).await;
    assert_eq!(attempt.status, None, "nothing answered");
    let error = attempt.result.unwrap_err();
    assert!(!error.contains("internal address"), "{error}");
}
