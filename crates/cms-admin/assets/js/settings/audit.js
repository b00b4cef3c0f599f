// The audit section: who did what in this organization (or, for instance super admins, the
// whole instance), newest first, filtered by action, person or key, and time.

import { get, data, query } from "../api.js";
import { h, render, field, notify, debounce } from "../dom.js";
import { checkbox, table, pager, when, describe, showRefusal } from "../pages/settings.js";

// The actions of CONTRACT.md section 19, grouped as the filter offers them.
const ACTIONS = [
  ["Sign-in", ["auth.signIn", "auth.signInFailed", "auth.signOut"]],
  ["People", ["member.roleChanged", "member.removed", "invitation.created", "invitation.cancelled"]],
  ["Access", ["apiKey.created", "apiKey.deleted", "role.created", "role.updated", "role.deleted"]],
  ["Settings", ["organization.updated", "instanceSettings.updated", "pluginSettings.updated", "webhook.created", "webhook.updated", "webhook.deleted"]],
  ["Content", ["document.published", "document.unpublished", "document.deleted", "document.restored", "schedule.created", "schedule.cancelled"]],
];
const PAGE_SIZE = 25;

export async function audit(body, ctx) {
  const state = { action: "", actorId: "", from: "", to: "", page: 1, all: false };
  const list = h("div", { class: "audit-list" });
  const people = await memberNames();
  const load = () => drawEntries(list, state, people);
  render(body, filters(state, load, ctx), list);
  await load();
}

// Member names by user id, to show a person rather than an id; empty when the caller may not
// list members (the ids still show).
async function memberNames() {
  try {
    const members = await data(get("/api/organizations/members"));
    return new Map(members.map((m) => [m.userId, m.name || m.email]));
  } catch {
    return new Map();
  }
}

function filters(state, load, ctx) {
  const refresh = () => {
    state.page = 1;
    load().catch((error) => notify(describe(error), "error"));
  };
  const action = h(
    "select",
    { name: "action" },
    h("option", { value: "", text: "Any action" }),
    ACTIONS.map(([group, names]) => h("optgroup", { label: group }, names.map((n) => h("option", { value: n, text: n })))),
  );
  action.addEventListener("change", () => {
    state.action = action.value;
    refresh();
  });
  const actor = h("input", { name: "actorId", type: "search", placeholder: "A user's or an API key's id" });
  actor.addEventListener("input", debounce(() => {
    state.actorId = actor.value.trim();
    refresh();
  }, 300));
  // Days in the browser's time zone: from the start of `from` to the end of `to`.
  const day = (name, key, edge) => {
    const input = h("input", { name, type: "date" });
    input.addEventListener("change", () => {
      state[key] = input.value ? new Date(`${input.value}T${edge}`).toISOString() : "";
      refresh();
    });
    return input;
  };
  let scope = null;
  if (ctx.user.role === "super_admin") {
    scope = checkbox("Whole instance", { name: "scope", hint: "Every organization's, and what belongs to none (instance settings, sign-ins with unknown addresses)." });
    scope.input.addEventListener("change", () => {
      state.all = scope.input.checked;
      refresh();
    });
  }
  return h(
    "div",
    { class: "toolbar filters" },
    field("Action", action),
    field("Actor", actor, { hint: "The exact id." }),
    field("From", day("from", "from", "00:00:00")),
    field("To", day("to", "to", "23:59:59.999")),
    scope?.el,
  );
}

async function drawEntries(el, state, people) {
  let body;
  try {
    body = await get(
      `/api/audit${query({ action: state.action, actorId: state.actorId, from: state.from, to: state.to, page: state.page, pageSize: PAGE_SIZE, scope: state.all ? "all" : "" })}`,
    );
  } catch (error) {
    return showRefusal(el, error);
  }
  const rows = body.data.map((entry) =>
    h(
      "tr",
      { dataset: { entry: entry.id, action: entry.action } },
      h("td", {}, when(entry.createdAt)),
      h("td", {}, h("code", { text: entry.action })),
      h("td", {}, actorCell(entry, people)),
      h("td", { class: "audit-summary" }, entry.summary, entry.target ? h("div", { class: "hint", text: `${entry.target.type} ${entry.target.id}` }) : null),
      h("td", { text: entry.ipAddress || "—" }),
      state.all ? h("td", { text: entry.organizationId || "instance" }) : null,
    ),
  );
  const go = (page) => {
    state.page = page;
    drawEntries(el, state, people).catch((error) => notify(describe(error), "error"));
  };
  const columns = ["When", "Action", "Who", "What", "Address"];
  if (state.all) columns.push("Organization");
  render(el, table(columns, rows, { caption: "Audit log", empty: "No entries match." }), pager(body.pagination, go));
}

// A person by name when known, an API key or the system by kind; the id under it.
function actorCell(entry, people) {
  if (entry.actorType === "system") return h("span", { class: "muted", text: "System" });
  const label = entry.actorType === "apiKey" ? "API key" : people.get(entry.actorId) || "User";
  return h("span", {}, label, entry.actorId ? h("div", { class: "hint", text: entry.actorId }) : null);
}
