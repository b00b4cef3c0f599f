// The edit form generated from a schema (CONTRACT.md section 2). Every field type has an
// editor: an object with `el` (what is shown), `get()` (the stored JSON value, undefined when
// empty so drafts stay small), `set(value)` and `locate(path)` (the element that shows a
// message for a path inside the field, e.g. `tags[2]`). Editors announce their changes with a
// bubbling `change` event so the page can track unsaved work with one listener.

import { h, uid, notify } from "./dom.js";
import { createRichTextEditor } from "./rich-text.js";
import { assetEditor } from "./asset-field.js";
import { changed, common, constraintHint, documentTitle, group, humanize, labelOf, showMessage, titleField, wrap } from "./field-markup.js";
import { referenceEditor } from "./reference-field.js";
import { isTagList, tagEditor } from "./tag-field.js";

// The naming and message helpers are the form's public face too.
export { documentTitle, labelOf, showMessage, titleField };

// A value the form cannot turn into JSON (an invalid json field): the page shows `issues`.
export class FormError extends Error {
  constructor(issues) {
    super(issues[0]?.message || "The form has errors.");
    this.issues = issues;
  }
}

// What the caller may do with a field: `hidden` (no read role), `readOnly` (no update role).
// Instance administrators bypass field rules (SPEC.md "Schema access rules", rule 3).
export function fieldAccess(f, ctx) {
  if (ctx.isInstanceAdmin) return { hidden: false, readOnly: false };
  const allows = (list) => !Array.isArray(list) || list.includes(ctx.role);
  return { hidden: !allows(f.access?.read), readOnly: !allows(f.access?.update) };
}

export function newKey() {
  return crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(36), "");
}

export function slugify(text) {
  return String(text || "")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 96);
}

// "seo.description" -> ["seo", "description"]; "tags[2]" -> ["tags", 2].
export function parsePath(path) {
  const out = [];
  for (const part of String(path || "").split(".")) {
    const match = part.match(/^([^[\]]*)((?:\[\d+\])*)$/);
    if (!match) {
      out.push(part);
      continue;
    }
    if (match[1]) out.push(match[1]);
    for (const index of match[2].matchAll(/\[(\d+)\]/g)) out.push(Number(index[1]));
  }
  return out;
}

// The whole form for a list of fields (a document type, an object, a named object type).
// `options`: { ctx, readOnly, label prefix for nested ids }.
export function createFields(fields, options) {
  const { ctx } = options;
  const editors = new Map();
  const el = h("div", { class: "fields stack" });
  const siblings = (name) => editors.get(name);
  for (const f of fields) {
    const access = fieldAccess(f, ctx);
    if (access.hidden) continue;
    const editor = editorFor(f, { ...options, readOnly: options.readOnly || access.readOnly, siblings, label: labelOf(f) });
    editor.el.dataset.field = f.name;
    editors.set(f.name, editor);
    el.append(f.localized ? localizedPair(editor) : editor.el);
  }
  return {
    el,
    editors,
    get() {
      const out = {};
      const issues = [];
      for (const [name, editor] of editors) {
        try {
          const value = editor.get();
          if (value !== undefined) out[name] = value;
        } catch (error) {
          if (!(error instanceof FormError)) throw error;
          issues.push(...error.issues.map((i) => ({ ...i, path: i.path ? `${name}${i.path.startsWith("[") ? "" : "."}${i.path}` : name })));
        }
      }
      if (issues.length) throw new FormError(issues);
      return out;
    },
    set(value) {
      const source = value && typeof value === "object" ? value : {};
      for (const [name, editor] of editors) editor.set(source[name]);
    },
    locate(path) {
      const [head, ...rest] = path;
      const editor = editors.get(head);
      if (!editor) return null;
      return editor.locate(rest) || editor.el;
    },
  };
}

// A localized field (one value per locale, CONTRACT.md section 17) says so beside its label,
// and has a place beside it where the edit page shows the value of another locale (the
// side-by-side view, js/document-locale.js). The tag sits after the label, not in it: the
// label stays the field's name for assistive technology and for finding the control by it.
function localizedPair(editor) {
  const tag = h("span", { class: "badge localized-badge", title: "This field has a value per locale", text: "localized" });
  const heading = editor.el.querySelector(":scope > label, :scope > legend");
  if (heading?.tagName === "LEGEND") heading.append(" ", tag);
  else if (heading) {
    heading.classList.add("tagged");
    heading.after(tag);
  }
  editor.el.classList.add("localized");
  return h("div", { class: "localized-pair" }, editor.el, h("div", { class: "locale-reference", hidden: true, "aria-live": "polite" }));
}

