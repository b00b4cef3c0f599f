// The asset library (/admin/assets): a searchable, filterable, paged grid with uploads by
// file input or by dropping files anywhere on the page, and bulk delete; and one asset
// (/admin/assets/{id}): its preview, facts, metadata form, the documents using it, and delete.

import { get, patch, del, data, query, seg, ApiError } from "../api.js";
import { h, render, field, setFieldError, banner, notify, confirm, setTitle, timeAgo, formatBytes, debounce, ready, emptyState } from "../dom.js";
import { focalPointSection } from "../focal-point.js";
import { listAssets, assetName, assetThumbnail, imageUrl, typeLabel, uploadList, uploadFiles, uploadControl, pager, DUPLICATE_NOTICE } from "../asset-picker.js";

const PAGE_SIZE = 24;
const ASSET_TYPES = [
  ["", "All types"],
  ["image", "Images"],
  ["file", "Other files"],
];

export async function mount(main, ctx) {
  if (ctx.params.id) return mountAsset(main, ctx, ctx.params.id);
  return mountLibrary(main, ctx);
}

// ---------------------------------------------------------------------------------------------
// The library

async function mountLibrary(main, ctx) {
  setTitle("Assets");
  const library = new Library(main, ctx);
  library.draw();
  await library.load();
  ready(main);
}

// The grid's search, type and page live in the address, so reload and back keep them.
function libraryStateFromAddress() {
  const params = new URLSearchParams(location.search);
  const type = params.get("type");
  return {
    search: params.get("search") || "",
    assetType: type === "image" || type === "file" ? type : "",
    page: Math.max(1, Number.parseInt(params.get("page"), 10) || 1),
  };
}

function saveLibraryState(state) {
  const q = query({ search: state.search, type: state.assetType, page: state.page > 1 ? state.page : undefined });
  history.replaceState(null, "", `/admin/assets${q}`);
}

class Library {
  constructor(main, ctx) {
    this.main = main;
    this.ctx = ctx;
    this.state = libraryStateFromAddress();
    this.mayUpload = ctx.can("asset.upload");
    this.mayDelete = ctx.can("asset.delete");
    // Selected for bulk delete, kept across pages: id -> asset.
    this.selected = new Map();
    this.sequence = 0;
  }

  draw() {
    this.status = h("p", { class: "muted asset-count", role: "status" });
    this.messages = h("div", { class: "asset-messages" });
    this.grid = h("ul", { class: "asset-grid", "aria-label": "Assets" });
    this.emptyBox = h("div", { class: "asset-empty" });
    this.pages = h("div");
    render(
      this.main,
      h("h1", { text: "Assets" }),
      this.mayUpload ? this.dropZone() : null,
      this.messages,
      this.toolbar(),
      this.mayDelete ? this.selectionBar() : null,
      this.status,
      this.grid,
      this.emptyBox,
      this.pages,
    );
  }

  // Files dropped anywhere on the page upload; the zone lights up while they are dragged.
  dropZone() {
    this.uploads = uploadList();
    this.zone = h(
      "section",
      { class: "asset-dropzone", "aria-label": "Upload" },
      h("p", {}, h("strong", { text: "Drop files anywhere on this page to upload them" }), h("span", { class: "muted", text: " or " })),
      uploadControl("Choose files", (files) => this.upload(files)),
      this.uploads,
    );
    watchFileDrags(this.zone, (files) => this.upload(files));
    return this.zone;
  }

  async upload(files) {
    this.uploads.replaceChildren();
    const uploaded = await uploadFiles(files, this.uploads);
    const created = uploaded.filter((asset) => !asset.duplicate);
    if (created.length) {
      notify(`${created.length} file${created.length === 1 ? "" : "s"} uploaded.`, "success");
      this.state.page = 1;
      await this.load();
    }
    // Its own line says so too; the notice is read out once for the batch.
    if (uploaded.length > created.length) notify(DUPLICATE_NOTICE, "info");
  }

  toolbar() {
    const search = h("input", { type: "search", name: "search", value: this.state.search, placeholder: "Title or description", autocomplete: "off" });
    this.searchInput = search;
    search.addEventListener(
      "input",
      debounce(() => {
        this.state.search = search.value.trim();
        this.state.page = 1;
        this.load();
      }, 250),
    );
    const type = h(
      "select",
      { name: "assetType" },
      ASSET_TYPES.map(([value, text]) => h("option", { value, text, selected: value === this.state.assetType })),
    );
    this.typeSelect = type;
    type.addEventListener("change", () => {
      this.state.assetType = type.value;
      this.state.page = 1;
      this.load();
    });
    return h("div", { class: "toolbar asset-toolbar" }, field("Search", search), field("Type", type));
  }

