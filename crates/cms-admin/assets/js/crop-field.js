// An image field's own crop (SPEC.md's image value, Sanity's shape): `crop` `{ top, bottom,
// left, right }`, the fraction of the picture cut off each side, which the URLs the API builds
// for the field apply as `rect` (CONTRACT.md section 18). Edited on the picture, a rectangle
// whose edges, corners and middle are dragged with a pointer, or with four percent inputs
// (their arrow keys step it) for the keyboard; three shapes show what each crop of the
// cropped picture keeps, around the field's focal point, as the server cuts it. Nothing is
// saved until the document is.

import { h } from "./dom.js";
import { showMessage, wrap } from "./field-markup.js";
import { imageUrl } from "./asset-picker.js";

const SIDES = [
  ["top", "Crop top"],
  ["right", "Crop right"],
  ["bottom", "Crop bottom"],
  ["left", "Crop left"],
];
// What a drag always leaves of the picture, across and down.
const MIN_KEPT = 0.05;
// The shapes drawn beside the picture: name, width, height (CSS pixels).
const SHAPES = [
  ["16:9", 160, 90],
  ["1:1", 96, 96],
  ["4:5", 96, 120],
];
// The handles: which sides each one moves ("move" moves the whole rectangle).
const HANDLES = {
  n: ["top"],
  s: ["bottom"],
  e: ["right"],
  w: ["left"],
  ne: ["top", "right"],
  nw: ["top", "left"],
  se: ["bottom", "right"],
  sw: ["bottom", "left"],
};

const NONE = { top: 0, right: 0, bottom: 0, left: 0 };
const round = (v) => Math.round(v * 10000) / 10000;
const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const percent = (v) => `${Math.round(v * 1000) / 10}`;

// A stored crop read as four sides (a missing side cuts nothing); null when it is not one.
export function readCrop(value) {
  if (!value || typeof value !== "object") return null;
  const out = {};
  for (const [side] of SIDES) {
    const v = value[side] ?? 0;
    if (typeof v !== "number" || !(v >= 0 && v < 1)) return null;
    out[side] = v;
  }
  return out;
}

// Why four sides cannot be a crop, or null when they can: each a fraction below one, and
// something left across and down.
export function cropProblem(crop) {
  if (crop.left + crop.right >= 1) return ["left", "Crop left and right together must stay under 100%."];
  if (crop.top + crop.bottom >= 1) return ["top", "Crop top and bottom together must stay under 100%."];
  return null;
}

// Where a `boxW` by `boxH` crop of the picture (`width` by `height` pixels, cut to `crop`)
// falls, as the server renders `rect` then `fit=crop`: the cut scaled to cover the box, the
// box centred on the focal point (a fraction of the whole picture) and kept inside the cut.
// Answers the whole picture's drawn size and offset in the box, in CSS pixels.
export function cropPlacement({ width, height }, crop, focal, boxW, boxH) {
  const cutW = (1 - crop.left - crop.right) * width;
  const cutH = (1 - crop.top - crop.bottom) * height;
  const scale = Math.max(boxW / cutW, boxH / cutH);
  const seenW = boxW / scale;
  const seenH = boxH / scale;
  const x = clamp(focal.x * width - seenW / 2, crop.left * width, (1 - crop.right) * width - seenW);
  const y = clamp(focal.y * height - seenH / 2, crop.top * height, (1 - crop.bottom) * height - seenH);
  return { width: width * scale, height: height * scale, left: -x * scale, top: -y * scale };
}

