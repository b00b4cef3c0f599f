// The assistant panel, beside every signed-in page when the instance has a model backend
// (CONTRACT.md section 8): a chat whose turns stream back as server-sent events, the workspace
// protocol against the document open in the editor, and the history of the assistant's
// changes with their undo.
//
// The server keeps no conversation: each turn sends the whole message list, and the list the
// `done` event returns is the conversation from then on. It is kept in sessionStorage so it
// survives moving between pages of the admin (every page is a full load).

import { get, post, query, seg, ApiError } from "./api.js";
import { h, render, field, notify, confirm, timeAgo } from "./dom.js";
import { openedDocument, onDocumentChange } from "./workspace.js";

const OPEN_KEY = "cms.assistant.open";
const HISTORY_PAGE_SIZE = 10;

export async function start(ctx) {
  const dock = document.getElementById("assistant");
  if (!dock || !ctx.organization) return;
  const backend = backendOf(ctx);
  // What the instance said, for tests that must know the panel decided even when nothing is
  // drawn.
  dock.dataset.backend = backend.state;
  if (backend.state === "none") return;
  new Panel(dock, ctx, backend).draw();
}

// What the instance says of its assistant (`GET /api/user/access`, in `ctx.assistant`).
function backendOf(ctx) {
  if (ctx.assistant === "ready") return { state: "ready" };
  if (ctx.assistant === "noModel") {
    return { state: "no-model", message: "The assistant's backend has no model configured (agent.model)." };
  }
  return { state: "none" };
}

// ---------------------------------------------------------------------------------------
// Server-sent events read from a fetch body (EventSource cannot POST). Chunks may split a
// line, a CRLF pair or a UTF-8 character anywhere; the decoder and the line buffer absorb it.

export function eventParser(onEvent) {
  let buffer = "";
  let name = "";
  let data = [];
  const dispatch = () => {
    if (data.length) onEvent(name || "message", data.join("\n"));
    name = "";
    data = [];
  };
  const line = (text) => {
    if (text === "") return dispatch();
    if (text.startsWith(":")) return; // a comment: the keep-alive
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  };
  return {
    push(text) {
      buffer += text;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        if (!match) return;
        // A lone CR at the end may be the first half of a CRLF: wait for the next chunk.
        if (match[0] === "\r" && match.index === buffer.length - 1) return;
        line(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    },
    end() {
      if (buffer) line(buffer.replace(/\r$/, ""));
      buffer = "";
      dispatch();
    },
  };
}

// Reads the event stream of `response`, calling `onEvent(kind, data)` with parsed JSON.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = eventParser((kind, text) => {
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      value = { message: text };
    }
    onEvent(kind, value);
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.push(decoder.decode(value, { stream: true }));
  }
  parser.push(decoder.decode());
  parser.end();
}

// One POST of a turn. Resolves to the response once its events may be read; a refusal
// rejects with an ApiError carrying `retryAfter` (seconds) for a 429.
async function postTurn(body, signal) {
  let response;
  try {
    response = await fetch("/api/agent/chat", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, null);
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { message: text.slice(0, 200) };
  }
  const error = new ApiError(response.status, parsed);
  const retry = Number.parseInt(response.headers.get("retry-after") || "", 10);
  error.retryAfter = Number.isFinite(retry) ? retry : null;
  throw error;
}

function refusalMessage(error) {
  switch (error.status) {
    case 401:
      return "Your session has ended: sign in again to use the assistant.";
    case 429:
      return error.retryAfter
        ? `You have started too many turns in a short time. Try again in ${error.retryAfter} seconds.`
        : "You have started too many turns in a short time. Try again in a minute.";
    default:
      return error.message;
  }
}

// ---------------------------------------------------------------------------------------
// The workspace tools, run here against the open document (js/workspace.js).

const WORKSPACE_TOOLS = {
  content_patch_fields: (doc, args) => {
    doc.patch(args.fields || {});
    return { ok: true, result: { persisted: false } };
  },
  content_save_draft: async (doc, args) => {
    const saved = await doc.saveDraft({ expectedRevision: args.expectedRevision });
    return { ok: true, result: { id: doc.id, revision: saved?._meta?.revision ?? doc.revision() } };
  },
};

