// The list of one document type: a page of documents at a time, searched, filtered by status
// and sorted, the state kept in the URL (?q=&status=&sort=&page=&size=&cols=) so reload and
// back/forward show the same list. The columns are chosen (any scalar field, an image as a
// thumbnail, a reference by its document's title; remembered per type in localStorage too),
// headers sort, and rows are selected for bulk publish, unpublish and delete. A singleton type
// has no list: its one document opens directly. A localized type is listed in the locale the
// editor works in (?locale=, js/locale.js), each row marked when some of its localized values
// are missing in that locale.

import { get, post, del, data, seg, query } from "../api.js";
import { h, render, field, setTitle, formatDate, timeAgo, failed, ready, debounce, banner, confirm, notify, emptyState } from "../dom.js";
import { documentTitle, titleField, labelOf } from "../fields.js";
import { statusBadge, hasUnpublishedChanges } from "./document.js";
import { mayDo } from "../shell.js";
import { localesFor, missingText } from "../locale.js";
import { thumbnailAttrs } from "../asset-picker.js";

const PAGE_SIZES = [20, 50, 100];
// `status` values of the list endpoint: `draft` is "no published copy", `changed` "what
// Publish would change" (docs/DECISIONS.md).
const STATUSES = [
  ["", "All"],
  ["changed", "Has unpublished changes"],
  ["draft", "Never published"],
  ["published", "Published"],
];
// Field types a column can show: scalars as text, an image as a thumbnail, a reference by title.
const SCALAR = new Set(["string", "text", "number", "boolean", "date", "datetime", "url", "email", "slug"]);
const COLUMN_TYPES = new Set([...SCALAR, "image", "reference"]);
// The built-in columns, beside the title (always first).
const BUILT_IN = [
  ["_status", "Status"],
  ["_updatedAt", "Updated"],
  ["_createdAt", "Created"],
];
const DEFAULT_COLUMNS = BUILT_IN.map(([key]) => key);

export async function mount(main, ctx) {
  const type = ctx.params.type;
  const schema = ctx.schema(type);
  if (!schema || schema.type !== "document") return failed(main, new Error(`There is no document type ${type}.`));
  if (schema.singleton) return openSingleton(main, schema);
  new DocumentList(main, ctx, schema, await localesFor(schema, ctx)).draw();
}

// The list endpoint returns the singleton's one (lazily created) row.
async function openSingleton(main, schema) {
  try {
    const body = await get(`/api/documents${query({ type: schema.name })}`);
    const doc = body.data?.[0];
    if (!doc) throw new Error(`${schema.title || schema.name} could not be opened.`);
    location.replace(`/admin/documents/${seg(schema.name)}/${seg(doc.id)}`);
  } catch (error) {
    failed(main, error);
  }
}

// The columns remembered for a type: the URL's first, then this browser's last choice.
const storedColumns = (type) => {
  try {
    return localStorage.getItem(`cms.list.columns.${type}`);
  } catch {
    return null;
  }
};

function readState(type) {
  const params = new URLSearchParams(location.search);
  const page = Number.parseInt(params.get("page") || "1", 10);
  const size = Number.parseInt(params.get("size") || "20", 10);
  const cols = params.get("cols") ?? storedColumns(type);
  return {
    q: params.get("q") || "",
    status: STATUSES.some(([v]) => v && v === params.get("status")) ? params.get("status") : "",
    sort: params.get("sort") || "-updatedAt",
    page: Number.isFinite(page) && page > 0 ? page : 1,
    size: PAGE_SIZES.includes(size) ? size : 20,
    cols: cols === null ? DEFAULT_COLUMNS : cols.split(",").filter(Boolean),
  };
}

