// The focal point of an image asset (CONTRACT.md section 18): the point crops keep in view
// when a frontend asks for `fit=crop` without its own. Chosen by clicking the picture or with
// the arrow keys on the marker; three crops of common shapes follow it live (each asks for its
// focal point in the URL, so nothing is saved until "Save focal point").

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

// The section, or null when the asset is no image the server crops, or the person may not
// change it. `onSaved` receives the asset as the API answers it.
export function focalPointSection(asset, mayEdit, onSaved) {
  if (!mayEdit || asset.assetType !== "image" || imageUrl(asset, 1, 1) === asset.url) return null;
  let point = asset.hotspot ? { ...asset.hotspot } : { x: 0.5, y: 0.5 };
  const marker = h("button", { type: "button", class: "focal-marker" });
  const picture = h("img", { src: imageUrl(asset, 400, 400), alt: "", class: "focal-picture", draggable: "false" });
  const frame = h("div", { class: "focal-frame" }, picture, marker);
  const crops = SHAPES.map(([name, w, hgt]) => {
    const img = h("img", { alt: "", width: w, height: hgt, class: "focal-crop", dataset: { shape: name } });
    return { name, w, hgt, img, figure: h("figure", { class: "focal-shape" }, img, h("figcaption", { text: name })) };
  });
  const state = h("p", { class: "muted focal-state" });

  const show = () => {
    marker.style.left = percent(point.x);
    marker.style.top = percent(point.y);
    marker.setAttribute("aria-label", `Focal point at ${percent(point.x)} across, ${percent(point.y)} down. Arrow keys move it.`);
    for (const c of crops) {
      const params = new URLSearchParams({ "fp-x": point.x.toFixed(4), "fp-y": point.y.toFixed(4) });
      c.img.src = `${imageUrl(asset, c.w, c.hgt, "crop")}&${params}`;
    }
    state.textContent = asset.hotspot
      ? `Saved focal point: ${percent(asset.hotspot.x)} across, ${percent(asset.hotspot.y)} down.`
      : "No focal point saved: crops keep the middle.";
  };
  const moveTo = (x, y) => {
    point = { x: round(x), y: round(y) };
    show();
  };
  picture.addEventListener("click", (event) => {
    // Inside the border: the picture's own pixels.
    const box = picture.getBoundingClientRect();
    const x = (event.clientX - box.left - picture.clientLeft) / picture.clientWidth;
    const y = (event.clientY - box.top - picture.clientTop) / picture.clientHeight;
    moveTo(x, y);
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

  const save = async (hotspot, message) => {
    try {
      asset = await data(patch(`/api/assets/${seg(asset.id)}`, { hotspot }));
      onSaved(asset);
      if (!hotspot) point = { x: 0.5, y: 0.5 };
      show();
      notify(message, "success");
    } catch (error) {
      notify(error.message, "error");
    }
  };
  const saveButton = h("button", { type: "button", class: "primary", text: "Save focal point", on: { click: () => save(point, "Focal point saved.") } });
  const clearButton = h("button", { type: "button", text: "Clear", on: { click: () => save(null, "Focal point cleared.") } });
  show();
  return h(
    "section",
    { class: "asset-focal", "aria-labelledby": "asset-focal" },
    h("h2", { id: "asset-focal", text: "Focal point" }),
    h("p", { class: "muted", text: "Crops keep this point in view. Click the picture, or move the marker with the arrow keys." }),
    h("div", { class: "focal-editor" }, frame, h("div", { class: "focal-shapes" }, crops.map((c) => c.figure))),
    state,
    h("div", { class: "actions" }, saveButton, clearButton),
  );
}
