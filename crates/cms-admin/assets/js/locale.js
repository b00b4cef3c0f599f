// Locales in the admin (CONTRACT.md section 17): the active organization's locales (GET
// /api/locales), the one the editor works in, and the helpers the list and edit pages share
// for localized fields. The chosen locale is kept in the URL (`?locale=de`, so a reload or a
// shared link shows the same locale) and in local storage (so it follows the editor through
// links that carry no locale, e.g. the navigation).

import { get, data } from "./api.js";
import { h, uid } from "./dom.js";
import { stable } from "./history.js";

const STORAGE_KEY = "cms.admin.locale";

// Whether documents of `schema` hold a localized field anywhere (in objects, named object
// types and array members too): only those read differently per locale.
export function holdsLocalized(schema, ctx) {
  const seen = new Set();
  const visit = (fields) =>
    (fields || []).some((f) => {
      if (f.localized) return true;
      if (f.type === "object") return visit(f.fields);
      if (f.type === "array") return visit(f.of);
      const named = ctx.schema(f.type);
      if (named && named.type === "object" && !seen.has(named.name)) {
        seen.add(named.name);
        return visit(named.fields);
      }
      return false;
    });
  return visit(schema?.fields);
}

// The locales a page of `schema` offers, or null when there is nothing to choose: the type has
// no localized field, or the organization has one locale. A failed read leaves the page
// working in the default locale (null) rather than not drawing it.
export async function localesFor(schema, ctx) {
  if (!holdsLocalized(schema, ctx)) return null;
  let view;
  try {
    view = await data(get("/api/locales"));
  } catch (error) {
    console.error("GET /api/locales failed", error);
    return null;
  }
  if (!view || !Array.isArray(view.available) || view.available.length < 2) return null;
  return new Locales(view);
}

export class Locales {
  constructor({ available, default: fallbackDefault, fallbacks }) {
    this.available = available;
    this.default = fallbackDefault || available[0];
    this.fallbacks = fallbacks || {};
    this.current = this.find(new URLSearchParams(location.search).get("locale")) || this.find(stored()) || this.default;
    this.remember();
  }

  // The available tag `raw` names, whatever its case (as the API matches tags); null if none.
  find(raw) {
    if (!raw) return null;
    const lower = String(raw).toLowerCase();
    return this.available.find((tag) => tag.toLowerCase() === lower) || null;
  }

  // Makes `tag` the locale the editor works in, here and on the pages opened next.
  choose(tag) {
    this.current = this.find(tag) || this.default;
    this.remember();
  }

  remember() {
    try {
      localStorage.setItem(STORAGE_KEY, this.current);
    } catch {
      // Storage may be off (private windows): the URL still carries the choice.
    }
    const url = new URL(location.href);
    if (url.searchParams.get("locale") !== this.current) {
      url.searchParams.set("locale", this.current);
      history.replaceState(history.state, "", url);
    }
  }

  // "German (de)": the language's English name where the browser knows it, and the tag.
  label(tag) {
    return `${languageName(tag)} (${tag})`;
  }

  // `path` with the current locale in its query.
  href(path) {
    const url = new URL(path, location.origin);
    url.searchParams.set("locale", this.current);
    return `${url.pathname}${url.search}`;
  }

  // A select of the available locales, labelled `label`, calling `onChange(tag)`; the
  // select's `value` is set back by the caller when a change is refused.
  select({ label = "Locale", name = "locale", value = this.current, except = null, onChange } = {}) {
    const select = h(
      "select",
      { name, id: uid("locale"), on: { change: () => onChange?.(select.value) } },
      this.available.filter((tag) => tag !== except).map((tag) => h("option", { value: tag, text: this.label(tag), selected: tag === value })),
    );
    return { select, field: h("div", { class: "field locale-field" }, h("label", { for: select.id, text: label }), select) };
  }
}

function stored() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

function languageName(tag) {
  try {
    return new Intl.DisplayNames(["en"], { type: "language" }).of(tag) || tag;
  } catch {
    return tag;
  }
}

// What a field served from another locale says: "Missing in de, showing en".
export function missingText(current, served) {
  return `Missing in ${current}, showing ${served}`;
}

// The value at `path` (parsed: ["seo", "title"], ["items", 0, "label"]) inside `value`.
export function valueAt(value, path) {
  let at = value;
  for (const part of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = at[part];
  }
  return at;
}

// `form` (the form's data in one locale) without the values it only shows because they came
// from a fallback locale (`fallbacks`: path -> served tag, as `_meta.fallbackLocales` reads)
// and that the editor left as loaded (`loaded`: the draft as read). Writing them would copy
// another locale's text into this one; left out, the locale stays missing and keeps falling
// back. A value the editor changed is this locale's own and is written.
export function withoutFallbacks(form, loaded, fallbacks, parse) {
  const paths = Object.keys(fallbacks || {});
  if (!paths.length) return form;
  const out = structuredClone(form);
  for (const raw of paths) {
    const path = parse(raw);
    const now = valueAt(out, path);
    if (now === undefined || stable(now) !== stable(valueAt(loaded, path))) continue;
    const parent = valueAt(out, path.slice(0, -1));
    if (parent && typeof parent === "object") delete parent[path[path.length - 1]];
  }
  return out;
}

// The paths of the localized fields in `value` (document data in one locale), following the
// schema through objects, named object types and array items: ["title", "seo.description",
// "items[0].label"].
export function localizedPaths(fields, value, ctx, prefix = "") {
  const out = [];
  const join = (name) => (prefix ? `${prefix}.${name}` : name);
  for (const f of fields || []) {
    const path = join(f.name);
    if (f.localized) {
      out.push(path);
      continue;
    }
    const inner = value?.[f.name];
    const objectFields = f.type === "object" ? f.fields : ctx.schema(f.type)?.type === "object" ? ctx.schema(f.type).fields : null;
    if (objectFields && inner && typeof inner === "object") out.push(...localizedPaths(objectFields, inner, ctx, path));
    if (f.type === "array" && Array.isArray(inner)) {
      inner.forEach((item, i) => {
        if (!item || typeof item !== "object" || Array.isArray(item)) return;
        const member = (f.of || []).find((m) => m.name === item._type || m.type === item._type) || (f.of || []).find((m) => m.type === "object" || ctx.schema(m.type)?.type === "object");
        const memberFields = member?.type === "object" ? member.fields : ctx.schema(member?.type)?.fields;
        if (memberFields) out.push(...localizedPaths(memberFields, item, ctx, `${path}[${i}]`));
      });
    }
  }
  return out;
}
