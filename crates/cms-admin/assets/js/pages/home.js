// The admin's start page: "create new" per document type the caller may create, the
// organization's recent edits and its drafts waiting to publish; for someone in no
// organization yet, a way to create one.

import { get, post, seg, query, ApiError } from "../api.js";
import { h, render, field, banner, setTitle, ready, notify, timeAgo } from "../dom.js";
import { documentTitle } from "../fields.js";
import { statusBadge, hasUnpublishedChanges } from "./document.js";
import { mayDo } from "../shell.js";

// How many documents each section shows, and how many of each type are read to find them.
const SHOWN = 10;
const PER_TYPE = 20;

export async function mount(main, ctx) {
  if (!ctx.organization) return noOrganization(main);
  setTitle("Home");
  // Singletons have no list and no "new"; reading one would also create its row, so the home
  // page leaves them to the navigation.
  const types = ctx.documentTypes.filter((s) => !s.singleton);
  const creatable = types.filter((s) => mayDo(ctx, s, "create"));
  const recent = h("div", { class: "home-list" }, h("p", { class: "muted", text: "Loading…" }));
  const drafts = h("div", { class: "home-list" }, h("p", { class: "muted", text: "Loading…" }));
  render(
    main,
    h("h1", { text: ctx.organization.name }),
    h(
      "div",
      { class: "home-sections" },
      section("create-new", "Create new", creatable.length
        ? h("ul", { class: "create-new" }, creatable.map((s) => h("li", {}, h("a", { class: "button", href: `/admin/documents/${seg(s.name)}/new`, text: `New ${s.title || s.name}` }))))
        : h("p", { class: "muted", text: types.length ? "You may not create documents here." : "There are no document types yet: they are declared in the instance's schema." })),
      section("recent-edits", "Recent edits", recent),
      section("drafts", "Drafts waiting to publish", drafts),
    ),
  );
  const docs = await latest(types);
  docs.sort((a, b) => String(b.doc.updatedAt).localeCompare(String(a.doc.updatedAt)));
  render(recent, documentList(docs.slice(0, SHOWN), creatable.length ? "Nothing has been edited yet: start with one of the “New” buttons above." : "Nothing has been edited yet."));
  // Never published, or changed since it was published.
  const waiting = docs.filter(({ doc }) => hasUnpublishedChanges(doc)).slice(0, SHOWN);
  render(drafts, documentList(waiting, "No drafts are waiting: everything is published."));
  ready(main);
}

function section(id, title, body) {
  return h("section", { class: "home-section", "aria-labelledby": `${id}-title`, dataset: { section: id } }, h("h2", { id: `${id}-title`, text: title }), body);
}

// The most recently updated documents of each type (one small request per type, as the list
// endpoint reads one type at a time), each with its schema. A type that fails to load is
// named rather than hiding the others.
async function latest(types) {
  const lists = await Promise.all(
    types.map((schema) =>
      get(`/api/documents${query({ type: schema.name, sort: "-updatedAt", pageSize: PER_TYPE })}`)
        .then((body) => (body.data || []).map((doc) => ({ doc, schema })))
        .catch((error) => {
          notify(`${schema.title || schema.name} could not be loaded: ${error.message}`, "error");
          return [];
        }),
    ),
  );
  return lists.flat();
}

function documentList(items, empty) {
  if (!items.length) return h("p", { class: "muted", text: empty });
  return h(
    "ul",
    { class: "doc-list" },
    items.map(({ doc, schema }) =>
      h(
        "li",
        { dataset: { id: doc.id } },
        h("a", { href: `/admin/documents/${seg(schema.name)}/${seg(doc.id)}`, text: documentTitle(doc, schema) }),
        " ",
        statusBadge(doc),
        h("span", { class: "muted doc-meta" }, `${schema.title || schema.name} · `, timeAgo(doc.updatedAt)),
      ),
    ),
  );
}

function noOrganization(main) {
  setTitle("Welcome");
  const name = h("input", { name: "name", type: "text", required: true });
  const slug = h("input", { name: "slug", type: "text", required: true, pattern: "[a-z0-9-]+" });
  name.addEventListener("input", () => {
    if (!slug.dataset.touched) slug.value = name.value.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  });
  slug.addEventListener("input", () => (slug.dataset.touched = "1"));
  const form = h(
    "form",
    { class: "stack" },
    field("Name", name),
    field("Slug", slug, { hint: "Lowercase letters, digits and dashes." }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Create organization" })),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    banner(form, null);
    try {
      const created = await post("/api/organizations", { name: name.value, slug: slug.value });
      await post("/api/organizations/switch", { organizationId: created.data.id });
      location.assign("/admin");
    } catch (error) {
      banner(form, error instanceof ApiError && error.status === 409 ? "That slug is taken." : error.message);
    }
  });
  render(
    main,
    h("h1", { text: "Welcome" }),
    h("p", { text: "You do not belong to an organization yet. Accept an invitation from its e-mail, or create your own organization." }),
    form,
  );
  ready(main);
}
