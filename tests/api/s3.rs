//! S3 asset storage against a real S3-compatible server on loopback (moto, which `.ci/run`
//! installs). Storage only: no database. These tests never skip: without moto they fail.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cms::service::{BlobStore, ByteStream, ObjectStorage, S3Settings, StorageError};
use futures_util::TryStreamExt;

/// A moto S3 server on a free loopback port, stopped (killed) on drop, with one bucket created.
pub struct S3Server {
    pub endpoint: String,
    pub bucket: String,
    child: Child,
}

impl S3Server {
    pub async fn start() -> S3Server {
        let port = crate::support::free_port();
        let child = spawn_moto(port);
        let mut server = S3Server {
            endpoint: format!("http://127.0.0.1:{port}"),
            bucket: "cms-test-assets".into(),
            child,
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("moto_server exited at start ({status}): is moto[server] installed?");
            }
            if client.get(&server.endpoint).send().await.is_ok() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "moto_server did not answer on {} within 30 s",
                server.endpoint
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let res = client
            .put(format!("{}/{}", server.endpoint, server.bucket))
            .send()
            .await
            .expect("create the test bucket");
        assert!(
            res.status().is_success(),
            "creating the bucket: {}",
            res.status()
        );
        server
    }

    pub fn settings(&self) -> S3Settings {
        S3Settings {
            bucket: self.bucket.clone(),
            endpoint: Some(self.endpoint.clone()),
            region: "us-east-1".into(),
            access_key_id: Some("test".into()),
            secret_access_key: Some("test".into()),
            force_path_style: true,
        }
    }

    /// Multipart uploads started in the bucket and neither completed nor aborted.
    async fn pending_uploads(&self) -> usize {
        let listing = reqwest::Client::new()
            .get(format!("{}/{}?uploads", self.endpoint, self.bucket))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        listing.matches("<UploadId>").count()
    }

