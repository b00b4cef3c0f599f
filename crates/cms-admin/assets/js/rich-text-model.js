// The rich-text editor's model: Portable Text blocks and pure functions over them. A position
// is `{ b, o }`: block index and character offset in that block, where a span counts its text
// and an inline object (a child that is not a span) counts one. Every function returns new
// arrays and objects for what it changes and the very same objects for what it does not, so
// a block nobody touched is saved exactly as it was stored, unknown keys included.

import { childrenOf, isSpan, madeHere, newKey } from "./portable-text.js";

export const isText = (block) => block?._type === "block";

// The styles, decorators and lists the editor offers: Portable Text's defaults (a `block`
// field declares none of its own; docs/DECISIONS.md "The rich-text editor").
export const STYLES = [
  ["normal", "Paragraph"],
  ["h1", "Heading 1"],
  ["h2", "Heading 2"],
  ["h3", "Heading 3"],
  ["h4", "Heading 4"],
  ["blockquote", "Quote"],
];
export const DECORATORS = ["strong", "em", "code", "underline", "strike-through"];
export const LISTS = ["bullet", "number"];

export function textBlock(style = "normal", children = null, extra = {}) {
  return {
    _type: "block",
    _key: newKey(),
    style,
    ...extra,
    markDefs: [],
    children: children || [span("")],
  };
}

export function span(text, marks = []) {
  return { _type: "span", _key: newKey(), text, marks };
}

const childLength = (child) => (isSpan(child) ? child.text.length : 1);

// How many positions a block holds: its text and inline objects; an object block holds none.
export function blockLength(block) {
  return isText(block) ? childrenOf(block).reduce((n, c) => n + childLength(c), 0) : 0;
}

export const marksOf = (child) => (Array.isArray(child?.marks) ? child.marks : []);
const sameMarks = (a, b) => a.length === b.length && a.every((m) => b.includes(m));

// `children` cut at `offset`: the part before and the part after. A span cut in two keeps its
// key (and any other key) on the left; the right part is a new span with the same marks.
export function splitChildren(children, offset) {
  const left = [];
  const right = [];
  let at = 0;
  for (const child of children) {
    const len = childLength(child);
    if (at + len <= offset) left.push(child);
    else if (at >= offset) right.push(child);
    else {
      const cut = offset - at;
      left.push({ ...child, text: child.text.slice(0, cut) });
      right.push({ ...child, _key: newKey(), text: child.text.slice(cut) });
    }
    at += len;
  }
  return [left, right];
}

// Drops empty spans and joins neighbouring spans with the same marks and keys, so editing leaves no
// debris; but only spans this editor made are joined into others, so a stored span keeps its
// key. A block keeps at least one span.
export function tidyChildren(children) {
  const out = [];
  for (const child of children) {
    if (isSpan(child) && child.text === "" && children.length > 1 && madeHere(child._key)) continue;
    const last = out[out.length - 1];
    const joinable = last && isSpan(last) && isSpan(child) && sameMarks(marksOf(last), marksOf(child)) && sameExtras(last, child);
    if (joinable && madeHere(child._key)) out[out.length - 1] = { ...last, text: last.text + child.text };
    else if (joinable && madeHere(last._key)) out[out.length - 1] = { ...child, text: last.text + child.text };
    else out.push(child);
  }
  if (!out.some(isSpan)) out.push(span(""));
  return out;
}

// Whether two spans carry the same keys besides their key, text and marks (a span cut in two
// carries its keys into both halves, which may then join again).
function sameExtras(a, b) {
  const extras = (c) => JSON.stringify(Object.entries(c).filter(([k]) => !["_key", "text", "marks"].includes(k)).sort(([x], [y]) => (x < y ? -1 : 1)));
  return extras(a) === extras(b);
}

