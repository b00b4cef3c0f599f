// Portable Text under a plain-text edit. A text block is edited as its plain text; each change
// of that text is turned back into its children by the smallest edit (common prefix and
// suffix), so only the spans the edit touches change, and only in their `text`. Every other
// key of a span (marks, `_key`, keys this admin does not know) is kept, as are the block's
// markDefs and inline objects (children that are not spans have no text and are never removed
// by a text edit). The rule: the admin never drops a key it does not understand.

import { h } from "./dom.js";

export function newKey() {
  return crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(36), "");
}

// A span carries text; anything else among the children (an inline object) does not.
export const isSpan = (child) =>
  child !== null && typeof child === "object" && typeof child.text === "string" && (child._type === "span" || child._type === undefined);

export const childrenOf = (block) => (Array.isArray(block?.children) ? block.children : []);

export const plainText = (children) => children.filter(isSpan).map((span) => span.text).join("");

// The smallest edit turning `before` into `after`: `before.slice(start, end)` became
// `inserted`. When several edits are as small (typing "a" into "aa"), `caret` (where the
// cursor stands after the input, the end of what was typed) picks the one the person made.
export function textEdit(before, after, caret) {
  const bound = Math.min(before.length, after.length);
  const suffixBound = Number.isInteger(caret) && caret >= 0 && caret <= after.length ? Math.min(bound, after.length - caret) : bound;
  let suffix = 0;
  while (suffix < suffixBound && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) suffix += 1;
  let start = 0;
  while (start < bound - suffix && before[start] === after[start]) start += 1;
  return { start, end: before.length - suffix, inserted: after.slice(start, after.length - suffix) };
}

// The span that takes the typed text: for a replacement, the span of the first replaced
// character (as word processors do); for an insertion, the span ending at the cursor, so
// text typed after bold text is bold; at the very start, the first span.
function anchorOf(ranges, { start, end }) {
  if (end > start) return ranges.find((r) => r.from <= start && start < r.to);
  return ranges.find((r) => r.from < start && start <= r.to) || ranges.find((r) => r.from === start);
}

// `children` after `edit` (from textEdit over plainText(children)). Untouched children are the
// same objects; a touched span is a copy with its new `text`; a span the edit empties is gone
// unless it is the last one left.
export function applyTextEdit(children, edit) {
  const ranges = [];
  let at = 0;
  children.forEach((child, index) => {
    if (!isSpan(child)) return;
    ranges.push({ index, from: at, to: at + child.text.length });
    at += child.text.length;
  });
  if (!ranges.length) {
    if (!edit.inserted) return children;
    return [...children, { _type: "span", _key: newKey(), text: edit.inserted, marks: [] }];
  }
  const anchor = anchorOf(ranges, edit);
  const EMPTIED = Symbol("emptied");
  const out = children.map((child, index) => {
    const range = ranges.find((r) => r.index === index);
    if (!range) return child;
    const clamp = (n) => Math.max(0, Math.min(child.text.length, n - range.from));
    const text = child.text.slice(0, clamp(edit.start)) + (range === anchor ? edit.inserted : "") + child.text.slice(clamp(edit.end));
    if (text === child.text) return child;
    return text === "" ? { [EMPTIED]: child } : { ...child, text };
  });
  // Everything was deleted: the first span stays, empty, so the block keeps a span to type in.
  if (!out.some(isSpan)) {
    const first = out.findIndex((c) => c?.[EMPTIED]);
    if (first >= 0) out[first] = { ...out[first][EMPTIED], text: "" };
  }
  return out.filter((c) => !c?.[EMPTIED]);
}

// Decorators shown in the formatted view; any other mark is shown by its name in a title.
const DECORATORS = { strong: "strong", em: "em", code: "code", underline: "u", "strike-through": "s", strike: "s" };

// Links only to the web, mail or this site: a stored `javascript:` href, or a protocol-relative
// `//host` one, must not become clickable.
const safeHref = (href) => (typeof href === "string" && /^(https?:|mailto:|\/(?![/\\])|#)/i.test(href.trim()) ? href : null);

// A read-only view of a block's children with their marks, made of elements (never HTML).
export function formattedView(block) {
  const defs = new Map((Array.isArray(block?.markDefs) ? block.markDefs : []).filter((d) => d && typeof d._key === "string").map((d) => [d._key, d]));
  return childrenOf(block).map((child) => {
    if (!isSpan(child)) return h("span", { class: "inline-object", text: `[${child?._type || "object"}]` });
    let node = document.createTextNode(child.text);
    for (const mark of Array.isArray(child.marks) ? child.marks : []) {
      const def = defs.get(mark);
      if (def) {
        const href = def._type === "link" ? safeHref(def.href) : null;
        node = href ? h("a", { href, rel: "noopener noreferrer", target: "_blank" }, node) : h("span", { class: "annotation", title: def._type || "annotation" }, node);
      } else if (DECORATORS[mark]) {
        node = h(DECORATORS[mark], {}, node);
      } else {
        node = h("span", { class: "mark", title: String(mark) }, node);
      }
    }
    return node;
  });
}

// Whether the plain text hides something a reader should see: marks or inline objects.
export const hasFormatting = (block) => childrenOf(block).some((c) => !isSpan(c) || (Array.isArray(c.marks) && c.marks.length > 0));
