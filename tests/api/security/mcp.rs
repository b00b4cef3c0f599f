//! Rows of the security table for the MCP door (issue 31, CONTRACT.md section 21): its tools
//! and resources run as the caller, so field rules strip, other organizations' ids are absent
//! and a key's scope holds exactly as through REST.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{DOCS, Fx, assert_no_hidden, new_note};
use crate::mcp::Raw;

/// A tool call's structured result, failures included.
fn structured(answer: &Value) -> &Value {
    &answer["result"]["structuredContent"]
}

fn is_error(answer: &Value) -> bool {
    answer["result"]["isError"] == true
}

fn tool_names(answer: &Value) -> Vec<String> {
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

pub(super) async fn hidden_field_stripped_from_mcp_tools(fx: Arc<Fx>) {
    let own = new_note(
        &fx.app,
        &fx.admin,
        json!({"title": "Through MCP", "secret": "S-ALPHA", "locked": "L-OWN"}),
        false,
    )
    .await;
    let mcp = Raw::open(&fx.app, &fx.editor.token).await;
    let answers = [
        mcp.call("get_document", json!({"collection": "note", "id": fx.beta}))
            .await,
        mcp.call(
            "query_documents",
            json!({"collection": "note", "where": {"secret": {"equals": "S-BETA"}}}),
        )
        .await,
        mcp.call(
            "query_documents",
            json!({"collection": "note", "sort": "-secret", "limit": 100}),
        )
        .await,
        mcp.call(
            "update_document",
            json!({"collection": "note", "id": own, "data": {"secret": "FORGED", "locked": "FORGED"}}),
        )
        .await,
        mcp.request(
            "resources/read",
            json!({"uri": format!("cms://documents/{}", fx.alpha)}),
        )
        .await,
    ];
    for answer in &answers {
        assert_no_hidden("MCP answer", answer);
    }
    assert_eq!(structured(&answers[0])["draftData"]["title"], "Beta");
    assert_eq!(
        structured(&answers[1])["pagination"]["total"],
        0,
        "a filter on a field the caller cannot read matches nothing: {}",
        answers[1]
    );
    assert!(
        structured(&answers[2])["pagination"]["total"]
            .as_i64()
            .unwrap()
            >= 4,
        "a sort on it is ignored: {}",
        answers[2]
    );
    assert!(!is_error(&answers[3]), "{}", answers[3]);
    assert!(
        answers[4]["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Alpha")),
        "{}",
        answers[4]
    );
    let stored = fx.stored(&own).await;
    assert_eq!(stored["draftData"]["secret"], "S-ALPHA");
    assert_eq!(stored["draftData"]["locked"], "L-OWN");
}

pub(super) async fn mcp_foreign_ids_are_not_found(fx: Arc<Fx>) {
    let outsiders_note = format!("{DOCS}/{}", fx.stranger_note);
    let before = fx.get(&fx.stranger, &outsiders_note).await.body;
    let mcp = Raw::open(&fx.app, &fx.editor.token).await;
    for foreign in [&fx.stranger_note, &fx.child_note] {
        let read = mcp
            .call("get_document", json!({"collection": "note", "id": foreign}))
            .await;
        assert!(is_error(&read), "{read}");
        assert_eq!(structured(&read)["error"], "document not found", "{read}");
        let write = mcp
            .call(
                "update_document",
                json!({"collection": "note", "id": foreign, "data": {"title": "Taken"}}),
            )
            .await;
        assert!(is_error(&write), "{write}");
        let publish = mcp
            .call(
                "publish_document",
                json!({"collection": "note", "id": foreign}),
            )
            .await;
        assert!(is_error(&publish), "{publish}");
        let resource = mcp
            .request(
                "resources/read",
                json!({"uri": format!("cms://documents/{foreign}")}),
            )
            .await;
        assert_eq!(resource["error"]["code"], -32002, "{resource}");
    }
    // The outsider's key, the other way round.
    let outsider = Raw::open(&fx.app, &fx.stranger_key).await;
    let read = outsider
        .call(
            "get_document",
            json!({"collection": "note", "id": fx.alpha}),
        )
        .await;
    assert!(is_error(&read), "{read}");
    assert!(!read.to_string().contains("Alpha"), "{read}");
    assert_eq!(fx.get(&fx.stranger, &outsiders_note).await.body, before);
}

pub(super) async fn mcp_tools_hold_the_key_scope(fx: Arc<Fx>) {
    // A read key: no writing tool is offered, and calling one is refused as absent.
    let read = Raw::open(&fx.app, &fx.read_key).await;
    let offered = tool_names(&read.request("tools/list", json!({})).await);
    assert!(offered.contains(&"get_document".to_string()), "{offered:?}");
    for tool in [
        "create_document",
        "update_document",
        "publish_document",
        "upload_asset",
    ] {
        assert!(!offered.contains(&tool.to_string()), "{tool}: {offered:?}");
    }
    let refused = read
        .call(
            "create_document",
            json!({"collection": "note", "data": {"title": "By a read key"}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // A capability key (document.read, document.create): it creates, never publishes.
    let caps = Raw::open(&fx.app, &fx.caps_key).await;
    let offered = tool_names(&caps.request("tools/list", json!({})).await);
    assert!(
        offered.contains(&"create_document".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"publish_document".to_string()),
        "{offered:?}"
    );
    let published = caps
        .call(
            "create_document",
            json!({"collection": "note", "data": {"title": "Caps via MCP"}, "publish": true}),
        )
        .await;
    assert!(is_error(&published), "{published}");
    let refused = caps
        .call(
            "publish_document",
            json!({"collection": "note", "id": fx.beta}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let listed = fx
        .get(&fx.admin, &format!("{DOCS}?type=note&pageSize=100"))
        .await;
    assert!(
        !listed.body.to_string().contains("By a read key")
            && !listed.body.to_string().contains("Caps via MCP"),
        "nothing was written"
    );
}