// The block's markDefs without those this page made that no span uses any more (a link added
// and removed again). Stored ones stay even when unused: dropping data is never the editor's
// guess (docs/DECISIONS.md).
function usedDefs(block, children) {
  const defs = Array.isArray(block.markDefs) ? block.markDefs : [];
  const used = new Set(children.flatMap(marksOf));
  const kept = defs.filter((d) => used.has(d?._key) || !madeHere(d?._key));
  return kept.length === defs.length ? block.markDefs : kept;
}

function withChildren(block, children) {
  const tidy = tidyChildren(children);
  return { ...block, children: tidy, markDefs: usedDefs(block, tidy) };
}

// Splits a text block at `offset` (Enter): the left keeps the block's key and keys; the right is
// a new block with the same style and list, but a heading or quote ended at its end is followed
// by a paragraph, as in every word processor.
export function splitBlock(block, offset) {
  const [left, right] = splitChildren(childrenOf(block), offset);
  const atEnd = offset >= blockLength(block);
  const style = atEnd && block.style !== "normal" && !block.listItem ? "normal" : block.style || "normal";
  const extra = block.listItem ? { listItem: block.listItem, level: block.level || 1 } : {};
  // Each definition goes with the text that uses it (both halves when a link spans the cut);
  // one used by neither stays where it was.
  const defs = Array.isArray(block.markDefs) ? block.markDefs : [];
  const usedBy = (children) => new Set(children.flatMap(marksOf));
  const [leftUses, rightUses] = [usedBy(left), usedBy(right)];
  const leftDefs = defs.filter((d) => leftUses.has(d?._key) || !rightUses.has(d?._key));
  const rightDefs = defs.filter((d) => rightUses.has(d?._key));
  const head = { ...block, markDefs: leftDefs.length === defs.length ? block.markDefs : leftDefs };
  const next = { _type: "block", _key: newKey(), style, ...extra, markDefs: rightDefs, children: right };
  return [withChildren(head, left), withChildren(next, right)];
}

// `b` appended to `a` (Backspace at the start of `b`). A markDef key of `b` that `a` uses for
// another definition is renamed in `b`'s spans.
export function mergeBlocks(a, b) {
  const aDefs = Array.isArray(a.markDefs) ? a.markDefs : [];
  const rename = new Map();
  const defs = [...aDefs];
  for (const def of Array.isArray(b.markDefs) ? b.markDefs : []) {
    const clash = aDefs.find((d) => d._key === def._key);
    if (clash && JSON.stringify(clash) === JSON.stringify(def)) continue;
    if (clash) {
      const key = newKey();
      rename.set(def._key, key);
      defs.push({ ...def, _key: key });
    } else defs.push(def);
  }
  const bChildren = childrenOf(b).map((c) =>
    isSpan(c) && marksOf(c).some((m) => rename.has(m)) ? { ...c, marks: marksOf(c).map((m) => rename.get(m) || m) } : c,
  );
  return withChildren({ ...a, markDefs: defs }, [...childrenOf(a), ...bChildren]);
}

export const ordered = (s) => {
  const a = s.anchor;
  const f = s.focus;
  const before = a.b < f.b || (a.b === f.b && a.o <= f.o);
  return before ? { from: a, to: f } : { from: f, to: a };
};

export const collapsed = (s) => s.anchor.b === s.focus.b && s.anchor.o === s.focus.o;

// `children` without the text from..to: a span cut partly keeps its key and other keys; one
// cut wholly, and an inline object inside the range, are gone.
function cutChildren(children, from, to) {
  const out = [];
  let at = 0;
  for (const child of children) {
    const len = childLength(child);
    const a = at;
    at += len;
    const start = Math.max(from, a);
    const end = Math.min(to, a + len);
    if (end <= start) out.push(child);
    else if (isSpan(child) && !(start === a && end === a + len)) out.push({ ...child, text: child.text.slice(0, start - a) + child.text.slice(end - a) });
  }
  // All text gone: the first span stays, empty, keeping its key and marks to type into.
  const first = children.find(isSpan);
  if (first && !out.some(isSpan)) out.unshift({ ...first, text: "" });
  return out;
}

