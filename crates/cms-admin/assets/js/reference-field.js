// The editor of a reference field: the chosen document shown by its title, and a combobox
// (WAI-ARIA 1.2, an input with a listbox popup) over the target types: the most recently
// updated documents before anything is typed, matches while typing, arrow keys, Enter and
// Escape, focus kept in the input; "Create new …" makes a document of a target type in a
// dialog (js/reference-create.js) and chooses it. Titles of referenced documents are fetched
// in batches.

import { get, post, data, query, seg } from "./api.js";
import { h, render, notify, uid } from "./dom.js";
import { changed, documentTitle, titleField, wrap } from "./field-markup.js";
import { createReferenced } from "./reference-create.js";
import { mayDo } from "./shell.js";

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

// How many recent documents the list offers before anything is typed, and matches per type.
const RECENT = 10;
const MATCHES = 8;

export function referenceEditor(f, options) {
  const { ctx } = options;
  const targets = (f.to || []).filter((t) => ctx.schema(t));
  const typeName = (type) => ctx.schema(type).title || type;
  const listId = uid("ref-list");
  const input = h("input", {
    type: "text",
    name: f.name,
    role: "combobox",
    autocomplete: "off",
    "aria-autocomplete": "list",
    "aria-expanded": "false",
    "aria-controls": listId,
    placeholder: `Search ${targets.map(typeName).join(", ")}…`,
    hidden: options.readOnly,
  });
  const list = h("ul", { class: "ref-results", id: listId, role: "listbox", "aria-label": `Matches for ${options.label}`, hidden: true });
  // Read out how many options there are (the listbox itself is not announced as it changes).
  const status = h("p", { class: "visually-hidden", role: "status" });
  const chosenEl = h("div", { class: "ref-chosen" });
  const el = wrap(options.label, input, { required: f.required, className: "reference" });
  el.querySelector(":scope > label").after(chosenEl);
  input.after(h("div", { class: "combobox" }, list), status);
  let value;
  let rows = [];
  let active = -1;
  let request = 0;
  // Set while the editor itself puts the focus back (the list stays closed).
  let quiet = false;
  // One node per document id, reused when a newer answer lists it again: a pointer or a
  // WebDriver click aimed at it does not land on a node that was just replaced.
  const nodes = new Map();

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
      options.readOnly ? null : h("button", { type: "button", class: "link", text: "Clear", "aria-label": `Clear ${options.label}`, on: { click: () => (choose(undefined), input.focus()) } }),
    );
  };

  const open = () => {
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
  };
  const close = () => {
    // A search still waiting to run would open the list again.
    debounced.cancel();
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
    request += 1;
  };
  const activate = (index) => {
    const items = [...list.querySelectorAll("[role=option]")];
    if (!items.length) return;
    active = (index + items.length) % items.length;
    items.forEach((item, i) => item.setAttribute("aria-selected", String(i === active)));
    input.setAttribute("aria-activedescendant", items[active].id);
    items[active].scrollIntoView({ block: "nearest" });
  };

  const choose = (doc) => {
    value = doc ? { _ref: doc.id } : undefined;
    drawChosen(doc);
    close();
    input.value = "";
    changed(el);
  };
  const createNew = async (type) => {
    close();
    const doc = await createReferenced(ctx, type, input.value.trim());
    if (doc) choose(doc);
    // Back where the person was, whether they created one or not, without opening the list
    // again over what they just did.
    quiet = true;
    input.focus();
    quiet = false;
  };

  const option = (key, text, detail, run) => {
    let li = nodes.get(key);
    if (!li) {
      li = h("li", { role: "option", id: uid("ref-opt"), "aria-selected": "false" });
      // The input keeps the focus while a pointer picks an option.
      li.addEventListener("mousedown", (event) => event.preventDefault());
      li.addEventListener("click", () => li.run());
      nodes.set(key, li);
    }
    li.run = run;
    li.setAttribute("aria-selected", "false");
    render(li, h("span", { text }), detail ? h("span", { class: "muted", text: ` ${detail}` }) : null);
    return li;
  };
  const show = (found, typed) => {
    rows = found;
    active = -1;
    input.removeAttribute("aria-activedescendant");
    const many = targets.length > 1;
    const docs = rows.map(([doc, schema]) => option(doc.id, documentTitle(doc, schema), many ? `(${schema.title || schema.name})` : null, () => choose(doc)));
    // Offered for the target types the caller may create (the server decides again).
    const creatable = ctx.can ? targets.filter((type) => mayDo(ctx, ctx.schema(type), "create")) : [];
    const creates = creatable.map((type) => option(`create:${type}`, `Create new ${typeName(type)}…`, null, () => createNew(type)));
    creates.forEach((li) => li.classList.add("ref-create"));
    list.replaceChildren(...docs, ...creates);
    const what = typed ? "matches" : "recently updated";
    status.textContent = rows.length ? `${rows.length} ${what}` : typed ? "No matches" : "Nothing to choose yet";
    if (!docs.length && !creates.length) return close();
    open();
  };

  // The recently updated documents of the target types (text empty), or the matches.
  const find = async () => {
    const text = input.value.trim();
    const mine = ++request;
    try {
      const found = await Promise.all(
        targets.map(async (type) => {
          const schema = ctx.schema(type);
          let docs;
          if (text) {
            const name = titleField(schema);
            const where = name ? { [name]: { like: text } } : {};
            docs = await data(post("/api/documents/query", { type, where, limit: MATCHES, sort: "-updatedAt" }));
          } else {
            docs = await data(get(`/api/documents${query({ type, sort: "-updatedAt", limit: RECENT })}`));
          }
          return (docs || []).map((d) => [d, schema]);
        }),
      );
      if (mine !== request) return;
      const all = found.flat();
      // Several types: newest first across them, as one list.
      if (!text) all.sort(([a], [b]) => String(b.updatedAt).localeCompare(String(a.updatedAt)));
      show(all.slice(0, text ? MATCHES * targets.length : RECENT), Boolean(text));
    } catch (error) {
      if (mine !== request) return;
      status.textContent = error.message;
      notify(`Documents could not be listed: ${error.message}`, "error");
    }
  };
  const debounced = debounceLocal(find, 200);

  input.addEventListener("focus", () => {
    if (list.hidden && !quiet) find();
  });
  input.addEventListener("input", (event) => {
    // Typing a search is not a change of the document.
    event.stopPropagation();
    debounced();
  });
  input.addEventListener("change", (event) => event.stopPropagation());
  input.addEventListener("keydown", (event) => {
    const items = list.querySelectorAll("[role=option]");
    switch (event.key) {
      case "ArrowDown":
      case "ArrowUp": {
        event.preventDefault();
        if (list.hidden) {
          find();
          return;
        }
        activate(active < 0 ? (event.key === "ArrowDown" ? 0 : -1) : active + (event.key === "ArrowDown" ? 1 : -1));
        return;
      }
      case "Enter":
        // Never submits the document's form from here.
        event.preventDefault();
        if (!list.hidden && active >= 0) items[active]?.run();
        return;
      case "Escape":
        if (!list.hidden) {
          event.preventDefault();
          event.stopPropagation();
          close();
        }
        return;
      case "Tab":
        close();
        return;
      default:
    }
  });
  // Leaving the field closes the list (a click on an option keeps the focus: mousedown).
  input.addEventListener("blur", () => close());

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
  const run = () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
  run.cancel = () => clearTimeout(timer);
  return run;
}
