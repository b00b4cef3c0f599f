// Webhooks: the organization's endpoints (never their secrets) with the last delivery each
// got; adding one, its signing secret shown once; editing, enabling and disabling; rotating
// the secret (the new one shown once); a test delivery; deleting; and the deliveries of an
// endpoint with the HTTP status its receiver answered (CONTRACT.md section 16).

import { get, post, patch, del, data, query, seg } from "../api.js";
import { h, render, field, banner, notify, confirm, dialog, emptyState, focusButton } from "../dom.js";
import { onSubmit, checkbox, checkRow, table, pager, part, when, describe, showRefusal } from "../pages/settings.js";

// The built-in event types (CONTRACT.md section 16); plugins list theirs (GET /api/plugins).
const BUILT_IN_EVENTS = [
  "document.created",
  "document.updated",
  "document.deleted",
  "document.published",
  "document.unpublished",
  "asset.created",
  "asset.updated",
  "asset.deleted",
  "member.added",
  "member.removed",
  "user.deleted",
];
const EVERY = "*";
const PAGE_SIZE = 20;

export async function webhooks(body, ctx) {
  const state = { body, ctx, endpoints: [], editing: null, showing: null };
  await reload(state);
}

async function reload(state) {
  state.endpoints = await data(get("/api/webhooks"));
  draw(state);
}

// Redraws the page, each time a change is saved; failures of a reload show where they happen.
function redraw(state) {
  reload(state).catch((error) => notify(describe(error), "error"));
}

function draw(state) {
  const status = h("div", { class: "webhooks-status" });
  const deliveries = h("div", { class: "webhook-deliveries" });
  const editing = state.endpoints.find((e) => e.id === state.editing) || null;
  render(
    state.body,
    part("Endpoints", status, endpointTable(state, status, deliveries)),
    deliveries,
    part(editing ? "Edit endpoint" : "Add an endpoint", endpointForm(state, editing)),
  );
  const showing = state.endpoints.find((e) => e.id === state.showing);
  if (showing) showDeliveries(deliveries, showing, 1);
}

// The event types an endpoint may name here: the built-in ones, then the plugins'.
function knownEvents(ctx) {
  const declared = (ctx.plugins || []).flatMap((p) => p.events || []);
  return [...new Set([...BUILT_IN_EVENTS, ...declared])];
}

function eventsText(events) {
  return events.includes(EVERY) ? "Every event" : events.join(", ");
}

// The last delivery as a badge: its job's status, and what the receiver answered.
function deliveryBadge(delivery) {
  if (!delivery) return h("span", { class: "muted", text: "None yet" });
  const answered = delivery.responseStatus ? ` · ${delivery.responseStatus}` : "";
  return h(
    "span",
    { class: "last-delivery" },
    h("span", { class: `badge job-${delivery.status}`, text: `${statusText(delivery.status)}${answered}` }),
    h("span", { class: "hint" }, ` ${delivery.eventType}, `, when(delivery.createdAt)),
  );
}

function statusText(status) {
  return status === "dead_letter" ? "dead letter" : status;
}

function endpointTable(state, status, deliveries) {
  const rows = state.endpoints.map((endpoint) => {
    const act = (text, label, action, extra = {}) =>
      h("button", { type: "button", text, "aria-label": `${label} ${endpoint.url}`, ...extra, on: { click: () => action() } });
    return h(
      "tr",
      { dataset: { endpoint: endpoint.id, enabled: String(endpoint.enabled) } },
      h("td", {}, h("code", { class: "endpoint-url", text: endpoint.url }), endpoint.description ? h("div", { class: "hint", text: endpoint.description }) : null),
      h("td", { class: "endpoint-events", text: eventsText(endpoint.events) }),
      h("td", {}, h("span", { class: endpoint.enabled ? "badge job-completed" : "badge cancelled", text: endpoint.enabled ? "Enabled" : "Disabled" })),
      h("td", { class: "endpoint-last" }, deliveryBadge(endpoint.lastDelivery)),
      h(
        "td",
        {},
        h(
          "div",
          { class: "actions" },
          act("Deliveries", "Deliveries of", () => {
            state.showing = endpoint.id;
            showDeliveries(deliveries, endpoint, 1);
          }),
          act("Test", "Send a test to", () => sendTest(endpoint, status, state)),
          act("Edit", "Edit", () => {
            state.editing = endpoint.id;
            draw(state);
          }),
          act(endpoint.enabled ? "Disable" : "Enable", endpoint.enabled ? "Disable" : "Enable", () => setEnabled(endpoint, !endpoint.enabled, status, state)),
          act("Rotate secret", "Rotate the secret of", () => rotate(endpoint, status)),
          act("Delete", "Delete", () => remove(endpoint, status, state), { class: "danger" }),
        ),
      ),
    );
  });
  return table(["URL", "Events", "State", "Last delivery", ""], rows, {
    caption: "Webhook endpoints",
    empty: emptyState("No endpoints yet. Add one below to have events sent to your URL as they happen.", focusButton("Add an endpoint", () => document.querySelector(".webhook-form input[name=url]"))),
  });
}