// The form of a document type: the fields, the data they hold, messages at paths.
export function createForm(schema, ctx, { readOnly } = {}) {
  const fields = createFields(schema.fields, { ctx, readOnly });
  const shown = [];
  return {
    el: h("div", { class: "document-form" }, fields.el),
    value: () => fields.get(),
    setValue: (value) => fields.set(value),
    // The wrapper of the field at `path` ("seo.description", "items[0].label"), or null.
    locate: (path) => fields.locate(parsePath(path)),
    // Shows each issue at its field; returns the first wrapper that got one (to focus it).
    // Issues with no field on the form (hidden or unknown) are returned in `unplaced`.
    showIssues(issues, kind = "error") {
      let first = null;
      const unplaced = [];
      for (const issue of issues || []) {
        const wrapper = fields.locate(parsePath(issue.path));
        if (!wrapper) {
          unplaced.push(issue);
          continue;
        }
        const line = wrapper.querySelector(":scope > .field-error");
        const message = line && !line.hidden && wrapper.dataset.messageKind === kind ? `${line.textContent} ${issue.message}` : issue.message;
        wrapper.dataset.messageKind = kind;
        showMessage(wrapper, message, kind);
        shown.push(wrapper);
        first ||= wrapper;
      }
      return { first, unplaced };
    },
    // The wrapper of the first issue's field, without showing anything (FormError issues are
    // already shown where they were found).
    locateFirst(issues) {
      for (const issue of issues || []) {
        const wrapper = fields.locate(parsePath(issue.path));
        if (wrapper) return wrapper;
      }
      return null;
    },
    clearIssues() {
      shown.splice(0).forEach((w) => showMessage(w, null));
    },
  };
}

// Focuses the first control inside a field wrapper (after a refused publish).
export function focusField(wrapper) {
  // A composite field may name where typing goes (the rich-text editor's text, not its toolbar).
  const control = wrapper?.querySelector("[data-focus-target]") || wrapper?.querySelector("input:not([type=hidden]), select, textarea, button, [tabindex]");
  (control || wrapper)?.focus?.();
  wrapper?.scrollIntoView?.({ block: "center" });
}

function fieldComponentFor(f, ctx) {
  for (const plugin of ctx.plugins || []) {
    for (const fc of plugin.fieldComponents || []) {
      // The schema parser accepts no `input` option today, so a component also claims the
      // fields whose type (a named object type, usually the plugin's own) equals its key.
      if (fc.input && (fc.input === f.input || fc.input === f.type)) return fc.component;
    }
  }
  return null;
}

export function editorFor(f, options) {
  const component = fieldComponentFor(f, options.ctx);
  if (component) return customEditor(f, component, options);
  switch (f.type) {
    case "string":
      return f.options?.length ? selectEditor(f, options) : inputEditor(f, "text", options);
    case "text":
      return textEditor(f, options);
    case "number":
      return numberEditor(f, options);
    case "boolean":
      return booleanEditor(f, options);
    case "date":
      return inputEditor(f, "date", options);
    case "datetime":
      return datetimeEditor(f, options);
    case "url":
      return inputEditor(f, "url", options);
    case "email":
      return inputEditor(f, "email", options);
    case "slug":
      return slugEditor(f, options);
    case "reference":
      return referenceEditor(f, options);
    case "image":
    case "file":
      return assetEditor(f, options);
    case "array":
      return isTagList(f) ? tagEditor(f, options) : arrayEditor(f, options);
    case "object":
      return objectEditor(f, f.fields || [], options);
    case "block":
      return blockFieldEditor(f, options);
    case "json":
      return jsonEditor(f, options);
    default: {
      const named = options.ctx.schema(f.type);
      if (named && named.type === "object") return objectEditor(f, named.fields || [], options);
      return jsonEditor(f, options);
    }
  }
}