class DocumentList {
  constructor(main, ctx, schema, locales) {
    this.main = main;
    this.ctx = ctx;
    this.schema = schema;
    this.locales = locales;
    this.titleName = titleField(schema);
    // A type with searchable fields is searched with the full-text `search` of the list
    // endpoint (every searchable field, by relevance); others by title, as before.
    this.fullText = holdsSearchable(schema.fields, ctx);
    this.state = readState(schema.name);
    this.request = 0;
    this.selected = new Set();
    this.assets = new Map();
    // Fields a column can show, in schema order, then the built-in ones.
    this.columns = [
      ...(schema.fields || []).filter((f) => f.name !== this.titleName && COLUMN_TYPES.has(f.type)).map((f) => ({ key: f.name, label: labelOf(f), field: f })),
      ...BUILT_IN.map(([key, label]) => ({ key, label })),
    ];
  }

  draw() {
    const { schema } = this;
    const title = schema.title || schema.name;
    setTitle(title);
    const titleLabel = this.titleName ? labelOf(schema.fields.find((f) => f.name === this.titleName)) : null;
    const placeholder = this.fullText ? "Search…" : titleLabel ? `Search by ${titleLabel.toLowerCase()}…` : "Search";
    this.search = h("input", { type: "search", name: "q", placeholder, disabled: !this.titleName && !this.fullText });
    this.status = h("select", { name: "status" }, STATUSES.map(([value, text]) => h("option", { value, text })));
    this.size = h("select", { name: "size" }, PAGE_SIZES.map((n) => h("option", { value: String(n), text: String(n) })));
    this.size.addEventListener("change", () => this.change({ size: Number(this.size.value), page: 1 }));
    const sorts = [
      ["-updatedAt", "Updated, newest first"],
      ["updatedAt", "Updated, oldest first"],
      ["-createdAt", "Created, newest first"],
      ["createdAt", "Created, oldest first"],
      ...(this.titleName
        ? [
            [this.titleName, `${titleLabel}, A to Z`],
            [`-${this.titleName}`, `${titleLabel}, Z to A`],
          ]
        : []),
    ];
    this.sort = h("select", { name: "sort" }, sorts.map(([value, text]) => h("option", { value, text })));
    this.search.addEventListener("input", debounce(() => this.change({ q: this.search.value.trim(), page: 1 }), 250));
    this.status.addEventListener("change", () => this.change({ status: this.status.value, page: 1 }));
    this.sort.addEventListener("change", () => this.change({ sort: this.sort.value, page: 1 }));
    const locale = this.locales?.select({ label: "Locale", onChange: (tag) => {
        this.locales.choose(tag);
        this.change({ page: 1 });
      },
    });
    this.results = h("div", { class: "document-list", "aria-live": "polite" });
    this.summary = h("p", { class: "muted", role: "status" });
    this.chooser = this.columnChooser();
    this.bulk = h("div", { class: "toolbar bulk-actions", role: "group", "aria-label": "Selected documents", hidden: true });
    render(
      this.main,
      h(
        "div",
        { class: "list-header" },
        h("h1", { text: title }),
        mayDo(this.ctx, schema, "create") ? h("a", { class: "button primary", href: `/admin/documents/${seg(schema.name)}/new`, text: "New", on: { click: (e) => this.withLocale(e.currentTarget) } }) : null,
      ),
      h("div", { class: "toolbar list-filters" }, field("Search", this.search), field("Status", this.status), field("Sort", this.sort), field("Per page", this.size), locale?.field),
      h("div", { class: "list-tools" }, this.summary, this.chooser),
      this.bulk,
      this.results,
    );
    this.localeSelect = locale?.select;
    window.addEventListener("popstate", () => {
      this.state = readState(this.schema.name);
      if (this.locales) {
        this.locales.choose(new URLSearchParams(location.search).get("locale"));
        this.localeSelect.value = this.locales.current;
      }
      this.fill();
      this.load();
    });
    this.fill();
    this.load();
  }

  fill() {
    this.search.value = this.state.q;
    this.status.value = this.state.status;
    this.showSort();
    this.size.value = String(this.state.size);
    this.chooser.querySelectorAll("input[type=checkbox]").forEach((box) => (box.checked = this.state.cols.includes(box.value)));
  }