async function sendTest(endpoint, status, state) {
  banner(status, null);
  try {
    await post(`/api/webhooks/${seg(endpoint.id)}/test`);
    notify(`A test delivery to ${endpoint.url} is queued: it goes out with the next worker run.`, "success");
    state.showing = endpoint.id;
    redraw(state);
  } catch (error) {
    banner(status, describe(error));
  }
}

async function setEnabled(endpoint, enabled, status, state) {
  banner(status, null);
  try {
    await patch(`/api/webhooks/${seg(endpoint.id)}`, { enabled });
    notify(enabled ? `${endpoint.url} receives events again.` : `${endpoint.url} is disabled: it receives nothing until enabled.`, "success");
    redraw(state);
  } catch (error) {
    banner(status, describe(error));
  }
}

async function rotate(endpoint, status) {
  banner(status, null);
  if (!(await confirm(`Rotate the secret of ${endpoint.url}?`, "The current secret stops working at once: every delivery from now on is signed with the new one.", { confirmLabel: "Rotate secret", danger: true }))) return;
  try {
    const rotated = await data(post(`/api/webhooks/${seg(endpoint.id)}/rotate-secret`));
    await showSecret(`New secret of ${endpoint.url}`, rotated.secret);
  } catch (error) {
    banner(status, describe(error));
  }
}

async function remove(endpoint, status, state) {
  banner(status, null);
  if (!(await confirm(`Delete the endpoint ${endpoint.url}?`, "It receives nothing more, deliveries still waiting are cancelled, and its delivery log goes with it.", { confirmLabel: "Delete endpoint", danger: true }))) return;
  try {
    await del(`/api/webhooks/${seg(endpoint.id)}`);
    notify(`The endpoint ${endpoint.url} is deleted.`, "success");
    if (state.showing === endpoint.id) state.showing = null;
    if (state.editing === endpoint.id) state.editing = null;
    redraw(state);
  } catch (error) {
    banner(status, describe(error));
  }
}

// ---------------------------------------------------------------------------------------
// The form: a new endpoint, or changes to one (its secret is never a field).

function endpointForm(state, endpoint) {
  const url = h("input", { name: "url", type: "url", required: true, autocomplete: "off", value: endpoint?.url ?? "" });
  const description = h("input", { name: "description", type: "text", autocomplete: "off", value: endpoint?.description ?? "" });
  const events = eventPicker(knownEvents(state.ctx), endpoint?.events ?? [EVERY]);
  const enabled = endpoint ? null : checkbox("Enabled", { name: "enabled", checked: true, hint: "A disabled endpoint receives nothing until enabled." });
  const form = h(
    "form",
    { class: "stack webhook-form" },
    field("Endpoint URL", url, { required: true, hint: "An http or https URL: events are POSTed there as JSON, signed with the endpoint's secret (Standard Webhooks)." }),
    events.el,
    field("Description", description, { hint: "What receives them, for the people who come after you." }),
    enabled?.el,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary", text: endpoint ? "Save endpoint" : "Add endpoint" }),
      endpoint
        ? h("button", {
            type: "button",
            text: "Cancel",
            on: {
              click: () => {
                state.editing = null;
                draw(state);
              },
            },
          })
        : null,
    ),
  );
  onSubmit(form, async () => {
    const body = { url: url.value, events: events.values(), description: description.value };
    if (endpoint) {
      await patch(`/api/webhooks/${seg(endpoint.id)}`, body);
      notify(`${body.url} is saved.`, "success");
      state.editing = null;
    } else {
      body.enabled = enabled.input.checked;
      const created = await data(post("/api/webhooks", body));
      form.reset();
      await showSecret(`Endpoint ${created.url} is added`, created.secret);
    }
    await reload(state);
  });
  return form;
}