function inputEditor(f, type, options) {
  // No `maxlength`: the browser would cut pasted text silently; the hint and the publish
  // check say what is too long instead.
  const input = h("input", { type, name: f.name, readOnly: options.readOnly });
  const el = wrap(options.label, input, common(f, options));
  return {
    el,
    get: () => (input.value === "" ? undefined : input.value),
    set: (v) => (input.value = v == null ? "" : String(v)),
    locate: () => el,
  };
}

function selectEditor(f, options) {
  const select = h("select", { name: f.name, disabled: options.readOnly }, h("option", { value: "", text: "—" }), f.options.map((o) => h("option", { value: o, text: o })));
  const el = wrap(options.label, select, common(f, options));
  return {
    el,
    get: () => (select.value === "" ? undefined : select.value),
    set(v) {
      // A stored value no longer among the options stays visible rather than being lost.
      if (v != null && !f.options.includes(v)) select.append(h("option", { value: v, text: `${v} (not an option)` }));
      select.value = v == null ? "" : String(v);
    },
    locate: () => el,
  };
}

function textEditor(f, options) {
  const area = h("textarea", { name: f.name, readOnly: options.readOnly, rows: 4 });
  const el = wrap(options.label, area, common(f, options));
  return {
    el,
    get: () => (area.value === "" ? undefined : area.value),
    set: (v) => (area.value = v == null ? "" : String(v)),
    locate: () => el,
  };
}

function numberEditor(f, options) {
  const input = h("input", { type: "number", name: f.name, readOnly: options.readOnly, step: f.integer ? "1" : "any", min: f.min ?? null, max: f.max ?? null });
  const el = wrap(options.label, input, common(f, options));
  return {
    el,
    get: () => (input.value === "" || Number.isNaN(input.valueAsNumber) ? undefined : input.valueAsNumber),
    set: (v) => (input.value = typeof v === "number" ? String(v) : ""),
    locate: () => el,
  };
}

function booleanEditor(f, options) {
  const box = h("input", { type: "checkbox", name: f.name, disabled: options.readOnly });
  const el = wrap(options.label, box, { ...common(f, options), className: "checkbox" });
  let touched = false;
  box.addEventListener("change", () => (touched = true));
  let initial;
  return {
    el,
    // An untouched box over a missing value stays missing (not `false`).
    get: () => (!touched && initial === undefined && !box.checked ? undefined : box.checked),
    set(v) {
      initial = v;
      touched = false;
      box.checked = v === true;
    },
    locate: () => el,
  };
}

// datetime-local shows local time; the stored value is ISO 8601 in UTC.
function datetimeEditor(f, options) {
  const input = h("input", { type: "datetime-local", name: f.name, readOnly: options.readOnly });
  const el = wrap(options.label, input, { ...common(f, options), hint: "Your local time" });
  let original;
  return {
    el,
    get() {
      if (input.value === "") return undefined;
      if (original && toLocalInput(original) === input.value) return original;
      const date = new Date(input.value);
      return Number.isNaN(date.getTime()) ? input.value : date.toISOString();
    },
    set(v) {
      original = typeof v === "string" ? v : undefined;
      input.value = original ? toLocalInput(original) : "";
    },
    locate: () => el,
  };
}