  selectionBar() {
    this.selectionCount = h("span", { class: "muted" });
    this.deleteSelected = h("button", { type: "button", class: "danger", text: "Delete selected", on: { click: () => this.deleteSelection() } });
    this.clearSelected = h("button", { type: "button", class: "link", text: "Clear selection", on: { click: () => this.clearSelection() } });
    this.bar = h("div", { class: "actions asset-selection", hidden: true }, this.selectionCount, this.deleteSelected, this.clearSelected);
    return this.bar;
  }

  drawSelection() {
    if (!this.bar) return;
    const n = this.selected.size;
    this.bar.hidden = n === 0;
    this.selectionCount.textContent = `${n} selected`;
  }

  clearSelection() {
    this.selected.clear();
    this.grid.querySelectorAll("input[type=checkbox]").forEach((box) => (box.checked = false));
    this.drawSelection();
  }

  async load() {
    const sequence = ++this.sequence;
    saveLibraryState(this.state);
    this.main.setAttribute("aria-busy", "true");
    try {
      const { assets, pagination } = await listAssets({ ...this.state, limit: PAGE_SIZE });
      if (sequence !== this.sequence) return; // a newer search is on its way
      this.drawAssets(assets, pagination);
    } catch (error) {
      if (sequence !== this.sequence) return;
      banner(this.messages, error.message);
    } finally {
      if (sequence === this.sequence) this.main.removeAttribute("aria-busy");
    }
  }

  drawAssets(assets, pagination) {
    const filtered = this.state.search || this.state.assetType;
    this.status.textContent = assets.length
      ? `${pagination.total} asset${pagination.total === 1 ? "" : "s"}`
      : filtered
        ? "No files match."
        : "No files yet.";
    render(
      this.grid,
      assets.map((asset) => this.card(asset)),
    );
    this.grid.hidden = !assets.length;
    render(this.emptyBox, assets.length ? null : this.empty(filtered));
    render(
      this.pages,
      pager(pagination, (page) => {
        this.state.page = page;
        this.load();
      }),
    );
    this.drawSelection();
  }

  // What an empty grid says, and the way on: upload (a drop works anywhere on the page), or
  // clear the search and type that left nothing.
  empty(filtered) {
    if (filtered) {
      const clear = () => {
        this.state = { ...this.state, search: "", assetType: "", page: 1 };
        this.searchInput.value = "";
        this.typeSelect.value = "";
        this.load();
      };
      return emptyState(this.state.search ? "Nothing has that title or description." : "No file is of that type.", h("button", { type: "button", text: this.state.search ? "Clear the search" : "Show every type", on: { click: clear } }));
    }
    if (!this.mayUpload) return emptyState("Files uploaded to this organization show here.");
    return emptyState("Drop images here or choose files.", uploadControl("Choose files", (files) => this.upload(files)));
  }

  card(asset) {
    const href = `/admin/assets/${seg(asset.id)}`;
    const facts = [typeLabel(asset), formatBytes(asset.size), dimensions(asset)].filter(Boolean).join(" · ");
    return h(
      "li",
      { class: "asset-card", dataset: { id: asset.id } },
      this.mayDelete ? this.selectBox(asset) : null,
      h("a", { class: "asset-card-link", href }, assetThumbnail(asset), h("span", { class: "asset-card-name", text: assetName(asset) })),
      h("p", { class: "asset-card-facts muted", text: facts }),
      asset.referenceCount > 0 ? h("span", { class: "badge asset-in-use", text: `Used in ${asset.referenceCount}` }) : null,
    );
  }

  selectBox(asset) {
    const box = h("input", { type: "checkbox", class: "asset-select", "aria-label": `Select ${assetName(asset)}`, checked: this.selected.has(asset.id) });
    box.addEventListener("change", () => {
      if (box.checked) this.selected.set(asset.id, asset);
      else this.selected.delete(asset.id);
      this.drawSelection();
    });
    return box;
  }