  // The Sort select says what the list is sorted by, a header's sort included.
  showSort() {
    const key = this.state.sort;
    if (![...this.sort.options].some((o) => o.value === key)) {
      const name = key.replace(/^-/, "");
      const column = this.columns.find((c) => c.key === name);
      const text = column ? `${column.label}, ${key.startsWith("-") ? "descending" : "ascending"}` : key;
      this.sort.append(h("option", { value: key, text }));
    }
    this.sort.value = key;
  }

  // "Columns": a checkbox per field a column can show and per built-in column.
  columnChooser() {
    return h(
      "details",
      { class: "column-chooser" },
      h("summary", { text: "Columns" }),
      h(
        "fieldset",
        {},
        h("legend", { text: "Columns shown" }),
        this.columns.map((c) =>
          h(
            "label",
            { class: "checkbox-line" },
            h("input", {
              type: "checkbox",
              name: "column",
              value: c.key,
              on: {
                change: () => {
                  const cols = [...this.chooser.querySelectorAll("input[type=checkbox]:checked")].map((b) => b.value);
                  try {
                    localStorage.setItem(`cms.list.columns.${this.schema.name}`, cols.join(","));
                  } catch {
                    // Private windows may refuse: the URL keeps the choice.
                  }
                  this.change({ cols });
                },
              },
            }),
            ` ${c.label}`,
          ),
        ),
      ),
    );
  }

  change(next) {
    this.state = { ...this.state, ...next };
    if (next.sort) this.showSort();
    const { q, status, sort, page, size, cols } = this.state;
    const sameCols = cols.join(",") === DEFAULT_COLUMNS.join(",");
    const search = query({ q, status, sort: sort === "-updatedAt" ? "" : sort, page: page > 1 ? page : "", size: size === 20 ? "" : size, cols: sameCols ? "" : cols.join(",") || ",", locale: this.locales?.current });
    history.pushState(null, "", `${location.pathname}${search}`);
    this.load();
  }

  // One request per state: the list endpoint (with `search` for a full-text search, by
  // relevance unless another sort than the default was chosen), or the query endpoint when
  // searching a type without searchable fields by title.
  async fetchPage() {
    const { schema, state } = this;
    if (state.q && this.fullText) {
      const sort = state.sort === "-updatedAt" ? "" : state.sort;
      return get(`/api/documents${query({ type: schema.name, search: state.q, status: state.status, sort, page: state.page, pageSize: state.size, locale: this.locales?.current })}`);
    }
    if (state.q && this.titleName) {
      const body = {
        type: schema.name,
        where: { [this.titleName]: { like: state.q } },
        sort: state.sort,
        page: state.page,
        limit: state.size,
        locale: this.locales?.current,
      };
      // The query endpoint has no status filter: the published perspective leaves out
      // draft-only documents, and the other statuses narrow the page it returns.
      if (state.status === "published") body.perspective = "published";
      const res = await post("/api/documents/query", body);
      if (state.status === "draft") res.data = res.data.filter((d) => !d.publishedData);
      if (state.status === "changed") res.data = res.data.filter(hasUnpublishedChanges);
      return res;
    }
    return get(`/api/documents${query({ type: schema.name, status: state.status, sort: state.sort, page: state.page, pageSize: state.size, locale: this.locales?.current })}`);
  }

  async load() {
    const mine = ++this.request;
    this.main.setAttribute("aria-busy", "true");
    try {
      const res = await this.fetchPage();
      if (mine !== this.request) return;
      banner(this.main, null);
      await this.drawRows(res.data || [], res.pagination, mine);
    } catch (error) {
      if (mine !== this.request) return;
      banner(this.main, error.message);
    } finally {
      if (mine === this.request) {
        this.main.removeAttribute("aria-busy");
        ready(this.main);
      }
    }
  }

