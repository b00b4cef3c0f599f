// The list of one document type: a page of documents at a time, searched, filtered by status
// and sorted, the state kept in the URL (?q=&status=&sort=&page=) so reload and back/forward
// show the same list. A singleton type has no list: its one document opens directly. A
// localized type is listed in the locale the editor works in (?locale=, js/locale.js), each
// row marked when some of its localized values are missing in that locale.

import { get, post, seg, query } from "../api.js";
import { h, render, field, setTitle, formatDate, failed, ready, debounce, banner } from "../dom.js";
import { documentTitle, titleField, labelOf } from "../fields.js";
import { statusBadge } from "./document.js";
import { mayDo } from "../shell.js";
import { localesFor, missingText } from "../locale.js";

const PAGE_SIZE = 20;

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

function readState() {
  const params = new URLSearchParams(location.search);
  const page = Number.parseInt(params.get("page") || "1", 10);
  return {
    q: params.get("q") || "",
    status: ["draft", "published"].includes(params.get("status")) ? params.get("status") : "",
    sort: params.get("sort") || "-updatedAt",
    page: Number.isFinite(page) && page > 0 ? page : 1,
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
    this.state = readState();
    this.request = 0;
  }

  draw() {
    const { schema } = this;
    const title = schema.title || schema.name;
    setTitle(title);
    const titleLabel = this.titleName ? labelOf(schema.fields.find((f) => f.name === this.titleName)) : null;
    const placeholder = this.fullText ? "Search…" : titleLabel ? `Search by ${titleLabel.toLowerCase()}…` : "Search";
    this.search = h("input", { type: "search", name: "q", placeholder, disabled: !this.titleName && !this.fullText });
    this.status = h("select", { name: "status" }, h("option", { value: "", text: "All" }), h("option", { value: "draft", text: "Draft" }), h("option", { value: "published", text: "Published" }));
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
    render(
      this.main,
      h(
        "div",
        { class: "list-header" },
        h("h1", { text: title }),
        mayDo(this.ctx, schema, "create") ? h("a", { class: "button primary", href: `/admin/documents/${seg(schema.name)}/new`, text: "New", on: { click: (e) => this.withLocale(e.currentTarget) } }) : null,
      ),
      h("div", { class: "toolbar list-filters" }, field("Search", this.search), field("Status", this.status), field("Sort", this.sort), locale?.field),
      this.summary,
      this.results,
    );
    this.localeSelect = locale?.select;
    window.addEventListener("popstate", () => {
      this.state = readState();
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
    if (![...this.sort.options].some((o) => o.value === this.state.sort)) this.sort.append(h("option", { value: this.state.sort, text: this.state.sort }));
    this.sort.value = this.state.sort;
  }

  change(next) {
    this.state = { ...this.state, ...next };
    const { q, status, sort, page } = this.state;
    const search = query({ q, status, sort: sort === "-updatedAt" ? "" : sort, page: page > 1 ? page : "", locale: this.locales?.current });
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
      return get(`/api/documents${query({ type: schema.name, search: state.q, status: state.status, sort, page: state.page, pageSize: PAGE_SIZE, locale: this.locales?.current })}`);
    }
    if (state.q && this.titleName) {
      const body = {
        type: schema.name,
        where: { [this.titleName]: { like: state.q } },
        sort: state.sort,
        page: state.page,
        limit: PAGE_SIZE,
        locale: this.locales?.current,
      };
      // The query endpoint has no status filter: the published perspective leaves out
      // draft-only documents, and "draft" narrows the page it returns.
      if (state.status === "published") body.perspective = "published";
      const res = await post("/api/documents/query", body);
      if (state.status === "draft") res.data = res.data.filter((d) => !d.publishedData);
      return res;
    }
    return get(`/api/documents${query({ type: schema.name, status: state.status, sort: state.sort, page: state.page, pageSize: PAGE_SIZE, locale: this.locales?.current })}`);
  }

  async load() {
    const mine = ++this.request;
    this.main.setAttribute("aria-busy", "true");
    try {
      const res = await this.fetchPage();
      if (mine !== this.request) return;
      banner(this.main, null);
      this.drawRows(res.data || [], res.pagination);
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

  drawRows(docs, pagination) {
    const { schema } = this;
    const total = pagination?.total ?? docs.length;
    this.summary.textContent = `${total} document${total === 1 ? "" : "s"}${this.state.q ? ` matching “${this.state.q}”` : ""}`;
    if (!docs.length) {
      render(this.results, h("p", { class: "empty", text: this.state.q || this.state.status ? "No documents match." : "No documents yet." }));
      return;
    }
    const table = h(
      "table",
      {},
      h("thead", {}, h("tr", {}, h("th", { text: "Title" }), h("th", { text: "Status" }), h("th", { text: "Updated" }), h("th", { text: "Created" }))),
      h(
        "tbody",
        {},
        docs.map((doc) =>
          h(
            "tr",
            { dataset: { id: doc.id } },
            h("td", {}, h("a", { href: this.link(`/admin/documents/${seg(schema.name)}/${seg(doc.id)}`), text: documentTitle(doc, schema) }), this.missing(doc)),
            h("td", {}, statusBadge(doc)),
            h("td", { text: formatDate(doc.updatedAt) }),
            h("td", { text: formatDate(doc.createdAt) }),
          ),
        ),
      ),
    );
    render(this.results, h("div", { class: "table-wrap" }, table), this.pager(pagination));
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