// `blocks` with the range from..to removed; the blocks it ends in are joined. Returns the new
// blocks and where the caret stands.
export function deleteRange(blocks, from, to) {
  if (from.b === to.b) {
    const block = blocks[from.b];
    if (!isText(block) || from.o === to.o) return { blocks, caret: from };
    return { blocks: replace(blocks, from.b, 1, withChildren(block, cutChildren(childrenOf(block), from.o, to.o))), caret: from };
  }
  const first = blocks[from.b];
  const last = blocks[to.b];
  const head = isText(first) ? withChildren(first, cutChildren(childrenOf(first), from.o, Infinity)) : null;
  const tail = isText(last) ? { ...last, children: cutChildren(childrenOf(last), 0, to.o) } : null;
  let joined;
  if (head && tail) joined = [mergeBlocks(head, tail)];
  else if (head || tail) joined = [head || withChildren(tail, tail.children)];
  else joined = [textBlock()];
  const out = replace(blocks, from.b, to.b - from.b + 1, ...joined);
  return { blocks: out, caret: head ? from : { b: from.b, o: 0 } };
}

export function replace(blocks, index, count, ...inserted) {
  const out = blocks.slice();
  out.splice(index, count, ...inserted);
  return out;
}

// Text typed at `at` with `marks` (the marks of the text before the caret, or those toggled on
// while the caret stood still). It goes into the span at the caret when that span has those
// marks, so typing changes one span's text and nothing else.
export function insertText(blocks, at, text, marks) {
  const block = blocks[at.b];
  if (!isText(block)) return { blocks, caret: at };
  const children = childrenOf(block);
  const caret = { b: at.b, o: at.o + text.length };
  // The span with those marks ending at (or holding) the caret, else the one starting there.
  let ending = -1;
  let starting = -1;
  let pos = 0;
  const starts = children.map((c, i) => {
    const from = pos;
    pos += childLength(c);
    if (isSpan(c) && sameMarks(marksOf(c), marks)) {
      if (ending < 0 && from < at.o && at.o <= pos) ending = i;
      if (starting < 0 && from === at.o) starting = i;
    }
    return from;
  });
  const into = ending >= 0 ? ending : starting;
  if (into >= 0) {
    const c = children[into];
    const cut = at.o - starts[into];
    const next = children.slice();
    next[into] = { ...c, text: c.text.slice(0, cut) + text + c.text.slice(cut) };
    return { blocks: replace(blocks, at.b, 1, withChildren(block, next)), caret };
  }
  const [left, right] = splitChildren(children, at.o);
  return { blocks: replace(blocks, at.b, 1, withChildren(block, [...left, span(text, marks), ...right])), caret };
}

// The marks text typed at `at` takes: those of the span ending there (the one starting there
// at a block's start), links excepted at their end so typing after a link is plain text.
export function marksAt(block, offset) {
  let at = 0;
  let found = null;
  for (const child of childrenOf(block)) {
    const len = childLength(child);
    if (isSpan(child) && ((at < offset && offset <= at + len) || (offset === 0 && at === 0))) {
      found = child;
      break;
    }
    at += len;
  }
  if (!found) return [];
  const marks = marksOf(found);
  const ends = at + childLength(found) === offset && offset > 0;
  return ends ? marks.filter((m) => DECORATORS.includes(m)) : marks;
}

// Text typed over the range from..to: it takes the marks of the first character it replaces
// and goes into that character's span, so replacing a word keeps its span, key and marks.
export function replaceText(blocks, from, to, text) {
  const block = blocks[from.b];
  const marks = marksOfCharAt(block, from.o) || marksAt(block, from.o);
  const typed = insertText(blocks, from, text, marks);
  const n = text.length;
  const removed = deleteRange(typed.blocks, { b: from.b, o: from.o + n }, { b: to.b, o: to.b === from.b ? to.o + n : to.o });
  return { blocks: removed.blocks, caret: { b: from.b, o: from.o + n } };
}

