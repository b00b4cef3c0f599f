// API keys: the organization's keys (never their secrets), creating one with chosen
// capabilities and an optional expiry, its secret shown once, and revoking.

import { get, post, del, data, seg } from "../api.js";
import { h, render, field, banner, notify, confirm, dialog, emptyState, focusButton } from "../dom.js";
import { onSubmit, table, part, when, describe } from "../pages/settings.js";
import { capabilityPicker } from "./roles.js";

export async function apiKeys(body, ctx) {
  const [keys, catalog] = await Promise.all([data(get("/api/settings/api-keys")), data(get("/api/capabilities"))]);
  const redraw = async () => apiKeys(body, ctx);
  render(body, part("Keys", keyTable(keys, catalog, redraw)), part("Create a key", createForm(catalog, ctx, redraw)));
}

function accessOf(key, catalog) {
  if (Array.isArray(key.capabilities)) {
    return h("ul", { class: "capability-list" }, key.capabilities.map((c) => h("li", { title: c, text: catalog.find((x) => x.name === c)?.title || c })));
  }
  return (key.permissions || []).join(", ") || "—";
}

function keyTable(keys, catalog, redraw) {
  const status = h("div", { class: "keys-status" });
  const rows = keys.map((key) =>
    h(
      "tr",
      { dataset: { key: key.id } },
      h("td", {}, h("strong", { text: key.name }), h("div", { class: "hint" }, h("code", { text: `${key.start}…` }))),
      h("td", {}, accessOf(key, catalog)),
      h("td", {}, when(key.createdAt)),
      h("td", {}, key.expiresAt ? when(key.expiresAt) : "Never"),
      h("td", {}, key.lastUsedAt ? when(key.lastUsedAt) : "—"),
      h("td", {}, h("button", { type: "button", class: "link danger-text", "aria-label": `Delete the key ${key.name}`, text: "Delete", on: { click: () => deleteKey(key, status, redraw) } })),
    ),
  );
  return [status, table(["Name", "Can", "Created", "Expires", "Last used", ""], rows, { caption: "API keys", empty: noKeys() })];
}

// No key yet: what one is for, and the way to the form below.
function noKeys() {
  return emptyState("No keys yet. A key lets a build, a frontend or a script use the API without a person signing in.", focusButton("Create a key", () => document.querySelector("form input[name=name]")));
}

async function deleteKey(key, status, redraw) {
  banner(status, null);
  if (!(await confirm(`Delete the key ${key.name}?`, "Programs using it are refused from now on.", { confirmLabel: "Delete key", danger: true }))) return;
  try {
    await del(`/api/settings/api-keys/${seg(key.id)}`);
    notify(`The key ${key.name} is deleted.`, "success");
    await redraw();
  } catch (error) {
    banner(status, describe(error));
  }
}

function createForm(catalog, ctx, redraw) {
  const name = h("input", { name: "name", type: "text", required: true, autocomplete: "off" });
  const expires = h("input", { name: "expiresInDays", type: "number", min: 1, step: 1, inputmode: "numeric" });
  // A key can do at most what its creator may do.
  const picker = capabilityPicker(catalog, [], { only: ctx.capabilities, legend: "What the key may do" });
  const form = h(
    "form",
    { class: "stack" },
    field("Key name", name, { required: true, hint: "Say which program uses it." }),
    picker.el,
    field("Expires after (days)", expires, { hint: "Leave empty for a key that does not expire." }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Create key" })),
  );
  onSubmit(form, async () => {
    const capabilities = picker.values();
    if (!capabilities.length) return banner(form, "Choose at least one capability.");
    const body = { name: name.value, capabilities };
    if (expires.value) body.expiresInDays = Number(expires.value);
    const created = await data(post("/api/settings/api-keys", body));
    form.reset();
    await showSecret(created);
    await redraw();
  });
  return form;
}

// The secret exists in this dialog only: it is not kept anywhere once the dialog closes.
async function showSecret(created) {
  const secret = h("input", { type: "text", name: "secret", readOnly: true, value: created.key, class: "secret-value", autocomplete: "off", spellcheck: "false" });
  const copied = h("span", { role: "status", class: "hint" });
  const copy = h("button", {
    type: "button",
    text: "Copy",
    on: {
      click: async () => {
        secret.select();
        try {
          await navigator.clipboard.writeText(secret.value);
          copied.textContent = "Copied.";
        } catch {
          // Without clipboard permission the text stays selected for Ctrl+C.
          copied.textContent = "Press Ctrl+C (or ⌘C) to copy the selected key.";
        }
      },
    },
  });
  const body = h(
    "div",
    { class: "stack secret-box" },
    h("p", { class: "banner warn", text: "Copy this key now: you will not see it again. Store it where the program that uses it can read it." }),
    field("Secret key", secret),
    h("div", { class: "actions" }, copy, copied),
  );
  const shown = dialog(`Key ${created.name} is created`, body, [{ label: "I have copied it", value: true, class: "primary" }]);
  secret.focus();
  secret.select();
  await shown;
  secret.value = "";
}