  // Bulk delete is all or nothing (CONTRACT.md): one asset in use refuses the lot, and the
  // refusal names which ones.
  async deleteSelection() {
    const chosen = Array.from(this.selected.values());
    if (!chosen.length) return;
    const yes = await confirm(`Delete ${chosen.length} asset${chosen.length === 1 ? "" : "s"}?`, "Their files are removed for good. This cannot be undone.", {
      confirmLabel: "Delete",
      danger: true,
    });
    if (!yes) return;
    banner(this.messages, null);
    this.grid.querySelectorAll(".asset-card.is-referenced").forEach((card) => card.classList.remove("is-referenced"));
    try {
      const result = await data(del("/api/assets/bulk", { ids: chosen.map((a) => a.id) }));
      notify(`${result?.deleted ?? chosen.length} asset${result?.deleted === 1 ? "" : "s"} deleted.`, "success");
      if (result?.failed) notify(`${result.failed} could not be found (already deleted?).`, "info");
      this.selected.clear();
      await this.load();
    } catch (error) {
      this.showBulkRefusal(error, chosen);
    }
  }

  showBulkRefusal(error, chosen) {
    const ids = error instanceof ApiError && Array.isArray(error.body?.referencedIds) ? error.body.referencedIds : [];
    if (!ids.length) {
      banner(this.messages, error.message);
      return;
    }
    const names = chosen.filter((a) => ids.includes(a.id)).map(assetName);
    banner(this.messages, `Nothing was deleted: documents still use ${names.join(", ") || `${ids.length} of them`}. Remove them from those documents, or unselect them.`);
    for (const id of ids) this.grid.querySelector(`.asset-card[data-id="${CSS.escape(id)}"]`)?.classList.add("is-referenced");
  }
}

// Highlights `zone` while files are dragged over the page and hands dropped files to
// `onFiles`. Listening on the document keeps a drop outside the zone from making the browser
// open the file in place of the admin.
function watchFileDrags(zone, onFiles) {
  let depth = 0;
  const carriesFiles = (event) => Array.from(event.dataTransfer?.types || []).includes("Files");
  const lit = (on) => zone.classList.toggle("is-dragging", on);
  document.addEventListener("dragenter", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth += 1;
    lit(true);
  });
  document.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    lit(true);
  });
  document.addEventListener("dragleave", (event) => {
    if (!carriesFiles(event)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) lit(false);
  });
  document.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth = 0;
    lit(false);
    const files = Array.from(event.dataTransfer.files || []);
    if (files.length) onFiles(files);
  });
}

function dimensions(asset) {
  return asset.width && asset.height ? `${asset.width} × ${asset.height}` : "";
}

// ---------------------------------------------------------------------------------------------
// One asset

async function mountAsset(main, ctx, id) {
  setTitle("Asset");
  let asset;
  let references;
  try {
    [asset, references] = await Promise.all([data(get(`/api/assets/${seg(id)}`)), loadReferences(ctx, id)]);
  } catch (error) {
    const message = error instanceof ApiError && error.status === 404 ? "This asset does not exist, or was deleted." : error.message;
    render(main, backLink(), h("h1", { text: "Asset" }), h("div", { class: "banner error", role: "alert", text: message }));
    ready(main);
    return;
  }
  new AssetPage(main, ctx, asset, references).draw();
  ready(main);
}

function backLink() {
  return h("p", { class: "asset-back" }, h("a", { href: "/admin/assets", text: "← Asset library" }));
}

// The documents using an asset, with their titles when the caller may read documents:
// [{ documentId, type, status, title }].
async function loadReferences(ctx, id) {
  const body = await data(get(`/api/assets/${seg(id)}/references`));
  const references = body?.references || [];
  if (!references.length || !ctx.can("document.read")) return references;
  const titles = await documentTitles(ctx, references.map((r) => r.documentId)).catch(() => new Map());
  return references.map((r) => ({ ...r, title: titles.get(r.documentId) }));
}

// id -> a title for each document, in batches of 100 (the by-ids limit).
async function documentTitles(ctx, ids) {
  const titles = new Map();
  for (let i = 0; i < ids.length; i += 100) {
    const documents = await data(get(`/api/documents/by-ids${query({ ids: ids.slice(i, i + 100).join(",") })}`));
    for (const doc of documents || []) titles.set(doc.id, documentTitle(ctx, doc));
  }
  return titles;
}

