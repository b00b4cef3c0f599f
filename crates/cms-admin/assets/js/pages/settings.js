// The settings pages (/admin/settings/{section}): one section per page, each drawn by the
// module that owns its concept (people, roles, keys, system), inside the same frame: a
// heading, a sentence of what the section is for, then its content. This module also holds
// the small helpers the sections share (forms that show the API's errors where they belong,
// tables, paging), so every section behaves alike.

import { ApiError } from "../api.js";
import { h, render, banner, setFieldError, setTitle, ready, timeAgo } from "../dom.js";

// section name -> [title, what it is for, module, export]
const SECTIONS = {
  account: ["Account", "Your own name, e-mail address, password, two-factor sign-in and sessions, and your account itself.", "people", "account"],
  organization: ["Organization", "The active organization's name, address and metadata; new organizations; deleting this one.", "people", "organization"],
  members: ["Members", "Who belongs to this organization, with which role, and who is invited to join.", "people", "members"],
  roles: ["Roles", "Roles bundle capabilities; every member holds one role in this organization.", "roles", "roles"],
  "api-keys": ["API keys", "Keys let programs use the API on this organization's behalf, with the capabilities you give them.", "keys", "apiKeys"],
  webhooks: ["Webhooks", "Endpoints that receive this organization's events as signed HTTP requests, and what each delivery got back.", "webhooks", "webhooks"],
  plugins: ["Plugins", "The plugins of this instance, what they add, and their settings for this organization.", "system", "plugins"],
  jobs: ["Jobs", "The background work queue: deliveries to event consumers, scheduled publishing and plugin jobs.", "system", "jobs"],
  events: ["Events", "The append-only log of what happened, as event consumers receive it.", "system", "events"],
  audit: ["Audit log", "Who signed in, changed access or settings, and published or deleted content, with when and from where.", "audit", "audit"],
};

// Sections that act inside the active organization (Organization itself can still create one).
const NEEDS_ORGANIZATION = new Set(["members", "roles", "api-keys", "webhooks", "plugins", "jobs", "events", "audit"]);

export async function mount(main, ctx) {
  const name = SECTIONS[ctx.params.section] ? ctx.params.section : "account";
  const [title, intro, moduleName, exportName] = SECTIONS[name];
  setTitle(title);
  const body = h("div", { class: "settings-body" });
  render(
    main,
    h("header", { class: "settings-header" }, h("h1", { text: title }), h("p", { class: "muted", text: intro })),
    body,
  );
  if (NEEDS_ORGANIZATION.has(name) && !ctx.organization) {
    render(body, h("p", { class: "banner info", text: "You do not belong to an organization yet, so there is nothing to set here. Create one under Organization, or accept an invitation." }));
    ready(main);
    return;
  }
  await drawSection(body, ctx, moduleName, exportName);
  ready(main);
}

async function drawSection(body, ctx, moduleName, exportName) {
  try {
    const module = await import(`../settings/${moduleName}.js`);
    await module[exportName](body, ctx);
  } catch (error) {
    showRefusal(body, error);
  }
}

// A section the caller may not use says so (the API's 403) instead of breaking; any other
// failure shows its message.
export function showRefusal(container, error) {
  console.error(error);
  if (error instanceof ApiError && error.status === 403) {
    render(container, h("div", { class: "banner warn", role: "alert", text: "You may not use this section in this organization: your role does not allow it." }));
  } else {
    render(container, h("div", { class: "banner error", role: "alert", text: describe(error) }));
  }
}

// What went wrong, in words: the API's message, or its issues when it sent some.
export function describe(error) {
  if (!(error instanceof ApiError)) return error?.message || String(error);
  if (error.status === 403 && !error.body?.message) return "Your role does not allow this here.";
  if (error.issues.length) return error.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  return error.message;
}

// Shows an API error on `form`: each issue next to the field its path names (the control's
// `name`, or `data-field` of a field wrapper), the rest in a banner at the top of the form.
export function showError(form, error) {
  const loose = [];
  const issues = error instanceof ApiError ? error.issues : [];
  for (const issue of issues) {
    const wrapper = fieldFor(form, issue.path);
    if (wrapper) setFieldError(wrapper, issue.message);
    else loose.push(issue.path ? `${issue.path}: ${issue.message}` : issue.message);
  }
  if (!issues.length) banner(form, describe(error));
  else if (loose.length) banner(form, loose.join("; "));
}

function fieldFor(form, path) {
  if (!path) return null;
  const root = String(path).split(/[.[]/)[0];
  for (const el of form.querySelectorAll(".field")) {
    if (el.dataset.field === path || el.dataset.field === root) return el;
  }
  return null;
}

export function clearErrors(form) {
  banner(form, null);
  form.querySelectorAll(".field.invalid").forEach((el) => setFieldError(el, null));
}

// Runs `action()` when `form` is submitted: its errors are cleared first and shown after,
// and the submit button stays disabled while the request runs.
export function onSubmit(form, action) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    const buttons = [...form.querySelectorAll("button[type=submit]")];
    buttons.forEach((b) => (b.disabled = true));
    try {
      await action();
    } catch (error) {
      console.error(error);
      showError(form, error);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  });
  return form;
}

// A labelled checkbox: the box, then its label (and an optional hint under both).
export function checkbox(label, { name, checked, disabled, hint, value } = {}) {
  const input = h("input", { type: "checkbox", name, value, checked, disabled });
  return { input, el: checkRow(input, label, hint) };
}

export function checkRow(input, label, hint) {
  input.id ||= `cb-${Math.random().toString(36).slice(2, 10)}`;
  const hintEl = hint ? h("span", { class: "hint", id: `${input.id}-hint`, text: hint }) : null;
  if (hintEl) input.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "check", dataset: { field: input.name || "" } }, input, h("span", {}, h("label", { for: input.id, text: label }), hintEl));
}

// A table: `columns` are header texts, `rows` arrays of cells (nodes or text). `empty`: what
// shows without rows, a text or a node (an empty state with its action, js/dom.js).
export function table(columns, rows, { caption, empty = "Nothing here yet." } = {}) {
  if (!rows.length) return typeof empty === "string" ? h("p", { class: "muted empty", text: empty }) : empty;
  // A table wider than a phone scrolls sideways inside its wrapper: keyboard users reach that
  // scrolling through the wrapper, a named region in the tab order (axe:
  // scrollable-region-focusable), even when no cell holds a control.
  return h(
    "div",
    { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption || "Table" },
    h(
      "table",
      {},
      caption ? h("caption", { class: "visually-hidden", text: caption }) : null,
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", text: c })))),
      h("tbody", {}, rows),
    ),
  );
}

// Previous/next for a list envelope's `pagination`; `go(page)` loads another page.
export function pager(pagination, go) {
  if (!pagination || pagination.totalPages <= 1) return null;
  return h(
    "nav",
    { class: "pagination", "aria-label": "Pages" },
    h("button", { type: "button", text: "Previous", disabled: !pagination.hasPrevPage, on: { click: () => go(pagination.page - 1) } }),
    h("span", { text: `Page ${pagination.page} of ${pagination.totalPages} (${pagination.total})` }),
    h("button", { type: "button", text: "Next", disabled: !pagination.hasNextPage, on: { click: () => go(pagination.page + 1) } }),
  );
}

// A moment in a table cell: how long ago (or ahead), the exact time in its title.
export const when = (iso) => (iso ? timeAgo(iso) : "—");

// A sub-heading with its content, as a region of the section.
export function part(title, ...children) {
  const id = `part-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  return h("section", { class: "settings-part", "aria-labelledby": id }, h("h2", { id, text: title }), children);
}
