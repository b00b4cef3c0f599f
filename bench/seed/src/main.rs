//! Seeds the scale bench's dataset (bench/scale.sh) in process, through the service layer, into
//! the database the configuration names (cms.toml, `CMS_*`, exactly as `cms serve` reads it):
//!
//! - a first account (the instance `super_admin`), then `--orgs` organizations it owns, each
//!   with an API key with the `write` permission, for the load generator;
//! - per organization: `--assets-per-org` (default 3) small PNG images, different bytes each,
//!   uploaded through the asset service (stored in the configured storage, as an upload would
//!   be), `AUTHORS_PER_ORG` published authors, and its share of `--docs` posts, 90% published,
//!   each referencing one of the organization's authors and every third a cover image (when
//!   there are assets), imported with
//!   `DocumentService::import` (the rows, versions, references and `document.published`
//!   events `create` writes, a few statements per chunk of documents);
//! - files for the load generator in `--out`: `orgs.tsv` (key, organization id), `reads.tsv`,
//!   `updates.tsv`, `updates-mix.tsv` (key, id of a published post at revision 1),
//!   `publishes.tsv`, `publishes-mix.tsv` (key, id of a draft post), `media.txt` (`/media`
//!   URLs). Every list is interleaved across organizations, and the pools are disjoint, so the
//!   phases of the bench never touch each other's documents.
//!
//! Usage: `cms-bench-seed --docs 1000000 --orgs 1000 --out DIR [--concurrency N]
//! [--assets-per-org N]`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use bytes::Bytes;
use cms::service::assets::UploadMetadata;
use cms::service::documents::NewDocument;
use cms::service::{Actor, Cms, Credentials, NewApiKey, NewOrganization, SignUp};
use serde_json::{Value, json};
use tokio::sync::{Mutex, Semaphore};

const AUTHORS_PER_ORG: usize = 10;
/// Documents per `import` call: one unit of work each.
const BATCH: usize = 500;
/// Read ids kept per organization, at least (more when there are few organizations).
const READS: usize = 20_000;

struct Args {
    docs: usize,
    orgs: usize,
    out: PathBuf,
    concurrency: usize,
    assets_per_org: usize,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        docs: 1_000_000,
        orgs: 1_000,
        out: PathBuf::from("."),
        concurrency: 3,
        assets_per_org: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--docs" => args.docs = value.parse()?,
            "--orgs" => args.orgs = value.parse()?,
            "--out" => args.out = PathBuf::from(value),
            "--concurrency" => args.concurrency = value.parse()?,
            "--assets-per-org" => args.assets_per_org = value.parse()?,
            other => bail!("unknown argument {other}"),
        }
    }
    if args.orgs == 0 || args.docs < args.orgs || args.concurrency == 0 {
        bail!("--orgs must be at least 1, --docs at least --orgs, --concurrency at least 1");
    }
    Ok(args)
}

/// What one organization's seeding leaves for the load generator.
#[derive(Default)]
struct Seeded {
    org_id: String,
    key: String,
    /// Published posts, in creation order.
    published: Vec<String>,
    /// Draft-only posts.
    drafts: Vec<String>,
    media: Vec<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    let config = cms::Config::load(None, std::env::vars())?.config;
    let app = cms::Builder::new(config).build().await?;
    let cms = app.cms.clone();
    let started = Instant::now();

    let signed_up = cms
        .auth()
        .sign_up(SignUp {
            name: Some("Bench".into()),
            email: Some("bench@example.com".into()),
            password: Some("bench password".into()),
            client: Default::default(),
            claim_code: Default::default(),
            invitation_token: None,
        })
        .await
        .context("sign-up of the first account (the database must be empty)")?
        .signed_in()
        .context("signed in after sign-up")?;
    let token = signed_up.token;
    let admin = actor(&cms, bearer(&token)).await?;