// The first non-empty string among the usual title fields, else the schema's first string field.
function documentTitle(ctx, doc) {
  const values = doc.draftData || doc.publishedData || {};
  const schemaFields = (ctx.schema(doc.type)?.fields || []).filter((f) => f.type === "string").map((f) => f.name);
  for (const name of ["title", "name", ...schemaFields]) {
    if (typeof values[name] === "string" && values[name].trim()) return values[name];
  }
  return null;
}

class AssetPage {
  constructor(main, ctx, asset, references) {
    this.main = main;
    this.ctx = ctx;
    this.asset = asset;
    this.references = references;
  }

  draw() {
    setTitle(assetName(this.asset));
    this.heading = h("h1", { text: assetName(this.asset) });
    this.referenceList = h("div", { class: "asset-references" });
    this.drawReferences();
    render(
      this.main,
      backLink(),
      this.heading,
      h(
        "div",
        { class: "asset-detail" },
        h("div", { class: "asset-preview" }, assetPreview(this.asset)),
        h("div", { class: "asset-side" }, h("h2", { text: "Details" }), assetFacts(this.asset)),
      ),
      h("section", { "aria-labelledby": "asset-metadata" }, h("h2", { id: "asset-metadata", text: "Metadata" }), this.metadataForm()),
      focalPointSection(this.asset, this.ctx.can("asset.upload"), (asset) => {
        this.asset = asset;
      }),
      h("section", { "aria-labelledby": "asset-used-in" }, h("h2", { id: "asset-used-in", tabindex: "-1", text: "Used in" }), this.referenceList),
      this.ctx.can("asset.delete") ? this.deleteSection() : null,
    );
  }

  drawReferences() {
    if (!this.references.length) {
      render(this.referenceList, h("p", { class: "muted", text: "No document uses this asset." }));
      return;
    }
    render(this.referenceList, referenceTable(this.ctx, this.references));
  }

  metadataForm() {
    const mayEdit = this.ctx.can("asset.upload");
    const a = this.asset;
    const control = (tag, name, value, attrs = {}) => h(tag, { name, value: value || "", readOnly: !mayEdit, ...attrs });
    this.controls = {
      title: control("input", "title", a.title, { type: "text" }),
      description: control("textarea", "description", a.description, { rows: "3" }),
      alt: control("input", "alt", a.alt, { type: "text" }),
      creditLine: control("input", "creditLine", a.creditLine, { type: "text" }),
    };
    const form = h(
      "form",
      { class: "stack asset-metadata" },
      field("Title", this.controls.title),
      field("Description", this.controls.description, { hint: "The library's search looks in the title and the description." }),
      field("Alt text", this.controls.alt, { hint: a.assetType === "image" ? "What the image shows, for people who cannot see it." : "Used when the file is an image." }),
      field("Credit line", this.controls.creditLine),
      mayEdit ? h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Save" })) : null,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.saveMetadata(form);
    });
    return form;
  }

  async saveMetadata(form) {
    banner(form, null);
    form.querySelectorAll(".field").forEach((f) => setFieldError(f, null));
    const change = Object.fromEntries(Object.entries(this.controls).map(([name, el]) => [name, el.value]));
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      this.asset = await data(patch(`/api/assets/${seg(this.asset.id)}`, change));
      this.heading.textContent = assetName(this.asset);
      setTitle(assetName(this.asset));
      notify("Metadata saved.", "success");
    } catch (error) {
      showIssues(form, error);
    } finally {
      button.disabled = false;
    }
  }

  deleteSection() {
    this.deleteMessages = h("div", { class: "asset-delete-messages" });
    const inUse = this.references.length;
    return h(
      "section",
      { class: "asset-danger", "aria-labelledby": "asset-delete" },
      h("h2", { id: "asset-delete", text: "Delete" }),
      h("p", {
        class: "muted",
        text: inUse ? `${inUse} document${inUse === 1 ? "" : "s"} use${inUse === 1 ? "s" : ""} this asset: deleting it is refused while they do.` : "Deleting removes the file for good.",
      }),
      this.deleteMessages,
      h("button", { type: "button", class: "danger", text: "Delete asset", on: { click: () => this.deleteAsset() } }),
    );
  }

  async deleteAsset() {
    const yes = await confirm("Delete this asset?", `“${assetName(this.asset)}” and its file are removed for good. This cannot be undone.`, { confirmLabel: "Delete", danger: true });
    if (!yes) return;
    render(this.deleteMessages);
    try {
      await del(`/api/assets/${seg(this.asset.id)}`);
      notify("Asset deleted.", "success");
      location.assign("/admin/assets");
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) await this.showRefusal(error);
      else render(this.deleteMessages, h("div", { class: "banner error", role: "alert", text: error.message }));
    }
  }

  // The API refused because documents use the asset: say so, and list them (fresh, as the
  // page's list may be older than the refusal).
  async showRefusal(error) {
    try {
      this.references = await loadReferences(this.ctx, this.asset.id);
      this.drawReferences();
    } catch {
      // the refusal below still tells what happened; the older list stays
    }
    render(
      this.deleteMessages,
      h(
        "div",
        { class: "banner error asset-refusal", role: "alert" },
        h("p", { text: `Not deleted: ${error.message}` }),
        this.references.length ? h("p", { text: "Remove it from these documents first:" }) : null,
        this.references.length ? referenceLinks(this.references) : null,
      ),
    );
    this.deleteMessages.scrollIntoView({ block: "nearest" });
  }
}

