// The rich-text editor's page side: a Portable Text block drawn as elements, read back from
// the elements after the browser typed into them, and positions mapped both ways.
//
// A text block is an element per style (`p`, `h1`-`h4`, `blockquote`, a `div` for list items)
// holding one `span[data-key]` per span, its marks nested inside as elements (`strong`, `em`,
// `code`, `u`, `s`, `a` for a link, `span[data-mark]` for any other annotation or mark), and
// an inline object as an uneditable island. Reading a block back keeps each span's key and
// every key this editor does not know; a block whose text and marks did not change is returned
// as the very object it was.

import { h } from "./dom.js";
import { childrenOf, isSpan, newKey, safeHref } from "./portable-text.js";
import { isText, marksOf, tidyChildren } from "./rich-text-model.js";

const DECORATOR_TAGS = { strong: "strong", em: "em", code: "code", underline: "u", "strike-through": "s" };
const TAG_DECORATORS = { STRONG: "strong", B: "strong", EM: "em", I: "em", CODE: "code", U: "underline", S: "strike-through", STRIKE: "strike-through", DEL: "strike-through" };
const STYLE_TAGS = { normal: "p", h1: "h1", h2: "h2", h3: "h3", h4: "h4", h5: "h5", h6: "h6", blockquote: "blockquote" };

// The element of one block. `objectView(block)` draws a block that is not text.
export function drawBlock(block, objectView) {
  if (!isText(block)) {
    return h("div", { class: "rt-object", contenteditable: "false", dataset: { key: block?._key ?? "" } }, objectView(block));
  }
  const style = typeof block.style === "string" ? block.style : "normal";
  const tag = block.listItem ? "div" : STYLE_TAGS[style] || "p";
  const el = h(tag, { class: `rt-block rt-${style.replace(/[^a-z0-9-]/gi, "")}`, dataset: { key: block._key ?? "" } });
  if (block.listItem) {
    el.classList.add("rt-li", `rt-${String(block.listItem).replace(/[^a-z0-9-]/gi, "")}`);
    el.dataset.level = String(Number.isInteger(block.level) ? Math.min(Math.max(block.level, 1), 6) : 1);
    el.dataset.list = String(block.listItem);
  }
  if (!STYLE_TAGS[style] && !block.listItem) el.dataset.style = style;
  const defs = new Map((Array.isArray(block.markDefs) ? block.markDefs : []).filter((d) => d && typeof d._key === "string").map((d) => [d._key, d]));
  childrenOf(block).forEach((child, index) => el.append(drawChild(child, index, defs)));
  // An empty block needs something to hold the caret and give it a line's height, and so does
  // the empty line after a final line break (a `<br>` alone shows none).
  const text = childrenOf(block).filter(isSpan).map((c) => c.text).join("");
  const last = childrenOf(block).at(-1);
  if (!el.textContent || (isSpan(last) && text.endsWith("\n"))) el.append(h("br", { dataset: { filler: "" } }));
  return el;
}

function drawChild(child, index, defs) {
  if (!isSpan(child)) {
    return h("span", { class: "rt-inline", contenteditable: "false", dataset: { inline: String(index) }, text: `[${child?._type || "object"}]` });
  }
  let node = h("span", { dataset: { key: child._key ?? "" } }, textNodes(child.text));
  for (const mark of [...marksOf(child)].reverse()) node = markElement(mark, defs.get(mark), node);
  return node;
}

// "\n" in a span is a line break within its block.
function textNodes(text) {
  const parts = text.split("\n");
  return parts.flatMap((part, i) => (i === 0 ? [part] : [h("br"), part])).filter((p) => p !== "");
}

function markElement(mark, def, inner) {
  if (def) {
    const href = def._type === "link" ? safeHref(def.href) : null;
    const title = def._type === "link" ? def.href : def.reference?._ref ? `Link to document ${def.reference._ref}` : def._type;
    return h(href ? "a" : "span", { class: `rt-annotation rt-${String(def._type).replace(/[^a-z0-9-]/gi, "")}`, href, title: String(title ?? ""), dataset: { mark } }, inner);
  }
  if (DECORATOR_TAGS[mark]) return h(DECORATOR_TAGS[mark], {}, inner);
  return h("span", { class: "rt-mark", title: String(mark), dataset: { mark } }, inner);
}

// Reads a text block back from its element. `original` is the block it was drawn from.
export function readBlock(el, original) {
  const runs = [];
  walk(el, { key: null, marks: [] }, runs);
  // Runs of one span (its text split by a line break) are one span again.
  const merged = [];
  for (const run of runs) {
    const last = merged[merged.length - 1];
    const text = (r) => r.inline === undefined;
    if (last && text(last) && text(run) && last.key === run.key && sameList(last.marks, run.marks)) last.text += run.text;
    else merged.push({ ...run });
  }
  const originals = new Map(childrenOf(original).filter(isSpan).map((c) => [c._key, c]));
  const used = new Set();
  const spans = merged
    .map((run) => (run.inline === undefined ? spanOf(run.key, run.text, run.marks, originals, used) : inlineOf(original, run.inline)))
    .filter(Boolean);
  // All text deleted: the first span stays, empty, keeping its key and marks to type into.
  const firstSpan = childrenOf(original).find(isSpan);
  if (!spans.some(isSpan) && firstSpan) spans.unshift(firstSpan.text === "" ? firstSpan : { ...firstSpan, text: "" });
  const same = spans.length === childrenOf(original).length && spans.every((c, i) => c === childrenOf(original)[i]);
  if (same) return original;
  return { ...original, children: tidyChildren(spans) };
}

