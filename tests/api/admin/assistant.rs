//! The assistant panel beside every page: absent without a model backend; a chat whose answer
//! streams in and whose next turn sends the whole conversation; tools shown as they run, with
//! the change set in the panel's history and its undo; and the workspace protocol on the
//! document edit page, where the model's edits land in the form. The model is the scripted
//! OpenAI-compatible server of the assistant's API tests.

use std::time::Duration;

use axum::http::StatusCode;
use fantoccini::key::Key;
use serde_json::{Value, json};

use super::Ui;
use crate::agent::{Answer, Model};
use crate::support::{Session, TestApp, config_for};

/// An app whose assistant talks to `model`, its first owner, and a browser signed in as them.
async fn with_model(
    url: &str,
    model: &Model,
    scenario: &str,
    turns_per_minute: u32,
) -> (Ui, Session) {
    let mut config = config_for(url);
    config.agent.base_url = Some(model.base_url.clone());
    config.agent.model = Some("test-model".into());
    config.agent.turns_per_minute = turns_per_minute;
    let app = TestApp::with(config, None).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let ui = Ui::start(app, scenario).await;
    ui.sign_in_as(&owner).await;
    (ui, owner)
}

/// Waits for the panel to have decided from `ctx.assistant` (`GET /api/user/access`).
async fn decided(ui: &Ui, state: &str) {
    ui.find(&format!("#assistant[data-backend='{state}']"))
        .await;
}

