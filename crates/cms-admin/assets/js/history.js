// A document's version history: the versions newest first, any two of them (or one and the
// current draft) compared field by field with the changed words marked, and restoring a
// version into the draft behind a confirmation (guarded by the revision, so a restore never
// overwrites someone's newer save unseen).
//
// One numbering: "version N" is the API's `versionNumber` (every draft save, publish and
// restore appends one); the header's "draft revision" counts writes to the draft only, which
// is why the two differ. The panel says so (docs/DECISIONS.md).

import { get, post, data, seg, query } from "./api.js";
import { h, render, timeAgo, notify, field, confirm } from "./dom.js";
import { documentTitle } from "./fields.js";
import { diff, refIds, changeNodes, stable, asText } from "./history-diff.js";

export { diff, stable, asText };

const PAGE = 20;
const DRAFT = "draft";

// options: { documentId, schema, schemaOf(type) -> schema (titles of references),
//            current() -> document, dirty() -> whether the form holds unsaved input,
//            canRestore, onRestored(doc), onConflict(error) -> handles a 409,
//            compareDraft() -> the draft data versions are compared with, when it is not the
//            current document's (localized types: the draft in every locale, as versions store
//            it) }
export function createHistory(options) {
  const list = h("ol", { class: "versions" });
  const detail = h("div", { class: "version-detail", "aria-live": "polite" });
  const more = h("button", { type: "button", text: "Older versions", hidden: true, on: { click: () => load(false) } });
  const status = h("p", { class: "muted", role: "status" });
  const hint = h("p", {
    class: "hint",
    text: "Every draft save, publish and restore adds a version. The revision in the header counts changes to the draft only, so its number can differ.",
  });
  const from = h("select", { name: "compare-from" });
  const to = h("select", { name: "compare-to" });
  from.addEventListener("change", () => compare());
  to.addEventListener("change", () => compare());
  const picker = h("div", { class: "toolbar compare-pick", hidden: true }, field("Compare", from), field("With", to));
  const el = h(
    "details",
    { class: "history" },
    h("summary", { text: "History" }),
    status,
    hint,
    h("div", { class: "history-body" }, h("div", {}, list, more), h("div", {}, picker, detail)),
  );
  let versions = [];
  let total = 0;
  const full = new Map();
  let comparing = 0;

  const load = async (reset) => {
    if (reset) {
      versions = [];
      full.clear();
      list.replaceChildren();
      detail.replaceChildren();
    }
    status.textContent = "Loading versions…";
    try {
      const body = await get(`/api/documents/${seg(options.documentId)}/versions${query({ limit: PAGE, offset: versions.length })}`);
      total = body.total ?? 0;
      for (const version of body.data || []) list.append(versionRow(version));
      versions.push(...(body.data || []));
      status.textContent = total ? `${total} version${total === 1 ? "" : "s"}` : "No versions yet.";
      more.hidden = versions.length >= total;
      fillPicker();
    } catch (error) {
      status.textContent = "";
      notify(`The history could not be loaded: ${error.message}`, "error");
    }
  };

  const nameOf = (version) => `Version ${version.versionNumber} · ${version.eventType === "publish" ? "Published" : "Draft saved"}`;

  const versionRow = (version) =>
    h(
      "li",
      {},
      h("button", {
        type: "button",
        class: "link version-button",
        text: nameOf(version),
        dataset: { version: String(version.versionNumber) },
        on: { click: () => choose(String(version.versionNumber), DRAFT) },
      }),
      h("span", { class: "muted" }, ` ${version.createdByName || version.createdBy || "someone"}, `, timeAgo(version.createdAt)),
    );

  // Both selects list the current draft and every loaded version, keeping their choice.
  const fillPicker = () => {
    const options = () => [h("option", { value: DRAFT, text: "Current draft" }), versions.map((v) => h("option", { value: String(v.versionNumber), text: nameOf(v) }))];
    for (const select of [from, to]) {
      const kept = select.value;
      render(select, options());
      if (kept) select.value = kept;
    }
    picker.hidden = versions.length === 0;
  };

  const choose = (older, newer) => {
    from.value = older;
    to.value = newer;
    compare();
  };

  // The data of one side: a version (read once), or the current draft (read each time).
  const side = async (key) => {
    if (key === DRAFT) return options.compareDraft ? (await options.compareDraft()) || {} : options.current()?.draftData || {};
    if (!full.has(key)) full.set(key, await data(get(`/api/documents/${seg(options.documentId)}/versions/${seg(key)}`)));
    return full.get(key).data || {};
  };

  const sideName = (key) => (key === DRAFT ? "the current draft" : `version ${key}`);

  const compare = async () => {
    const mine = ++comparing;
    const [a, b] = [from.value, to.value];
    list.querySelectorAll("[aria-current]").forEach((x) => x.removeAttribute("aria-current"));
    for (const key of [a, b]) list.querySelector(`[data-version="${CSS.escape(key)}"]`)?.setAttribute("aria-current", "true");
    let older;
    let newer;
    let titles;
    try {
      [older, newer] = await Promise.all([side(a), side(b)]);
      titles = await referenceTitles(new Set([...refIds(older), ...refIds(newer)]), options.schemaOf);
    } catch (error) {
      return notify(error.message, "error");
    }
    if (mine !== comparing) return;
    const rows = a === b ? [] : diff(older, newer, options.schema);
    // The version a restore would bring back: the chosen one that is not the draft.
    const restorable = [a, b].find((k) => k !== DRAFT);
    render(
      detail,
      h("h3", { text: `${capitalize(sideName(a))} compared with ${sideName(b)}` }),
      rows.length ? diffTable(rows, titles) : h("p", { class: "muted", text: "No differences." }),
      options.canRestore && restorable ? h("div", { class: "actions" }, h("button", { type: "button", class: "primary", text: `Restore version ${restorable}`, on: { click: () => restore(restorable) } })) : null,
    );
  };

  const restore = async (number) => {
    const dirty = options.dirty?.() ?? false;
    const message = `The draft becomes what version ${number} holds, saved as a new version; the published copy does not change.${dirty ? " Your unsaved changes in this form will be lost." : ""}`;
    if (!(await confirm(`Restore version ${number}?`, message, { confirmLabel: "Restore", danger: dirty }))) return;
    const doc = options.current();
    try {
      const restored = await data(post(`/api/documents/${seg(options.documentId)}/versions/${seg(number)}/restore`, { expectedRevision: doc._meta?.revision }));
      notify(`Version ${number} restored into the draft.`, "success");
      await options.onRestored(restored);
      await load(true);
    } catch (error) {
      if (error.status === 409 && options.onConflict) return options.onConflict(error);
      notify(error.message, "error");
    }
  };

  el.addEventListener("toggle", () => {
    if (el.open && versions.length === 0) load(true);
  });
  return {
    el,
    // After a save or publish, an open history shows the new versions.
    refresh: () => (el.open ? load(true) : (versions = [])),
  };
}

const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

// id -> title of the referenced documents the caller may read, in by-ids batches of 100 (its
// limit); an unreadable or deleted one is left out, and shown by its id.
async function referenceTitles(ids, schemaOf) {
  const titles = new Map();
  const all = [...ids];
  for (let i = 0; i < all.length; i += 100) {
    try {
      const docs = await data(get(`/api/documents/by-ids${query({ ids: all.slice(i, i + 100).join(",") })}`));
      for (const doc of docs || []) titles.set(doc.id, documentTitle(doc, schemaOf?.(doc.type)));
    } catch {
      // The comparison still shows: these references by their ids.
    }
  }
  return titles;
}

function diffTable(rows, titles) {
  const words = { changed: "Changed", added: "Added", removed: "Removed" };
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "diff" },
      h("thead", {}, h("tr", {}, h("th", { text: "Field" }), h("th", { text: "Difference" }))),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h(
            "tr",
            { class: `diff-${r.change}`, dataset: { field: r.name } },
            h("th", { scope: "row" }, r.label, " ", h("span", { class: `badge ${r.change}`, text: words[r.change] })),
            h("td", {}, changeNodes(r, titles)),
          ),
        ),
      ),
    ),
  );
}