function marksOfCharAt(block, offset) {
  let at = 0;
  for (const child of childrenOf(block)) {
    const len = childLength(child);
    if (isSpan(child) && at <= offset && offset < at + len) return marksOf(child);
    at += len;
  }
  return null;
}

// Each block index from..to with the offsets of the range inside it.
function eachInRange(blocks, from, to, fn) {
  for (let b = from.b; b <= to.b; b += 1) {
    if (!isText(blocks[b])) continue;
    const start = b === from.b ? from.o : 0;
    const end = b === to.b ? to.o : blockLength(blocks[b]);
    fn(b, start, end);
  }
}

// The spans of `block` between start and end, split at both ends so they can be re-marked.
function cutOut(block, start, end) {
  const [left, rest] = splitChildren(childrenOf(block), start);
  const [middle, right] = splitChildren(rest, end - start);
  return { left, middle, right };
}

// Whether every character of the range carries `mark`.
export function rangeHas(blocks, from, to, mark) {
  let all = true;
  let any = false;
  eachInRange(blocks, from, to, (b, start, end) => {
    if (start === end) return;
    for (const child of cutOut(blocks[b], start, end).middle) {
      if (!isSpan(child) || child.text === "") continue;
      any = true;
      if (!marksOf(child).includes(mark)) all = false;
    }
  });
  return any && all;
}

// Adds `mark` to every span of the range (removes it when `on` is false).
export function setMark(blocks, from, to, mark, on) {
  let out = blocks;
  eachInRange(blocks, from, to, (b, start, end) => {
    if (start === end) return;
    const block = out[b];
    const { left, middle, right } = cutOut(block, start, end);
    const changed = middle.map((c) => {
      if (!isSpan(c)) return c;
      const has = marksOf(c).includes(mark);
      if (has === on) return c;
      return { ...c, marks: on ? [...marksOf(c), mark] : marksOf(c).filter((m) => m !== mark) };
    });
    out = replace(out, b, 1, withChildren(block, [...left, ...changed, ...right]));
  });
  return out;
}

// Annotates the range with `def` (a markDef without its key): a link. Each block gets its own
// copy of the definition under one new key.
export function annotate(blocks, from, to, def) {
  const key = newKey();
  let out = blocks;
  eachInRange(blocks, from, to, (b, start, end) => {
    if (start === end) return;
    const block = out[b];
    const withDef = { ...block, markDefs: [...(Array.isArray(block.markDefs) ? block.markDefs : []), { ...def, _key: key }] };
    const { left, middle, right } = cutOut(withDef, start, end);
    const marked = middle.map((c) => (isSpan(c) ? { ...c, marks: [...marksOf(c).filter((m) => !isAnnotation(block, m)), key] } : c));
    out = replace(out, b, 1, withChildren(withDef, [...left, ...marked, ...right]));
  });
  return out;
}

const isAnnotation = (block, mark) => (Array.isArray(block.markDefs) ? block.markDefs : []).some((d) => d?._key === mark);

// Removes every annotation (link) from the range.
export function unannotate(blocks, from, to) {
  let out = blocks;
  eachInRange(blocks, from, to, (b, start, end) => {
    const block = out[b];
    const { left, middle, right } = cutOut(block, start, end);
    const plain = middle.map((c) => (isSpan(c) && marksOf(c).some((m) => isAnnotation(block, m)) ? { ...c, marks: marksOf(c).filter((m) => !isAnnotation(block, m)) } : c));
    out = replace(out, b, 1, withChildren(block, [...left, ...plain, ...right]));
  });
  return out;
}

// The annotation under `at`, if any: `{ def, block }`.
export function annotationAt(blocks, at) {
  const block = blocks[at.b];
  if (!isText(block)) return null;
  const marks = marksAt(block, at.o === 0 ? 0 : at.o);
  const defs = Array.isArray(block.markDefs) ? block.markDefs : [];
  const def = defs.find((d) => marks.includes(d?._key));
  return def ? { def, block } : null;
}

