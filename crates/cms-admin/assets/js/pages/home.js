// The admin's start page: the document types to open, or, for someone in no organization
// yet, a way to create one.

import { post, ApiError } from "../api.js";
import { h, render, field, banner, setTitle, ready } from "../dom.js";

export async function mount(main, ctx) {
  if (!ctx.organization) return noOrganization(main);
  setTitle("Content");
  const types = ctx.documentTypes;
  render(
    main,
    h("h1", { text: ctx.organization.name }),
    types.length
      ? h(
          "ul",
          { class: "cards" },
          types.map((s) =>
            h(
              "li",
              { class: "card" },
              h("a", { href: `/admin/documents/${encodeURIComponent(s.name)}`, text: s.title || s.name }),
              h("p", { class: "muted", text: s.singleton ? "Single document" : `${s.fields.length} fields` }),
            ),
          ),
        )
      : h("p", { class: "muted", text: "No document types are available to you here." }),
  );
  ready(main);
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
