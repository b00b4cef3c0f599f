// What every signed-in page shares: who is signed in, the active organization and what the
// caller may do there, the document types, the plugins' admin parts; and the frame drawn from
// them (top bar with the organization switcher and sign-out, the navigation).

import { get, post, data, ApiError } from "./api.js";
import { h, render, notify } from "./dom.js";
import { forgetUnsaved } from "./drafts-keeper.js";

// Loads the context of a signed-in page, or sends the browser to sign-in (resolving null).
export async function loadContext(params) {
  const session = await get("/api/auth/get-session");
  if (!session) {
    toSignIn();
    return null;
  }
  // An organization that requires two-factor sign-in grants nothing until it is on: only the
  // Account page, where it is set up, is drawn (and its reads need no grant).
  const enrolFirst = session.session?.twoFactorEnrolmentRequired === true;
  if (enrolFirst && !(params.module === "settings" && params.section === "account")) {
    location.replace("/admin/settings/account");
    return null;
  }
  const [organizations, access, schemas, plugins] = await Promise.all([
    data(get("/api/organizations")),
    data(get("/api/user/access")),
    enrolFirst ? [] : data(get("/api/schemas")),
    enrolFirst ? [] : data(get("/api/plugins")).catch(() => []),
  ]);
  const capabilities = new Set(access.capabilities);
  const organization = organizations.find((o) => o.id === access.organizationId) || null;
  const isInstanceAdmin = session.user.role === "super_admin" || session.user.role === "admin";
  const ctx = {
    params,
    assets: params.assets,
    user: session.user,
    session: session.session,
    organizations,
    organization,
    role: access.role,
    capabilities,
    // Whether the caller holds `capability` in the active organization. The API decides
    // every request anyway; this only keeps the admin from offering what would be refused.
    can: (capability) => capabilities.has(capability),
    // The assistant on this instance: "off", "noModel" or "ready".
    assistant: access.assistant,
    // Whether e-mail reaches people (false with the log transport): invitations then need
    // their link handed over, and members may be created with a password.
    mailDelivers: access.mailDelivers !== false,
    isInstanceAdmin,
    schemas,
    schema: (name) => schemas.find((s) => s.name === name) || null,
    plugins,
  };
  ctx.documentTypes = schemas.filter((s) => s.type === "document" && mayDo(ctx, s, "read"));
  return ctx;
}

// Whether the caller may do `operation` on documents of `schema`: the capability, and the
// schema's role list when it declares one (instance administrators pass every schema rule, as
// on the server).
export function mayDo(ctx, schema, operation) {
  if (!ctx.can(`document.${operation}`)) return false;
  const list = schema.access?.[operation];
  return !Array.isArray(list) || ctx.isInstanceAdmin || list.includes(ctx.role);
}

export function toSignIn() {
  const back = location.pathname + location.search;
  location.assign(`/admin/sign-in?redirect=${encodeURIComponent(back)}`);
}

// The admin tools plugins declared, flattened: [{ pluginId, id, title, component, placement, group }].
export function adminTools(ctx) {
  return (ctx.plugins || []).flatMap((p) => (p.adminTools || []).map((t) => ({ pluginId: p.id, ...t })));
}

export function drawShell(ctx) {
  drawTopbar(ctx);
  drawSidebar(ctx);
}

function drawTopbar(ctx) {
  const topbar = document.getElementById("topbar");
  const menuButton = h("button", {
    type: "button",
    class: "menu-toggle",
    "aria-controls": "sidebar",
    "aria-expanded": "false",
    text: "Menu",
    on: {
      click: () => {
        const open = document.body.classList.toggle("nav-open");
        menuButton.setAttribute("aria-expanded", String(open));
      },
    },
  });
  render(
    topbar,
    menuButton,
    h("a", { class: "brand", href: "/admin", text: "CMS" }),
    organizationSwitcher(ctx),
    paletteButton(ctx),
    h("span", { class: "spacer" }),
    h("a", { class: "user", href: "/admin/settings/account", text: ctx.user.name || ctx.user.email }),
    h("button", { type: "button", class: "link", id: "sign-out", text: "Sign out", on: { click: signOut } }),
  );
}

