// The system sections: plugins (what each adds, and its settings form generated from its
// declared fields), the job queue (health, filters, retry and cancel) and the event log.

import { get, put, post, data, query, seg } from "../api.js";
import { h, render, field, notify, debounce } from "../dom.js";
import { onSubmit, checkbox, table, pager, part, when, describe, showRefusal } from "../pages/settings.js";

// What a set secret reads as, and what is sent back to keep it (CONTRACT.md section 9).
const REDACTED = "********";

// ---------------------------------------------------------------------------------------
// Plugins

export async function plugins(body, ctx) {
  const settings = h("div", { class: "plugin-settings" });
  render(body, part("Settings", settings), part("Installed plugins", installedPlugins(ctx)));
  try {
    const declared = await data(get("/api/plugin-settings"));
    render(settings, declared.length ? declared.map(settingsForm) : h("p", { class: "muted", text: "No plugin declares settings." }));
  } catch (error) {
    showRefusal(settings, error);
  }
}

function settingsForm(plugin) {
  const controls = plugin.fields.map((f) => settingControl(f, plugin.values?.[f.name] ?? null));
  const form = h(
    "form",
    { class: "stack card plugin-form", dataset: { plugin: plugin.pluginId } },
    h("h3", { text: plugin.title || plugin.pluginId }),
    plugin.description ? h("p", { class: "muted", text: plugin.description }) : null,
    controls.map((c) => c.el),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", "aria-label": `Save ${plugin.title || plugin.pluginId} settings`, text: "Save settings" })),
  );
  onSubmit(form, async () => {
    const values = Object.fromEntries(controls.map((c) => [c.name, c.value()]));
    const saved = await data(put(`/api/plugin-settings/${seg(plugin.pluginId)}`, { values }));
    notify(`${plugin.title || plugin.pluginId} settings are saved.`, "success");
    form.replaceWith(settingsForm(saved));
  });
  return form;
}

// One declared setting as a control: { name, el, value() } where value() is what the PUT
// sends (null for unset).
function settingControl(setting, stored) {
  const label = setting.title || setting.name;
  const name = setting.name;
  switch (setting.type) {
    case "boolean": {
      const box = checkbox(label, { name, checked: stored === true });
      return { name, el: box.el, value: () => box.input.checked };
    }
    case "number": {
      const input = h("input", { name, type: "number", step: "any", value: stored ?? "" });
      return { name, el: field(label, input), value: () => (input.value === "" ? null : Number(input.value)) };
    }
    case "text": {
      const input = h("textarea", { name, rows: 3, value: stored ?? "" });
      return { name, el: field(label, input), value: () => (input.value === "" ? null : input.value) };
    }
    case "secret":
      return secretControl(setting, stored);
    default: {
      const input = h("input", { name, type: "text", value: stored ?? "" });
      return { name, el: field(label, input), value: () => (input.value === "" ? null : input.value) };
    }
  }
}

// A secret is never shown: a set one reads "********" and stays as stored unless a new value
// is typed or it is explicitly removed.
function secretControl(setting, stored) {
  const name = setting.name;
  const isSet = stored === REDACTED;
  const input = h("input", { name, type: "password", autocomplete: "new-password", placeholder: isSet ? REDACTED : "" });
  const hint = isSet ? "A value is stored. Leave this empty to keep it, or type a new one." : "Not set. Stored encrypted; never shown again.";
  const remove = isSet ? checkbox(`Remove the stored ${setting.title || name}`, { name: `${name}__remove` }) : null;
  const el = h("div", { class: "secret-setting" }, field(setting.title || name, input, { hint }), remove?.el);
  const value = () => {
    if (remove?.input.checked) return null;
    if (input.value) return input.value;
    return isSet ? REDACTED : null;
  };
  return { name, el, value };
}

