// The asset picker: a modal dialog the document editor opens to choose an asset for an image
// or file field, with search, paging and an upload of its own. Also home to what the picker
// and the library page (pages/assets.js) share: listing, uploading and drawing assets.

import { get, data, query, ApiError } from "./api.js";
import { h, render, uid, formatBytes, debounce } from "./dom.js";

const PICKER_PAGE_SIZE = 24;

// ---------------------------------------------------------------------------------------------
// Shared with the library page

// `accept` as a list of MIME patterns: "image/*" -> ["image/*"]; nothing (or "*/*") -> [].
export function acceptPatterns(accept) {
  const list = Array.isArray(accept) ? accept : accept ? [accept] : [];
  return list.map((p) => String(p).trim()).filter((p) => p && p !== "*/*" && p !== "*");
}

// Whether `mimeType` matches one of `patterns` (an empty list accepts everything).
export function accepts(patterns, mimeType) {
  if (!patterns.length) return true;
  const mime = String(mimeType || "").toLowerCase();
  return patterns.some((p) => {
    const pattern = p.toLowerCase();
    return pattern.endsWith("/*") ? mime.startsWith(pattern.slice(0, -1)) : mime === pattern;
  });
}

// One page of assets. `page` counts from 1; the API pages by offset (CONTRACT.md: page =
// offset / limit + 1).
export async function listAssets({ search, assetType, mimeType, page = 1, limit = 20 } = {}) {
  const offset = (Math.max(1, page) - 1) * limit;
  const body = await get(`/api/assets${query({ search, assetType, mimeType, limit, offset })}`);
  return { assets: body?.data || [], pagination: body?.pagination || emptyPagination(limit) };
}

function emptyPagination(limit) {
  return { total: 0, page: 1, pageSize: limit, totalPages: 0, hasNextPage: false, hasPrevPage: false };
}

// What the caller may do with assets in the active organization (the picker has no page
// context of its own).
export async function assetAbilities() {
  const access = await data(get("/api/user/access"));
  const capabilities = new Set(access?.capabilities || []);
  return { upload: capabilities.has("asset.upload"), remove: capabilities.has("asset.delete") };
}

export function assetName(asset) {
  return asset.title || asset.filename || asset.id;
}

// "application/pdf" -> "PDF", "image/svg+xml" -> "SVG".
export function typeLabel(asset) {
  const subtype = String(asset.mimeType || "").split("/")[1] || "file";
  return subtype.split(/[+.;-]/)[0].toUpperCase() || "FILE";
}

// Images the server can transform (CONTRACT.md section 18); SVG and AVIF are shown as stored.
const TRANSFORMABLE = new Set(["image/jpeg", "image/png", "image/webp", "image/gif"]);

// A link to a derivative of an image asset `width` by `height` pixels; the original for an
// image the server does not transform. `fit` is "clip" (fit inside), "crop" (fill the box
// around the asset's hotspot) or "max" (fit inside, never larger than the original).
function derivativeUrl(asset, width, height, fit) {
  if (!asset?.url || !TRANSFORMABLE.has(asset.mimeType)) return asset?.url;
  const params = new URLSearchParams({ w: String(width), h: String(height) });
  if (fit !== "clip") params.set("fit", fit);
  return `${asset.url}?${params}`;
}

// A link to a small derivative of an image asset, `width` by `height` CSS pixels drawn at twice
// that for sharp screens, so that a grid of thumbnails does not download every original.
export function imageUrl(asset, width, height, fit = "clip") {
  return derivativeUrl(asset, width * 2, height * 2, fit);
}