  async drawRows(docs, pagination, mine) {
    const { schema } = this;
    const total = pagination?.total ?? docs.length;
    this.docs = docs;
    this.selected.clear();
    this.drawBulk();
    this.summary.textContent = `${total} document${total === 1 ? "" : "s"}${this.state.q ? ` matching “${this.state.q}”` : ""}`;
    if (!docs.length) {
      render(this.results, this.empty());
      return;
    }
    const shown = this.columns.filter((c) => this.state.cols.includes(c.key));
    const [titles, assets] = await Promise.all([this.referenceTitles(docs, shown), this.imageAssets(docs, shown)]);
    // A newer list was asked for meanwhile: it draws.
    if (mine !== this.request) return;
    const titleLabel = this.titleName ? labelOf(schema.fields.find((f) => f.name === this.titleName)) : "Title";
    const all = h("input", { type: "checkbox", "aria-label": "Select all on this page", on: { change: (e) => this.selectAll(e.currentTarget.checked) } });
    this.selectAllBox = all;
    const table = h(
      "table",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("td", { class: "select-cell" }, all),
          this.header(titleLabel, this.titleName),
          shown.map((c) => this.header(c.label, sortKey(c))),
        ),
      ),
      h(
        "tbody",
        {},
        docs.map((doc) =>
          h(
            "tr",
            { dataset: { id: doc.id } },
            h(
              "td",
              { class: "select-cell" },
              h("input", { type: "checkbox", name: "selected", value: doc.id, "aria-label": `Select ${documentTitle(doc, schema)}`, on: { change: (e) => this.select(doc.id, e.currentTarget.checked) } }),
            ),
            h("td", { class: "title-cell" }, h("a", { href: this.link(`/admin/documents/${seg(schema.name)}/${seg(doc.id)}`), text: documentTitle(doc, schema) }), this.missing(doc)),
            shown.map((c) => h("td", { dataset: { column: c.key } }, this.cell(doc, c, titles, assets))),
          ),
        ),
      ),
    );
    render(this.results, h("div", { class: "table-wrap" }, table), this.pager(pagination));
  }

  // What an empty list says, and the way on: clear the search or filter that left nothing,
  // or create the first document (when the caller may).
  empty() {
    const { schema, state } = this;
    const plural = pluralOf(schema);
    if (state.q || state.status) {
      const clear = () => {
        this.change({ q: "", status: "", page: 1 });
        this.fill();
      };
      return emptyState(`No ${plural} match.`, h("button", { type: "button", text: state.q ? "Clear the search" : "Clear the filter", on: { click: clear } }));
    }
    const create = mayDo(this.ctx, schema, "create")
      ? h("a", { class: "button primary", href: this.link(`/admin/documents/${seg(schema.name)}/new`), text: "Create the first one", on: { click: (e) => this.withLocale(e.currentTarget) } })
      : null;
    return emptyState(`No ${plural} yet.`, create);
  }

  // A column header; a sortable one is a button that sorts by it, ascending first.
  header(label, key) {
    if (!key) return h("th", { scope: "col", text: label });
    const { sort } = this.state;
    const direction = sort === key ? "ascending" : sort === `-${key}` ? "descending" : null;
    const next = direction === "ascending" ? `-${key}` : key;
    return h(
      "th",
      { scope: "col", "aria-sort": direction || "none" },
      h(
        "button",
        { type: "button", class: "link sort-button", on: { click: () => this.change({ sort: next, page: 1 }) } },
        label,
        h("span", { "aria-hidden": "true", class: "sort-mark", text: direction === "ascending" ? " ▲" : direction === "descending" ? " ▼" : "" }),
      ),
    );
  }

  cell(doc, column, titles, assets) {
    if (column.key === "_status") return statusBadge(doc);
    if (column.key === "_updatedAt") return timeAgo(doc.updatedAt);
    if (column.key === "_createdAt") return timeAgo(doc.createdAt);
    const value = doc.draftData?.[column.key];
    if (value === undefined || value === null || value === "") return null;
    const type = column.field.type;
    if (type === "reference") {
      const title = titles.get(value._ref);
      return title ? h("a", { href: `/admin/documents/${seg(title.type)}/${seg(value._ref)}`, text: title.text }) : h("span", { class: "muted", text: value._ref });
    }
    if (type === "image") {
      const asset = assets.get(value.asset?._ref);
      if (!asset?.url) return h("span", { class: "muted", text: "Image" });
      return h("img", { class: "list-thumb", ...thumbnailAttrs(asset, 48, 48, "crop"), alt: value.alt || asset.alt || "" });
    }
    if (type === "boolean") return value ? "Yes" : "No";
    if (type === "date") return value;
    if (type === "datetime") return formatDate(value);
    if (type === "slug") return value.current || "";
    return String(value);
  }

  // id -> { text, type } of the documents the shown reference columns point to: one by-ids
  // request per 100 (its limit), as the signed-in person reads them.
  async referenceTitles(docs, shown) {
    const ids = new Set();
    for (const c of shown) if (c.field?.type === "reference") docs.forEach((d) => d.draftData?.[c.key]?._ref && ids.add(d.draftData[c.key]._ref));
    const titles = new Map();
    const list = [...ids];
    for (let i = 0; i < list.length; i += 100) {
      try {
        const found = await data(get(`/api/documents/by-ids${query({ ids: list.slice(i, i + 100).join(","), locale: this.locales?.current })}`));
        for (const d of found || []) titles.set(d.id, { text: documentTitle(d, this.ctx.schema(d.type)), type: d.type });
      } catch {
        // Shown by id: the list itself is still useful.
      }
    }
    return titles;
  }

  // id -> asset of the shown image columns' assets, read once per list (there is no batch
  // read of assets; a page holds at most 100).
  async imageAssets(docs, shown) {
    const ids = new Set();
    for (const c of shown) if (c.field?.type === "image") docs.forEach((d) => d.draftData?.[c.key]?.asset?._ref && ids.add(d.draftData[c.key].asset._ref));
    await Promise.all(
      [...ids]
        .filter((id) => !this.assets.has(id))
        .map(async (id) => {
          try {
            this.assets.set(id, await data(get(`/api/assets/${seg(id)}`)));
          } catch {
            this.assets.set(id, null);
          }
        }),
    );
    return this.assets;
  }

  select(id, on) {
    if (on) this.selected.add(id);
    else this.selected.delete(id);
    this.drawBulk();
  }

  selectAll(on) {
    this.results.querySelectorAll("tbody input[name=selected]").forEach((box) => {
      box.checked = on;
      this.select(box.value, on);
    });
  }

  // The bulk actions, shown while rows are selected, for what the person may do.
  drawBulk() {
    const n = this.selected.size;
    this.bulk.hidden = n === 0;
    if (this.selectAllBox) {
      this.selectAllBox.checked = n > 0 && n === (this.docs || []).length;
      this.selectAllBox.indeterminate = n > 0 && n < (this.docs || []).length;
    }
    if (!n) return render(this.bulk);
    const may = (op) => mayDo(this.ctx, this.schema, op);
    render(
      this.bulk,
      h("span", { text: `${n} selected` }),
      may("publish") ? h("button", { type: "button", text: "Publish selected", on: { click: () => this.bulkRun("publish") } }) : null,
      may("unpublish") ? h("button", { type: "button", text: "Unpublish selected", on: { click: () => this.bulkRun("unpublish") } }) : null,
      may("delete") ? h("button", { type: "button", class: "danger", text: "Delete selected", on: { click: () => this.bulkRun("delete") } }) : null,
    );
  }

  // One request per document, one after another (each is checked and may fail on its own),
  // then one notice: "3 published, 1 failed: <title>: <reason>".
  async bulkRun(action) {
    const docs = (this.docs || []).filter((d) => this.selected.has(d.id));
    const title = (d) => documentTitle(d, this.schema);
    if (action === "delete") {
      const names = docs.map(title).join(", ");
      const sure = await confirm(`Delete ${docs.length} document${docs.length === 1 ? "" : "s"}?`, `${names} will be deleted with their versions. This cannot be undone.`, { confirmLabel: "Delete", danger: true });
      if (!sure) return;
    }
    const request = {
      publish: (d) => post(`/api/documents/${seg(d.id)}/publish`),
      unpublish: (d) => del(`/api/documents/${seg(d.id)}/publish`),
      delete: (d) => del(`/api/documents/${seg(d.id)}`),
    }[action];
    const done = { publish: "published", unpublish: "unpublished", delete: "deleted" }[action];
    this.bulk.querySelectorAll("button").forEach((b) => (b.disabled = true));
    let ok = 0;
    const failures = [];
    for (const d of docs) {
      try {
        await request(d);
        ok += 1;
      } catch (error) {
        failures.push(`${title(d)}: ${error.message}`);
      }
    }
    const summary = `${ok} ${done}${failures.length ? `, ${failures.length} failed: ${failures.join("; ")}` : ""}`;
    notify(summary, failures.length ? "error" : "success");
    await this.load();
  }

  link(path) {
    return this.locales ? this.locales.href(path) : path;
  }

  // "New" opens in the locale chosen last (it may have changed since the link was drawn).
  withLocale(anchor) {
    if (this.locales) anchor.href = this.link(anchor.getAttribute("href").split("?")[0]);
  }

  // A row whose localized values are not all in the list's locale: which fields are shown
  // from another one (`_meta.fallbackLocales` of the draft read in this locale).
  missing(doc) {
    const served = Object.entries(doc._meta?.fallbackLocales || {});
    if (!this.locales || !served.length) return null;
    const tag = this.locales.current;
    const detail = served.map(([path, from]) => `${path}: ${missingText(tag, from).toLowerCase()}`).join("; ");
    return [" ", h("span", { class: "badge missing-locale", title: detail, text: `Missing in ${tag}` })];
  }

  pager(p) {
    if (!p || p.totalPages <= 1) return null;
    return h(
      "nav",
      { class: "pagination", "aria-label": "Pages" },
      h("button", { type: "button", text: "Previous", disabled: !p.hasPrevPage, on: { click: () => this.change({ page: p.page - 1 }) } }),
      h("span", { text: `Page ${p.page} of ${p.totalPages}` }),
      h("button", { type: "button", text: "Next", disabled: !p.hasNextPage, on: { click: () => this.change({ page: p.page + 1 }) } }),
    );
  }
}