async function runWorkspaceCall(call, turnDocument) {
  const doc = openedDocument();
  if (!doc || !turnDocument || doc.collection !== turnDocument.collection || doc.id !== turnDocument.id) {
    return { ok: false, error: "no document is open in the editor" };
  }
  const tool = WORKSPACE_TOOLS[call.name];
  if (!tool) return { ok: false, error: `the editor does not know the tool \`${call.name}\`` };
  try {
    return await tool(doc, call.arguments || {});
  } catch (error) {
    const failure = { ok: false, error: error?.message || String(error) };
    if (error instanceof ApiError && error.issues.length) failure.issues = error.issues;
    return failure;
  }
}

const toolMessage = (id, result) => ({ role: "tool", tool_call_id: id, content: JSON.stringify(result) });

// ---------------------------------------------------------------------------------------
// The panel.

class Panel {
  constructor(dock, ctx, backend) {
    this.dock = dock;
    this.ctx = ctx;
    this.backend = backend;
    this.storageKey = `cms.assistant.conversation:${ctx.user.id}:${ctx.organization.id}`;
    this.messages = this.loadConversation();
    this.turn = null; // { controller } while a turn runs
    this.activities = new Map(); // tool call id -> its activity line
    this.bubble = null; // the assistant bubble text deltas stream into
    this.historyPage = 1;
  }

  draw() {
    const open = localStorage.getItem(OPEN_KEY) === "true";
    this.toggle = h("button", {
      type: "button",
      class: "assistant-toggle",
      "aria-expanded": String(open),
      "aria-controls": "assistant-body",
      text: "Assistant",
      on: { click: () => this.setOpen(this.toggle.getAttribute("aria-expanded") !== "true") },
    });
    this.body = h("div", { class: "assistant-body", id: "assistant-body", hidden: !open });
    this.chatView = this.drawChat();
    this.historyView = h("section", { class: "assistant-history", "aria-label": "Assistant history", hidden: true });
    render(this.body, this.drawViewSwitch(), this.chatView, this.historyView);
    render(this.dock, this.toggle, this.body);
    this.dock.classList.toggle("collapsed", !open);
    this.dock.hidden = false;
    this.drawConversation();
    onDocumentChange(() => this.drawWorkspaceNote());
    this.followTopbar();
  }

  // The open panel sits just under the sticky top bar, whose height depends on the width.
  followTopbar() {
    const topbar = document.getElementById("topbar");
    if (!topbar) return;
    const measure = () => this.dock.style.setProperty("--assistant-top", `${topbar.offsetHeight}px`);
    measure();
    new ResizeObserver(measure).observe(topbar);
  }

  setOpen(open) {
    this.toggle.setAttribute("aria-expanded", String(open));
    this.body.hidden = !open;
    this.dock.classList.toggle("collapsed", !open);
    localStorage.setItem(OPEN_KEY, String(open));
    if (open) {
      this.scrollToEnd();
      this.input.focus();
    }
  }

  // "Chat" and "History" (the change sets, for those who may read documents).
  drawViewSwitch() {
    const views = [["chat", "Chat"]];
    if (this.ctx.can("document.read")) views.push(["history", "History"]);
    this.viewButtons = views.map(([view, label]) =>
      h("button", {
        type: "button",
        class: "link",
        "aria-pressed": String(view === "chat"),
        dataset: { view },
        text: label,
        on: { click: () => this.showView(view) },
      }),
    );
    return h("div", { class: "assistant-views" }, this.viewButtons);
  }