// Sets the style of the text blocks from..to; a list item given a heading style stops being one.
export function setStyle(blocks, fromB, toB, style) {
  let out = blocks;
  for (let b = fromB; b <= toB; b += 1) {
    const block = out[b];
    if (!isText(block) || (block.style === style && !(style !== "normal" && block.listItem))) continue;
    const { listItem: _l, level: _v, ...rest } = block;
    out = replace(out, b, 1, style === "normal" ? { ...block, style } : { ...rest, style });
  }
  return out;
}

// Turns the text blocks from..to into items of a `kind` list, or back into paragraphs when all
// of them already are.
export function toggleList(blocks, fromB, toB, kind) {
  const range = blocks.slice(fromB, toB + 1).filter(isText);
  const all = range.length > 0 && range.every((b) => b.listItem === kind);
  let out = blocks;
  for (let b = fromB; b <= toB; b += 1) {
    const block = out[b];
    if (!isText(block)) continue;
    if (all) {
      const { listItem: _l, level: _v, ...rest } = block;
      out = replace(out, b, 1, rest);
    } else if (block.listItem !== kind) {
      out = replace(out, b, 1, { ...block, style: "normal", listItem: kind, level: block.level || 1 });
    }
  }
  return out;
}

// Moves list items one level in (Tab) or out (Shift+Tab); out of level 1 leaves the list.
export function indent(blocks, fromB, toB, by) {
  let out = blocks;
  for (let b = fromB; b <= toB; b += 1) {
    const block = out[b];
    if (!isText(block) || !block.listItem) continue;
    const level = (block.level || 1) + by;
    if (level < 1) {
      const { listItem: _l, level: _v, ...rest } = block;
      out = replace(out, b, 1, rest);
    } else out = replace(out, b, 1, { ...block, level: Math.min(level, 6) });
  }
  return out;
}

// Puts `inserted` blocks at `at`: a paste or an image. A pasted text block at either end joins
// the block it lands in (its head, its tail), so a paste of one paragraph is inline text.
export function insertBlocks(blocks, at, inserted) {
  if (!inserted.length) return { blocks, caret: at };
  const block = blocks[at.b];
  if (!isText(block)) {
    const out = replace(blocks, at.b + 1, 0, ...inserted);
    return { blocks: out, caret: endOf(out, at.b + inserted.length) };
  }
  // An object put at the start of a block goes before it, leaving the block as it was.
  if (at.o === 0 && !isText(inserted[0]) && !isText(inserted[inserted.length - 1])) {
    return { blocks: replace(blocks, at.b, 0, ...inserted), caret: { b: at.b + inserted.length, o: 0 } };
  }
  const [head, tail] = splitBlock(block, at.o);
  const [first, ...rest] = inserted;
  const out = isText(first) ? [joinInto(head, first), ...rest] : [head, first, ...rest];
  const last = out[out.length - 1];
  let caret;
  if (isText(last)) {
    caret = { b: at.b + out.length - 1, o: blockLength(last) };
    out[out.length - 1] = mergeBlocks(last, tail);
  } else {
    out.push(tail);
    caret = { b: at.b + out.length - 1, o: 0 };
  }
  return { blocks: replace(blocks, at.b, 1, ...out), caret };
}

// `first` joined to `head`; an empty head (a paste on an empty line) takes `first`'s style.
function joinInto(head, first) {
  const joined = mergeBlocks(head, first);
  if (blockLength(head)) return joined;
  const { listItem: _l, level: _v, ...rest } = joined;
  const list = first.listItem ? { listItem: first.listItem, level: first.level || 1 } : {};
  return { ...rest, style: first.style || "normal", ...list };
}

export const endOf = (blocks, b) => ({ b, o: blockLength(blocks[b]) });
