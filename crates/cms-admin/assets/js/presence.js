// Presence on the document edit page (issue 30): who else has this document open, and a clear
// message when someone else saved it.
//
// While the page shows a saved document it says so to the API (PUT .../presence) at once,
// every 10 seconds and when the tab is shown again; the answer lists the other people seen in
// the last 30 seconds, drawn as chips in the action bar. Leaving the page (pagehide: every
// navigation away is a page load) stops the heartbeat and says goodbye (DELETE, sent with
// `keepalive` so it outlives the page). The event stream tells when the document changed; the
// document read again says whether it changed beyond what this tab holds, and if so a banner
// offers to reload. Nothing here touches the form: the person decides.

import { put, get, data, seg, ApiError } from "./api.js";
import { h, render, confirm, notify } from "./dom.js";

const HEARTBEAT_MS = 10_000;
const EVENT_TYPES = ["document.updated", "document.published", "document.unpublished", "document.deleted"];
// How long to wait after an event before comparing: a save of this tab commits, then its
// answer arrives; the event may come first, and the comparison must see that answer.
const SETTLE_MS = 600;

export class Presence {
  // `editor`: the Editor of js/pages/document.js (its document, `busy`, `dirty`, `leaving`,
  // `reload()`, its history panel and its context's signed-in user).
  constructor(editor) {
    this.editor = editor;
    this.timer = null;
    this.stream = null;
    this.id = null;
    // Everyone seen on this document while the page was open, by user id: who saved is named
    // even after they closed it.
    this.names = new Map();
    // The chips: a live region, so a screen reader hears who arrives.
    this.el = h("div", { class: "presence", role: "status", "aria-live": "polite" });
    // The message that someone else saved, above the form's own messages.
    this.notice = h("div", { class: "presence-notice" });
    // The newer copy the banner announced, so the banner goes once the form holds it.
    this.newer = null;
  }

  // Starts (once) for the editor's saved document; a document not saved yet has no presence.
  start() {
    const id = this.editor.doc?.id;
    if (!id || this.timer) return;
    this.id = id;
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.beat();
    this.listen();
    if (this.bound) return;
    this.bound = true;
    document.addEventListener("visibilitychange", () => document.visibilityState === "visible" && this.beat());
    window.addEventListener("pagehide", () => this.stop());
    // Back to a page the browser kept (back/forward cache): present again.
    window.addEventListener("pageshow", (event) => event.persisted && this.start());
  }

  // Stops the heartbeat and the stream, and tells the API this page is gone.
  stop() {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.closeStream();
    // A fetch that outlives the page: the browser sends it even while unloading.
    fetch(this.path(), { method: "DELETE", credentials: "same-origin", keepalive: true }).catch(() => {});
  }

  closeStream() {
    this.stream?.close();
    this.stream = null;
    clearTimeout(this.pending);
  }

  path() {
    return `/api/documents/${seg(this.id)}/presence`;
  }

  async beat() {
    if (!this.timer) return;
    if (this.newer && !isNewer(this.newer, this.editor.doc)) {
      this.newer = null;
      render(this.notice);
    }
    try {
      this.draw(await data(put(this.path())));
    } catch (error) {
      // Refused (the document is gone, or no longer readable): stop asking. A network
      // failure is retried at the next beat.
      if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
        clearInterval(this.timer);
        this.timer = null;
        this.closeStream();
        render(this.el);
      }
    }
  }

  // "Also editing:" and a chip per person, initials as the avatar; nothing when alone.
  draw(people) {
    const list = Array.isArray(people) ? people : [];
    list.forEach((p) => this.names.set(p.userId, p.name || p.email));
    if (!list.length) return render(this.el);
    render(
      this.el,
      h("span", { class: "presence-label", text: "Also editing: " }),
      h(
        "ul",
        { class: "presence-people" },
        list.map((p, i) =>
          h(
            "li",
            { class: "presence-person", title: `${p.name} <${p.email}>`, dataset: { userId: p.userId } },
            h("span", { class: "avatar", "aria-hidden": "true", text: initials(p.name || p.email) }),
            h("span", { class: "presence-name", text: p.name || p.email }),
            // Read out, not drawn: the chips separate the names on screen.
            i < list.length - 1 ? h("span", { class: "visually-hidden", text: ", " }) : null,
          ),
        ),
      ),
    );
  }

  // The organization's document events, as server-sent events (same origin, the session
  // cookie). EventSource reconnects by itself; a stream refused for good (429) stays closed,
  // and the page works without it.
  listen() {
    if (typeof EventSource === "undefined") return;
    this.stream = new EventSource(`/api/events/stream?types=${EVENT_TYPES.join(",")}`);
    for (const type of EVENT_TYPES) {
      this.stream.addEventListener(type, (event) => this.onEvent(type, event));
    }
  }

  onEvent(type, event) {
    let payload;
    try {
      payload = JSON.parse(event.data)?.payload;
    } catch {
      return;
    }
    if (payload?.documentId !== this.id) return;
    if (type === "document.deleted") {
      if (!this.editor.leaving) this.show("This document was deleted. Saving it again is no longer possible.", false);
      return;
    }
    clearTimeout(this.pending);
    this.pending = setTimeout(() => this.compare(), SETTLE_MS);
  }

  // Reads the document again and compares it with the copy the editor holds: a later write
  // than that one was someone else's (this tab's own saves and publishes load their answer).
  async compare() {
    const editor = this.editor;
    // One of this page's own writes is out (a button's, an autosave, the assistant's): its
    // answer, not someone else's save, may be what the event announced.
    if (editor.busy || editor.saving > 0) {
      this.pending = setTimeout(() => this.compare(), SETTLE_MS);
      return;
    }
    let current;
    try {
      current = await data(get(editor.docPath(this.id)));
    } catch {
      return;
    }
    if (!isNewer(current, editor.doc)) return;
    this.newer = current;
    const by = current.updatedBy;
    const who = by && by === editor.ctx.user?.id ? "You" : this.names.get(by) || "Someone";
    const where = who === "You" ? " in another window" : "";
    this.show(`${who} saved a newer version of this document${where}.`, true);
  }

  // The banner; `reload` adds the button that loads the newer copy.
  show(message, reload) {
    const button = reload ? h("button", { type: "button", text: "Show the newer version", on: { click: () => this.reload() } }) : null;
    render(this.notice, h("div", { class: "banner warn presence-newer", role: "alert" }, h("span", { text: `${message} ` }), button));
  }

  // The editor's own reload, after the person agreed to drop unsaved input.
  async reload() {
    const editor = this.editor;
    if (editor.editable && editor.dirty) {
      const ok = await confirm("Reload the newer version?", "Your unsaved changes in this form will be discarded.", { confirmLabel: "Discard and reload", danger: true });
      if (!ok) return;
    }
    render(this.notice);
    this.newer = null;
    await editor.reload();
    editor.history?.refresh();
    notify("Reloaded the current copy.", "success");
  }
}

// Whether `current` (read now) is a later write than `held` (what the form was loaded from).
function isNewer(current, held) {
  if (!current || !held) return false;
  const revision = (d) => d._meta?.revision ?? 0;
  if (revision(current) !== revision(held)) return revision(current) > revision(held);
  return Date.parse(current.updatedAt) > Date.parse(held.updatedAt);
}

// "Grace Brewster Hopper" -> "GH"; "ada@example.com" -> "A".
function initials(name) {
  const words = String(name || "?").split("@")[0].split(/[\s._-]+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0], words[words.length - 1]] : words;
  return letters.map((w) => w[0].toUpperCase()).join("") || "?";
}
