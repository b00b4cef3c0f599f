// What the history shows of a difference: the top-level fields two copies of a document
// differ in, text compared word by word (an LCS over words, marked inline with <ins>/<del>),
// references shown by the referenced document's title, other values whole.

import { h } from "./dom.js";
import { labelOf } from "./fields.js";

// Above this many word pairs the table of the LCS would cost more than it is worth in a side
// panel (a long article rewritten): the middle that differs is then shown removed and added.
const MAX_CELLS = 250_000;

// Top-level fields that differ: [{ name, label, change, before, after }], in schema order
// then any stored keys the schema no longer declares. `before`/`after` are the raw values.
export function diff(older, newer, schema) {
  const names = [...(schema?.fields || []).map((f) => f.name)];
  for (const key of new Set([...Object.keys(older), ...Object.keys(newer)])) if (!names.includes(key)) names.push(key);
  const labels = new Map((schema?.fields || []).map((f) => [f.name, labelOf(f)]));
  const rows = [];
  for (const name of names) {
    const had = older[name] !== undefined;
    const has = newer[name] !== undefined;
    if (!had && !has) continue;
    if (had && has && stable(older[name]) === stable(newer[name])) continue;
    rows.push({
      name,
      label: labels.get(name) || name,
      change: had && has ? "changed" : had ? "removed" : "added",
      before: older[name],
      after: newer[name],
    });
  }
  return rows;
}

// JSON with sorted keys: equal data gives equal text, whatever the key order.
export function stable(value) {
  if (Array.isArray(value)) return `[${value.map(stable).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

const isRef = (v) => v && typeof v === "object" && !Array.isArray(v) && typeof v._ref === "string";
const isPortableText = (v) => Array.isArray(v) && v.length > 0 && v.every((b) => b && b._type === "block");
const isSlug = (v) => v && typeof v === "object" && typeof v.current === "string" && Object.keys(v).length === 1;

// Whether a value reads as text (a string, a slug, Portable Text, references): compared by word.
export function isText(value) {
  if (value === undefined || typeof value === "string" || isSlug(value) || isPortableText(value) || isRef(value)) return true;
  return Array.isArray(value) && value.length > 0 && value.every(isRef);
}

// Every referenced id in `value`, at any depth.
export function refIds(value, into = new Set()) {
  if (isRef(value)) into.add(value._ref);
  if (value && typeof value === "object") Object.values(value).forEach((v) => refIds(v, into));
  return into;
}

// A value as a person reads it: strings as they are, Portable Text as its text (a line per
// block), a reference as its document's title (`titles`: id -> title; the id when unknown),
// the rest as JSON with its references so named.
export function asText(value, titles = new Map()) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (isSlug(value)) return value.current;
  if (isRef(value)) return titles.get(value._ref) || value._ref;
  if (isPortableText(value)) return value.map((b) => (b.children || []).map((c) => c.text || "").join("")).join("\n");
  if (Array.isArray(value) && value.length && value.every(isRef)) return value.map((r) => asText(r, titles)).join("\n");
  return JSON.stringify(value, (_key, v) => (isRef(v) ? `→ ${titles.get(v._ref) || v._ref}` : v), 1);
}

// Words and the spaces between them, so joining the pieces gives the text back.
const words = (text) => text.match(/\s+|[^\s]+/g) || [];

// The word-level edit from `before` to `after`: [["=" | "-" | "+", text]], runs merged.
export function wordDiff(before, after) {
  const a = words(before);
  const b = words(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops = a.slice(0, start).map((w) => ["=", w]);
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length > MAX_CELLS) {
    midA.forEach((w) => ops.push(["-", w]));
    midB.forEach((w) => ops.push(["+", w]));
  } else {
    ops.push(...lcsOps(midA, midB));
  }
  a.slice(endA).forEach((w) => ops.push(["=", w]));
  return merge(ops);
}

// The classic LCS table, read back from the start: removals before additions at each change.
function lcsOps(a, b) {
  const n = a.length;
  const m = b.length;
  const width = m + 1;
  const len = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      len[i * width + j] = a[i] === b[j] ? len[(i + 1) * width + j + 1] + 1 : Math.max(len[(i + 1) * width + j], len[i * width + j + 1]);
    }
  }
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push(["=", a[i++]]);
      j++;
    } else if (len[(i + 1) * width + j] >= len[i * width + j + 1]) {
      ops.push(["-", a[i++]]);
    } else {
      ops.push(["+", b[j++]]);
    }
  }
  while (i < n) ops.push(["-", a[i++]]);
  while (j < m) ops.push(["+", b[j++]]);
  return ops;
}

// Adjacent pieces of one kind joined; a space alone between two changes joins the change, so
// "old words" -> "new text" reads as one removal and one addition, not word by word.
function merge(ops) {
  const out = [];
  for (let k = 0; k < ops.length; k++) {
    let [op, text] = ops[k];
    const prev = out[out.length - 1];
    const next = ops[k + 1];
    if (op === "=" && /^\s+$/.test(text) && prev && prev[0] !== "=" && next && next[0] !== "=") {
      // Both sides lose and gain the space: it belongs inside the change.
      out.push(["-", text], ["+", text]);
      continue;
    }
    out.push([op, text]);
  }
  // Removals gathered before additions within each changed stretch, then runs joined.
  const ordered = [];
  let dels = [];
  let inss = [];
  const flush = () => {
    if (dels.length) ordered.push(["-", dels.join("")]);
    if (inss.length) ordered.push(["+", inss.join("")]);
    dels = [];
    inss = [];
  };
  for (const [op, text] of out) {
    if (op === "-") dels.push(text);
    else if (op === "+") inss.push(text);
    else {
      flush();
      const last = ordered[ordered.length - 1];
      if (last && last[0] === "=") last[1] += text;
      else ordered.push(["=", text]);
    }
  }
  flush();
  return ordered;
}

// The difference of one row as nodes: text inline with <del>/<ins>; other values whole, the
// older one removed and the newer one added.
export function changeNodes(row, titles) {
  if (isText(row.before) && isText(row.after)) {
    const ops = wordDiff(asText(row.before, titles), asText(row.after, titles));
    return h(
      "p",
      { class: "diff-value inline" },
      ops.map(([op, text]) => (op === "=" ? text : h(op === "-" ? "del" : "ins", { text }))),
    );
  }
  return h(
    "div",
    { class: "diff-value whole" },
    row.before !== undefined ? h("pre", {}, h("del", { text: asText(row.before, titles) })) : null,
    row.after !== undefined ? h("pre", {}, h("ins", { text: asText(row.after, titles) })) : null,
  );
}
