// The editor of an image or file field: the chosen asset with its preview, an upload, or a
// choice from the library.

import { get, post, data, seg } from "./api.js";
import { h, notify } from "./dom.js";
import { changed, group, showMessage, wrap } from "./field-markup.js";
import { thumbnailAttrs } from "./asset-picker.js";
import { croppable, focalPicker } from "./focal-point.js";
import { cropEditor, describeCrop } from "./crop-field.js";
import { FormError } from "./fields.js";

async function assetById(id) {
  return data(get(`/api/assets/${seg(id)}`));
}

export function assetEditor(f, options) {
  const image = f.type === "image";
  const accept = (f.accept || []).join(",") || (image ? "image/*" : "");
  const file = h("input", { type: "file", name: f.name, accept: accept || null });
  const preview = h("div", { class: "doc-asset-preview" });
  const alt = h("input", { type: "text", name: `${f.name}.alt` });
  const status = h("p", { class: "muted", role: "status" });
  const uploadField = wrap(`Upload ${options.label}`, file);
  const altField = image ? wrap(`Alt text for ${options.label}`, alt, { hint: "Describes the image for people who cannot see it." }) : null;
  const library = h("button", { type: "button", text: "Choose from library", on: { click: () => fromLibrary() } });
  const remove = h("button", { type: "button", text: "Remove", "aria-label": `Remove ${options.label}`, on: { click: () => setAsset(null) } });
  const el = group(
    options.label,
    { required: f.required, className: "doc-asset-field" },
    preview,
    options.readOnly ? null : uploadField,
    options.readOnly ? null : h("div", { class: "actions" }, library, remove),
    status,
    altField,
  );
  if (options.readOnly) alt.readOnly = true;
  let ref = null;
  let extra = {};
  let focalOpen = false;
  let cropOpen = false;
  // The crop panel while it is built, and what its inputs hold that cannot be a crop.
  let cropper = null;
  let cropIssue = null;

  const drawPreview = (asset) => {
    preview.replaceChildren();
    remove.hidden = !ref;
    if (!ref) return preview.append(h("span", { class: "muted", text: "No file" }));
    if (!asset) return preview.append(h("span", { class: "muted", text: "Loading…" }));
    if (image && asset.url) preview.append(h("img", { ...thumbnailAttrs(asset, 192, 144), alt: alt.value || asset.alt || "", class: "doc-asset-thumb" }));
    preview.append(h("a", { href: asset.url, target: "_blank", rel: "noopener", text: asset.filename || asset.id }));
    cropper = null;
    cropIssue = null;
    if (image && !options.readOnly && croppable(asset)) preview.append(focalForThisUse(asset), cropForThisUse(asset));
  };
  // The point crops keep in view: the field's own, else the asset's.
  const focalPoint = (asset) => {
    const own = extra.hotspot;
    return typeof own?.x === "number" && typeof own?.y === "number" ? own : asset.hotspot;
  };
  // The field's own crop (js/crop-field.js), built when opened like the focal point.
  const cropForThisUse = (asset) => {
    const state = h("p", { class: "muted crop-state" }, describeCrop(extra.crop));
    const details = h("details", { class: "doc-asset-crop", open: cropOpen }, h("summary", { text: "Crop for this use" }), state);
    details.addEventListener("toggle", () => {
      cropOpen = details.open;
      if (!details.open || cropper) return;
      cropper = cropEditor(asset, {
        value: () => extra.crop,
        focal: () => focalPoint(asset),
        onChange: (crop) => {
          const { crop: _old, ...rest } = extra;
          extra = crop ? { ...rest, crop } : rest;
          state.textContent = describeCrop(extra.crop);
          changed(el);
        },
        onProblem: (message) => {
          cropIssue = message;
          changed(el);
        },
      });
      details.append(cropper.el);
    });
    return details;
  };
  // The field's own focal point (`hotspot`, as Sanity stores it), over the asset's for this
  // use only. The picker is built when opened: closed, it costs no image requests.
  const focalForThisUse = (asset) => {
    const state = h("p", { class: "muted focal-state" });
    const describe = () => {
      const own = extra.hotspot;
      state.textContent =
        typeof own?.x === "number" && typeof own?.y === "number"
          ? `Set for this use: ${Math.round(own.x * 100)}% across, ${Math.round(own.y * 100)}% down.`
          : "Follows the asset's focal point.";
    };
    // Open again after a save redraws the field, if it was open.
    const details = h("details", { class: "doc-asset-focal", open: focalOpen }, h("summary", { text: "Focal point for this use" }), state);
    let picker = null;
    details.addEventListener("toggle", () => {
      focalOpen = details.open;
      if (!details.open || picker) return;
      picker = focalPicker(asset, focalPoint(asset), (point) => {
        extra = { ...extra, hotspot: { ...(extra.hotspot || {}), x: point.x, y: point.y } };
        describe();
        cropper?.refocus();
        changed(el);
      });
      const follow = h("button", {
        type: "button",
        text: "Use the asset's focal point",
        on: {
          click: () => {
            const { hotspot: _dropped, ...rest } = extra;
            extra = rest;
            picker.reset(asset.hotspot);
            describe();
            cropper?.refocus();
            changed(el);
          },
        },
      });
      details.append(picker.el, h("div", { class: "actions" }, follow));
    });
    describe();
    return details;
  };
  const setAsset = (asset) => {
    // Another asset: the old one's focal point and crop say nothing of it.
    if ((asset ? asset.id : null) !== ref) {
      const { hotspot: _h, crop: _c, ...rest } = extra;
      extra = rest;
    }
    ref = asset ? asset.id : null;
    if (asset && image && !alt.value && asset.alt) alt.value = asset.alt;
    drawPreview(asset);
    changed(el);
  };
  file.addEventListener("change", async (event) => {
    event.stopPropagation();
    const chosen = file.files?.[0];
    if (!chosen) return;
    const form = new FormData();
    form.append("file", chosen);
    status.textContent = `Uploading ${chosen.name}…`;
    try {
      const asset = await data(post("/api/assets", form));
      status.textContent = `Uploaded ${asset.filename || chosen.name}.`;
      setAsset(asset);
    } catch (error) {
      status.textContent = "";
      showMessage(el, error.message);
    }
    file.value = "";
  });
  const fromLibrary = async () => {
    try {
      const picker = await import("./asset-picker.js");
      if (typeof picker.pickAsset !== "function") throw new Error("The asset library is not available.");
      const asset = await picker.pickAsset({ accept, title: `Choose ${options.label}` });
      if (asset) setAsset(asset);
    } catch (error) {
      notify(error.message, "error");
    }
  };
  return {
    el,
    get() {
      if (!ref) return undefined;
      if (cropIssue) throw new FormError([{ path: "crop", code: "crop", message: cropIssue }]);
      const out = { ...extra, asset: { _ref: ref } };
      if (image) {
        if (alt.value) out.alt = alt.value;
        else delete out.alt;
      }
      return out;
    },
    set(v) {
      const { asset, alt: altText, ...rest } = v && typeof v === "object" ? v : {};
      extra = rest;
      ref = typeof asset?._ref === "string" ? asset._ref : null;
      alt.value = typeof altText === "string" ? altText : "";
      drawPreview(null);
      if (ref) {
        const id = ref;
        assetById(id)
          .then((a) => ref === id && drawPreview(a))
          .catch(() => ref === id && preview.replaceChildren(h("span", { class: "muted", text: `File ${id} is not available.` })));
      }
    },
    locate: (path) => {
      if (path[0] === "alt" && altField) return altField;
      if (path[0] === "crop" && cropper) return cropper.locate();
      return el;
    },
  };
}
