// Pasted content as Portable Text, cleaned to what the editor offers: paragraphs, headings 1-4,
// quotes, bulleted and numbered lists with their depth, bold, italic, code, underline,
// strike-through and links to the web. Everything else (fonts, colours, classes, Word's and
// Google Docs' markup, images, scripts) is dropped and its text kept. The HTML is parsed into
// an inert document (DOMParser runs no script and loads nothing) and only read.

import { newKey, safeHref } from "./portable-text.js";
import { span, textBlock } from "./rich-text-model.js";

const SKIPPED = new Set(["SCRIPT", "STYLE", "META", "LINK", "TITLE", "HEAD", "TEMPLATE", "NOSCRIPT", "XML", "IMG", "SVG", "VIDEO", "AUDIO", "IFRAME", "OBJECT", "BUTTON", "INPUT", "SELECT", "TEXTAREA"]);
const BLOCKS = new Set(["P", "DIV", "H1", "H2", "H3", "H4", "H5", "H6", "BLOCKQUOTE", "LI", "PRE", "TR", "SECTION", "ARTICLE", "HEADER", "FOOTER", "ASIDE", "MAIN", "FIGURE", "FIGCAPTION", "DT", "DD", "ADDRESS", "HR", "TABLE", "UL", "OL", "DL"]);
const HEADINGS = { H1: "h1", H2: "h2", H3: "h3", H4: "h4", H5: "h4", H6: "h4" };
const TAG_MARKS = { STRONG: "strong", B: "strong", EM: "em", I: "em", CITE: "em", CODE: "code", KBD: "code", SAMP: "code", TT: "code", U: "underline", INS: "underline", S: "strike-through", STRIKE: "strike-through", DEL: "strike-through" };

// Pasted HTML as blocks.
export function blocksFromHtml(html) {
  const doc = new DOMParser().parseFromString(html, "text/html");
  const out = new Builder();
  out.walk(doc.body, { marks: [], link: null, style: "normal", list: null, level: 0, pre: false });
  return out.finish();
}

// Pasted plain text as blocks: a paragraph per line, blank lines dropped.
export function blocksFromText(text) {
  return text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => textBlock("normal", [span(line)]));
}

class Builder {
  constructor() {
    this.blocks = [];
    this.current = null;
  }

  // Starts a block for the element's text (closing the one before).
  open(context) {
    this.close();
    const extra = context.list ? { listItem: context.list, level: Math.min(Math.max(context.level, 1), 6) } : {};
    this.current = textBlock(context.list ? "normal" : context.style, [], extra);
  }

  close() {
    const block = this.current;
    this.current = null;
    if (!block) return;
    const children = trimEdges(block.children);
    if (!children.length) return;
    this.blocks.push({ ...block, children });
  }

  text(value, context) {
    let text = context.pre ? value.replace(/\r\n?/g, "\n") : value.replace(/\s+/g, " ");
    if (!this.current) {
      if (!text.trim()) return;
      this.open(context);
    }
    const children = this.current.children;
    const last = children[children.length - 1];
    // A collapsed space after another (or at a block's start) is not shown by browsers either.
    if (!context.pre && text.startsWith(" ") && (!last || /[ \n]$/.test(last.text))) text = text.slice(1);
    if (!text) return;
    const marks = [...context.marks];
    if (context.link) {
      let def = this.current.markDefs.find((d) => d.href === context.link);
      if (!def) {
        def = { _type: "link", _key: newKey(), href: context.link };
        this.current.markDefs.push(def);
      }
      marks.push(def._key);
    }
    if (last && sameMarks(last.marks, marks)) last.text += text;
    else children.push(span(text, marks));
  }

  walk(node, context) {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) this.text(child.data, context);
      else if (child.nodeType === Node.ELEMENT_NODE) this.element(child, context);
    }
  }

  element(el, context) {
    const tag = el.tagName.toUpperCase();
    if (SKIPPED.has(tag) || tag.includes(":") || isWordListMarker(el) || el.hidden) return;
    if (tag === "BR") {
      if (this.current) this.text("\n", { ...context, pre: true });
      return;
    }
    // Table cells in a row read as one line, apart.
    if ((tag === "TD" || tag === "TH") && this.current) this.text(" ", { ...context, pre: true });
    const inner = inlineContext(el, tag, context);
    if (tag === "UL" || tag === "OL") {
      this.close();
      this.walk(el, { ...inner, list: tag === "OL" ? "number" : "bullet", level: context.level + 1 });
      this.close();
      return;
    }
    const wordList = wordListItem(el);
    if (BLOCKS.has(tag) || wordList) {
      const blockContext = { ...inner, ...blockStyle(el, tag, context), ...(wordList || {}) };
      if (tag !== "UL" && tag !== "OL" && tag !== "TABLE" && tag !== "DL") this.open(blockContext);
      this.walk(el, blockContext);
      this.close();
      return;
    }
    this.walk(el, inner);
  }

  finish() {
    this.close();
    return this.blocks;
  }
}