// The attributes of a thumbnail `width` by `height` CSS pixels: the derivative at 1x and 2x
// (the screen picks; `src`, for a browser without `srcset`, is the 2x, which the server keeps
// as the same derivative), the size it will be drawn at, so nothing moves when it arrives, and
// loaded only when scrolled near. SVG and AVIF stay the originals, at the box's size.
export function thumbnailAttrs(asset, width, height, fit = "clip") {
  const src = imageUrl(asset, width, height, fit);
  const attrs = { src, loading: "lazy", decoding: "async", width, height };
  if (src === asset?.url) return attrs;
  attrs.srcset = `${derivativeUrl(asset, width, height, fit)} 1x, ${src} 2x`;
  // `clip` and `max` keep the picture's shape inside the box (`max` never past its own size).
  const w = Number(asset.width);
  const hgt = Number(asset.height);
  if (fit !== "crop" && w > 0 && hgt > 0) {
    const scale = Math.min(width / w, height / hgt, fit === "max" ? 1 : Infinity);
    attrs.width = Math.max(1, Math.round(w * scale));
    attrs.height = Math.max(1, Math.round(hgt * scale));
  }
  return attrs;
}

// The small picture of an asset in a grid: the image itself, or a labelled tile for the rest.
// The image is decorative here: the asset's name is always written beside it. Its dominant
// colour fills the tile until the picture arrives.
export function assetThumbnail(asset) {
  if (asset.assetType === "image" && asset.url) {
    const img = h("img", { ...thumbnailAttrs(asset, 200, 200), alt: "" });
    const tile = h("span", { class: "asset-thumb" }, img);
    if (/^#[0-9a-f]{6}$/.test(asset.dominantColor || "")) tile.style.backgroundColor = asset.dominantColor;
    return tile;
  }
  const kind = String(asset.mimeType || "").split("/")[0];
  return h("span", { class: `asset-thumb asset-thumb-file kind-${kind || "other"}`, "aria-hidden": "true" }, h("span", { text: typeLabel(asset) }));
}

// Sends one file to POST /api/assets (multipart field `file`), reporting progress as a
// fraction. XMLHttpRequest because fetch cannot report upload progress. Resolves to the new
// asset; rejects with ApiError as api.js does.
export function uploadAsset(file, onProgress = () => {}) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    form.append("file", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/assets");
    xhr.setRequestHeader("accept", "application/json");
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener("load", () => {
      const body = parseBody(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) resolve(body?.data);
      else reject(new ApiError(xhr.status, body));
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, null)));
    xhr.addEventListener("abort", () => reject(new ApiError(0, { message: "The upload was cancelled." })));
    xhr.send(form);
  });
}

function parseBody(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 200) };
  }
}

// Why an upload failed, in words that tell the person what to do.
export function uploadFailure(error) {
  if (error instanceof ApiError) {
    if (error.status === 413) return `Too large: ${error.message}`;
    if (error.status === 415) return `Not accepted: ${error.message}`;
    if (error.status === 403) return "You may not upload assets here.";
  }
  return error?.message || String(error);
}

// The list of upload status lines (one per file). Its lines stay until the next batch so a
// failure can be read at leisure.
export function uploadList() {
  return h("ul", { class: "asset-uploads", "aria-label": "Uploads", "aria-live": "polite" });
}

// What an upload line (and the library page) says when the API answered an upload with the
// asset the organization already had for the same bytes (`duplicate: true`).
export const DUPLICATE_NOTICE = "This file was already in the library: the existing asset is used.";

// Uploads `files` one after another, each with its own line in `list` (progress, then done,
// already in the library, or the reason it failed). Resolves to the assets uploaded: new ones,
// and the existing asset for a file the library already had.
export async function uploadFiles(files, list) {
  const created = [];
  const lines = Array.from(files).map((file) => {
    const line = uploadLine(file);
    list.append(line.el);
    return { file, line };
  });
  for (const { file, line } of lines) {
    try {
      const asset = await uploadAsset(file, (fraction) => line.progress(fraction));
      line.done(asset);
      created.push(asset);
    } catch (error) {
      line.failed(uploadFailure(error));
    }
  }
  return created;
}