const CONTRIBUTIONS = [
  ["schemas", "Document types", (x) => x],
  ["capabilities", "Capabilities", (x) => x],
  ["events", "Events", (x) => x],
  ["consumers", "Event consumers", (x) => x],
  ["jobTypes", "Job types", (x) => x],
  ["routes", "API routes", (r) => `${r.method} ${r.path}`],
  ["wraps", "Wrapped routes", (x) => x],
  ["agentTools", "Assistant tools", (t) => t.name],
  ["fieldComponents", "Field inputs", (c) => c.input],
  ["documentActions", "Document actions", (a) => a.title],
  ["adminTools", "Admin tools", (t) => t.title],
];

function installedPlugins(ctx) {
  const list = ctx.plugins || [];
  if (!list.length) return h("p", { class: "muted", text: "No plugins are installed." });
  return h(
    "ul",
    { class: "cards plugin-list" },
    list.map((p) => {
      const items = CONTRIBUTIONS.filter(([key]) => (p[key] || []).length).map(([key, title, show]) =>
        h("div", {}, h("dt", { text: title }), h("dd", {}, key === "adminTools" ? toolLinks(p.adminTools) : p[key].map(show).join(", "))),
      );
      return h(
        "li",
        { class: "card", dataset: { plugin: p.id } },
        h("h3", { text: p.id }),
        p.settings ? h("p", { class: "hint", text: "Has settings (above)." }) : null,
        items.length ? h("dl", { class: "contributions" }, items) : h("p", { class: "muted", text: "Adds nothing visible here." }),
      );
    }),
  );
}

function toolLinks(tools) {
  return tools.map((t, i) => [i ? ", " : "", h("a", { href: `/admin/tools/${encodeURIComponent(t.id)}`, text: t.title })]);
}

// ---------------------------------------------------------------------------------------
// Jobs

const JOB_STATUSES = ["pending", "running", "completed", "failed", "dead_letter", "cancelled"];
const PAGE_SIZE = 20;

export async function jobs(body, ctx) {
  const state = { status: "", type: "", page: 1, all: false };
  const health = h("div", { class: "job-health", "aria-live": "polite" });
  const list = h("div", { class: "job-list" });
  const load = async () => {
    await Promise.all([drawHealth(health, state), drawJobs(list, state, load)]);
  };
  const filters = listFilters(state, load, {
    status: h("select", { name: "status" }, h("option", { value: "", text: "Any status" }), JOB_STATUSES.map((s) => h("option", { value: s, text: statusText(s) }))),
    ctx,
  });
  render(body, part("Health", health), part("Queue", filters, list));
  await load();
}

function statusText(status) {
  return status === "dead_letter" ? "dead letter" : status;
}

// The filter bar of the jobs and events lists: an optional status select, a type box, and for
// instance super admins the whole-instance switch. Any change goes back to page 1.
function listFilters(state, load, { status, ctx }) {
  const refresh = () => {
    state.page = 1;
    load().catch((error) => notify(describe(error), "error"));
  };
  const type = h("input", { name: "type", type: "search", placeholder: "e.g. document.published" });
  type.addEventListener("input", debounce(() => {
    state.type = type.value.trim();
    refresh();
  }, 300));
  status?.addEventListener("change", () => {
    state.status = status.value;
    refresh();
  });
  let scope = null;
  if (ctx.user.role === "super_admin") {
    scope = checkbox("Whole instance", { name: "scope", hint: "Every organization's, not only this one's." });
    scope.input.addEventListener("change", () => {
      state.all = scope.input.checked;
      refresh();
    });
  }
  return h(
    "div",
    { class: "toolbar filters" },
    status ? field("Status", status) : null,
    field("Type", type, { hint: "The exact type name." }),
    scope?.el,
  );
}

async function drawHealth(el, state) {
  try {
    const health = await data(get(`/api/jobs/health${query({ scope: state.all ? "all" : "" })}`));
    const counts = health.counts || {};
    render(
      el,
      h(
        "ul",
        { class: "health-counts" },
        JOB_STATUSES.map((s) => h("li", { class: `health-count ${s}` }, h("span", { class: "count", text: String(counts[s] ?? 0) }), h("span", { class: "label", text: statusText(s) }))),
      ),
      h(
        "p",
        { class: "muted" },
        `Oldest waiting job: ${health.oldestPendingSeconds ? duration(health.oldestPendingSeconds) : "none"}. `,
        `Events not yet relayed: ${health.outboxBacklog}.`,
      ),
    );
  } catch (error) {
    showRefusal(el, error);
  }
}