  showView(view) {
    this.viewButtons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.view === view)));
    this.chatView.hidden = view !== "chat";
    this.historyView.hidden = view !== "history";
    if (view === "history") this.loadHistory(1);
  }

  // ----- chat -----

  drawChat() {
    this.list = h("ol", { class: "assistant-messages", "aria-live": "polite", "aria-label": "Conversation" });
    this.workspaceNote = h("p", { class: "assistant-workspace muted", hidden: true });
    this.input = h("textarea", { name: "message", rows: "3", disabled: this.backend.state !== "ready" });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.form.requestSubmit();
      }
    });
    this.sendButton = h("button", { type: "submit", class: "primary", text: "Send", disabled: this.backend.state !== "ready" });
    this.stopButton = h("button", { type: "button", text: "Stop", disabled: true, on: { click: () => this.stop() } });
    this.resetButton = h("button", { type: "button", class: "link", text: "New conversation", on: { click: () => this.reset() } });
    this.form = h(
      "form",
      { class: "assistant-composer" },
      field("Message to the assistant", this.input, { hint: "Enter sends, Shift+Enter starts a new line." }),
      h("div", { class: "actions" }, this.sendButton, this.stopButton, h("span", { class: "spacer" }), this.resetButton),
    );
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send();
    });
    const notice = this.backend.state === "no-model" ? h("p", { class: "banner warn", text: this.backend.message }) : null;
    this.drawWorkspaceNote();
    return h("section", { class: "assistant-chat", "aria-label": "Chat with the assistant" }, notice, this.workspaceNote, this.list, this.form);
  }

  drawWorkspaceNote() {
    const doc = openedDocument();
    this.workspaceNote.hidden = !doc;
    this.workspaceNote.textContent = doc
      ? `Working with the open ${this.ctx.schema(doc.collection)?.title || doc.collection}: the assistant's edits land in its form.`
      : "";
  }

  loadConversation() {
    try {
      const stored = JSON.parse(sessionStorage.getItem(this.storageKey) || "[]");
      return Array.isArray(stored) ? stored : [];
    } catch {
      return [];
    }
  }

  saveConversation() {
    try {
      if (this.messages.length) sessionStorage.setItem(this.storageKey, JSON.stringify(this.messages));
      else sessionStorage.removeItem(this.storageKey);
    } catch {
      // Too large for the session's storage: the conversation then lasts as long as the page.
      sessionStorage.removeItem(this.storageKey);
    }
  }

  // Redraws a kept conversation from its messages: what was said and which tools ran.
  drawConversation() {
    render(this.list);
    this.activities.clear();
    for (const message of this.messages) {
      if (message.role === "user") this.addBubble("user", message.content || "");
      if (message.role === "assistant") {
        if (message.content) this.addBubble("assistant", message.content);
        for (const call of message.tool_calls || []) {
          this.toolCall({ id: call.id, name: call.function?.name, arguments: parseJson(call.function?.arguments) });
        }
      }
      if (message.role === "tool") {
        const answer = parseJson(message.content);
        const ok = answer?.ok !== false;
        this.toolResult({ id: message.tool_call_id, ok, result: ok ? (answer?.result ?? answer) : answer });
      }
    }
    this.bubble = null;
    if (!this.messages.length) this.addLine("assistant-hint muted", "Ask the assistant to find, write or change content.");
  }

  reset() {
    if (this.turn) return;
    this.messages = [];
    this.saveConversation();
    this.drawConversation();
    this.input.focus();
  }

  addBubble(role, text) {
    const body = h("div", { class: "assistant-text", text });
    const li = h(
      "li",
      { class: `assistant-message ${role}` },
      h("span", { class: "assistant-who", text: role === "user" ? "You" : "Assistant" }),
      body,
    );
    this.list.querySelector(":scope > .assistant-hint")?.remove();
    this.list.append(li);
    this.scrollToEnd();
    return body;
  }

  addLine(className, text) {
    const li = h("li", { class: className, text });
    this.list.append(li);
    this.scrollToEnd();
    return li;
  }

  scrollToEnd() {
    this.list.scrollTop = this.list.scrollHeight;
  }

  text(delta) {
    if (!this.bubble) this.bubble = this.addBubble("assistant", "");
    this.bubble.append(delta);
    this.scrollToEnd();
  }

  // A tool call as a compact line: its name and state, the arguments and result on demand.
  toolCall({ id, name, arguments: args }) {
    this.bubble = null;
    const state = h("span", { class: "assistant-tool-state", text: "running…" });
    const details = h(
      "details",
      {},
      h("summary", {}, h("span", { class: "assistant-tool-name", text: name || "tool" }), " ", state),
      h("p", { class: "assistant-pre-label", text: "Arguments" }),
      h("pre", { text: pretty(args) }),
    );
    const li = h("li", { class: "assistant-activity", dataset: { tool: name || "", call: id || "" } }, details);
    this.list.append(li);
    this.activities.set(id, { li, state, details });
    this.scrollToEnd();
  }

  toolResult({ id, ok, result }) {
    const activity = this.activities.get(id);
    if (!activity) return;
    activity.li.classList.toggle("ok", ok);
    activity.li.classList.toggle("failed", !ok);
    activity.li.classList.remove("local");
    activity.state.textContent = ok
      ? result?.persisted === false
        ? "ok, in the form, not saved yet"
        : "ok"
      : `failed${result?.error ? `: ${result.error}` : ""}`;
    activity.details.querySelector(":scope > .assistant-result")?.remove();
    activity.details.append(
      h("div", { class: "assistant-result" }, h("p", { class: "assistant-pre-label", text: "Result" }), h("pre", { text: pretty(result) })),
    );
  }

  // A workspace call running here, in the editor.
  localRun(call, state) {
    if (!this.activities.has(call.id)) this.toolCall(call);
    const activity = this.activities.get(call.id);
    activity.li.classList.add("local");
    activity.state.textContent = state;
  }

  busy(running) {
    this.sendButton.disabled = running;
    this.stopButton.disabled = !running;
    this.resetButton.disabled = running;
    this.list.setAttribute("aria-busy", String(running));
  }

  stop() {
    this.turn?.controller.abort();
  }

  async send() {
    const text = this.input.value.trim();
    if (!text || this.turn || this.backend.state !== "ready") return;
    this.input.value = "";
    const bubble = this.addBubble("user", text);
    const before = this.messages;
    const turn = { controller: new AbortController() };
    this.turn = turn;
    this.busy(true);
    try {
      const refused = await this.runTurn([...before, { role: "user", content: text }], turn);
      if (refused) {
        // Never heard by the model: the conversation stays as it was, the text comes back.
        this.messages = before;
        bubble.parentElement.classList.add("unsent");
        if (!this.input.value) this.input.value = text;
      }
    } finally {
      this.turn = null;
      this.bubble = null;
      this.busy(false);
      this.saveConversation();
    }
  }

  // Runs a turn to its end, resuming after each workspace pause. Returns true when the first
  // request was refused (nothing happened).
  async runTurn(messages, turn) {
    const doc = openedDocument();
    const document = doc ? { collection: doc.collection, id: doc.id } : undefined;
    let first = true;
    for (;;) {
      this.messages = messages;
      let done = null;
      let partial = "";
      try {
        const response = await postTurn({ messages, document }, turn.controller.signal);
        first = false;
        await readEvents(response, (kind, value) => {
          if (kind === "text") partial += value.delta || "";
          if (kind === "done") done = value;
          this.event(kind, value);
        });
      } catch (error) {
        if (error.name === "AbortError") {
          this.addLine("assistant-note muted", "Stopped.");
        } else if (error instanceof ApiError) {
          this.addLine("assistant-error", refusalMessage(error));
          if (first) return true;
        } else {
          this.addLine("assistant-error", `The answer broke off: ${error.message || error}`);
        }
      }
      if (!done) {
        // Stopped or broken off: keep what was said, so the next turn reads consistently.
        if (partial) this.messages = [...messages, { role: "assistant", content: partial }];
        return false;
      }
      this.messages = done.messages || messages;
      if (done.finishReason !== "awaiting_workspace_tool") return false;
      messages = await this.resolveWorkspaceCalls(done.pendingToolCalls || [], document, turn);
      if (turn.controller.signal.aborted) {
        this.messages = messages;
        this.addLine("assistant-note muted", "Stopped.");
        return false;
      }
    }
  }

  // Runs the paused calls in the editor and returns the message list to resume with: one
  // tool message per call. After a Stop the rest are answered as failed without running.
  async resolveWorkspaceCalls(calls, document, turn) {
    const answers = [];
    for (const call of calls) {
      let result;
      if (turn.controller.signal.aborted) {
        result = { ok: false, error: "stopped by the person" };
      } else {
        this.localRun(call, "running in the editor…");
        result = await runWorkspaceCall(call, document);
      }
      this.toolResult({ id: call.id, ok: result.ok, result: result.ok ? (result.result ?? {}) : result });
      answers.push(toolMessage(call.id, result));
    }
    return [...this.messages, ...answers];
  }

  event(kind, value) {
    switch (kind) {
      case "text":
        return this.text(value.delta || "");
      case "toolCall":
        return this.toolCall(value);
      case "toolResult":
        return this.toolResult(value);
      case "usage":
        return this.addLine("assistant-usage", usageText(value));
      case "error":
        this.bubble = null;
        return this.addLine("assistant-error", value.message || "The assistant failed.");
      case "done":
        this.bubble = null;
        if (value.finishReason === "max_rounds") {
          this.addLine("assistant-note muted", "The assistant stopped after its limit of rounds for one turn.");
        }
        return;
      default:
        return;
    }
  }

  // ----- history -----

  async loadHistory(page) {
    this.historyPage = page;
    const status = this.historyStatus || h("p", { class: "assistant-history-status", role: "status" });
    this.historyStatus = status;
    const list = h("ol", { class: "assistant-changes", "aria-label": "Assistant turns that changed something" });
    render(this.historyView, status, h("p", { class: "loading", text: "Loading…" }));
    let answer;
    try {
      answer = await get(`/api/agent/change-sets${query({ page, pageSize: HISTORY_PAGE_SIZE })}`);
    } catch (error) {
      render(this.historyView, status, h("p", { class: "banner error", role: "alert", text: error.message }));
      return;
    }
    const sets = answer?.data || [];
    list.append(...sets.map((set) => this.changeSet(set)));
    render(
      this.historyView,
      status,
      sets.length ? list : h("p", { class: "muted", text: "The assistant has changed nothing yet." }),
      this.historyPager(answer?.pagination),
    );
  }

  changeSet(set) {
    const undone = Boolean(set.undoneAt);
    const undo =
      !undone && this.ctx.can("document.update")
        ? h("button", { type: "button", text: "Undo", on: { click: () => this.undo(set) } })
        : null;
    return h(
      "li",
      { class: `assistant-change${undone ? " undone" : ""}`, dataset: { changeSet: set.id } },
      h(
        "div",
        { class: "assistant-change-head" },
        timeAgo(set.createdAt),
        // Written by an MCP client (an AI app working with someone's key), not by this chat.
        set.source === "mcp" ? h("span", { class: "badge", text: "Through MCP" }) : null,
        undone ? h("span", { class: "badge" }, "Undone ", timeAgo(set.undoneAt)) : null,
        h("span", { class: "spacer" }),
        undo,
      ),
      h("ul", { class: "assistant-operations" }, (set.operations || []).map((op) => operation(op, this.ctx))),
    );
  }

  historyPager(pagination) {
    if (!pagination || (pagination.totalPages ?? 1) <= 1) return null;
    const page = pagination.page;
    return h(
      "nav",
      { class: "pagination", "aria-label": "History pages" },
      h("button", { type: "button", text: "Newer", disabled: page <= 1, on: { click: () => this.loadHistory(page - 1) } }),
      h("span", { class: "muted", text: `Page ${page} of ${pagination.totalPages}` }),
      h("button", {
        type: "button",
        text: "Older",
        disabled: page >= pagination.totalPages,
        on: { click: () => this.loadHistory(page + 1) },
      }),
    );
  }

  async undo(set) {
    const sure = await confirm(
      "Undo the assistant's changes?",
      "Each document this turn changed goes back to its version before the turn, unless it was changed since.",
      { confirmLabel: "Undo changes" },
    );
    if (!sure) return;
    try {
      const answer = await post(`/api/agent/change-sets/${seg(set.id)}/undo`);
      this.historyStatus.className = "assistant-history-status";
      this.historyStatus.textContent = undoSummary(answer?.data || {});
      notify("The assistant's changes were undone.", "success");
    } catch (error) {
      this.historyStatus.className = "assistant-history-status error";
      this.historyStatus.textContent = error.status === 409 ? "These changes were undone already." : error.message;
    }
    await this.loadHistory(this.historyPage);
  }
}