function uploadLine(file) {
  const bar = h("progress", { max: "100", value: "0", "aria-label": `Upload of ${file.name}` });
  const status = h("span", { class: "asset-upload-status", text: "Uploading…" });
  const el = h("li", { class: "asset-upload", dataset: { state: "uploading" } }, h("span", { class: "asset-upload-name", text: file.name }), bar, status);
  const settle = (state, text) => {
    el.dataset.state = state;
    bar.remove();
    status.textContent = text;
  };
  return {
    el,
    progress: (fraction) => {
      bar.value = Math.round(fraction * 100);
    },
    done: (asset) => (asset?.duplicate ? settle("duplicate", DUPLICATE_NOTICE) : settle("done", `Uploaded (${formatBytes(asset?.size)})`)),
    failed: (message) => settle("failed", message),
  };
}

// A file input behind a visible label styled as a button (the label is its name, so it works
// with a pointer, the keyboard and assistive technology alike).
export function uploadControl(text, onFiles, { multiple = true, accept } = {}) {
  const input = h("input", { type: "file", id: uid("upload"), class: "visually-hidden asset-file-input", multiple, accept: accept || null });
  input.addEventListener("change", () => {
    const files = Array.from(input.files || []);
    input.value = "";
    if (files.length) onFiles(files);
  });
  return h("span", { class: "asset-upload-control" }, input, h("label", { for: input.id, class: "button", text }));
}

// Previous / "Page 2 of 5" / Next. `onPage(n)` draws page n.
export function pager(pagination, onPage) {
  if (!pagination || pagination.totalPages <= 1) return null;
  return h(
    "nav",
    { class: "pagination", "aria-label": "Pages" },
    h("button", { type: "button", disabled: !pagination.hasPrevPage, text: "Previous", on: { click: () => onPage(pagination.page - 1) } }),
    h("span", { text: `Page ${pagination.page} of ${pagination.totalPages}` }),
    h("button", { type: "button", disabled: !pagination.hasNextPage, text: "Next", on: { click: () => onPage(pagination.page + 1) } }),
  );
}

// ---------------------------------------------------------------------------------------------
// The picker

// Opens the picker; resolves to the chosen asset record, or null when cancelled (Escape, the
// Cancel button). `accept`: MIME patterns (a string or an array) the field takes.
export function pickAsset({ accept, title } = {}) {
  return new Promise((resolve) => {
    const picker = new Picker(acceptPatterns(accept), title || "Choose an asset", resolve);
    picker.open();
  });
}

class Picker {
  constructor(patterns, title, resolve) {
    this.patterns = patterns;
    this.title = title;
    this.resolve = resolve;
    this.settled = false;
    this.state = { search: "", filter: patterns.length > 1 ? patterns[0] : "", page: 1 };
    this.sequence = 0;
  }

  open() {
    const titleId = uid("picker");
    this.status = h("p", { class: "asset-picker-status muted", role: "status" });
    this.grid = h("ul", { class: "asset-picker-grid", "aria-label": "Assets" });
    this.pages = h("div", { class: "asset-picker-pages" });
    this.uploads = uploadList();
    this.toolbar = h("div", { class: "toolbar asset-picker-toolbar" }, this.searchField(), this.filterField());
    this.el = h(
      "dialog",
      { class: "dialog asset-picker", "aria-labelledby": titleId },
      h("h2", { id: titleId, text: this.title }),
      this.toolbar,
      this.uploads,
      this.status,
      this.grid,
      this.pages,
      h("div", { class: "dialog-actions" }, h("button", { type: "button", text: "Cancel", on: { click: () => this.finish(null) } })),
    );
    // Escape fires `cancel`, then the dialog closes: both end the pick with null.
    this.el.addEventListener("close", () => {
      this.el.remove();
      this.finish(null);
    });
    document.body.append(this.el);
    this.el.showModal();
    this.load();
    this.offerUpload();
  }

  finish(asset) {
    if (this.settled) return;
    this.settled = true;
    if (this.el.open) this.el.close();
    // `close` fires its event a task later: the dialog leaves the page before the caller
    // hears the answer, so nothing sees a closed picker still in the document.
    this.el.remove();
    this.resolve(asset);
  }

  searchField() {
    const input = h("input", { type: "search", id: uid("picker-search"), placeholder: "Title or description", autocomplete: "off" });
    const reload = debounce(() => {
      this.state.search = input.value.trim();
      this.state.page = 1;
      this.load();
    }, 250);
    input.addEventListener("input", reload);
    return h("span", { class: "asset-picker-search" }, h("label", { for: input.id, class: "visually-hidden", text: "Search assets" }), input);
  }

