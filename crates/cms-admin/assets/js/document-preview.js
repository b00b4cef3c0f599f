// The live preview of the edit page (CONTRACT.md section 15): the type's `previewUrl` in a
// frame beside the form, read with a preview token, and reloaded whenever the saved document
// changes. The frame's origin must be in the admin page's `frame-src`, which the server
// builds from the same templates (crates/cms-server/src/routes/admin.rs).

import { post, data, seg } from "./api.js";
import { h, render } from "./dom.js";

// A token is renewed once it has less than this left: a frontend that reads the draft again
// after the reload (or on navigation inside the frame) must still find it valid.
const RENEW_BEFORE_MS = 5 * 60 * 1000;

// The widths the frame can be drawn at, to see the frontend as a tablet (768 px) or a phone
// (390 px) would; css/document-views.css sets them.
const DEVICES = [
  ["desktop", "Desktop"],
  ["tablet", "Tablet"],
  ["phone", "Phone"],
];

// `value` percent-encoded as the server fills a template (RFC 3986: every byte but the
// unreserved characters), so a value can never add a path segment or a parameter.
function encode(value) {
  return encodeURIComponent(String(value ?? "")).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

// The template with `{id}`, `{slug}`, `{token}` and `{type}` filled in. The schema parser
// admits no other placeholder; an unknown one is left as it is.
export function fillPreviewUrl(template, values) {
  return String(template).replace(/\{(id|slug|token|type)\}/g, (_, name) => encode(values[name]));
}

// The `current` of the type's first top-level slug field in the draft: what `{slug}` reads.
function slugOf(schema, doc) {
  const field = (schema.fields || []).find((f) => f.type === "slug");
  const value = field ? doc?.draftData?.[field.name] : null;
  return typeof value?.current === "string" ? value.current : "";
}

// A choice kept in this browser (per document type), and keeping one.
export function remembered(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function remember(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Storage refused (private mode, quota): the choice lasts this page only.
  }
}

// The preview pane of one document type. `editor` is the edit page (its `doc` and `schema`).
export class LivePreview {
  constructor(editor) {
    this.editor = editor;
    this.link = null;
    this.stale = true;
    this.deviceKey = `cms.previewDevice.${editor.schema.name}`;
    this.frame = h("iframe", {
      class: "preview-frame",
      title: "Preview of the saved draft",
      // The frontend runs as itself (its scripts, its origin) but may not move this page.
      sandbox: "allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox",
      referrerpolicy: "no-referrer",
    });
    this.frameBox = h("div", { class: "preview-frame-box" }, this.frame);
    this.open = h("a", { class: "preview-open", target: "_blank", rel: "noopener noreferrer", text: "Open in new tab", hidden: true });
    this.status = h("p", { class: "muted preview-status", role: "status" });
    this.devices = DEVICES.map(([key, label]) =>
      h("button", { type: "button", class: "small", text: label, dataset: { device: key }, "aria-pressed": "false", on: { click: () => this.device(key) } }),
    );
    this.el = h(
      "section",
      { class: "document-preview", "aria-label": "Preview" },
      h("div", { class: "preview-tools" }, h("div", { class: "preview-devices", role: "group", "aria-label": "Preview width" }, this.devices), this.open),
      this.status,
      this.frameBox,
    );
    this.device(remembered(this.deviceKey) || "desktop", false);
  }

  device(key, store = true) {
    const found = DEVICES.find(([k]) => k === key) || DEVICES[0];
    this.devices.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.device === found[0])));
    // The width is the stylesheet's: narrower than the pane, the frame keeps it and the box
    // scrolls, never the page.
    this.frameBox.dataset.device = found[0];
    if (store) remember(this.deviceKey, found[0]);
  }

  // A token that will last a while yet: the one held, or a new one.
  async token() {
    const left = this.link ? Date.parse(this.link.expiresAt) - Date.now() : -1;
    if (!(left > RENEW_BEFORE_MS)) {
      const { doc } = this.editor;
      const made = await data(post(`/api/documents/${seg(doc.id)}/preview`));
      this.link = { token: made.token, expiresAt: made.expiresAt };
    }
    return this.link.token;
  }

  // The saved document changed: reload when shown, else when next shown.
  changed() {
    this.stale = true;
    if (!this.el.hidden && this.el.isConnected) this.refresh();
  }

  // Draws the frame at the current draft; the same URL is set again, so the frame reloads.
  async refresh() {
    const { doc, schema } = this.editor;
    if (!doc) return;
    this.stale = false;
    const run = (this.run = (this.run || 0) + 1);
    try {
      const token = await this.token();
      if (run !== this.run) return;
      const url = fillPreviewUrl(schema.previewUrl, { id: doc.id, slug: slugOf(schema, doc), token, type: schema.name });
      this.frame.src = url;
      this.open.href = url;
      this.open.hidden = false;
      render(this.status);
    } catch (error) {
      this.stale = true;
      render(this.status, `The preview could not be loaded: ${error.message}`);
    }
  }

  shown() {
    if (this.stale) this.refresh();
  }
}