// The inline object an island was drawn for (never a span: those are text).
function inlineOf(original, index) {
  const child = childrenOf(original)[index];
  return child && !isSpan(child) ? child : null;
}

const sameList = (a, b) => a.length === b.length && a.every((m, i) => m === b[i]);
const sameSet = (a, b) => a.length === b.length && a.every((m) => b.includes(m));

// The span a run of text becomes: its original when nothing changed, a copy with the new text
// (or marks) when something did, a new span for text that belongs to no span yet.
function spanOf(key, text, marks, originals, used) {
  const original = key && !used.has(key) ? originals.get(key) : null;
  if (!original) return { _type: "span", _key: newKey(), text, marks };
  used.add(key);
  const keepMarks = sameSet(marksOf(original), marks);
  if (keepMarks && original.text === text) return original;
  return { ...original, text, marks: keepMarks ? original.marks : marks };
}

function walk(node, context, runs) {
  for (const child of node.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) {
      if (child.data) runs.push({ key: context.key, marks: context.marks, text: child.data });
    } else if (child.nodeType === Node.ELEMENT_NODE) {
      if (child.tagName === "BR") {
        if (!("filler" in child.dataset)) runs.push({ key: context.key, marks: context.marks, text: "\n" });
      } else if (child.dataset.inline !== undefined) {
        runs.push({ inline: Number(child.dataset.inline) });
      } else {
        walk(child, contextOf(child, context), runs);
      }
    }
  }
}

function contextOf(el, context) {
  let { key, marks } = context;
  if (el.tagName === "SPAN" && el.dataset.key !== undefined && !el.dataset.mark) key = el.dataset.key;
  const mark = el.dataset.mark || TAG_DECORATORS[el.tagName];
  if (mark && !marks.includes(mark)) marks = [...marks, mark];
  return { key, marks };
}

// Positions: a character offset within a block element.

// The length a node takes in its block: text, a line break, an inline object (one each).
function unitLength(node) {
  if (node.nodeType === Node.TEXT_NODE) return node.data.length;
  if (node.nodeType !== Node.ELEMENT_NODE) return 0;
  if (node.tagName === "BR") return "filler" in node.dataset ? 0 : 1;
  if (node.dataset.inline !== undefined) return 1;
  let n = 0;
  for (const child of node.childNodes) n += unitLength(child);
  return n;
}

// The offset of the page position (node, offset) inside `blockEl`.
export function offsetIn(blockEl, node, offset) {
  // Inside an inline object: just after it.
  const island = node.nodeType === Node.ELEMENT_NODE ? node.closest?.("[data-inline]") : node.parentElement?.closest("[data-inline]");
  if (island && blockEl.contains(island)) return offsetIn(blockEl, island.parentNode, [...island.parentNode.childNodes].indexOf(island) + 1);
  let count = 0;
  const visit = (n) => {
    if (n === node) {
      if (n.nodeType === Node.TEXT_NODE) count += Math.min(offset, n.data.length);
      else [...n.childNodes].slice(0, offset).forEach((c) => (count += unitLength(c)));
      return true;
    }
    if (n.nodeType === Node.ELEMENT_NODE && (n.tagName === "BR" || n.dataset.inline !== undefined)) {
      count += unitLength(n);
      return false;
    }
    if (n.nodeType === Node.TEXT_NODE) {
      count += n.data.length;
      return false;
    }
    for (const c of n.childNodes) if (visit(c)) return true;
    return false;
  };
  if (node === blockEl) {
    [...blockEl.childNodes].slice(0, offset).forEach((c) => (count += unitLength(c)));
    return count;
  }
  for (const c of blockEl.childNodes) if (visit(c)) return count;
  return count;
}

// The page position of `offset` in `blockEl`: inside the text node holding it, at the end of
// the earlier one where two meet (so typing continues the text before the caret).
export function pointAt(blockEl, offset) {
  let left = offset;
  let found = null;
  const visit = (n) => {
    if (found) return;
    if (n.nodeType === Node.TEXT_NODE) {
      if (left <= n.data.length) found = [n, left];
      else left -= n.data.length;
      return;
    }
    if (n.nodeType !== Node.ELEMENT_NODE) return;
    if (n.tagName === "BR" || n.dataset.inline !== undefined) {
      const len = unitLength(n);
      const index = [...n.parentNode.childNodes].indexOf(n);
      if (left === 0) found = [n.parentNode, index];
      else if (left <= len && len) {
        left -= len;
        if (left === 0 && !n.nextSibling) found = [n.parentNode, index + 1];
      } else left -= len;
      return;
    }
    for (const c of n.childNodes) visit(c);
  };
  for (const c of blockEl.childNodes) visit(c);
  return found || [blockEl, blockEl.childNodes.length && blockEl.lastChild.dataset?.filler !== undefined ? blockEl.childNodes.length - 1 : blockEl.childNodes.length];
}
