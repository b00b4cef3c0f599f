// The command palette (issue 30, point 6): Ctrl+K (Cmd+K on a Mac), or the top bar's button,
// on every signed-in page. A modal dialog with a search box that is a combobox (WAI-ARIA 1.2:
// the focus stays in the input, arrow keys move the active option, Enter runs it, Escape
// closes and gives the focus back): the actions the caller may take ("New Post", "Go to
// Assets", the lists, Settings, and what the open page offers, such as Save and Publish on an
// edit page), then, as the person types, documents whose title matches, across the types.

import { post, data, seg } from "./api.js";
import { h, uid, debounce, refocus } from "./dom.js";
import { documentTitle, titleField } from "./field-markup.js";
import { mayDo, settingsLinks } from "./shell.js";

// Documents listed at most, and per type asked for.
const MATCHES = 8;
// Quiet time after typing before the documents are searched.
const SEARCH_DELAY = 150;

// What the open page offers: functions returning [{ label, run }], asked each time the
// palette draws (so only what would do something now is offered).
const providers = new Set();

export function addCommands(provider) {
  providers.add(provider);
  return () => providers.delete(provider);
}

let current = null;

// Opens the palette (or, open already, puts the focus back in its search box).
export function openPalette(ctx) {
  if (current) {
    current.input.focus();
    return current;
  }
  current = new Palette(ctx, document.activeElement);
  return current;
}

// The shortcut as this platform writes it, and as aria-keyshortcuts names it.
export function shortcut() {
  const mac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent || "");
  return mac ? { text: "⌘K", aria: "Meta+K" } : { text: "Ctrl+K", aria: "Control+K" };
}

class Palette {
  constructor(ctx, opener) {
    this.ctx = ctx;
    this.opener = opener instanceof HTMLElement ? opener : null;
    this.actions = actionsFor(ctx);
    this.docs = [];
    this.active = -1;
    this.request = 0;
    const listId = uid("palette-list");
    const titleId = uid("palette-title");
    this.input = h("input", {
      type: "text",
      id: uid("palette-input"),
      role: "combobox",
      autocomplete: "off",
      spellcheck: "false",
      "aria-autocomplete": "list",
      "aria-expanded": "true",
      "aria-controls": listId,
      placeholder: "Type a command or a title…",
    });
    this.list = h("ul", { class: "palette-list", id: listId, role: "listbox", "aria-label": "Commands and documents" });
    this.status = h("p", { class: "visually-hidden", role: "status" });
    this.empty = h("p", { class: "palette-empty muted", hidden: true });
    this.el = h(
      "dialog",
      { class: "dialog palette", "aria-labelledby": titleId },
      h("h2", { id: titleId, class: "visually-hidden", text: "Go to or do" }),
      h("label", { for: this.input.id, class: "visually-hidden", text: "Search commands and documents" }),
      this.input,
      this.list,
      this.empty,
      this.status,
      h("p", { class: "palette-hint muted", "aria-hidden": "true", text: "↑ ↓ to choose · Enter to open · Esc to close" }),
    );
    this.search = debounce(() => this.findDocuments(), SEARCH_DELAY);
    this.input.addEventListener("input", () => {
      this.draw();
      this.search();
    });
    this.input.addEventListener("keydown", (event) => this.key(event));
    // Escape (the dialog's cancel) and a click on the backdrop close it.
    this.el.addEventListener("cancel", (event) => {
      event.preventDefault();
      this.close();
    });
    this.el.addEventListener("click", (event) => {
      const box = this.el.getBoundingClientRect();
      const inside = event.clientX >= box.left && event.clientX <= box.right && event.clientY >= box.top && event.clientY <= box.bottom;
      if (event.target === this.el && !inside) this.close();
    });
    document.body.append(this.el);
    this.el.showModal();
    this.draw();
    this.input.focus();
  }

  get text() {
    return this.input.value.trim();
  }

  // The options: the actions that match what is typed, then the documents found for it.
  rows() {
    const words = this.text.toLowerCase().split(/\s+/).filter(Boolean);
    const matches = (label) => words.every((w) => label.toLowerCase().includes(w));
    const page = [...providers].flatMap((provider) => {
      try {
        return (provider() || []).map((c) => ({ kind: "command", detail: "This page", key: `page:${c.label}`, ...c }));
      } catch {
        return [];
      }
    });
    const actions = [...page, ...this.actions].filter((a) => matches(a.label));
    // Documents found for an earlier text stay while they still match (the search is on its way).
    return [...actions, ...(this.text ? this.docs.filter((d) => matches(d.label)) : [])];
  }

