// Focal points of images (CONTRACT.md section 18): the point crops keep in view. An asset has
// a default one, edited on its page; an image field may set its own for that use, edited in the
// document. Both are chosen with the same picker: a click on the picture, or the arrow keys on
// the marker, with three crops of common shapes following live (each names the point in its
// URL, so nothing is saved until the person saves).

import { patch, data, seg } from "./api.js";
import { h, notify } from "./dom.js";
import { imageUrl } from "./asset-picker.js";

// The shapes shown beside the picture: name, width, height (CSS pixels).
const SHAPES = [
  ["Square", 120, 120],
  ["Wide 16:9", 192, 108],
  ["Tall 4:5", 96, 120],
];
// One arrow key press moves the point this far (Shift: ten times finer).
const STEP = 0.05;

const round = (v) => Math.round(Math.min(1, Math.max(0, v)) * 10000) / 10000;
const percent = (v) => `${Math.round(v * 100)}%`;

// Whether the server crops this asset (a raster image it decodes).
export function croppable(asset) {
  return asset?.assetType === "image" && imageUrl(asset, 1, 1) !== asset.url;
}

// The picture with its marker and the three crops. `onMove(point)` hears every move.
export function focalPicker(asset, start, onMove = () => {}) {
  let point = start ? { x: start.x, y: start.y } : { x: 0.5, y: 0.5 };
  const marker = h("button", { type: "button", class: "focal-marker" });
  const picture = h("img", { src: imageUrl(asset, 400, 400), alt: "", class: "focal-picture", draggable: "false" });
  const crops = SHAPES.map(([name, w, hgt]) => {
    const img = h("img", { alt: "", width: w, height: hgt, class: "focal-crop", dataset: { shape: name } });
    return { w, hgt, img, figure: h("figure", { class: "focal-shape" }, img, h("figcaption", { text: name })) };
  });
  const show = () => {
    marker.style.left = percent(point.x);
    marker.style.top = percent(point.y);
    marker.setAttribute("aria-label", `Focal point at ${percent(point.x)} across, ${percent(point.y)} down. Arrow keys move it.`);
    const params = new URLSearchParams({ "fp-x": point.x.toFixed(4), "fp-y": point.y.toFixed(4) });
    for (const c of crops) c.img.src = `${imageUrl(asset, c.w, c.hgt, "crop")}&${params}`;
  };
  const moveTo = (x, y) => {
    point = { x: round(x), y: round(y) };
    show();
    onMove(point);
  };
  picture.addEventListener("click", (event) => {
    // Inside the border: the picture's own pixels.
    const box = picture.getBoundingClientRect();
    moveTo((event.clientX - box.left - picture.clientLeft) / picture.clientWidth, (event.clientY - box.top - picture.clientTop) / picture.clientHeight);
    marker.focus();
  });
  marker.addEventListener("keydown", (event) => {
    const step = event.shiftKey ? STEP / 10 : STEP;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    moveTo(point.x + move[0], point.y + move[1]);
  });
  show();
  return {
    el: h("div", { class: "focal-editor" }, h("div", { class: "focal-frame" }, picture, marker), h("div", { class: "focal-shapes" }, crops.map((c) => c.figure))),
    get point() {
      return point;
    },
    reset(to) {
      point = to ? { x: to.x, y: to.y } : { x: 0.5, y: 0.5 };
      show();
    },
  };
}

// The asset page's section, or null when the asset is no image the server crops, or the
// person may not change it. `onSaved` receives the asset as the API answers it.
export function focalPointSection(asset, mayEdit, onSaved) {
  if (!mayEdit || !croppable(asset)) return null;
  const picker = focalPicker(asset, asset.hotspot);
  const state = h("p", { class: "muted focal-state" });
  const describe = () => {
    state.textContent = asset.hotspot
      ? `Saved focal point: ${percent(asset.hotspot.x)} across, ${percent(asset.hotspot.y)} down.`
      : "No focal point saved: crops keep the middle.";
  };
  const save = async (hotspot, message) => {
    try {
      asset = await data(patch(`/api/assets/${seg(asset.id)}`, { hotspot }));
      onSaved(asset);
      picker.reset(asset.hotspot);
      describe();
      notify(message, "success");
    } catch (error) {
      notify(error.message, "error");
    }
  };
  describe();
  return h(
    "section",
    { class: "asset-focal", "aria-labelledby": "asset-focal" },
    h("h2", { id: "asset-focal", text: "Focal point" }),
    h("p", { class: "muted", text: "Crops keep this point in view. Click the picture, or move the marker with the arrow keys." }),
    picker.el,
    state,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "primary", text: "Save focal point", on: { click: () => save(picker.point, "Focal point saved.") } }),
      h("button", { type: "button", text: "Clear", on: { click: () => save(null, "Focal point cleared.") } }),
    ),
  );
}
