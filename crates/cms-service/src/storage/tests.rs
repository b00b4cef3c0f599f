use super::*;

async fn collect(stream: ByteStream) -> Vec<u8> {
    stream
        .try_fold(Vec::new(), |mut all, chunk| async move {
            all.extend_from_slice(&chunk);
            Ok(all)
        })
        .await
        .unwrap()
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Files in the storage root, probes and temporary files included.
fn files(root: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

async fn write_all(storage: &ObjectStorage, key: &str, data: &[u8], chunk: usize) {
    let mut writer = storage.writer(key).await.unwrap();
    for piece in data.chunks(chunk) {
        writer.write(Bytes::copy_from_slice(piece)).await.unwrap();
    }
    writer.finish().await.unwrap();
}

#[tokio::test]
async fn local_write_in_chunks_then_read_whole_and_ranged() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path().join("media")).unwrap();
    assert_eq!(storage.kind(), "local");
    let data = pattern(300 * 1024 + 7);
    write_all(&storage, "asset-1", &data, 10_000).await;

    assert_eq!(
        storage.size("asset-1").await.unwrap(),
        Some(data.len() as u64)
    );
    let stream = storage.read("asset-1", None).await.unwrap();
    assert_eq!(collect(stream).await, data);

    for range in [0..1, 5..70_000, 100_000..data.len() as u64, 42..42] {
        let stream = storage.read("asset-1", Some(range.clone())).await.unwrap();
        let expected = &data[range.start as usize..range.end as usize];
        assert_eq!(collect(stream).await, expected, "range {range:?}");
    }
    // Streamed in pieces, never as one buffer.
    let chunks: Vec<Bytes> = storage
        .read("asset-1", None)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(chunks.len() > 1 && chunks.iter().all(|c| c.len() <= FILE_CHUNK));
    assert_eq!(files(&dir.path().join("media")), vec!["asset-1"]);
}

#[tokio::test]
async fn local_large_object_goes_multipart_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path()).unwrap();
    let data = pattern(PART_SIZE * 2 + 12_345);
    write_all(&storage, "big", &data, 1024 * 1024).await;
    assert_eq!(storage.size("big").await.unwrap(), Some(data.len() as u64));
    let stream = storage.read("big", None).await.unwrap();
    assert_eq!(collect(stream).await, data);
    assert_eq!(files(dir.path()), vec!["big"]);
}

#[tokio::test]
async fn an_empty_object_can_be_written_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path()).unwrap();
    storage
        .writer("empty")
        .await
        .unwrap()
        .finish()
        .await
        .unwrap();
    assert_eq!(storage.size("empty").await.unwrap(), Some(0));
    let stream = storage.read("empty", None).await.unwrap();
    assert!(collect(stream).await.is_empty());
}

#[tokio::test]
async fn delete_twice_and_missing_objects() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path()).unwrap();
    write_all(&storage, "gone", b"bytes", 2).await;
    storage.delete("gone").await.unwrap();
    storage.delete("gone").await.unwrap();
    assert_eq!(storage.size("gone").await.unwrap(), None);
    assert!(matches!(
        storage.read("gone", None).await.err(),
        Some(StorageError::NotFound)
    ));
    assert!(matches!(
        storage.read("gone", Some(0..1)).await.err(),
        Some(StorageError::NotFound)
    ));
    assert!(matches!(
        storage.read("gone", Some(0..0)).await.err(),
        Some(StorageError::NotFound)
    ));
    assert!(files(dir.path()).is_empty());
}