function blockStyle(el, tag, context) {
  if (HEADINGS[tag]) return { style: HEADINGS[tag], list: null };
  if (tag === "BLOCKQUOTE") return { style: "blockquote", list: null };
  if (tag === "PRE") return { pre: true, marks: context.marks.includes("code") ? context.marks : [...context.marks, "code"] };
  // Google Docs says a list item's depth with `aria-level`.
  if (tag === "LI") return { list: context.list || "bullet", level: Number(el.getAttribute("aria-level")) || Math.max(context.level, 1) };
  return {};
}

// The marks an inline element adds: its tag's and its inline style's (Google Docs marks bold
// with `font-weight:700` on spans, and wraps a whole paste in `<b style="font-weight:normal">`,
// which must not make everything bold).
function inlineContext(el, tag, context) {
  const marks = [...context.marks];
  const add = (m) => !marks.includes(m) && marks.push(m);
  const drop = (m) => marks.includes(m) && marks.splice(marks.indexOf(m), 1);
  const style = inlineStyle(el);
  const weight = style.fontWeight;
  if (TAG_MARKS[tag] && !(tag === "B" && /^(normal|[1-4]00)$/.test(weight))) add(TAG_MARKS[tag]);
  if (/^(bold|bolder|[6-9]00)$/.test(weight)) add("strong");
  else if (/^(normal|[1-4]00)$/.test(weight)) drop("strong");
  if (style.fontStyle === "italic") add("em");
  else if (style.fontStyle === "normal") drop("em");
  const decoration = `${style.textDecoration || ""} ${style.textDecorationLine || ""}`;
  const href = tag === "A" ? safeHref(el.getAttribute("href")) : null;
  // Underlining is how word processors show a link; the link says it already.
  if (/underline/.test(decoration) && !href && !context.link) add("underline");
  if (/line-through/.test(decoration)) add("strike-through");
  if (/monospace|courier|consolas/i.test(style.fontFamily || "")) add("code");
  if (href) drop("underline");
  return { ...context, marks, link: href || context.link };
}

// An element's `style` attribute as a map of camel-cased properties (elements of a parsed,
// inert document have no computed style).
function inlineStyle(el) {
  const out = {};
  for (const declaration of (el.getAttribute("style") || "").split(";")) {
    const colon = declaration.indexOf(":");
    if (colon < 0) continue;
    const name = declaration.slice(0, colon).trim().toLowerCase().replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    out[name] = declaration.slice(colon + 1).trim().toLowerCase();
  }
  return out;
}

// Word's list paragraphs: `<p style="mso-list:l0 level2 lfo1">` with the bullet as text in a
// span marked `mso-list:Ignore`.
function wordListItem(el) {
  const style = el.getAttribute("style") || "";
  const m = /mso-list:\s*l\d+\s+level(\d+)/i.exec(style);
  if (!m) return null;
  const marker = el.querySelector("[style*='mso-list:Ignore' i], [style*='mso-list: Ignore' i]")?.textContent || "";
  return { list: /^\s*(\d+|[a-z]|[ivx]+)[.)]/i.test(marker) ? "number" : "bullet", level: Number(m[1]), style: "normal" };
}

const isWordListMarker = (el) => /mso-list:\s*ignore/i.test(el.getAttribute("style") || "");

const sameMarks = (a, b) => a.length === b.length && a.every((m) => b.includes(m));

// A block's spans without the spaces and line breaks at its two ends.
function trimEdges(children) {
  const out = children.map((c) => ({ ...c }));
  while (out.length && !out[0].text.replace(/^[\s]+/, "")) out.shift();
  while (out.length && !out[out.length - 1].text.replace(/[\s]+$/, "")) out.pop();
  if (!out.length) return out;
  out[0].text = out[0].text.replace(/^[ \n]+/, "");
  out[out.length - 1].text = out[out.length - 1].text.replace(/[ \n]+$/, "");
  return out;
}