async fn create_post(ui: &Ui, owner: &Session, title: &str) -> String {
    let res = ui
        .app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": title}}),
        )
        .cookie(owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn draft_title(ui: &Ui, owner: &Session, id: &str) -> Value {
    let res = ui
        .app
        .get(&format!("/api/documents/{id}"))
        .cookie(owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"]["draftData"]["title"].clone()
}

async fn change_sets(ui: &Ui, owner: &Session) -> Value {
    let res = ui
        .app
        .get("/api/agent/change-sets")
        .cookie(owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body
}

/// Types `text` in the composer and presses Enter.
async fn say(ui: &Ui, text: &str) {
    let composer = ui.control("Message to the assistant").await;
    composer.clear().await.unwrap();
    composer
        .send_keys(&format!("{text}{}", Key::Enter))
        .await
        .unwrap();
}

/// Waits until no turn is running (Send usable again, Stop not).
async fn turn_over(ui: &Ui) {
    ui.find("#assistant .assistant-composer button[type='submit']:not([disabled])")
        .await;
}

async fn without_a_backend_there_is_no_panel(url: String) {
    let app = TestApp::start(&url).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let ui = Ui::start(app, "assistant-none").await;
    ui.sign_in_as(&owner).await;
    ui.open("/admin").await;
    decided(&ui, "none").await;
    let dock = ui
        .eval(
            "const d = document.getElementById('assistant'); return [d.hidden, d.childElementCount]",
            vec![],
        )
        .await;
    assert_eq!(dock, json!([true, 0]));
    ui.screenshot("no-panel").await;
    ui.stop().await;
}

/// A backend without a model id: the panel says so, and nothing can be sent.
async fn a_backend_without_a_model_says_so(url: String) {
    let mut config = config_for(&url);
    config.agent.base_url = Some("http://127.0.0.1:9/v1".into());
    let app = TestApp::with(config, None).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let ui = Ui::start(app, "assistant-no-model").await;
    ui.sign_in_as(&owner).await;
    ui.open("/admin").await;
    decided(&ui, "no-model").await;
    ui.click("Assistant").await;
    ui.see("no model configured").await;
    let disabled = ui
        .eval(
            "return document.querySelector('#assistant textarea').disabled",
            vec![],
        )
        .await;
    assert_eq!(disabled, json!(true));
    ui.screenshot("no-model").await;
    ui.stop().await;
}

async fn an_answer_streams_in_and_the_next_turn_sends_the_whole_conversation(url: String) {
    let model = Model::start(vec![
        Answer::Text(vec!["Hel", "lo ", "there!"], (12, 3)),
        Answer::Text(vec!["Again."], (20, 2)),
    ])
    .await;
    let (ui, _owner) = with_model(&url, &model, "assistant-chat", 2).await;
    ui.open("/admin").await;
    decided(&ui, "ready").await;
    ui.screenshot("collapsed").await;
    ui.click("Assistant").await;

    // Shift+Enter is a new line, not a turn.
    let composer = ui.control("Message to the assistant").await;
    composer
        .send_keys(&format!(
            "line one{}{}{}line two",
            Key::Shift,
            Key::Enter,
            Key::Null
        ))
        .await
        .unwrap();
    assert_eq!(
        composer.prop("value").await.unwrap().as_deref(),
        Some("line one\nline two")
    );
    assert!(model.requests().is_empty());

    say(&ui, "Hi").await;
    ui.see("Hello there!").await;
    ui.see("12 tokens in, 3 out").await;
    turn_over(&ui).await;
    ui.screenshot("answered").await;

    ui.fill("Message to the assistant", "And?").await;
    ui.click("Send").await;
    ui.see("Again.").await;
    turn_over(&ui).await;
    // The server keeps nothing: the second turn carried the first one's messages.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1]["messages"].as_array().unwrap();
    let said: Vec<(&str, &str)> = sent[1..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [
            ("user", "Hi"),
            ("assistant", "Hello there!"),
            ("user", "And?")
        ]
    );

    // The conversation and the open panel outlast a move to another page.
    ui.open("/admin").await;
    ui.see("Hello there!").await;
    ui.see("Again.").await;

    // Past the turn limit the refusal is shown, and the message comes back to the composer.
    say(&ui, "Once more").await;
    ui.see("Try again in").await;
    turn_over(&ui).await;
    let kept = ui.control("Message to the assistant").await;
    assert_eq!(
        kept.prop("value").await.unwrap().as_deref(),
        Some("Once more")
    );
    assert_eq!(
        model.requests().len(),
        2,
        "a refused turn never reaches the model"
    );
    ui.screenshot("turn-limit").await;

    // A new conversation starts empty, and its first turn sends only itself.
    ui.click("New conversation").await;
    let count = ui
        .eval(
            "return document.querySelectorAll('#assistant .assistant-message').length",
            vec![],
        )
        .await;
    assert_eq!(count, json!(0));
    ui.see("Ask the assistant").await;
    // At phone width the panel sits under the page.
    ui.client().set_window_size(390, 844).await.unwrap();
    ui.open("/admin").await;
    ui.find("#assistant textarea").await.click().await.unwrap();
    ui.screenshot("phone").await;
    ui.stop().await;
}

async fn a_tool_round_trip_is_listed_in_history_and_undone(url: String) {
    let model = Model::start(vec![]).await;
    let (ui, owner) = with_model(&url, &model, "assistant-tools", 20).await;
    let post = create_post(&ui, &owner, "Original").await;
    model.push(vec![
        Answer::Calls(vec![
            (
                "c1",
                "create_document",
                json!({"collection": "post", "data": {"title": "Written by the assistant"}}),
            ),
            (
                "c2",
                "update_document",
                json!({"collection": "post", "id": post, "data": {"title": "Changed"}}),
            ),
        ]),
        Answer::Text(vec!["Created one, changed one."], (5, 1)),
    ]);
    ui.open("/admin").await;
    decided(&ui, "ready").await;
    ui.click("Assistant").await;
    say(&ui, "Write a post and retitle mine").await;
    ui.see("Created one, changed one.").await;
    turn_over(&ui).await;
    // Each tool is a line with its state; its arguments and result unfold.
    ui.find("#assistant .assistant-activity.ok[data-tool='create_document']")
        .await;
    ui.find("#assistant .assistant-activity.ok[data-tool='update_document']")
        .await;
    ui.find("#assistant .assistant-activity[data-tool='create_document'] summary")
        .await
        .click()
        .await
        .unwrap();
    ui.see("Written by the assistant").await;
    ui.screenshot("tools").await;

    // The API has what the tools did.
    assert_eq!(draft_title(&ui, &owner, &post).await, "Changed");
    let list = ui
        .app
        .get("/api/documents?type=post")
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(list.body["pagination"]["total"], 2, "{}", list.body);
    let created = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] != post.as_str())
        .expect("the new post")["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        draft_title(&ui, &owner, &created).await,
        "Written by the assistant"
    );

    // History lists the turn with its operations, each document linked to its edit page.
    ui.click("History").await;
    ui.find(&format!(
        "#assistant .assistant-operations a[href='/admin/documents/post/{post}']"
    ))
    .await;
    ui.find(&format!(
        "#assistant .assistant-operations a[href='/admin/documents/post/{created}']"
    ))
    .await;
    ui.screenshot("history").await;

    // Undo restores the changed post; the created one has no version to go back to.
    ui.click("Undo").await;
    ui.click("Undo changes").await;
    ui.see("Undone: 1 document restored; 1 skipped").await;
    ui.find("#assistant .assistant-change.undone").await;
    ui.screenshot("undone").await;
    assert_eq!(draft_title(&ui, &owner, &post).await, "Original");
    let sets = change_sets(&ui, &owner).await;
    assert!(sets["data"][0]["undoneAt"].is_string(), "{sets}");

    // A turn undone elsewhere while the list still offers its Undo: the 409 is shown.
    model.push(vec![
        Answer::Calls(vec![(
            "c3",
            "update_document",
            json!({"collection": "post", "id": post, "data": {"title": "Changed twice"}}),
        )]),
        Answer::Text(vec!["Changed again."], (5, 1)),
    ]);
    ui.click("Chat").await;
    say(&ui, "Retitle it again").await;
    ui.see("Changed again.").await;
    turn_over(&ui).await;
    ui.click("History").await;
    ui.find("#assistant .assistant-change:not(.undone) button")
        .await;
    let sets = change_sets(&ui, &owner).await;
    let newest = sets["data"][0]["id"].as_str().unwrap().to_string();
    let res = ui
        .app
        .post(&format!("/api/agent/change-sets/{newest}/undo"), json!({}))
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    ui.click("Undo").await;
    ui.click("Undo changes").await;
    ui.see("These changes were undone already.").await;
    // The list is fresh again: both turns undone, no Undo left.
    ui.find("#assistant .assistant-changes").await;
    let undos = ui
        .eval(
            "return [document.querySelectorAll('#assistant .assistant-change.undone').length, document.querySelectorAll('#assistant .assistant-change button').length]",
            vec![],
        )
        .await;
    assert_eq!(undos, json!([2, 0]));
    ui.screenshot("already-undone").await;
    assert_eq!(draft_title(&ui, &owner, &post).await, "Original");

    // A change an MCP client made is listed too, marked as such.
    let mcp = crate::mcp::Raw::open(&ui.app, &owner.token).await;
    let answer = mcp
        .call(
            "update_document",
            json!({"collection": "post", "id": post, "data": {"title": "Via MCP"}}),
        )
        .await;
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    ui.click("Chat").await;
    ui.click("History").await;
    ui.find("#assistant .assistant-change:not(.undone) .badge")
        .await;
    ui.see("Through MCP").await;

    // Stop ends a turn that is taking too long, and the composer is usable again.
    model.push(vec![Answer::Stall(Duration::from_secs(30))]);
    ui.click("Chat").await;
    say(&ui, "Take your time").await;
    ui.click("Stop").await;
    ui.see("Stopped.").await;
    turn_over(&ui).await;
    ui.screenshot("stopped").await;
    ui.stop().await;
}

/// On the edit page the assistant works through the form: a patch shows in the field unsaved,
/// and a save goes through the editor's own revision-guarded save.
async fn the_assistant_edits_the_open_document_through_its_form(url: String) {
    let model = Model::start(vec![]).await;
    let (ui, owner) = with_model(&url, &model, "assistant-workspace", 20).await;
    let post = create_post(&ui, &owner, "Draft title").await;
    model.push(vec![
        Answer::Calls(vec![(
            "p1",
            "content_patch_fields",
            json!({"fields": {"title": "Better title"}}),
        )]),
        Answer::Text(vec!["I changed the title; it is not saved yet."], (1, 1)),
        Answer::Calls(vec![("s1", "content_save_draft", json!({}))]),
        Answer::Text(vec!["Saved."], (1, 1)),
    ]);
    ui.open(&format!("/admin/documents/post/{post}")).await;
    decided(&ui, "ready").await;
    ui.click("Assistant").await;
    ui.see("Working with the open Post").await;

    say(&ui, "Improve the title").await;
    ui.see("it is not saved yet").await;
    turn_over(&ui).await;
    let title = ui.control("Title").await;
    assert_eq!(
        title.prop("value").await.unwrap().as_deref(),
        Some("Better title")
    );
    assert_eq!(
        draft_title(&ui, &owner, &post).await,
        "Draft title",
        "a patch is not saved"
    );
    ui.find("#assistant .assistant-activity.ok[data-tool='content_patch_fields']")
        .await;
    ui.screenshot("patched").await;
    // The turn resumed with the editor's answer to the paused call.
    let requests = model.requests();
    let resumed = requests[1]["messages"].as_array().unwrap();
    let answer = resumed.last().unwrap();
    assert_eq!(
        (&answer["role"], &answer["tool_call_id"]),
        (&json!("tool"), &json!("p1"))
    );
    assert!(
        answer["content"]
            .as_str()
            .unwrap()
            .contains("\"persisted\":false"),
        "{answer}"
    );

    say(&ui, "Save it").await;
    ui.see("Saved.").await;
    turn_over(&ui).await;
    assert_eq!(draft_title(&ui, &owner, &post).await, "Better title");
    ui.find("#assistant .assistant-activity.ok[data-tool='content_save_draft']")
        .await;
    ui.screenshot("saved").await;
    // The editor's save joined the turn's change set, with the versions around it.
    let sets = change_sets(&ui, &owner).await;
    assert_eq!(
        sets["data"][0]["operations"],
        json!([{
            "tool": "content_save_draft", "collection": "post", "documentId": post,
            "success": true, "versionBefore": 1, "versionAfter": 2
        }])
    );
    ui.stop().await;
}

/// The panel's reader of server-sent events, fed one text cut at every place (inside a CRLF
/// pair, a field name, a multi-byte character's bytes), reads the same events.
async fn the_event_reader_survives_chunks_split_anywhere(url: String) {
    let ui = Ui::start(TestApp::start(&url).await, "assistant-reader").await;
    ui.open("/admin/sign-in").await;
    let result = ui
        .eval(
            r#"
            return import(document.body.dataset.assets + '/js/assistant.js').then(({ eventParser }) => {
              const text = 'event: text\r\ndata: {"delta":"caf\u00e9 \u{1F600}"}\r\n\r\n: keep-alive\n\nevent: done\ndata: {"finishReason":\ndata: "stop"}\n\n';
              const bytes = new TextEncoder().encode(text);
              const read = (cuts) => {
                const seen = [];
                const parser = eventParser((kind, data) => seen.push([kind, data]));
                const decoder = new TextDecoder();
                let from = 0;
                for (const cut of [...cuts, bytes.length]) {
                  parser.push(decoder.decode(bytes.slice(from, cut), { stream: true }));
                  from = cut;
                }
                parser.push(decoder.decode());
                parser.end();
                return JSON.stringify(seen);
              };
              const whole = read([]);
              const differing = [];
              for (let i = 1; i < bytes.length; i++) {
                if (read([i]) !== whole) differing.push(i);
                if (read([i, i + 1]) !== whole) differing.push(-i);
              }
              return [JSON.parse(whole), differing];
            });
            "#,
            vec![],
        )
        .await;
    assert_eq!(
        result,
        json!([
            [
                ["text", "{\"delta\":\"caf\u{e9} \u{1F600}\"}"],
                ["done", "{\"finishReason\":\n\"stop\"}"]
            ],
            []
        ])
    );
    ui.stop().await;
}

crate::admin_scenarios!(
    without_a_backend_there_is_no_panel,
    a_backend_without_a_model_says_so,
    an_answer_streams_in_and_the_next_turn_sends_the_whole_conversation,
    a_tool_round_trip_is_listed_in_history_and_undone,
    the_assistant_edits_the_open_document_through_its_form,
    the_event_reader_survives_chunks_split_anywhere,
);