    fn storage(&self) -> ObjectStorage {
        ObjectStorage::s3(&self.settings()).expect("S3 storage builds")
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `moto_server`, or `python -m moto.server` where pip left the script off PATH.
fn spawn_moto(port: u16) -> Child {
    let port = port.to_string();
    let args = ["-H", "127.0.0.1", "-p", port.as_str()];
    let attempts: [(&str, &[&str]); 3] = [
        ("moto_server", &[]),
        ("python3", &["-m", "moto.server"]),
        ("python", &["-m", "moto.server"]),
    ];
    let mut errors = Vec::new();
    for (program, prefix) in attempts {
        match Command::new(program)
            .args(prefix)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => return child,
            Err(e) => errors.push(format!("{program}: {e}")),
        }
    }
    panic!(
        "\n\n*** cannot start the S3 test server (moto): {} ***\n\
         *** install it with: pip install 'moto[server]' (.ci/run does) ***\n\n",
        errors.join("; ")
    );
}

async fn collect(stream: ByteStream) -> Vec<u8> {
    stream
        .try_fold(Vec::new(), |mut all, chunk| async move {
            all.extend_from_slice(&chunk);
            Ok(all)
        })
        .await
        .expect("the stream reads to its end")
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn a_large_object_is_written_in_parts_then_read_whole_and_ranged_and_deleted() {
    let server = S3Server::start().await;
    let storage = server.storage();
    assert_eq!(storage.kind(), "s3");
    let data = pattern(12 * MIB + 3);
    let mut writer = storage.writer("asset-big").await.unwrap();
    for chunk in data.chunks(MIB) {
        writer.write(Bytes::copy_from_slice(chunk)).await.unwrap();
    }
    writer.finish().await.unwrap();

    // A multipart upload's ETag ends in `-{parts}`: proof the object was not put whole.
    let head = reqwest::Client::new()
        .head(format!("{}/{}/asset-big", server.endpoint, server.bucket))
        .send()
        .await
        .unwrap();
    let etag = head.headers()["etag"].to_str().unwrap().to_string();
    assert!(etag.trim_matches('"').contains('-'), "ETag {etag}");

    assert_eq!(
        storage.size("asset-big").await.unwrap(),
        Some(data.len() as u64)
    );
    let whole = collect(storage.read("asset-big", None).await.unwrap()).await;
    assert!(whole == data, "the object reads back as written");

    for range in [
        0..1,
        5 * MIB as u64 - 3..9 * MIB as u64 + 5,
        data.len() as u64 - 10..data.len() as u64,
    ] {
        let got = collect(
            storage
                .read("asset-big", Some(range.clone()))
                .await
                .unwrap(),
        )
        .await;
        assert!(
            got == data[range.start as usize..range.end as usize],
            "range {range:?}"
        );
    }

    storage.delete("asset-big").await.unwrap();
    storage.delete("asset-big").await.unwrap();
    assert_eq!(storage.size("asset-big").await.unwrap(), None);
    assert!(matches!(
        storage.read("asset-big", None).await.err(),
        Some(StorageError::NotFound)
    ));
}

#[tokio::test]
async fn a_small_object_is_put_whole_and_an_aborted_one_leaves_nothing() {
    let server = S3Server::start().await;
    let storage = server.storage();
    let mut writer = storage.writer("small").await.unwrap();
    writer.write(Bytes::from_static(b"hello ")).await.unwrap();
    writer.write(Bytes::from_static(b"world")).await.unwrap();
    writer.finish().await.unwrap();
    assert_eq!(storage.size("small").await.unwrap(), Some(11));
    let got = collect(storage.read("small", Some(6..11)).await.unwrap()).await;
    assert_eq!(got, b"world");

    // Past the part size, so a multipart upload was started on the server, then aborted.
    let mut writer = storage.writer("aborted").await.unwrap();
    writer.write(Bytes::from(pattern(9 * MIB))).await.unwrap();
    writer.abort().await;
    assert_eq!(storage.size("aborted").await.unwrap(), None);
    assert_eq!(
        server.pending_uploads().await,
        0,
        "the aborted upload is gone"
    );

    // Dropped unfinished: the same, in the background.
    let mut writer = storage.writer("dropped").await.unwrap();
    writer.write(Bytes::from(pattern(9 * MIB))).await.unwrap();
    assert_eq!(server.pending_uploads().await, 1);
    drop(writer);
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.pending_uploads().await > 0 {
        assert!(
            Instant::now() < deadline,
            "the dropped upload was never aborted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(storage.size("dropped").await.unwrap(), None);
}

#[tokio::test]
async fn a_presigned_put_uploads_straight_to_the_bucket() {
    let server = S3Server::start().await;
    let storage = server.storage();
    let url = storage
        .presigned_put("direct", Duration::from_secs(300))
        .await
        .unwrap()
        .expect("S3 presigns");
    assert!(url.starts_with(&server.endpoint), "{url}");
    assert!(url.contains("X-Amz-Signature="), "{url}");

    let body = pattern(100_000);
    let res = reqwest::Client::new()
        .put(&url)
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert!(
        res.status().is_success(),
        "PUT to the presigned URL: {}",
        res.status()
    );

    assert_eq!(storage.size("direct").await.unwrap(), Some(100_000));
    let got = collect(storage.read("direct", None).await.unwrap()).await;
    assert!(got == body);
}

#[tokio::test]
async fn health_is_ok_on_a_reachable_bucket() {
    let server = S3Server::start().await;
    let storage = server.storage();
    storage.health().await.unwrap();
    storage.health().await.unwrap();
}

#[tokio::test]
async fn health_fails_quickly_where_nothing_listens() {
    let port = crate::support::free_port();
    let storage = ObjectStorage::s3(&S3Settings {
        bucket: "nowhere".into(),
        endpoint: Some(format!("http://127.0.0.1:{port}")),
        region: "us-east-1".into(),
        access_key_id: Some("test".into()),
        secret_access_key: Some("test".into()),
        force_path_style: true,
    })
    .unwrap();
    let started = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(20), storage.health())
        .await
        .expect("the check ends on its own, without an outer timeout");
    let err = result.unwrap_err();
    assert!(err.contains("cannot write to storage"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}