function duration(seconds) {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} days`;
}

async function drawJobs(el, state, load) {
  let body;
  try {
    body = await get(`/api/jobs${query({ status: state.status, type: state.type, page: state.page, pageSize: PAGE_SIZE, scope: state.all ? "all" : "" })}`);
  } catch (error) {
    return showRefusal(el, error);
  }
  const rows = body.data.map((job) => jobRow(job, load));
  const go = (page) => {
    state.page = page;
    load().catch((error) => notify(describe(error), "error"));
  };
  render(
    el,
    table(["Type", "Status", "Attempts", "Runs at", "Last error", ""], rows, { caption: "Jobs", empty: "No jobs match." }),
    pager(body.pagination, go),
  );
}

function jobRow(job, load) {
  const act = (label, path, done) =>
    h("button", {
      type: "button",
      "aria-label": `${label} job ${job.type} ${job.id}`,
      text: label,
      on: {
        click: async (event) => {
          event.currentTarget.disabled = true;
          try {
            await post(`/api/jobs/${seg(job.id)}/${path}`);
            notify(done, "success");
          } catch (error) {
            notify(describe(error), "error");
          }
          await load().catch((error) => notify(describe(error), "error"));
        },
      },
    });
  const actions = [];
  if (job.status === "failed" || job.status === "dead_letter") actions.push(act("Retry", "retry", `The ${job.type} job is queued again.`));
  if (job.status === "pending") actions.push(act("Cancel", "cancel", `The ${job.type} job is cancelled.`));
  return h(
    "tr",
    { dataset: { job: job.id, status: job.status } },
    h("td", {}, h("code", { text: job.type }), h("div", { class: "hint", text: job.id })),
    h("td", {}, h("span", { class: `badge job-${job.status}`, text: statusText(job.status) })),
    h("td", { text: `${job.attempts} / ${job.maxAttempts}` }),
    h("td", {}, when(job.runAt)),
    h("td", { class: "last-error" }, job.lastError || "—"),
    h("td", {}, h("div", { class: "actions" }, actions)),
  );
}

// ---------------------------------------------------------------------------------------
// Events

export async function events(body, ctx) {
  const state = { type: "", page: 1, all: false };
  const list = h("div", { class: "event-list" });
  const load = () => drawEvents(list, state, load);
  render(body, listFilters(state, load, { status: null, ctx }), list);
  await load();
}

async function drawEvents(el, state, load) {
  let body;
  try {
    body = await get(`/api/events${query({ type: state.type, page: state.page, pageSize: PAGE_SIZE, scope: state.all ? "all" : "" })}`);
  } catch (error) {
    return showRefusal(el, error);
  }
  const rows = body.data.map((event) =>
    h(
      "tr",
      { dataset: { event: event.id } },
      h("td", {}, h("code", { text: event.type })),
      h("td", {}, when(event.createdAt)),
      state.all ? h("td", { text: event.organizationId || "instance" }) : null,
      h("td", {}, payloadView(event)),
    ),
  );
  const go = (page) => {
    state.page = page;
    load().catch((error) => notify(describe(error), "error"));
  };
  const columns = state.all ? ["Type", "When", "Organization", "Payload"] : ["Type", "When", "Payload"];
  render(el, table(columns, rows, { caption: "Events", empty: "No events match." }), pager(body.pagination, go));
}

// The payload as formatted JSON text: stored data is never markup.
function payloadView(event) {
  const pre = h("pre", { class: "payload" });
  pre.textContent = JSON.stringify(event.payload, null, 2);
  return h("details", { class: "payload-view" }, h("summary", { "aria-label": `Payload of ${event.type} ${event.id}`, text: "Payload" }), pre);
}