function assetPreview(asset) {
  const kind = String(asset.mimeType || "").split("/")[0];
  const download = h("a", { href: asset.url, download: asset.filename, class: "button", text: `Download ${asset.filename}` });
  if (asset.assetType === "image") {
    return [h("img", { src: imageUrl(asset, 800, 800, "max"), alt: asset.alt || "", class: "asset-preview-image" }), h("p", {}, download)];
  }
  if (kind === "video") return [h("video", { src: asset.url, controls: true, preload: "metadata", class: "asset-preview-media" }), h("p", {}, download)];
  if (kind === "audio") return [h("audio", { src: asset.url, controls: true, preload: "metadata" }), h("p", {}, download)];
  return [h("div", { class: "asset-preview-file" }, assetThumbnail(asset)), h("p", {}, download)];
}

function assetFacts(asset) {
  const facts = [
    ["Filename", asset.filename],
    ["MIME type", asset.mimeType],
    ["Size", `${formatBytes(asset.size)} (${asset.size} bytes)`],
    ["Dimensions", dimensions(asset) ? `${dimensions(asset)} px` : null],
    ["SHA-256", h("code", { class: "asset-hash", text: asset.sha256 })],
    ["Uploaded", timeAgo(asset.createdAt)],
    ["Updated", timeAgo(asset.updatedAt)],
  ].filter(([, value]) => value);
  return h(
    "dl",
    { class: "asset-facts" },
    facts.map(([term, value]) => [h("dt", { text: term }), h("dd", {}, value)]),
  );
}

function documentHref(reference) {
  return `/admin/documents/${seg(reference.type)}/${seg(reference.documentId)}`;
}

function documentLabel(reference) {
  return reference.title || reference.documentId;
}

function typeTitle(ctx, type) {
  return ctx.schema(type)?.title || type;
}

function referenceTable(ctx, references) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, h("th", { text: "Document" }), h("th", { text: "Type" }), h("th", { text: "Status" }))),
      h(
        "tbody",
        {},
        references.map((r) =>
          h(
            "tr",
            {},
            h("td", {}, h("a", { href: documentHref(r), text: documentLabel(r) })),
            h("td", { text: typeTitle(ctx, r.type) }),
            h("td", {}, h("span", { class: `badge ${r.status}`, text: r.status === "published" ? "Published" : "Draft" })),
          ),
        ),
      ),
    ),
  );
}

function referenceLinks(references) {
  return h(
    "ul",
    { class: "asset-refusal-list" },
    references.map((r) => h("li", {}, h("a", { href: documentHref(r), text: documentLabel(r) }), ` (${r.type}, ${r.status})`)),
  );
}

// The API's objections next to the fields they concern; the rest in a banner.
function showIssues(form, error) {
  const leftover = [];
  for (const issue of error.issues || []) {
    const fieldEl = form.querySelector(`.field[data-field="${CSS.escape(String(issue.path || ""))}"]`);
    if (fieldEl) setFieldError(fieldEl, issue.message);
    else leftover.push(issue.message);
  }
  if (!error.issues?.length || leftover.length) banner(form, leftover.join(" ") || error.message);
}