// One operation of a change set: the tool, where it wrote, and whether it worked.
function operation(op, ctx) {
  const kind = op.collection ? ctx.schema(op.collection)?.title || op.collection : "Asset";
  const target = op.documentId ? h("a", { href: targetPath(op), text: `${kind} ${op.documentId}` }) : null;
  return h(
    "li",
    { class: op.success ? "ok" : "failed" },
    h("span", { class: "assistant-tool-name", text: op.tool }),
    target ? [" · ", target] : null,
    " · ",
    h("span", { class: "assistant-tool-state", text: op.success ? "ok" : "failed" }),
  );
}

function targetPath(op) {
  return op.collection ? `/admin/documents/${seg(op.collection)}/${seg(op.documentId)}` : `/admin/assets/${seg(op.documentId)}`;
}

function undoSummary({ restored = [], skipped = [], conflicts = [] }) {
  const part = (n, what) => `${n} ${what}`;
  const parts = [part(restored.length, restored.length === 1 ? "document restored" : "documents restored")];
  if (skipped.length) parts.push(part(skipped.length, "skipped (created in the turn, or nothing to restore)"));
  if (conflicts.length) parts.push(part(conflicts.length, `left alone, changed since (${conflicts.join(", ")})`));
  return `Undone: ${parts.join("; ")}.`;
}

function usageText({ inputTokens = 0, outputTokens = 0 }) {
  return `${inputTokens} ${inputTokens === 1 ? "token" : "tokens"} in, ${outputTokens} out`;
}

function parseJson(text) {
  if (typeof text !== "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function pretty(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2);
}