  draw() {
    const keep = this.rowsShown?.[this.active]?.key;
    this.rowsShown = this.rows();
    this.list.replaceChildren(
      ...this.rowsShown.map((row, i) => {
        const li = h(
          "li",
          { role: "option", id: `${this.list.id}-${i}`, "aria-selected": "false", class: "palette-option", dataset: { kind: row.kind } },
          h("span", { class: "palette-label", text: row.label }),
          row.detail ? h("span", { class: "palette-detail", text: row.detail }) : null,
        );
        // The input keeps the focus while a pointer picks an option.
        li.addEventListener("mousedown", (event) => event.preventDefault());
        li.addEventListener("click", () => this.choose(i));
        return li;
      }),
    );
    const n = this.rowsShown.length;
    this.input.setAttribute("aria-expanded", String(n > 0));
    this.status.textContent = n ? `${n} option${n === 1 ? "" : "s"}` : this.text ? "Nothing matches" : "";
    // An empty listbox is hidden (it would have no options); a line says why instead.
    this.list.hidden = !n;
    this.empty.hidden = Boolean(n);
    this.empty.textContent = this.searching ? "Searching…" : "Nothing matches.";
    // The option that was active stays active when it is still there; else the first.
    const again = this.rowsShown.findIndex((row) => row.key === keep);
    this.activate(n ? Math.max(0, again) : -1);
  }

  activate(index) {
    const items = [...this.list.querySelectorAll("[role=option]")];
    this.active = items.length ? (index + items.length) % items.length : -1;
    items.forEach((item, i) => item.setAttribute("aria-selected", String(i === this.active)));
    if (this.active < 0) {
      this.input.removeAttribute("aria-activedescendant");
      return;
    }
    this.input.setAttribute("aria-activedescendant", items[this.active].id);
    items[this.active].scrollIntoView({ block: "nearest" });
  }

  key(event) {
    switch (event.key) {
      case "ArrowDown":
      case "ArrowUp":
        event.preventDefault();
        this.activate(this.active + (event.key === "ArrowDown" ? 1 : -1));
        return;
      case "Home":
      case "End":
        if (!this.rowsShown.length) return;
        event.preventDefault();
        this.activate(event.key === "Home" ? 0 : this.rowsShown.length - 1);
        return;
      case "Enter":
        event.preventDefault();
        if (this.active >= 0) this.choose(this.active);
        return;
      default:
    }
  }

  // Documents of every type the caller reads (singletons aside: they are actions) whose title
  // holds every typed word, newest first, at most MATCHES in all.
  async findDocuments() {
    const text = this.text;
    const mine = ++this.request;
    if (!text) {
      this.docs = [];
      this.searching = false;
      return this.draw();
    }
    this.searching = true;
    const types = this.ctx.documentTypes.filter((s) => !s.singleton && titleField(s));
    const found = await Promise.all(
      types.map(async (schema) => {
        try {
          const docs = await data(post("/api/documents/query", { type: schema.name, where: { [titleField(schema)]: { like: text } }, sort: "-updatedAt", limit: MATCHES }));
          return (docs || []).map((doc) => ({ doc, schema }));
        } catch {
          // One type failing (a rule, a fault) leaves the others' matches.
          return [];
        }
      }),
    );
    if (mine !== this.request || current !== this) return;
    this.searching = false;
    this.docs = found
      .flat()
      .sort((a, b) => String(b.doc.updatedAt).localeCompare(String(a.doc.updatedAt)))
      .slice(0, MATCHES)
      .map(({ doc, schema }) => ({
        key: `doc:${doc.id}`,
        label: documentTitle(doc, schema),
        kind: "document",
        detail: schema.title || schema.name,
        href: `/admin/documents/${seg(schema.name)}/${seg(doc.id)}`,
      }));
    this.draw();
  }

  choose(index) {
    const row = this.rowsShown[index];
    if (!row) return;
    this.close({ restoreFocus: !row.href });
    if (row.href) location.assign(row.href);
    else row.run?.();
  }

  close({ restoreFocus = true } = {}) {
    if (current !== this) return;
    current = null;
    this.request += 1;
    this.el.close();
    this.el.remove();
    if (restoreFocus) refocus(this.opener);
  }
}

// The actions of every page: create per type, the lists, assets, settings, home.
function actionsFor(ctx) {
  const go = (label, href, detail = null) => ({ label, href, kind: "action", detail, key: `go:${href}` });
  const types = ctx.documentTypes || [];
  const name = (s) => s.title || s.name;
  const actions = [];
  for (const s of types) {
    if (!s.singleton && mayDo(ctx, s, "create")) actions.push(go(`New ${name(s)}`, `/admin/documents/${seg(s.name)}/new`, "Create"));
  }
  actions.push(go("Go to Home", "/admin"));
  for (const s of types) actions.push(go(`Go to ${name(s)}`, `/admin/documents/${seg(s.name)}`, s.singleton ? null : "List"));
  if (ctx.can("asset.read")) actions.push(go("Go to Assets", "/admin/assets"));
  const [first, ...more] = settingsLinks(ctx);
  if (first) actions.push(go("Go to Settings", first[0]));
  for (const [href, text] of more) actions.push(go(`Go to Settings: ${text}`, href));
  return actions;
}
