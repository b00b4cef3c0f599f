// The editor of `block` fields: Portable Text as a list of text blocks, each with a style
// (paragraph, headings, quote) and its text. Editing the text changes only the text of the
// spans the edit touches (portable-text.js): marks, markDefs, list keys, inline objects and
// keys this admin does not know stay as stored, and a block nobody edits is returned as the
// very object it was. Blocks of other types (images, callouts, embeds from other editors) are
// shown as a placeholder naming their type, kept as they are, and can be moved or removed.

import { h, uid } from "./dom.js";
import { applyTextEdit, childrenOf, formattedView, hasFormatting, newKey, plainText, textEdit } from "./portable-text.js";

// Moves `item` (`{ li }`) by `by` places in `items` and in the page; false at either end. The
// block editor and the array editor (fields.js) reorder their items alike.
export function moveItem(items, item, by) {
  const i = items.indexOf(item);
  const j = i + by;
  if (j < 0 || j >= items.length) return false;
  items.splice(i, 1);
  items.splice(j, 0, item);
  if (by < 0) items[j + 1].li.before(item.li);
  else items[j - 1].li.after(item.li);
  return true;
}

const STYLES = [
  ["normal", "Paragraph"],
  ["h1", "Heading 1"],
  ["h2", "Heading 2"],
  ["h3", "Heading 3"],
  ["h4", "Heading 4"],
  ["blockquote", "Quote"],
];

export function textBlock(style, text) {
  return { _type: "block", _key: newKey(), style, children: [{ _type: "span", _key: newKey(), text, marks: [] }], markDefs: [] };
}

// `group(label, options, ...children)` builds the fieldset the form uses for composite fields,
// so a block field shows messages the same way as the others.
export function createBlockEditor({ label, required, readOnly, group }) {
  const list = h("ol", { class: "blocks" });
  const adders = readOnly
    ? null
    : h(
        "div",
        { class: "actions" },
        h("button", { type: "button", text: `Add paragraph to ${label}`, on: { click: () => add(textBlock("normal", ""), true) } }),
        h("button", { type: "button", text: `Add heading to ${label}`, on: { click: () => add(textBlock("h2", ""), true) } }),
      );
  const el = group(label, { required, className: "block-field" }, list, adders);
  let items = [];

  const changed = () => el.dispatchEvent(new Event("change", { bubbles: true }));
  const relabel = () =>
    items.forEach((item, i) => {
      item.number(i + 1);
      if (item.up) item.up.disabled = i === 0;
      if (item.down) item.down.disabled = i === items.length - 1;
    });
  const move = (item, by) => {
    if (!moveItem(items, item, by)) return;
    relabel();
    (by < 0 ? item.up : item.down).focus();
    changed();
  };
  const remove = (item) => {
    const i = items.indexOf(item);
    items.splice(i, 1);
    item.li.remove();
    relabel();
    (items[i] || items[i - 1])?.focusTarget.focus();
    changed();
  };
  const add = (block, fresh) => {
    const item = block?._type === "block" ? textItem(block, readOnly) : otherItem(block);
    if (!readOnly) {
      item.up = h("button", { type: "button", class: "small", text: "Move up", on: { click: () => move(item, -1) } });
      item.down = h("button", { type: "button", class: "small", text: "Move down", on: { click: () => move(item, 1) } });
      item.removeButton = h("button", { type: "button", class: "small", text: "Remove", on: { click: () => remove(item) } });
      item.li.append(h("div", { class: "actions item-actions" }, item.up, item.down, item.removeButton));
    }
    const setNumber = item.number;
    item.number = (n) => {
      const name = `${label} block ${n}`;
      setNumber(name);
      item.up?.setAttribute("aria-label", `Move ${name} up`);
      item.down?.setAttribute("aria-label", `Move ${name} down`);
      item.removeButton?.setAttribute("aria-label", `Remove ${name}`);
    };
    items.push(item);
    list.append(item.li);
    relabel();
    if (fresh) {
      item.focusTarget.focus();
      changed();
    }
  };

  return {
    el,
    get() {
      const blocks = items.map((item) => item.get()).filter(Boolean);
      return blocks.length ? blocks : undefined;
    },
    set(value) {
      items.forEach((item) => item.li.remove());
      items = [];
      (Array.isArray(value) ? value : []).forEach((block) => add(block, false));
    },
    locate(path) {
      const item = typeof path[0] === "number" ? items[path[0]] : null;
      return item ? item.li : el;
    },
  };
}

function textItem(block, readOnly) {
  const styleId = uid("blk");
  const textId = uid("blk");
  const styleLabel = h("label", { for: styleId });
  const textLabel = h("label", { for: textId });
  const stored = block.style || "normal";
  const style = h(
    "select",
    { id: styleId, disabled: readOnly },
    STYLES.map(([value, text]) => h("option", { value, text })),
  );
  if (!STYLES.some(([v]) => v === stored)) style.append(h("option", { value: stored, text: stored }));
  style.value = stored;
  const original = childrenOf(block);
  let children = original;
  const text = h("textarea", { id: textId, rows: 2, readOnly, class: "block-text" });
  text.value = plainText(children);
  // A textarea turns "\r\n" and "\r" into "\n": such text would change by being shown, so
  // it is not editable here (the style, the place and removal still are).
  const faithful = text.value === plainText(children);
  text.readOnly = readOnly || !faithful;
  const why = faithful ? null : h("p", { class: "hint", text: "Not editable here: its text holds carriage returns this editor would change." });
  // Marks and inline objects are not in the plain text: a read-only view shows them.
  const view = h("div", { class: "block-formatted", role: "note" });
  const drawView = () => {
    view.hidden = !hasFormatting({ ...block, children });
    if (!view.hidden) view.replaceChildren(...formattedView({ ...block, children }));
  };
  text.addEventListener("input", () => {
    children = applyTextEdit(children, textEdit(plainText(children), text.value, text.selectionEnd));
    drawView();
  });
  drawView();
  const syncStyle = () => (text.dataset.style = style.value);
  style.addEventListener("change", syncStyle);
  syncStyle();
  const list = listNote(block);
  const li = h(
    "li",
    { class: "block-item" },
    h("p", { class: "field-error", hidden: true, role: "alert" }),
    h("div", { class: "block-style field" }, styleLabel, style, list),
    h("div", { class: "block-body field" }, textLabel, text, why, view),
  );
  return {
    li,
    focusTarget: text,
    number(name) {
      styleLabel.textContent = `${name} style`;
      textLabel.textContent = name;
      view.setAttribute("aria-label", `Formatting of ${name}`);
    },
    get() {
      let out = block;
      if (children !== original) out = { ...out, children };
      if (style.value !== stored) out = { ...out, style: style.value };
      return out;
    },
  };
}

// A list item's kind and depth, shown as stored (lists are kept, not edited, here).
function listNote(block) {
  if (typeof block.listItem !== "string") return null;
  const level = Number.isInteger(block.level) ? `, level ${block.level}` : "";
  return h("p", { class: "hint", text: `${block.listItem} list item${level}` });
}

function otherItem(block) {
  const name = h("span");
  const li = h("li", { class: "block-item other", tabindex: "-1" }, h("p", { class: "field-error", hidden: true, role: "alert" }), name);
  return {
    li,
    focusTarget: li,
    number(label) {
      name.textContent = `${label}: ${block?._type || "unknown"} block, not editable here (kept as stored)`;
    },
    get: () => block,
  };
}
