// The editor of a reference field: the chosen document shown by its title, a search of the
// target types, and the titles of referenced documents fetched in batches.

import { get, post, data, seg } from "./api.js";
import { h, render, notify } from "./dom.js";
import { changed, common, documentTitle, group, showMessage, titleField, wrap } from "./field-markup.js";

// Titles of referenced documents, fetched in one by-ids request per burst of lookups.
const titleQueue = new Map();
let titleTimer = null;
function lookupDocument(id) {
  return new Promise((resolve) => {
    if (!titleQueue.has(id)) titleQueue.set(id, []);
    titleQueue.get(id).push(resolve);
    if (!titleTimer) titleTimer = setTimeout(flushTitles, 0);
  });
}

async function flushTitles() {
  titleTimer = null;
  const batch = new Map(titleQueue);
  titleQueue.clear();
  const ids = [...batch.keys()];
  for (let i = 0; i < ids.length; i += 100) {
    const chunk = ids.slice(i, i + 100);
    let docs = [];
    try {
      docs = await data(get(`/api/documents/by-ids?ids=${chunk.map(seg).join(",")}`));
    } catch (error) {
      notify(`Referenced documents could not be loaded: ${error.message}`, "error");
    }
    const byId = new Map((docs || []).map((d) => [d.id, d]));
    chunk.forEach((id) => batch.get(id).forEach((resolve) => resolve(byId.get(id) || null)));
  }
}

export function referenceEditor(f, options) {
  const { ctx } = options;
  const targets = (f.to || []).filter((t) => ctx.schema(t));
  const search = h("input", { type: "search", name: f.name, autocomplete: "off", placeholder: `Search ${targets.map((t) => ctx.schema(t).title || t).join(", ")}…`, hidden: options.readOnly });
  const results = h("ul", { class: "ref-results", "aria-label": `Matches for ${options.label}` });
  const chosenEl = h("div", { class: "ref-chosen" });
  const el = wrap(options.label, search, { required: f.required, className: "reference" });
  el.querySelector(":scope > label").after(chosenEl);
  search.after(results);
  let value;

  const drawChosen = (doc) => {
    chosenEl.replaceChildren();
    if (!value) {
      chosenEl.append(h("span", { class: "muted", text: "None chosen" }));
      return;
    }
    const type = doc?.type;
    const title = doc ? documentTitle(doc, ctx.schema(type)) : value._ref;
    // render() skips the null parts (the native append would write "null").
    render(
      chosenEl,
      doc ? h("a", { href: `/admin/documents/${seg(type)}/${seg(value._ref)}`, text: title }) : h("span", { text: title }),
      doc ? null : h("span", { class: "muted", text: " (not found or not visible)" }),
      options.readOnly ? null : h("button", { type: "button", class: "link", text: "Clear", "aria-label": `Clear ${options.label}`, on: { click: () => choose(undefined) } }),
    );
  };
  const choose = (doc) => {
    value = doc ? { _ref: doc.id } : undefined;
    drawChosen(doc);
    results.replaceChildren();
    search.value = "";
    changed(el);
  };
  const find = async () => {
    const text = search.value.trim();
    if (!text) return results.replaceChildren();
    try {
      const found = await Promise.all(
        targets.map((type) => {
          const schema = ctx.schema(type);
          const name = titleField(schema);
          const where = name ? { [name]: { like: text } } : {};
          return data(post("/api/documents/query", { type, where, limit: 8, sort: "-updatedAt" })).then((docs) => docs.map((d) => [d, schema]));
        }),
      );
      const rows = found.flat();
      results.replaceChildren(
        ...(rows.length
          ? rows.map(([doc, schema]) => h("li", {}, h("button", { type: "button", class: "link", text: documentTitle(doc, schema), on: { click: () => choose(doc) } })))
          : [h("li", { class: "muted", text: "No matches" })]),
      );
    } catch (error) {
      results.replaceChildren(h("li", { class: "field-error", text: error.message }));
    }
  };
  const debounced = debounceLocal(find, 200);
  search.addEventListener("input", (event) => {
    // Typing a search is not a change of the document.
    event.stopPropagation();
    debounced();
  });
  search.addEventListener("change", (event) => event.stopPropagation());
  let extra = {};
  return {
    el,
    get: () => (value ? { ...extra, ...value } : undefined),
    set(v) {
      const { _ref, ...rest } = v && typeof v === "object" ? v : {};
      extra = rest;
      value = typeof _ref === "string" ? { _ref } : undefined;
      drawChosen(null);
      if (value) {
        chosenEl.replaceChildren(h("span", { class: "muted", text: "Loading…" }));
        const ref = value._ref;
        lookupDocument(ref).then((doc) => value?._ref === ref && drawChosen(doc));
      }
    },
    locate: () => el,
  };
}

function debounceLocal(fn, ms) {
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}