#[tokio::test]
async fn abort_or_drop_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path()).unwrap();

    // Small (still buffered) and large (multipart, a temporary file on disk) uploads.
    for (key, len) in [("small", 1000), ("large", PART_SIZE + 1)] {
        let mut writer = storage.writer(key).await.unwrap();
        writer.write(Bytes::from(pattern(len))).await.unwrap();
        writer.abort().await;
        assert_eq!(storage.size(key).await.unwrap(), None);

        let mut writer = storage.writer(key).await.unwrap();
        writer.write(Bytes::from(pattern(len))).await.unwrap();
        drop(writer);
        assert_eq!(storage.size(key).await.unwrap(), None);
    }
    // The temporary files of dropped uploads are removed in the background.
    for _ in 0..100 {
        if files(dir.path()).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
}

#[tokio::test]
async fn local_health_writes_and_removes_a_probe() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path()).unwrap();
    storage.health().await.unwrap();
    storage.health().await.unwrap();
    assert!(files(dir.path()).is_empty());

    // A root that became a plain file cannot be written (permissions would not show it:
    // tests may run as root).
    let root = dir.path().join("broken");
    let storage = ObjectStorage::local(&root).unwrap();
    std::fs::remove_dir(&root).unwrap();
    std::fs::write(&root, b"not a directory").unwrap();
    let err = storage.health().await.unwrap_err();
    assert!(err.contains("cannot write to storage"), "{err}");
}

#[tokio::test]
async fn local_storage_presigns_nothing_and_keys_stay_inside() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path().join("root")).unwrap();
    assert_eq!(
        storage
            .presigned_put("k", Duration::from_secs(60))
            .await
            .unwrap(),
        None
    );
    for bad in ["", "../escape", "a/../../b"] {
        assert!(storage.writer(bad).await.is_err(), "{bad}");
        assert!(storage.size(bad).await.is_err(), "{bad}");
    }
}

#[tokio::test]
async fn delete_prefix_removes_whole_segments_only_and_their_folders() {
    let dir = tempfile::tempdir().unwrap();
    let storage = ObjectStorage::local(dir.path()).unwrap();
    write_all(&storage, "a", b"original", 4).await;
    write_all(&storage, "derivatives/a/x.webp", b"one", 4).await;
    write_all(&storage, "derivatives/a/y.png", b"two", 4).await;
    write_all(&storage, "derivatives/ab/z.png", b"three", 4).await;
    // Keys with folders take the local fast path and read back whole and by range.
    assert_eq!(
        collect(storage.read("derivatives/a/x.webp", None).await.unwrap()).await,
        b"one"
    );
    assert_eq!(
        collect(
            storage
                .read("derivatives/ab/z.png", Some(1..3))
                .await
                .unwrap()
        )
        .await,
        b"hr"
    );
    // Opened whole with its size, or nothing when absent.
    let (size, stream) = storage.open("derivatives/ab/z.png").await.unwrap().unwrap();
    assert_eq!((size, collect(stream).await), (5, b"three".to_vec()));
    assert!(
        storage
            .open("derivatives/ab/none.png")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(storage.delete_prefix("derivatives/a").await.unwrap(), 2);
    assert_eq!(storage.size("derivatives/a/x.webp").await.unwrap(), None);
    assert_eq!(storage.size("derivatives/ab/z.png").await.unwrap(), Some(5));
    assert_eq!(storage.size("a").await.unwrap(), Some(8));
    assert!(
        !dir.path().join("derivatives/a").exists(),
        "the asset's folder goes with it"
    );
    // Nothing under the prefix (any more): nothing to do, no error.
    assert_eq!(storage.delete_prefix("derivatives/a").await.unwrap(), 0);
    assert_eq!(storage.delete_prefix("derivatives/none").await.unwrap(), 0);
}

#[test]
fn plain_keys_are_slash_separated_segments_without_dots_in_front() {
    for good in ["abc", "derivatives/id-1/0af3.webp", "a_b.c"] {
        assert!(is_plain_key(good), "{good}");
    }
    for bad in [
        "", ".hidden", "a//b", "a/../b", "a/.b", "/a", "a/", "a%2Fb", "a b",
    ] {
        assert!(!is_plain_key(bad), "{bad}");
    }
}