// Every event type, or the types ticked (the built-in ones, the plugins', and others typed).
function eventPicker(known, selected) {
  const every = selected.includes(EVERY);
  const name = `events-${Math.random().toString(36).slice(2, 8)}`;
  const all = h("input", { type: "radio", name, value: "every", checked: every });
  const some = h("input", { type: "radio", name, value: "some", checked: !every });
  const boxes = known.map((type) => h("input", { type: "checkbox", value: type, checked: selected.includes(type) }));
  const others = h("input", { type: "text", name: "otherEvents", autocomplete: "off", value: selected.filter((t) => t !== EVERY && !known.includes(t)).join(", ") });
  const list = h(
    "fieldset",
    { class: "event-types" },
    h("legend", { text: "Only these types" }),
    boxes.map((box) => checkRow(box, box.value)),
    field("Other event types", others, { hint: "Types your application declares, comma-separated." }),
  );
  const sync = () => {
    list.disabled = all.checked;
  };
  all.addEventListener("change", sync);
  some.addEventListener("change", sync);
  sync();
  const el = h(
    "div",
    { class: "field event-picker", dataset: { field: "events" }, role: "group", "aria-label": "Events" },
    h("p", { class: "picker-legend", text: "Events" }),
    checkRow(all, "Every event type"),
    checkRow(some, "Only the types chosen below"),
    list,
  );
  const values = () => {
    if (all.checked) return [EVERY];
    const typed = others.value.split(",").map((t) => t.trim()).filter(Boolean);
    return [...boxes.filter((b) => b.checked).map((b) => b.value), ...typed];
  };
  return { el, values };
}

// The secret exists in this dialog only: it is not kept anywhere once the dialog closes.
async function showSecret(title, value) {
  const secret = h("input", { type: "text", name: "secret", readOnly: true, value, class: "secret-value", autocomplete: "off", spellcheck: "false" });
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
          copied.textContent = "Press Ctrl+C (or ⌘C) to copy the selected secret.";
        }
      },
    },
  });
  const body = h(
    "div",
    { class: "stack secret-box" },
    h("p", { class: "banner warn", text: "Copy this signing secret now: you will not see it again. The receiver verifies each delivery's webhook-signature with it." }),
    field("Signing secret", secret),
    h("div", { class: "actions" }, copy, copied),
  );
  const shown = dialog(title, body, [{ label: "I have copied it", value: true, class: "primary" }]);
  secret.focus();
  secret.select();
  await shown;
  secret.value = "";
}

// ---------------------------------------------------------------------------------------
// An endpoint's deliveries, newest first.

async function showDeliveries(container, endpoint, page) {
  let body;
  try {
    body = await get(`/api/webhooks/${seg(endpoint.id)}/deliveries${query({ page, pageSize: PAGE_SIZE })}`);
  } catch (error) {
    return showRefusal(container, error);
  }
  const rows = body.data.map((d) =>
    h(
      "tr",
      { dataset: { delivery: d.id, status: d.status } },
      h("td", {}, h("code", { text: d.eventType }), h("div", { class: "hint", text: d.id })),
      h("td", {}, h("span", { class: `badge job-${d.status}`, text: statusText(d.status) })),
      h("td", { class: "response-status", text: d.responseStatus ?? "—" }),
      h("td", { text: `${d.attempts} / ${d.maxAttempts}` }),
      h("td", { class: "last-error" }, d.lastError || "—"),
      h("td", {}, when(d.createdAt)),
    ),
  );
  const go = (n) => showDeliveries(container, endpoint, n);
  render(
    container,
    part(
      `Deliveries to ${endpoint.url}`,
      h("div", { class: "toolbar" }, h("button", { type: "button", text: "Refresh", on: { click: () => go(body.pagination.page) } })),
      table(["Event", "Status", "Response", "Attempts", "Last error", "Created"], rows, { caption: `Deliveries to ${endpoint.url}`, empty: "No deliveries yet." }),
      pager(body.pagination, go),
    ),
  );
}
