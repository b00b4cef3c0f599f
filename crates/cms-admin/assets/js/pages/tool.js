// A plugin's admin tool (/admin/tools/{id}, SPEC.md `cms/admin/tool`): the plugin serves an
// ES module from this instance that defines a custom element; the page imports it, waits for
// the element, and mounts it full-page under the tool's title with a `context` property
// ({ user, organization, role, capabilities }).
//
// Tools placed in the `sidebar` open here too, and `drawSidebarTools(ctx)` (called by app.js on
// every page) draws them as collapsible panels at the bottom of the sidebar, mounted the first
// time one is opened.

import { h, render, setTitle, ready } from "../dom.js";
import { adminTools } from "../shell.js";

// How long a tool's module may take to define its element before the page says so.
const DEFINE_PATIENCE_MS = 10000;

export async function mount(main, ctx) {
  const tool = adminTools(ctx).find((t) => t.id === ctx.params.id);
  if (!tool) {
    setTitle("No such tool");
    render(
      main,
      h("h1", { text: "No such tool" }),
      h("p", { class: "banner warn", role: "alert", text: `No installed plugin offers a tool called “${ctx.params.id}”. It may have been removed, or the link is wrong.` }),
      h("p", {}, h("a", { href: "/admin", text: "Back to the start page" })),
    );
    ready(main);
    return;
  }
  setTitle(tool.title);
  const host = h("div", { class: "tool-host", dataset: { tool: tool.id } }, h("p", { class: "loading", role: "status", text: "Loading the tool…" }));
  render(
    main,
    h("header", { class: "tool-header" }, h("h1", { text: tool.title }), h("p", { class: "muted", text: `From the ${tool.pluginId} plugin.` })),
    host,
  );
  await mountTool(host, tool, ctx);
  ready(main);
}

// The context a tool's element receives: who is signed in and what they may do here.
export function toolContext(ctx) {
  return {
    user: { id: ctx.user.id, name: ctx.user.name, email: ctx.user.email, role: ctx.user.role },
    organization: ctx.organization ? { ...ctx.organization } : null,
    role: ctx.role,
    capabilities: [...ctx.capabilities],
  };
}

// Loads the tool's module and puts its element in `host`; a failure shows in its place.
async function mountTool(host, tool, ctx) {
  try {
    const { element, module } = tool.component || {};
    // The server checks this at start; checked again so nothing from elsewhere is loaded.
    if (!module || !module.startsWith("/") || module.startsWith("//")) throw new Error(`The tool's module “${module}” is not on this instance.`);
    await import(module);
    await definedWithin(element, DEFINE_PATIENCE_MS);
    const el = document.createElement(element);
    el.context = toolContext(ctx);
    el.classList.add("tool-element");
    render(host, el);
  } catch (error) {
    console.error(error);
    render(host, h("div", { class: "banner error", role: "alert", text: `The tool could not be loaded: ${error.message}` }));
  }
}

function definedWithin(element, ms) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`its module did not define <${element}>`)), ms);
  });
  return Promise.race([customElements.whenDefined(element), late]).finally(() => clearTimeout(timer));
}

// Sidebar-placed tools as disclosure panels at the bottom of the navigation. Drawn once per
// page; a panel mounts its tool the first time it is opened.
export function drawSidebarTools(ctx) {
  const sidebar = document.getElementById("sidebar");
  if (!sidebar || sidebar.querySelector(".sidebar-tools")) return;
  const tools = adminTools(ctx).filter((t) => t.placement === "sidebar");
  if (!tools.length) return;
  const panels = tools.map((tool) => {
    const host = h("div", { class: "sidebar-tool-host" });
    const panel = h(
      "details",
      { class: "sidebar-tool", dataset: { tool: tool.id } },
      h("summary", { text: tool.title }),
      host,
      h("a", { class: "open-full", href: `/admin/tools/${encodeURIComponent(tool.id)}`, text: "Open as a page" }),
    );
    panel.addEventListener("toggle", () => {
      if (panel.open && !host.dataset.mounted) {
        host.dataset.mounted = "true";
        mountTool(host, tool, ctx);
      }
    });
    return panel;
  });
  sidebar.append(h("div", { class: "nav-section sidebar-tools" }, h("h2", { text: "Panels" }), panels));
}