// The command palette (js/palette.js, loaded when first opened): this button, for a pointer
// or a phone, and Ctrl+K (Cmd+K on a Mac) anywhere on a signed-in page.
function paletteButton(ctx) {
  const mac = /Mac|iPhone|iPad/.test(navigator.platform || "");
  const open = () => {
    // Over a dialog already open (a confirmation), the palette would hide its question.
    if (document.querySelector("dialog[open]:not(.palette)")) return;
    import("./palette.js")
      .then((palette) => palette.openPalette(ctx))
      .catch((error) => notify(`The command palette could not open: ${error.message}`, "error"));
  };
  document.addEventListener("keydown", (event) => {
    // A field that uses the keys itself (the rich-text editor links a selection) said so.
    if (event.defaultPrevented) return;
    if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === "k") {
      event.preventDefault();
      open();
    }
  });
  return h(
    "button",
    { type: "button", class: "palette-button", "aria-haspopup": "dialog", "aria-keyshortcuts": mac ? "Meta+K" : "Control+K", on: { click: open } },
    h("span", { text: "Search" }),
    " ",
    h("kbd", { "aria-hidden": "true", text: mac ? "⌘K" : "Ctrl K" }),
  );
}

function organizationSwitcher(ctx) {
  if (ctx.organizations.length === 0) {
    return h("span", { class: "org-none", text: "No organization" });
  }
  const select = h(
    "select",
    {
      id: "org-switcher",
      "aria-label": "Organization",
      on: {
        change: async () => {
          try {
            await post("/api/organizations/switch", { organizationId: select.value });
            location.assign("/admin");
          } catch (error) {
            notify(error.message, "error");
          }
        },
      },
    },
    ctx.organizations.map((o) => h("option", { value: o.id, selected: o.id === ctx.organization?.id, text: o.name })),
  );
  if (!ctx.organization) select.prepend(h("option", { value: "", selected: true, disabled: true, text: "Choose…" }));
  return select;
}

async function signOut() {
  // Unsaved text kept for recovery (js/drafts-keeper.js) stays with the person, not the browser.
  forgetUnsaved();
  try {
    await post("/api/auth/sign-out");
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
  }
  location.assign("/admin/sign-in");
}

function drawSidebar(ctx) {
  const here = location.pathname;
  const link = (href, text, extra = {}) =>
    h("li", {}, h("a", { href, text, "aria-current": here === href || here.startsWith(`${href}/`) ? "page" : null, ...extra }));
  const tools = adminTools(ctx).filter((t) => t.placement !== "sidebar");
  const toolLinks = (group) => tools.filter((t) => t.group === group).map((t) => link(`/admin/tools/${encodeURIComponent(t.id)}`, t.title));
  const sections = [];
  if (ctx.can("document.read")) {
    sections.push(
      section("Content", [
        ...ctx.documentTypes.map((s) => link(`/admin/documents/${encodeURIComponent(s.name)}`, s.title || s.name, { dataset: { type: s.name } })),
        ...toolLinks("content"),
      ]),
    );
  }
  if (ctx.can("asset.read")) sections.push(section("Assets", [link("/admin/assets", "Library"), ...toolLinks("assets")]));
  sections.push(section("Settings", [...settingsLinks(ctx).map(([href, text]) => link(href, text)), ...toolLinks("settings")]));
  const rest = toolLinks("tools");
  if (rest.length) sections.push(section("Tools", rest));
  render(document.getElementById("sidebar"), ...sections);
}

function section(title, items) {
  return h("div", { class: "nav-section" }, h("h2", { text: title }), h("ul", {}, items));
}

// The settings pages the caller may use: [href, title].
export function settingsLinks(ctx) {
  const links = [["/admin/settings/account", "Account"]];
  if (ctx.organization) {
    links.push(["/admin/settings/organization", "Organization"]);
    links.push(["/admin/settings/members", "Members"]);
    if (ctx.can("role.manage")) links.push(["/admin/settings/roles", "Roles"]);
    if (ctx.can("apiKey.manage")) links.push(["/admin/settings/api-keys", "API keys"]);
    // Webhook endpoints exist while the webhooks plugin sends their deliveries.
    const webhooks = (ctx.plugins || []).some((p) => p.id === "webhooks");
    if (ctx.can("org.settings") && webhooks) links.push(["/admin/settings/webhooks", "Webhooks"]);
    if (ctx.can("org.settings")) links.push(["/admin/settings/plugins", "Plugins"]);
    if (ctx.can("org.settings")) links.push(["/admin/settings/audit", "Audit log"]);
    if (ctx.can("document.read")) {
      links.push(["/admin/settings/jobs", "Jobs"]);
      links.push(["/admin/settings/events", "Events"]);
    }
  }
  return links;
}
