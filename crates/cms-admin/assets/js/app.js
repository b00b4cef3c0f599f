// The entry module of every admin page. The server's shell names the page (body data-page,
// data-module and its parameters); this loads what the page needs and hands it over.

import { failed } from "./dom.js";
import { loadContext, drawShell, adminTools } from "./shell.js";

async function start() {
  const body = document.body;
  const params = { ...body.dataset };
  const main = document.getElementById("main");
  try {
    const page = await import(`./pages/${params.module}.js`);
    if (body.classList.contains("public")) {
      await page.mount(main, { params });
      return;
    }
    const ctx = await loadContext(params);
    if (!ctx) return; // sent to sign-in
    drawShell(ctx);
    // Sidebar-placed plugin tools: panels under the navigation on every page.
    if (adminTools(ctx).some((tool) => tool.placement === "sidebar")) {
      import("./pages/tool.js")
        .then((tools) => tools.drawSidebarTools(ctx))
        .catch((error) => console.error(error));
    }
    // The assistant panel draws itself beside every page when a model backend is configured.
    import("./assistant.js")
      .then((assistant) => assistant.start?.(ctx))
      .catch((error) => console.error(error));
    await page.mount(main, ctx);
  } catch (error) {
    console.error(error);
    failed(main, error);
  }
}

start();
