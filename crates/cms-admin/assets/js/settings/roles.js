// Roles: the organization's built-in and custom roles with their capabilities; creating,
// editing and deleting custom ones with a capability picker. The picker is shared with the
// API key form.

import { get, post, patch, del, data, seg } from "../api.js";
import { h, render, field, banner, notify, confirm } from "../dom.js";
import { onSubmit, checkRow, describe } from "../pages/settings.js";

const BUILT_IN_NOTES = {
  owner: "Always holds every capability, including ones added later. Its capabilities cannot be edited.",
  admin: "Built in. Its capabilities can be edited; capabilities added later are not granted automatically.",
  editor: "Built in. Its capabilities can be edited; capabilities added later are not granted automatically.",
  viewer: "Built in. Its capabilities can be edited; capabilities added later are not granted automatically.",
  public: "Anyone on the internet, without signing in: a request that names this organization (header x-cms-organization or ?organization=<slug>) reads its published content with these capabilities. It may hold only Read documents and Read assets, and it is never a member's role.",
};

// What the `public` role may hold (CONTRACT.md section 15): the server refuses anything else.
const PUBLIC_GRANTABLE = new Set(["document.read", "asset.read"]);

const GROUP_TITLES = { documents: "Documents", assets: "Assets", people: "People", settings: "Settings" };

export async function roles(body, ctx) {
  const [list, catalog] = await Promise.all([data(get("/api/roles")), data(get("/api/capabilities"))]);
  const state = { body, ctx, catalog, list };
  drawRoles(state);
}

async function reload(state) {
  state.list = await data(get("/api/roles"));
  drawRoles(state);
}

function drawRoles(state) {
  const { body, ctx, list } = state;
  const status = h("div", { class: "roles-status" });
  const editor = h("div", { class: "role-editor" });
  const manage = ctx.can("role.manage");
  render(
    body,
    status,
    manage ? h("div", { class: "toolbar" }, h("button", { type: "button", class: "primary", text: "New role", on: { click: () => openEditor(state, editor, null) } })) : null,
    editor,
    h("ul", { class: "role-list" }, list.map((role) => roleCard(state, role, status, editor, manage))),
  );
}

function titleOf(catalog, name) {
  return catalog.find((c) => c.name === name)?.title || name;
}

function roleCard(state, role, status, editor, manage) {
  const caps = role.capabilities;
  return h(
    "li",
    { class: "card role-card", dataset: { role: role.name } },
    h("h3", {}, role.name, " ", role.isBuiltIn ? h("span", { class: "badge", text: "built-in" }) : h("span", { class: "badge changed", text: "custom" })),
    role.description ? h("p", { text: role.description }) : null,
    role.isBuiltIn ? h("p", { class: "hint", text: BUILT_IN_NOTES[role.name] || "Built in." }) : null,
    h(
      "details",
      { class: "role-capabilities" },
      h("summary", { text: `${caps.length} capabilities` }),
      caps.length ? h("ul", { class: "capability-list" }, caps.map((c) => h("li", {}, titleOf(state.catalog, c), " ", h("code", { text: c })))) : h("p", { class: "muted", text: "None." }),
    ),
    manage
      ? h(
          "div",
          { class: "actions" },
          h("button", { type: "button", "aria-label": `Edit ${role.name}`, text: "Edit", on: { click: () => openEditor(state, editor, role) } }),
          role.isBuiltIn ? null : h("button", { type: "button", class: "danger", "aria-label": `Delete ${role.name}`, text: "Delete", on: { click: () => deleteRole(state, role, status) } }),
        )
      : null,
  );
}

async function deleteRole(state, role, status) {
  banner(status, null);
  if (!(await confirm(`Delete the role ${role.name}?`, "Members and invitations must hold another role first.", { confirmLabel: "Delete role", danger: true }))) return;
  try {
    await del(`/api/roles/${seg(role.name)}`);
    notify(`The role ${role.name} is deleted.`, "success");
    await reload(state);
  } catch (error) {
    banner(status, describe(error));
  }
}

// The create form (role null) or the edit form of `role`, drawn into `editor`.
function openEditor(state, editor, role) {
  const creating = !role;
  const locked = role?.name === "owner";
  const anonymous = role?.name === "public" && role?.isBuiltIn;
  const name = h("input", { name: "name", type: "text", required: true, pattern: "[A-Za-z0-9_.\\-]+", value: role?.name || "", readOnly: !creating });
  const description = h("input", { name: "description", type: "text", value: role?.description || "" });
  const picker = capabilityPicker(state.catalog, role?.capabilities || [], { disabled: locked, only: anonymous ? PUBLIC_GRANTABLE : null });
  const form = h(
    "form",
    { class: "stack card" },
    h("h2", { text: creating ? "New role" : `Edit ${role.name}` }),
    field("Role name", name, { required: true, hint: creating ? "Letters, digits, dots, dashes and underscores; the built-in names are taken." : "A role's name cannot change." }),
    field("Description", description),
    locked ? h("p", { class: "banner info", text: BUILT_IN_NOTES.owner }) : null,
    anonymous ? h("p", { class: "banner info", text: BUILT_IN_NOTES.public }) : null,
    picker.el,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary", text: creating ? "Create role" : "Save role" }),
      h("button", { type: "button", text: "Cancel", on: { click: () => render(editor) } }),
    ),
  );
  onSubmit(form, async () => {
    if (creating) {
      await post("/api/roles", { name: name.value, description: description.value, capabilities: picker.values() });
      notify(`The role ${name.value} is created.`, "success");
    } else {
      const change = { description: description.value };
      if (!locked) change.capabilities = picker.values();
      await patch(`/api/roles/${seg(role.name)}`, change);
      notify(`The role ${role.name} is saved. Members holding it see the change within 30 seconds.`, "success");
    }
    await reload(state);
  });
  render(editor, form);
  name.focus();
}

// Checkboxes of the capabilities in `catalog`, grouped by their group, each with its
// description. `only` narrows the offer (an API key gets at most its creator's capabilities).
// Returns the element and a function giving the checked capability names.
export function capabilityPicker(catalog, selected, { disabled = false, only = null, legend = "Capabilities" } = {}) {
  const chosen = new Set(selected);
  const offered = only ? catalog.filter((c) => only.has(c.name)) : catalog;
  const groups = new Map();
  for (const cap of offered) {
    if (!groups.has(cap.group)) groups.set(cap.group, []);
    groups.get(cap.group).push(cap);
  }
  const boxes = [];
  const fieldsets = [...groups].map(([group, caps]) =>
    h(
      "fieldset",
      { class: "capability-group" },
      h("legend", { text: GROUP_TITLES[group] || group }),
      caps.map((cap) => {
        const input = h("input", { type: "checkbox", name: "capabilities", value: cap.name, checked: chosen.has(cap.name), disabled });
        boxes.push(input);
        return checkRow(input, cap.title, `${cap.description} (${cap.name})${cap.plugin ? ` · from the ${cap.plugin} plugin` : ""}`);
      }),
    ),
  );
  const el = h(
    "div",
    { class: "capability-picker field", dataset: { field: "capabilities" }, role: "group", "aria-label": legend },
    h("p", { class: "picker-legend", text: legend }),
    h("p", { class: "hint", text: "A write capability brings its read capability with it." }),
    fieldsets,
    h("p", { class: "field-error", hidden: true }),
  );
  return { el, values: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}