// "Post" -> "posts", "Category" -> "categories", "Box" -> "boxes": a type's name in the
// empty list's sentence (English, as the rest of the admin).
function pluralOf(schema) {
  const name = String(schema.title || schema.name).toLowerCase();
  if (/[^aeiou]y$/.test(name)) return `${name.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(name)) return `${name}es`;
  return `${name}s`;
}

// The sort key of a column: a scalar field by its name, the dates by theirs; slugs (an
// object), images, references and the status are not sortable.
function sortKey(column) {
  if (column.key === "_updatedAt") return "updatedAt";
  if (column.key === "_createdAt") return "createdAt";
  return column.field && SCALAR.has(column.field.type) && column.field.type !== "slug" ? column.key : null;
}

// Whether `fields` (or an object among them, inline or a named object type) hold a field with
// `searchable: true`, as GET /api/schemas shows it.
function holdsSearchable(fields, ctx, seen = new Set()) {
  return (fields || []).some((f) => {
    if (f.searchable) return true;
    if (f.type === "object") return holdsSearchable(f.fields, ctx, seen);
    const named = ctx.schema(f.type);
    if (named?.type === "object" && !seen.has(named.name)) {
      seen.add(named.name);
      return holdsSearchable(named.fields, ctx, seen);
    }
    return false;
  });
}
