// What the edit page shows beside the form of a saved document, chosen with a group of toggle
// buttons (as the assistant's views): "Edit" (the history), "Preview" (the type's frontend in
// a frame, js/document-preview.js; for a type with `previewUrl`, to those who may update the
// document, as making a preview link needs) and "API" (the document as GET
// /api/documents/{id} answers it in the form's locale). The choice is remembered per type.
// The form stays in view in every one of them: each is about the document being edited.

import { get } from "./api.js";
import { h, render, field, notify } from "./dom.js";
import { LivePreview, remember, remembered } from "./document-preview.js";

// Saving then publishing loads the document twice in a row: one refresh for both.
const SETTLE_MS = 200;

export class DocumentViews {
  constructor(editor) {
    this.editor = editor;
    this.key = `cms.documentView.${editor.schema.name}`;
    this.el = h("div", { class: "document-views", role: "group", "aria-label": "View", hidden: true });
    this.buttons = [];
    this.preview = null;
    this.api = new ApiView(editor);
    this.view = remembered(this.key) || "edit";
    this.timer = null;
  }

  // Puts the switch above the form and the panes beside it, where the history is (`side`).
  mount(body, side) {
    this.body = body;
    this.side = side;
    body.before(this.el);
    body.append(this.api.el);
  }

  // The views this document has now: a new one has none but the form.
  available() {
    const { doc, schema } = this.editor;
    if (!doc) return [];
    const preview = schema.previewUrl && this.editor.may("update");
    return [["edit", "Edit"], preview ? ["preview", "Preview"] : null, ["api", "API"]].filter(Boolean);
  }

  // The editor loaded a document (opened, saved, published, restored, another locale): the
  // switch follows, and the preview and API view are drawn again from what is saved now.
  loaded() {
    const views = this.available();
    if (views.map(([k]) => k).join() !== this.buttons.map((b) => b.dataset.view).join()) {
      this.buttons = views.map(([key, label]) =>
        h("button", { type: "button", text: label, dataset: { view: key }, "aria-pressed": "false", on: { click: () => this.show(key, true) } }),
      );
      render(this.el, this.buttons);
      this.el.hidden = !views.length;
      if (views.some(([k]) => k === "preview") && !this.preview) {
        this.preview = new LivePreview(this.editor);
        this.body.append(this.preview.el);
      }
      this.show(this.view, false);
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.preview?.changed();
      this.api.changed();
    }, SETTLE_MS);
  }

  show(view, store) {
    const keys = this.buttons.map((b) => b.dataset.view);
    const shown = keys.includes(view) ? view : "edit";
    if (keys.includes(view)) this.view = view;
    if (store) remember(this.key, view);
    this.buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.view === shown)));
    this.body.dataset.view = shown;
    this.side.hidden = shown !== "edit";
    this.api.el.hidden = shown !== "api";
    if (this.preview) this.preview.el.hidden = shown !== "preview";
    if (shown === "api") this.api.shown();
    if (shown === "preview") this.preview.shown();
  }
}

// The document as the API answers it: the request's URL to copy, and the JSON.
class ApiView {
  constructor(editor) {
    this.editor = editor;
    this.stale = true;
    this.url = h("input", { type: "text", readOnly: true, class: "code", spellcheck: "false" });
    this.json = h("pre", { class: "api-json", tabindex: "0", "aria-label": "Response JSON" });
    this.status = h("p", { class: "muted", role: "status" });
    const copy = h("button", { type: "button", text: "Copy JSON", on: { click: () => this.copy() } });
    this.el = h(
      "section",
      { class: "document-api", "aria-label": "API", hidden: true },
      field("Request URL", this.url, { hint: "GET, as you are signed in. Refreshed after every save." }),
      h("div", { class: "actions" }, copy),
      this.status,
      this.json,
    );
  }

  changed() {
    this.stale = true;
    if (!this.el.hidden) this.refresh();
  }

  shown() {
    if (this.stale) this.refresh();
  }

  async refresh() {
    if (!this.editor.doc) return;
    this.stale = false;
    const path = this.editor.docPath();
    const run = (this.run = (this.run || 0) + 1);
    this.url.value = new URL(path, location.origin).href;
    try {
      const body = await get(path);
      if (run !== this.run) return;
      this.json.textContent = JSON.stringify(body, null, 2);
      render(this.status);
    } catch (error) {
      this.stale = true;
      render(this.status, `The document could not be read: ${error.message}`);
    }
  }

  async copy() {
    const text = this.json.textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard API (a page not served over https): copy the selected text instead.
      const range = document.createRange();
      range.selectNodeContents(this.json);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (!document.execCommand("copy")) return notify("Select the JSON and copy it.", "info");
    }
    notify("JSON copied.", "success");
  }
}