    // Switching the one session's organization and creating that organization's key go
    // together: one organization at a time.
    let session = Arc::new(Mutex::new((admin, token)));
    let slots = Arc::new(Semaphore::new(args.concurrency));
    let per_org = args.docs / args.orgs;
    let mut tasks = tokio::task::JoinSet::new();
    for o in 0..args.orgs {
        // The first organizations take the remainder, so the total is exactly --docs.
        let posts = per_org + usize::from(o < args.docs % args.orgs);
        let (cms, session, slots) = (cms.clone(), session.clone(), slots.clone());
        let assets = args.assets_per_org;
        tasks.spawn(async move {
            let _slot = slots.acquire_owned().await?;
            seed_org(&cms, &session, o, posts, assets).await
        });
    }
    let mut seeded = Vec::with_capacity(args.orgs);
    while let Some(done) = tasks.join_next().await {
        seeded.push(done??);
        if seeded.len() % 50 == 0 || seeded.len() == args.orgs {
            let docs: usize = seeded
                .iter()
                .map(|s: &Seeded| s.published.len() + s.drafts.len())
                .sum();
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "  seeded {}/{} organizations, {docs} posts, {:.0} posts/s",
                seeded.len(),
                args.orgs,
                docs as f64 / secs
            );
        }
    }
    seeded.sort_by(|a, b| a.org_id.cmp(&b.org_id));
    write_outputs(&args, &seeded)?;
    app.cms.close().await;
    let docs: usize = seeded
        .iter()
        .map(|s| s.published.len() + s.drafts.len())
        .sum();
    println!(
        "seeded {} organizations, {docs} posts, {} authors, {} assets in {:.1} s",
        seeded.len(),
        seeded.len() * AUTHORS_PER_ORG,
        seeded.len() * args.assets_per_org,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn bearer(token: &str) -> Credentials {
    Credentials {
        bearer: Some(token.to_string()),
        ..Default::default()
    }
}

async fn actor(cms: &Cms, credentials: Credentials) -> anyhow::Result<Actor> {
    Ok(cms
        .auth()
        .authenticate(&credentials)
        .await?
        .context("the credentials authenticate")?
        .actor)
}

async fn seed_org(
    cms: &Cms,
    session: &Mutex<(Actor, String)>,
    o: usize,
    posts: usize,
    assets: usize,
) -> anyhow::Result<Seeded> {
    let (org_id, key) = {
        let guard = session.lock().await;
        let (admin, token) = &*guard;
        let org = cms
            .organizations()
            .create(
                admin,
                NewOrganization {
                    name: Some(format!("Bench {o}")),
                    slug: Some(format!("bench-{o}")),
                    ..Default::default()
                },
            )
            .await?;
        cms.organizations().switch(admin, Some(&org.id)).await?;
        let owner = actor(cms, bearer(token)).await?;
        let key = cms
            .api_keys()
            .create(
                &owner,
                NewApiKey {
                    name: Some(format!("bench-{o}")),
                    permissions: Some(vec!["write".into()]),
                    ..Default::default()
                },
            )
            .await?
            .key;
        (org.id, key)
    };
    let writer = actor(
        cms,
        Credentials {
            api_key: Some(key.clone()),
            ..Default::default()
        },
    )
    .await?;
    let mut seeded = Seeded {
        org_id,
        key,
        ..Default::default()
    };

    let mut covers = Vec::new();
    for a in 0..assets {
        let bytes = Bytes::from(png(64 + a as u32, 48, 2048 + 512 * a));
        let body = futures_util::stream::once(async move { Ok(bytes) });
        let staged = cms
            .assets()
            .stage(&writer, &format!("cover-{a}.png"), body)
            .await?;
        let asset = cms
            .assets()
            .create(
                &writer,
                staged,
                UploadMetadata {
                    title: Some(format!("Cover {a} of organization {o}")),
                    alt: Some("A bench cover".into()),
                    ..Default::default()
                },
            )
            .await?;
        seeded.media.push(asset.url.clone());
        covers.push(asset.id.clone());
    }

    let authors: Vec<NewDocument> = (0..AUTHORS_PER_ORG)
        .map(|a| NewDocument {
            doc_type: "author".into(),
            data: json!({"name": format!("Author {a} of {o}"), "bio": "Writes for the bench."}),
            publish: true,
            locale: None,
        })
        .collect();
    let authors: Vec<String> = cms
        .documents()
        .import(&writer, authors)
        .await?
        .into_iter()
        .map(|(view, _)| view.id)
        .collect();

    let mut start = 0;
    while start < posts {
        let end = (start + BATCH).min(posts);
        let batch: Vec<NewDocument> = (start..end)
            .map(|i| post(o, i, &authors, &covers))
            .collect();
        let published: Vec<bool> = batch.iter().map(|d| d.publish).collect();
        let created = cms.documents().import(&writer, batch).await?;
        for ((view, _), published) in created.into_iter().zip(published) {
            match published {
                true => seeded.published.push(view.id),
                false => seeded.drafts.push(view.id),
            }
        }
        start = end;
    }
    Ok(seeded)
}

/// The `i`th post of organization `o`: deterministic, with values spread over the indexed
/// fields (`views` 0 to 999,999, `publishedOn` over 2020 to 2025, `title`).
fn post(o: usize, i: usize, authors: &[String], covers: &[String]) -> NewDocument {
    let n = (o * 1_000_003 + i * 7_919) as u64;
    let views = (n.wrapping_mul(2_654_435_761) >> 7) % 1_000_000;
    let mut data = json!({
        "title": format!("Post {i} of organization {o}"),
        "excerpt": "A post written by the scale bench's seeder, with an excerpt of a sentence or two \
                    so that the rows have a realistic size.",
        "views": views,
        "publishedOn": format!("{}-{:02}-{:02}", 2020 + n % 6, 1 + n % 12, 1 + n % 28),
        "tags": ["bench", format!("t{}", n % 50)],
        "author": {"_ref": authors[i % authors.len()]},
    });
    if i.is_multiple_of(3) && !covers.is_empty() {
        data["cover"] = json!({"asset": {"_ref": covers[i % covers.len()]}, "alt": "cover"});
    }
    NewDocument {
        doc_type: "post".into(),
        data,
        // Every tenth post stays a draft.
        publish: !i.is_multiple_of(10),
        locale: None,
    }
}

/// A small PNG: a real header (so the upload is sniffed and measured as an image) and filler.
fn png(width: u32, height: u32, extra: usize) -> Vec<u8> {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    bytes.extend_from_slice(&[0, 0, 0, 13]);
    bytes.extend_from_slice(b"IHDR");
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend((0..extra).map(|i| (i % 251) as u8));
    bytes
}

/// The load generator's lists. Published posts are dealt into reads, updates and mixed
/// updates; drafts into publishes and mixed publishes; each list interleaved across
/// organizations (the j-th of every organization, then the (j+1)-th, ...).
fn write_outputs(args: &Args, seeded: &[Seeded]) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out)?;
    let reads_per_org = (READS / seeded.len()).max(20);
    // (file, pool: published or drafts, which of every `of` in the pool)
    let pools: [(&str, bool, usize, usize); 5] = [
        ("updates.tsv", true, 0, 3),
        ("updates-mix.tsv", true, 1, 3),
        ("reads.tsv", true, 2, 3),
        ("publishes.tsv", false, 0, 2),
        ("publishes-mix.tsv", false, 1, 2),
    ];
    for (file, published, which, of) in pools {
        let lists: Vec<(&str, Vec<&String>)> = seeded
            .iter()
            .map(|s| {
                let pool = if published { &s.published } else { &s.drafts };
                let mut ids: Vec<&String> = pool.iter().skip(which).step_by(of).collect();
                if file == "reads.tsv" {
                    ids.truncate(reads_per_org);
                }
                (s.key.as_str(), ids)
            })
            .collect();
        let longest = lists.iter().map(|(_, ids)| ids.len()).max().unwrap_or(0);
        let mut text = String::new();
        for j in 0..longest {
            for (key, ids) in &lists {
                if let Some(id) = ids.get(j) {
                    writeln!(text, "{key}\t{id}")?;
                }
            }
        }
        std::fs::write(args.out.join(file), text)?;
    }
    let mut orgs = String::new();
    let mut media = String::new();
    for s in seeded {
        writeln!(orgs, "{}\t{}", s.key, s.org_id)?;
        for url in &s.media {
            writeln!(media, "{url}")?;
        }
    }
    std::fs::write(args.out.join("orgs.tsv"), orgs)?;
    std::fs::write(args.out.join("media.txt"), media)?;
    let summary: Value = json!({
        "organizations": seeded.len(),
        "posts": seeded.iter().map(|s| s.published.len() + s.drafts.len()).sum::<usize>(),
        "published": seeded.iter().map(|s| s.published.len()).sum::<usize>(),
        "authors": seeded.len() * AUTHORS_PER_ORG,
        "assets": seeded.len() * args.assets_per_org,
    });
    std::fs::write(
        args.out.join("seeded.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    Ok(())
}