export function toLocalInput(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function slugEditor(f, options) {
  const input = h("input", { type: "text", name: f.name, readOnly: options.readOnly, pattern: "[a-z0-9]+(-[a-z0-9]+)*" });
  const generate = () => {
    const source = options.siblings(f.source);
    let text = "";
    try {
      text = source?.get();
    } catch {
      text = "";
    }
    if (!text) {
      notify(`Fill in ${f.source} first.`, "error");
      return;
    }
    input.value = slugify(typeof text === "string" ? text : JSON.stringify(text));
    changed(input);
  };
  const button = f.source && !options.readOnly ? h("button", { type: "button", text: "Generate", on: { click: generate } }) : null;
  const el = wrap(options.label, input, { ...common(f, options), hint: f.source ? `Lowercase words joined by dashes; Generate derives it from ${f.source}.` : "Lowercase words joined by dashes." });
  if (button) {
    const row = h("div", { class: "inline-control" });
    input.replaceWith(row);
    row.append(input, button);
  }
  let extra = {};
  return {
    el,
    get: () => (input.value === "" ? undefined : { ...extra, current: input.value }),
    set(v) {
      const { current, ...rest } = v && typeof v === "object" ? v : {};
      extra = rest;
      input.value = typeof current === "string" ? current : "";
    },
    locate: () => el,
  };
}

function objectEditor(f, fields, options) {
  const inner = createFields(fields, { ctx: options.ctx, readOnly: options.readOnly });
  const el = group(options.label, { required: f.required, className: "object-field" }, inner.el);
  let extra = {};
  return {
    el,
    get() {
      const value = inner.get();
      const out = { ...extra, ...value };
      return Object.keys(value).length ? out : Object.keys(extra).length ? extra : undefined;
    },
    set(v) {
      const source = v && typeof v === "object" && !Array.isArray(v) ? v : {};
      // `_type` and `_key` identify objects inside arrays; keep them as loaded.
      extra = Object.fromEntries(Object.entries(source).filter(([k]) => k.startsWith("_")));
      inner.set(source);
    },
    locate: (path) => (path.length ? inner.locate(path) : el),
  };
}

function memberLabel(member) {
  return member.title || humanize(member.name || member.type);
}

function isObjectMember(member, ctx) {
  return member.type === "object" || ctx.schema(member.type)?.type === "object";
}

// Picks the member definition an array item matches: `_type` for objects, else the JSON type.
function memberFor(of, item, ctx) {
  if (item && typeof item === "object" && !Array.isArray(item)) {
    const objects = of.filter((m) => isObjectMember(m, ctx) || ["image", "file", "reference", "slug"].includes(m.type));
    return objects.find((m) => m.name === item._type || m.type === item._type) || objects[0] || of.find((m) => m.type === "json") || of[0];
  }
  const jsType = typeof item;
  const byType = of.find((m) => (jsType === "number" && m.type === "number") || (jsType === "boolean" && m.type === "boolean") || (jsType === "string" && ["string", "text", "date", "datetime", "url", "email"].includes(m.type)));
  return byType || of.find((m) => m.type === "json") || of[0];
}

function arrayEditor(f, options) {
  const { ctx } = options;
  const of = f.of?.length ? f.of : [{ type: "json", name: "json" }];
  const list = h("ol", { class: "array-items" });
  const addButtons = of.map((member) =>
    h("button", { type: "button", text: of.length > 1 ? `Add ${memberLabel(member)} to ${options.label}` : `Add to ${options.label}`, on: { click: () => add(member, undefined, true) } }),
  );
  const el = group(options.label, { hint: constraintHint(f), required: f.required, className: "array-field" }, list, options.readOnly ? null : h("div", { class: "actions" }, addButtons));
  let items = [];

  const relabel = () => {
    items.forEach((item, i) => {
      item.setLabel(`${options.label} ${i + 1}`);
      item.up.disabled = i === 0;
      item.down.disabled = i === items.length - 1;
    });
    addButtons.forEach((b) => (b.disabled = f.maxItems != null && items.length >= f.maxItems));
    items.forEach((item) => (item.remove.disabled = f.minItems != null && items.length <= f.minItems));
  };
  const move = (item, by) => {
    if (!moveItem(items, item, by)) return;
    relabel();
    item[by < 0 ? "up" : "down"].focus();
    changed(el);
  };
  const drop = (item) => {
    items = items.filter((x) => x !== item);
    item.li.remove();
    relabel();
    changed(el);
  };
  const add = (member, value, fresh) => {
    const objectLike = isObjectMember(member, ctx);
    const editor = editorFor({ ...member, name: member.name || member.type, required: false }, { ...options, label: `${options.label} ${items.length + 1}`, siblings: () => null });
    if (fresh && objectLike) editor.set({ _type: member.name || member.type, _key: newKey() });
    else editor.set(value);
    const label = () => editor.el.querySelector(":scope > label, :scope > legend");
    const button = (text, on) => h("button", { type: "button", class: "small", text, on: { click: on } });
    const item = { editor, member, li: null };
    item.up = button("Move up", () => move(item, -1));
    item.down = button("Move down", () => move(item, 1));
    item.remove = button("Remove", () => drop(item));
    item.setLabel = (text) => {
      const l = label();
      if (l) l.firstChild.textContent = text;
      item.up.setAttribute("aria-label", `Move ${text} up`);
      item.down.setAttribute("aria-label", `Move ${text} down`);
      item.remove.setAttribute("aria-label", `Remove ${text}`);
    };
    item.li = h("li", { class: "array-item" }, editor.el, options.readOnly ? null : h("div", { class: "actions item-actions" }, item.up, item.down, item.remove));
    items.push(item);
    list.append(item.li);
    relabel();
    if (fresh) {
      item.li.querySelector("input, select, textarea")?.focus();
      changed(el);
    }
  };
  return {
    el,
    get() {
      const out = [];
      const issues = [];
      items.forEach((item, i) => {
        try {
          let value = item.editor.get();
          if (value === undefined) return;
          if (isObjectMember(item.member, ctx) && value && typeof value === "object") {
            value = { _type: item.member.name || item.member.type, _key: value._key || newKey(), ...value };
          }
          out.push(value);
        } catch (error) {
          if (!(error instanceof FormError)) throw error;
          issues.push(...error.issues.map((x) => ({ ...x, path: `[${i}]${x.path ? `.${x.path}` : ""}` })));
        }
      });
      if (issues.length) throw new FormError(issues);
      return out.length ? out : undefined;
    },
    set(v) {
      items.forEach((item) => item.li.remove());
      items = [];
      (Array.isArray(v) ? v : []).forEach((value) => add(memberFor(of, value, ctx), value, false));
      relabel();
    },
    locate(path) {
      if (!path.length || typeof path[0] !== "number") return el;
      const item = items[path[0]];
      if (!item) return el;
      return item.editor.locate(path.slice(1)) || item.editor.el;
    },
  };
}

function blockFieldEditor(f, options) {
  return createRichTextEditor({ label: options.label, required: f.required, readOnly: options.readOnly, group, ctx: options.ctx });
}

function jsonEditor(f, options) {
  const area = h("textarea", { name: f.name, readOnly: options.readOnly, rows: 6, class: "code", spellcheck: "false" });
  const el = wrap(options.label, area, { required: f.required, hint: "JSON, checked when you save." });
  return {
    el,
    get() {
      const text = area.value.trim();
      if (!text) return undefined;
      try {
        return JSON.parse(text);
      } catch (error) {
        throw new FormError([{ path: "", code: "json", message: `Not valid JSON: ${error.message}` }]);
      }
    },
    set: (v) => (area.value = v === undefined ? "" : JSON.stringify(v, null, 2)),
    locate: () => el,
  };
}

// A plugin's custom element edits the field: it gets `value`, `field` and `readOnly`, and
// reports a new value with a `change` CustomEvent whose `detail` is the value.
function customEditor(f, component, options) {
  const host = h("div", { class: "custom-field", id: uid("cmp"), tabindex: "-1" });
  const el = wrap(options.label, host, { required: f.required, hint: constraintHint(f) });
  let value;
  let element = null;
  import(component.module)
    .then(() => customElements.whenDefined(component.element))
    .then(() => {
      element = document.createElement(component.element);
      element.field = f;
      element.readOnly = Boolean(options.readOnly);
      if (options.readOnly) element.setAttribute("readonly", "");
      element.value = value;
      const label = el.querySelector(":scope > label");
      label.id ||= uid("lbl");
      element.setAttribute("aria-labelledby", label.id);
      element.addEventListener("change", (event) => {
        if (!(event instanceof CustomEvent)) return;
        event.stopPropagation();
        value = event.detail;
        changed(el);
      });
      host.append(element);
    })
    .catch((error) => host.append(h("p", { class: "field-error", text: `The field editor could not be loaded: ${error.message}` })));
  return {
    el,
    get: () => value,
    set(v) {
      value = v;
      if (element) element.value = v;
    },
    locate: () => el,
  };
}

// Moves `item` (`{ li }`) by `by` places in `items` and in the page; false at either end.
function moveItem(items, item, by) {
  const i = items.indexOf(item);
  const j = i + by;
  if (j < 0 || j >= items.length) return false;
  items.splice(i, 1);
  items.splice(j, 0, item);
  if (by < 0) items[j + 1].li.before(item.li);
  else items[j - 1].li.after(item.li);
  return true;
}