  // Several accepted patterns: one at a time, so the API filters and pages (it takes one
  // MIME pattern). No `accept`: images or other files, like the library.
  filterField() {
    const options =
      this.patterns.length > 1
        ? this.patterns.map((p) => [p, p])
        : this.patterns.length === 1
          ? null
          : [
              ["", "All types"],
              ["image", "Images"],
              ["file", "Other files"],
            ];
    if (!options) return null;
    const select = h(
      "select",
      { id: uid("picker-type") },
      options.map(([value, text]) => h("option", { value, text, selected: value === this.state.filter })),
    );
    select.addEventListener("change", () => {
      this.state.filter = select.value;
      this.state.page = 1;
      this.load();
    });
    return h("span", { class: "asset-picker-filter" }, h("label", { for: select.id, class: "visually-hidden", text: "Asset type" }), select);
  }

  async offerUpload() {
    let abilities;
    try {
      abilities = await assetAbilities();
    } catch {
      // The list shows why the API is unhappy; without upload the picker still works.
      abilities = { upload: false };
    }
    this.el.dataset.abilities = abilities.upload ? "upload" : "choose";
    if (!abilities.upload || this.settled) return;
    const accept = this.patterns.join(",") || null;
    this.toolbar.append(uploadControl("Upload", (files) => this.upload(files), { accept }));
  }

  async upload(files) {
    this.uploads.replaceChildren();
    const created = await uploadFiles(files, this.uploads);
    if (!created.length) return;
    // The newest come first: back to page one, unfiltered by search, to show them.
    this.state.page = 1;
    this.state.search = "";
    const search = this.el.querySelector("input[type=search]");
    if (search) search.value = "";
    await this.load();
    this.grid.querySelector(`[data-id="${CSS.escape(created[0].id)}"]`)?.focus();
  }

  listQuery() {
    const { search, filter, page } = this.state;
    const q = { search, page, limit: PICKER_PAGE_SIZE };
    if (this.patterns.length === 1) q.mimeType = this.patterns[0];
    else if (this.patterns.length > 1) q.mimeType = filter;
    else if (filter) q.assetType = filter;
    return q;
  }

  async load() {
    const sequence = ++this.sequence;
    this.status.textContent = "Loading…";
    this.el.setAttribute("aria-busy", "true");
    try {
      const { assets, pagination } = await listAssets(this.listQuery());
      if (sequence !== this.sequence) return; // a newer search is on its way
      this.draw(assets, pagination);
    } catch (error) {
      if (sequence !== this.sequence) return;
      render(this.grid);
      this.status.textContent = error.message;
      this.status.classList.add("asset-picker-error");
    } finally {
      if (sequence === this.sequence) this.el.removeAttribute("aria-busy");
    }
  }

  draw(assets, pagination) {
    this.status.classList.remove("asset-picker-error");
    this.status.textContent = assets.length
      ? `${pagination.total} asset${pagination.total === 1 ? "" : "s"}`
      : this.state.search
        ? "No asset matches this search."
        : "No assets yet.";
    render(
      this.grid,
      assets.map((asset) => h("li", {}, this.choice(asset))),
    );
    render(
      this.pages,
      pager(pagination, (page) => {
        this.state.page = page;
        this.load();
      }),
    );
  }

  choice(asset) {
    const usable = accepts(this.patterns, asset.mimeType);
    return h(
      "button",
      {
        type: "button",
        class: "asset-choice",
        dataset: { id: asset.id },
        disabled: !usable,
        title: usable ? null : "This field does not take this type",
        on: { click: () => this.finish(asset) },
      },
      assetThumbnail(asset),
      h("span", { class: "asset-choice-name", text: assetName(asset) }),
      h("span", { class: "asset-choice-meta muted", text: `${typeLabel(asset)} · ${formatBytes(asset.size)}` }),
    );
  }
}