// The panel. `value()` is the field's stored crop, `focal()` the point crops keep in view;
// `onChange(crop | null)` hears every valid change (null: no crop), `onProblem(message |
// null)` whether the inputs hold a crop that cannot be.
export function cropEditor(asset, { value, focal, onChange, onProblem }) {
  let crop = readCrop(value()) || { ...NONE };
  const src = imageUrl(asset, 400, 400);
  const picture = h("img", { src, alt: "", class: "crop-picture", draggable: "false" });
  const handles = Object.keys(HANDLES).map((key) => h("span", { class: "crop-handle", dataset: { handle: key } }));
  const box = h("div", { class: "crop-box", dataset: { handle: "move" } }, handles);
  const frame = h("div", { class: "crop-frame", "aria-hidden": "true" }, picture, box);
  const inputs = {};
  const fields = SIDES.map(([side, label]) => {
    const input = h("input", { type: "number", min: "0", max: "99", step: "1", inputmode: "decimal", dataset: { side } });
    inputs[side] = input;
    input.addEventListener("input", (event) => {
      event.stopPropagation();
      typed();
    });
    input.addEventListener("change", (event) => event.stopPropagation());
    return wrap(label, input, { hint: "Percent cut off" });
  });
  const shapes = SHAPES.map(([name, w, hgt]) => {
    const img = h("img", { src, alt: "", class: "crop-shape-picture" });
    const view = h("div", { class: "crop-shape-view", dataset: { shape: name } }, img);
    return { w, hgt, img, view, figure: h("figure", { class: "crop-shape" }, view, h("figcaption", { text: name })) };
  });

  // The picture's size as shown: the asset's, else the loaded derivative's (same shape).
  const size = () => {
    const width = Number(asset.width) || picture.naturalWidth;
    const height = Number(asset.height) || picture.naturalHeight;
    return width > 0 && height > 0 ? { width, height } : null;
  };
  const drawShapes = () => {
    const dims = size();
    if (!dims) return;
    const point = focal() || { x: 0.5, y: 0.5 };
    for (const s of shapes) {
      const at = cropPlacement(dims, crop, point, s.w, s.hgt);
      Object.assign(s.img.style, { width: `${at.width}px`, height: `${at.height}px`, left: `${at.left}px`, top: `${at.top}px` });
    }
  };
  const draw = ({ fillInputs = true } = {}) => {
    Object.assign(box.style, { top: `${crop.top * 100}%`, right: `${crop.right * 100}%`, bottom: `${crop.bottom * 100}%`, left: `${crop.left * 100}%` });
    if (fillInputs) for (const [side] of SIDES) inputs[side].value = percent(crop[side]);
    drawShapes();
  };
  // The side a problem is shown at, while there is one.
  let problemSide = null;
  const problem = (side, message) => {
    problemSide = side;
    for (const [s] of SIDES) showMessage(inputs[s].closest(".field"), s === side ? message : null);
    onProblem(message);
  };
  // A valid crop from the pointer, the inputs or Reset: drawn and reported.
  const apply = (next, options) => {
    crop = { top: round(next.top), right: round(next.right), bottom: round(next.bottom), left: round(next.left) };
    problem(null, null);
    draw(options);
    onChange(SIDES.some(([side]) => crop[side] > 0) ? { ...crop } : null);
  };
  const typed = () => {
    const next = {};
    for (const [side, label] of SIDES) {
      const text = inputs[side].value.trim();
      const v = text === "" ? 0 : Number(text);
      if (!Number.isFinite(v) || v < 0 || v >= 100) return problem(side, `${label} must be a percentage from 0 to under 100.`);
      next[side] = v / 100;
    }
    const wrong = cropProblem(next);
    if (wrong) return problem(wrong[0], wrong[1]);
    apply(next, { fillInputs: false });
  };

  // Dragging: a handle moves its sides, the rectangle itself moves whole; the point is read
  // inside the frame's border, as a fraction of the picture.
  let drag = null;
  const pointAt = (event) => {
    const rect = frame.getBoundingClientRect();
    return { x: (event.clientX - rect.left - frame.clientLeft) / frame.clientWidth, y: (event.clientY - rect.top - frame.clientTop) / frame.clientHeight };
  };
  frame.addEventListener("pointerdown", (event) => {
    const handle = event.target.closest("[data-handle]")?.dataset.handle;
    if (!handle || event.button !== 0) return;
    event.preventDefault();
    try {
      // Moves outside the frame still reach it while the button is down.
      frame.setPointerCapture(event.pointerId);
    } catch {
      // A pointer the browser does not track (a synthetic event): moves over the frame do.
    }
    drag = { handle, from: pointAt(event), start: { ...crop } };
  });
  frame.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const p = pointAt(event);
    const s = drag.start;
    const next = { ...s };
    if (drag.handle === "move") {
      const across = s.left + s.right;
      const down = s.top + s.bottom;
      next.left = clamp(s.left + p.x - drag.from.x, 0, across);
      next.right = across - next.left;
      next.top = clamp(s.top + p.y - drag.from.y, 0, down);
      next.bottom = down - next.top;
    } else {
      for (const side of HANDLES[drag.handle]) {
        if (side === "top") next.top = clamp(p.y, 0, 1 - s.bottom - MIN_KEPT);
        if (side === "bottom") next.bottom = clamp(1 - p.y, 0, 1 - s.top - MIN_KEPT);
        if (side === "left") next.left = clamp(p.x, 0, 1 - s.right - MIN_KEPT);
        if (side === "right") next.right = clamp(1 - p.x, 0, 1 - s.left - MIN_KEPT);
      }
    }
    apply(next);
  });
  const stop = () => (drag = null);
  frame.addEventListener("pointerup", stop);
  frame.addEventListener("pointercancel", stop);
  picture.addEventListener("load", drawShapes);

  const reset = h("button", { type: "button", text: "Reset crop", on: { click: () => apply(NONE) } });
  draw();
  return {
    el: h(
      "div",
      { class: "crop-editor" },
      h("p", { class: "muted", text: "Drag the edges or corners of the rectangle, or type how much to cut off each side." }),
      h("div", { class: "crop-workspace" }, frame, h("div", { class: "crop-shapes" }, shapes.map((s) => s.figure))),
      h("div", { class: "crop-inputs" }, fields),
      h("div", { class: "actions" }, reset),
    ),
    // The focal point moved: the shapes follow.
    refocus: drawShapes,
    // The wrapper of the input the problem is about.
    locate: () => inputs[problemSide || "top"].closest(".field"),
  };
}

// The summary line of a closed panel.
export function describeCrop(value) {
  const crop = readCrop(value);
  if (!crop || !SIDES.some(([side]) => crop[side] > 0)) return "Not cropped: the whole picture is used.";
  return `Cropped: top ${percent(crop.top)}%, right ${percent(crop.right)}%, bottom ${percent(crop.bottom)}%, left ${percent(crop.left)}%.`;
}
