// A document's version history: the versions newest first, a field-by-field comparison of one
// version with the current draft, and restoring it into the draft (guarded by the revision,
// so a restore never overwrites someone's newer save unseen).

import { get, post, data, seg, query } from "./api.js";
import { h, render, formatDate, notify } from "./dom.js";
import { labelOf } from "./fields.js";

const PAGE = 20;

// options: { documentId, schema, current() -> document, canRestore, onRestored(doc),
//            onConflict(error) -> handles a 409, compareDraft() -> the draft data versions
//            are compared with, when it is not the current document's (localized types: the
//            draft in every locale, as versions store it) }
export function createHistory(options) {
  const list = h("ol", { class: "versions" });
  const detail = h("div", { class: "version-detail", "aria-live": "polite" });
  const more = h("button", { type: "button", text: "Older versions", hidden: true, on: { click: () => load(false) } });
  const status = h("p", { class: "muted", role: "status" });
  const el = h("details", { class: "history" }, h("summary", { text: "History" }), status, h("div", { class: "history-body" }, h("div", {}, list, more), detail));
  let loaded = 0;
  let total = 0;

  const load = async (reset) => {
    if (reset) {
      loaded = 0;
      list.replaceChildren();
      detail.replaceChildren();
    }
    status.textContent = "Loading versions…";
    try {
      const body = await get(`/api/documents/${seg(options.documentId)}/versions${query({ limit: PAGE, offset: loaded })}`);
      total = body.total ?? 0;
      for (const version of body.data || []) list.append(versionRow(version));
      loaded += (body.data || []).length;
      status.textContent = total ? `${total} version${total === 1 ? "" : "s"}` : "No versions yet.";
      more.hidden = loaded >= total;
    } catch (error) {
      status.textContent = "";
      notify(`The history could not be loaded: ${error.message}`, "error");
    }
  };

  const versionRow = (version) =>
    h(
      "li",
      {},
      h("button", {
        type: "button",
        class: "link version-button",
        text: `Version ${version.versionNumber} · ${version.eventType === "publish" ? "Published" : "Draft saved"}`,
        on: { click: (event) => show(version, event.currentTarget) },
      }),
      h("span", { class: "muted", text: ` ${version.createdByName || version.createdBy || "someone"}, ${formatDate(version.createdAt)}` }),
    );

  const show = async (version, button) => {
    list.querySelectorAll("[aria-current]").forEach((b) => b.removeAttribute("aria-current"));
    button.setAttribute("aria-current", "true");
    let full = version;
    if (!full.data) {
      try {
        full = await data(get(`/api/documents/${seg(options.documentId)}/versions/${seg(version.versionNumber)}`));
      } catch (error) {
        return notify(error.message, "error");
      }
    }
    let draft = options.current()?.draftData || {};
    if (options.compareDraft) {
      try {
        draft = (await options.compareDraft()) || {};
      } catch (error) {
        return notify(error.message, "error");
      }
    }
    const rows = diff(full.data || {}, draft, options.schema);
    render(
      detail,
      h("h3", { text: `Version ${full.versionNumber} compared with the current draft` }),
      rows.length ? diffTable(rows) : h("p", { class: "muted", text: "Same as the current draft." }),
      options.canRestore ? h("div", { class: "actions" }, h("button", { type: "button", class: "primary", text: "Restore this version", on: { click: () => restore(full) } })) : null,
    );
  };

  const restore = async (version) => {
    const doc = options.current();
    try {
      const restored = await data(post(`/api/documents/${seg(options.documentId)}/versions/${seg(version.versionNumber)}/restore`, { expectedRevision: doc._meta?.revision }));
      notify(`Version ${version.versionNumber} restored into the draft.`, "success");
      await options.onRestored(restored);
      await load(true);
    } catch (error) {
      if (error.status === 409 && options.onConflict) return options.onConflict(error);
      notify(error.message, "error");
    }
  };

  el.addEventListener("toggle", () => {
    if (el.open && loaded === 0) load(true);
  });
  return {
    el,
    // After a save or publish, an open history shows the new versions.
    refresh: () => (el.open ? load(true) : (loaded = 0)),
  };
}

// Top-level fields that differ: [{ name, label, change, before, after }], in schema order
// then any stored keys the schema no longer declares.
export function diff(version, draft, schema) {
  const names = [...(schema?.fields || []).map((f) => f.name)];
  for (const key of new Set([...Object.keys(version), ...Object.keys(draft)])) if (!names.includes(key)) names.push(key);
  const labels = new Map((schema?.fields || []).map((f) => [f.name, labelOf(f)]));
  const rows = [];
  for (const name of names) {
    const had = version[name] !== undefined;
    const has = draft[name] !== undefined;
    if (!had && !has) continue;
    if (had && has && stable(version[name]) === stable(draft[name])) continue;
    rows.push({
      name,
      label: labels.get(name) || name,
      change: had && has ? "changed" : had ? "removed" : "added",
      before: had ? asText(version[name]) : "",
      after: has ? asText(draft[name]) : "",
    });
  }
  return rows;
}

// JSON with sorted keys: equal data gives equal text, whatever the key order.
export function stable(value) {
  if (Array.isArray(value)) return `[${value.map(stable).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

// A value as a person reads it: strings as they are, Portable Text as its text, the rest JSON.
export function asText(value) {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((b) => b && b._type === "block")) {
    return value.map((b) => (b.children || []).map((c) => c.text || "").join("")).join("\n");
  }
  if (value && typeof value === "object" && typeof value.current === "string" && Object.keys(value).length === 1) return value.current;
  return JSON.stringify(value, null, 1);
}

function diffTable(rows) {
  const words = { changed: "Changed", added: "Added since", removed: "Removed since" };
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "diff" },
      h("thead", {}, h("tr", {}, h("th", { text: "Field" }), h("th", { text: "Change" }), h("th", { text: "In this version" }), h("th", { text: "In the current draft" }))),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h(
            "tr",
            { class: `diff-${r.change}`, dataset: { field: r.name } },
            h("th", { scope: "row", text: r.label }),
            h("td", {}, h("span", { class: `badge ${r.change}`, text: words[r.change] })),
            h("td", {}, h("pre", { class: "diff-value before", text: r.before })),
            h("td", {}, h("pre", { class: "diff-value after", text: r.after })),
          ),
        ),
      ),
    ),
  );
}
