// The editor of `block` fields: Portable Text written the way a word processor is used. Typing,
// Enter and Backspace, headings, quotes, bulleted and numbered lists (Tab nests them), bold,
// italic, code, underline, strike-through, links to the web or to documents, images from the
// library, undo and redo, and paste from Word, Google Docs or web pages cleaned to those.
//
// The document is the model (rich-text-model.js); the page only shows it. Every change that
// splits, joins or re-marks text is made on the model and the touched blocks drawn again; text
// typed without composition goes through the model too, so what is stored never depends on how
// a browser chose to edit the page. Only what an input method composes, and deletions inside
// one block, are left to the browser, and that block is then read back from the page
// (rich-text-dom.js). A block nobody edits is saved as the very object it was, keys this
// admin does not know included.

import { h, uid, dialog, notify } from "./dom.js";
import { pickAsset, imageUrl, assetName } from "./asset-picker.js";
import { referenceEditor } from "./reference-field.js";
import { documentTitle } from "./field-markup.js";
import { get, data, seg } from "./api.js";
import { newKey, safeHref } from "./portable-text.js";
import * as M from "./rich-text-model.js";
import { drawBlock, readBlock, offsetIn, pointAt } from "./rich-text-dom.js";
import { blocksFromHtml, blocksFromText } from "./rich-text-paste.js";

const MAX_UNDO = 200;
// Typing within this many milliseconds of the last keystroke is undone with it.
const TYPING_GROUP_MS = 1000;

// The shortcuts, for the buttons' `aria-keyshortcuts` and titles.
const MARK_BUTTONS = [
  ["strong", "Bold", "B", "Control+B"],
  ["em", "Italic", "I", "Control+I"],
  ["underline", "Underline", "U", "Control+U"],
  ["strike-through", "Strike-through", "S", "Control+Shift+X"],
  ["code", "Code", "</>", "Control+E"],
];

// A line starting with one of these and a space becomes that style or list (as in Markdown).
const AUTOFORMAT = { "#": { style: "h1" }, "##": { style: "h2" }, "###": { style: "h3" }, "####": { style: "h4" }, ">": { style: "blockquote" }, "-": { list: "bullet" }, "*": { list: "bullet" }, "1.": { list: "number" } };

// `group(label, options, ...children)` builds the fieldset the form uses for composite fields,
// so the field shows messages the same way as the others. `ctx` is the admin's (schemas).
export function createRichTextEditor({ label, required, readOnly, group, ctx }) {
  return new RichText({ label, required, readOnly, group, ctx }).api();
}

class RichText {
  constructor({ label, required, readOnly, group, ctx }) {
    this.label = label;
    this.readOnly = readOnly;
    this.ctx = ctx;
    this.blocks = [];
    this.original = undefined;
    this.drawn = new WeakMap();
    this.undoStack = [];
    this.redoStack = [];
    this.lastTyping = 0;
    // Marks toggled while the caret stood still: the next typed text takes them.
    this.pending = null;
    // The image assets shown in the text, by id (each read once).
    this.assets = new Map();
    const hintId = uid("rt-hint");
    this.surface = h("div", {
      class: "rt-surface",
      id: uid("rt"),
      role: "textbox",
      "aria-multiline": "true",
      "aria-label": label,
      "aria-required": required ? "true" : null,
      "aria-readonly": readOnly ? "true" : null,
      "aria-describedby": readOnly ? null : hintId,
      contenteditable: readOnly ? "false" : "true",
      spellcheck: "true",
      tabindex: readOnly ? "0" : null,
      "data-focus-target": "",
    });
    this.toolbar = readOnly ? null : this.drawToolbar();
    const hint = readOnly
      ? null
      : h("p", {
          class: "hint",
          id: hintId,
          text: "Ctrl+B bold, Ctrl+I italic, Ctrl+K link, Ctrl+Z undo. Start a line with #, ## or ### for a heading, - for a list, 1. for a numbered list, > for a quote. Tab nests a list item. Alt+F10 reaches the toolbar.",
        });
    this.el = group(label, { required, className: "block-field rich-text" }, this.toolbar, this.surface, hint);
    if (!readOnly) this.listen();
  }

  api() {
    return {
      el: this.el,
      get: () => this.value(),
      set: (value) => this.load(value),
      // An issue anywhere in the text is shown on the field (its message names the item).
      locate: () => this.el,
      focus: () => this.surface.focus(),
    };
  }

  // What is saved: the value as loaded while nothing changed (the empty paragraph offered to
  // type in is not part of it), nothing once only empty text is left, else the blocks.
  value() {
    if (this.blocks === this.loaded) return this.original;
    if (this.blocks.every((b) => M.isText(b) && !M.blockLength(b))) return undefined;
    return this.blocks;
  }

  load(value) {
    this.original = value;
    let blocks = Array.isArray(value) ? value : [];
    if (!blocks.some(M.isText)) blocks = [...blocks, M.textBlock()];
    this.loaded = blocks;
    this.undoStack = [];
    this.redoStack = [];
    this.show(blocks, null);
  }

  // Draws `blocks`, reusing the element of every block that did not change.
  show(blocks, selection) {
    this.blocks = blocks;
    const els = blocks.map((block) => {
      let el = this.drawn.get(block);
      if (!el) {
        el = drawBlock(block, (b) => this.objectView(b));
        if (block && typeof block === "object") this.drawn.set(block, el);
      }
      return el;
    });
    const keep = new Set(els);
    [...this.surface.children].forEach((child) => !keep.has(child) && child.remove());
    els.forEach((el, i) => {
      if (this.surface.children[i] !== el) this.surface.insertBefore(el, this.surface.children[i] || null);
    });
    if (selection) this.select(selection);
    this.updateToolbar();
  }

  // Listening

  listen() {
    const s = this.surface;
    s.addEventListener("beforeinput", (e) => this.beforeInput(e));
    s.addEventListener("input", (e) => this.afterNativeInput(e));
    s.addEventListener("compositionend", () => this.readBack());
    s.addEventListener("keydown", (e) => this.keydown(e));
    s.addEventListener("paste", (e) => this.paste(e));
    s.addEventListener("cut", (e) => this.cut(e));
    s.addEventListener("drop", (e) => e.preventDefault());
    s.addEventListener("dragstart", (e) => e.preventDefault());
    const onSelection = () => {
      if (!this.el.isConnected) return document.removeEventListener("selectionchange", onSelection);
      const sel = this.selection();
      if (sel) {
        // Marks toggled with nothing selected last until the caret moves elsewhere.
        if (this.pending && !sameSelection(sel, this.pendingAt)) this.pending = null;
        this.updateToolbar();
      }
    };
    document.addEventListener("selectionchange", onSelection);
  }

  beforeInput(e) {
    const sel = this.selection();
    if (!sel) return;
    const type = e.inputType;
    const crossing = sel.anchor.b !== sel.focus.b;
    if (type === "insertText" && !e.isComposing && e.data) return this.handled(e, () => this.typeText(sel, e.data));
    if (type === "insertParagraph") return this.handled(e, () => this.enter(sel));
    if (type === "insertLineBreak") return this.handled(e, () => this.typeText(sel, "\n"));
    if (type === "historyUndo") return this.handled(e, () => this.undo());
    if (type === "historyRedo") return this.handled(e, () => this.redo());
    if (type.startsWith("format")) return this.handled(e, () => this.format(type));
    if (type === "insertFromPaste" || type === "insertFromDrop" || type === "insertFromYank") return e.preventDefault();
    if (type.startsWith("delete")) return this.deletion(e, sel, crossing);
    if (crossing) return this.handled(e, () => this.change((blocks) => M.deleteRange(blocks, M.ordered(sel).from, M.ordered(sel).to)));
    // Anything else (composition, spelling corrections) the browser does in one block; it is
    // read back on `input`.
    this.snapshotForTyping();
  }

  handled(e, action) {
    e.preventDefault();
    action();
  }

  // Deletions: inside one block the browser deletes (it knows graphemes and words); at a
  // block's edge, or across blocks, the model joins them.
  deletion(e, sel, crossing) {
    const { from, to } = M.ordered(sel);
    const back = e.inputType.includes("Backward");
    if (crossing) return this.handled(e, () => this.change((blocks) => M.deleteRange(blocks, from, to)));
    const block = this.blocks[from.b];
    if (!M.isText(block)) return this.handled(e, () => this.removeBlock(from.b));
    if (!M.collapsed(sel)) return this.snapshotForTyping();
    if (back && from.o === 0) return this.handled(e, () => this.backspaceAtStart(from.b));
    if (!back && from.o === M.blockLength(block)) return this.handled(e, () => this.deleteAtEnd(from.b));
    // The browser's own deletion may still reach into the next block (a word at the end).
    const range = e.getTargetRanges?.()[0];
    if (range) {
      const start = this.position(range.startContainer, range.startOffset);
      const end = this.position(range.endContainer, range.endOffset);
      if (start && end && start.b !== end.b) return this.handled(e, () => this.change((blocks) => M.deleteRange(blocks, start, end)));
    }
    this.snapshotForTyping();
  }

  backspaceAtStart(b) {
    const block = this.blocks[b];
    if (block.listItem) return this.change((blocks) => ({ blocks: M.indent(blocks, b, b, -1), caret: { b, o: 0 } }));
    if (block.style && block.style !== "normal" && !M.blockLength(block)) return this.change((blocks) => ({ blocks: M.setStyle(blocks, b, b, "normal"), caret: { b, o: 0 } }));
    if (b === 0) return;
    const before = this.blocks[b - 1];
    if (!M.isText(before)) return this.removeBlock(b - 1, { b: b - 1, o: 0 });
    this.change((blocks) => M.deleteRange(blocks, M.endOf(blocks, b - 1), { b, o: 0 }));
  }

  deleteAtEnd(b) {
    const next = this.blocks[b + 1];
    if (!next) return;
    if (!M.isText(next)) return this.removeBlock(b + 1, M.endOf(this.blocks, b));
    this.change((blocks) => M.deleteRange(blocks, M.endOf(blocks, b), { b: b + 1, o: 0 }));
  }

  removeBlock(b, caret) {
    this.change((blocks) => {
      let out = M.replace(blocks, b, 1);
      if (!out.some(M.isText)) out = [...out, M.textBlock()];
      return { blocks: out, caret: caret || { b: Math.min(b, out.length - 1), o: 0 } };
    });
  }

  typeText(sel, text) {
    this.change(
      (blocks) => {
        const { from, to } = M.ordered(sel);
        if (!M.collapsed(sel) && !this.pending && M.isText(blocks[from.b])) return M.replaceText(blocks, from, to, text);
        const cleared = M.collapsed(sel) ? { blocks, caret: from } : M.deleteRange(blocks, from, to);
        const block = cleared.blocks[cleared.caret.b];
        // The caret beside an image or another object: the text starts a paragraph after it.
        if (!M.isText(block)) return M.insertBlocks(cleared.blocks, cleared.caret, [M.textBlock("normal", [M.span(text, this.pending || [])])]);
        const marks = this.pending || M.marksAt(block, cleared.caret.o);
        return M.insertText(cleared.blocks, cleared.caret, text, marks);
      },
      { typing: true, keepPending: true },
    );
    if (text === " ") this.autoformat();
  }

  // "## " at the start of a paragraph makes it a heading, "- " a list item, and so on.
  autoformat() {
    const sel = this.selection();
    if (!sel || !M.collapsed(sel)) return;
    const block = this.blocks[sel.focus.b];
    if (!M.isText(block) || block.listItem || (block.style || "normal") !== "normal") return;
    const text = (block.children || []).map((c) => c.text || "").join("");
    const prefix = text.slice(0, sel.focus.o - 1);
    const rule = sel.focus.o - 1 === prefix.length && AUTOFORMAT[prefix];
    if (!rule) return;
    const b = sel.focus.b;
    this.change((blocks) => {
      let out = M.deleteRange(blocks, { b, o: 0 }, { b, o: prefix.length + 1 }).blocks;
      out = rule.style ? M.setStyle(out, b, b, rule.style) : M.toggleList(out, b, b, rule.list);
      return { blocks: out, caret: { b, o: 0 } };
    });
  }

  enter(sel) {
    this.change((blocks) => {
      const { from, to } = M.ordered(sel);
      const cleared = M.collapsed(sel) ? { blocks, caret: from } : M.deleteRange(blocks, from, to);
      const at = cleared.caret;
      const block = cleared.blocks[at.b];
      if (!M.isText(block)) {
        const fresh = M.textBlock();
        return { blocks: M.replace(cleared.blocks, at.b + 1, 0, fresh), caret: { b: at.b + 1, o: 0 } };
      }
      // Enter in an empty list item ends the list, as word processors do.
      if (block.listItem && !M.blockLength(block)) return { blocks: M.indent(cleared.blocks, at.b, at.b, -99), caret: at };
      const [left, right] = M.splitBlock(block, at.o);
      return { blocks: M.replace(cleared.blocks, at.b, 1, left, right), caret: { b: at.b + 1, o: 0 } };
    });
  }

  // The browser changed one block itself: read it back, draw it as the model says.
  afterNativeInput(e) {
    if (e.isComposing) return;
    this.readBack();
  }

  readBack() {
    const sel = this.selection();
    const blocks = this.blocks.slice();
    let changed = false;
    const children = [...this.surface.children];
    // The browser may have merged, split or dropped block elements: read every one of them
    // that is not the block it was drawn as, by key.
    if (children.length !== blocks.length || children.some((el, i) => this.drawn.get(blocks[i]) !== el)) return this.resync(sel);
    children.forEach((el, i) => {
      if (!M.isText(blocks[i])) return;
      const read = readBlock(el, blocks[i]);
      if (read !== blocks[i]) {
        // The browser changed this element: it no longer shows the block it was drawn for
        // (which undo may bring back).
        this.drawn.delete(blocks[i]);
        blocks[i] = read;
        changed = true;
      }
    });
    if (!changed) return;
    this.show(blocks, sel);
    this.changed();
  }

  // Rebuilds the model from whatever block elements the page now holds.
  resync(sel) {
    this.blocks.forEach((b) => b && typeof b === "object" && this.drawn.delete(b));
    const byKey = new Map(this.blocks.map((b) => [b?._key, b]));
    const blocks = [...this.surface.children].map((el) => {
      const known = byKey.get(el.dataset.key);
      if (known && !M.isText(known)) return known;
      return readBlock(el, known || M.textBlock());
    });
    this.show(blocks.length ? blocks : [M.textBlock()], sel);
    this.changed();
  }

  // Runs a model change: `fn(blocks)` answers `{ blocks, caret }` (or `selection`). Undo gets
  // the state before it; typing in a row is undone in one step.
  change(fn, { typing = false, keepPending = false } = {}) {
    const before = { blocks: this.blocks, selection: this.selection() };
    const result = fn(this.blocks);
    if (!result || result.blocks === this.blocks) return;
    const now = Date.now();
    if (!typing || now - this.lastTyping > TYPING_GROUP_MS) this.remember(before);
    this.lastTyping = typing ? now : 0;
    this.redoStack = [];
    const selection = result.selection || { anchor: result.caret, focus: result.caret };
    if (keepPending) this.pendingAt = selection;
    else this.pending = null;
    this.show(result.blocks, selection);
    this.changed();
  }

  snapshotForTyping() {
    const now = Date.now();
    if (now - this.lastTyping > TYPING_GROUP_MS) this.remember({ blocks: this.blocks, selection: this.selection() });
    this.lastTyping = now;
  }

  remember(state) {
    this.undoStack.push(state);
    if (this.undoStack.length > MAX_UNDO) this.undoStack.shift();
  }

  undo() {
    const state = this.undoStack.pop();
    if (!state) return;
    this.redoStack.push({ blocks: this.blocks, selection: this.selection() });
    this.lastTyping = 0;
    this.show(state.blocks, state.selection);
    this.changed();
  }

  redo() {
    const state = this.redoStack.pop();
    if (!state) return;
    this.undoStack.push({ blocks: this.blocks, selection: this.selection() });
    this.lastTyping = 0;
    this.show(state.blocks, state.selection);
    this.changed();
  }

  // The form listens for `input` to know the document has unsaved changes.
  changed() {
    this.surface.dispatchEvent(new Event("input", { bubbles: true }));
  }

  // Keys

  keydown(e) {
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.toLowerCase();
    const sel = this.selection();
    if (e.altKey && e.key === "F10") return this.handled(e, () => this.toolbar.querySelector("[tabindex='0']")?.focus());
    if (!sel) return;
    if (e.key === "Tab" && !mod && !e.altKey) {
      const { from, to } = M.ordered(sel);
      const inList = this.blocks.slice(from.b, to.b + 1).some((b) => b?.listItem);
      // Outside lists Tab leaves the editor, so keyboard users are never trapped in it.
      if (inList) return this.handled(e, () => this.change((blocks) => ({ blocks: M.indent(blocks, from.b, to.b, e.shiftKey ? -1 : 1), selection: sel })));
      return;
    }
    if (!mod || e.altKey) return;
    const shortcuts = {
      b: () => this.toggleMark("strong"),
      i: () => this.toggleMark("em"),
      u: () => this.toggleMark("underline"),
      e: () => this.toggleMark("code"),
      z: () => (e.shiftKey ? this.redo() : this.undo()),
      y: () => this.redo(),
    };
    if (e.shiftKey && key === "x") return this.handled(e, () => this.toggleMark("strike-through"));
    if (e.shiftKey && (key === "8" || e.code === "Digit8")) return this.handled(e, () => this.list("bullet"));
    if (e.shiftKey && (key === "7" || e.code === "Digit7")) return this.handled(e, () => this.list("number"));
    // Ctrl+K links the selected text; with nothing selected it is left to the admin (the
    // command palette).
    if (key === "k" && !M.collapsed(sel)) {
      e.stopPropagation();
      return this.handled(e, () => this.link());
    }
    if (shortcuts[key]) return this.handled(e, shortcuts[key]);
  }

  // Formatting the browser offers itself (a context menu, a keyboard layout's own keys).
  format(type) {
    const marks = { formatBold: "strong", formatItalic: "em", formatUnderline: "underline", formatStrikeThrough: "strike-through" };
    if (marks[type]) this.toggleMark(marks[type]);
  }

  // Commands (the toolbar and the keys)

  toggleMark(mark) {
    const sel = this.selection() || this.lastSelection;
    if (!sel) return;
    const { from, to } = M.ordered(sel);
    if (M.collapsed(sel)) {
      const current = this.pending || M.marksAt(this.blocks[from.b], from.o);
      this.pending = current.includes(mark) ? current.filter((m) => m !== mark) : [...current, mark];
      this.pendingAt = sel;
      this.updateToolbar();
      return;
    }
    const on = !M.rangeHas(this.blocks, from, to, mark);
    this.change((blocks) => ({ blocks: M.setMark(blocks, from, to, mark, on), selection: sel }));
  }

  style(style) {
    const sel = this.selection() || this.lastSelection;
    if (!sel) return;
    const { from, to } = M.ordered(sel);
    this.change((blocks) => ({ blocks: M.setStyle(blocks, from.b, to.b, style), selection: sel }));
  }

  list(kind) {
    const sel = this.selection() || this.lastSelection;
    if (!sel) return;
    const { from, to } = M.ordered(sel);
    this.change((blocks) => ({ blocks: M.toggleList(blocks, from.b, to.b, kind), selection: sel }));
  }

  async link() {
    const sel = this.selection() || this.lastSelection;
    if (!sel) return;
    const { from, to } = M.ordered(sel);
    const existing = M.annotationAt(this.blocks, from);
    const answer = await askLink(existing?.def, this.ctx, M.collapsed(sel));
    this.surface.focus();
    if (!answer) return this.select(sel);
    if (answer === "remove") {
      const range = M.collapsed(sel) ? this.annotationRange(from, existing) : { from, to };
      return this.change((blocks) => ({ blocks: M.unannotate(blocks, range.from, range.to), selection: sel }));
    }
    if (M.collapsed(sel)) {
      // Nothing selected: the link's address (or the document's title) is inserted, linked.
      const text = answer.text;
      this.change((blocks) => {
        const inserted = M.insertText(blocks, from, text, []);
        const end = inserted.caret;
        return { blocks: M.annotate(inserted.blocks, from, end, answer.def), caret: end };
      });
      return;
    }
    this.change((blocks) => ({ blocks: M.annotate(M.unannotate(blocks, from, to), from, to, answer.def), selection: sel }));
  }

  // The extent of the annotation under a caret, within its block.
  annotationRange(at, existing) {
    const block = this.blocks[at.b];
    let start = 0;
    let from = null;
    let to = null;
    for (const child of block.children || []) {
      const len = typeof child.text === "string" ? child.text.length : 1;
      const has = Array.isArray(child.marks) && child.marks.includes(existing?.def?._key);
      if (has && from === null) from = start;
      if (has) to = start + len;
      start += len;
    }
    return { from: { b: at.b, o: from ?? at.o }, to: { b: at.b, o: to ?? at.o } };
  }

  async image() {
    const sel = this.selection() || this.lastSelection || { anchor: M.endOf(this.blocks, this.blocks.length - 1), focus: M.endOf(this.blocks, this.blocks.length - 1) };
    const asset = await pickAsset({ accept: "image/*", title: `Choose an image for ${this.label}` });
    this.surface.focus();
    if (!asset) return this.select(sel);
    const block = { _type: "image", _key: newKey(), asset: { _type: "reference", _ref: asset.id } };
    if (asset.alt) block.alt = asset.alt;
    this.assets.set(asset.id, asset);
    this.change((blocks) => M.insertBlocks(blocks, M.ordered(sel).to, [block]));
  }

  // Clipboard

  paste(e) {
    e.preventDefault();
    const sel = this.selection();
    if (!sel) return;
    const html = e.clipboardData?.getData("text/html");
    const text = e.clipboardData?.getData("text/plain") || "";
    const pasted = html ? blocksFromHtml(html) : blocksFromText(text);
    if (!pasted.length) return;
    this.change((blocks) => {
      const { from, to } = M.ordered(sel);
      const cleared = M.collapsed(sel) ? { blocks, caret: from } : M.deleteRange(blocks, from, to);
      return M.insertBlocks(cleared.blocks, cleared.caret, pasted);
    });
  }

  // Copying is the browser's (what is shown, as HTML and text); a cut puts the same on the
  // clipboard and removes it through the model.
  cut(e) {
    const sel = this.selection();
    if (!sel || M.collapsed(sel)) return;
    const text = document.getSelection().toString();
    const fragment = document.getSelection().getRangeAt(0).cloneContents();
    const holder = h("div", {}, fragment);
    e.clipboardData.setData("text/plain", text);
    e.clipboardData.setData("text/html", holder.innerHTML);
    e.preventDefault();
    const { from, to } = M.ordered(sel);
    this.change((blocks) => M.deleteRange(blocks, from, to));
  }

  // Positions on the page and in the model

  blockIndexOf(node) {
    let el = node?.nodeType === Node.ELEMENT_NODE ? node : node?.parentNode;
    while (el && el.parentNode !== this.surface) {
      if (el === this.surface) return -1;
      el = el.parentNode;
    }
    return el ? [...this.surface.children].indexOf(el) : -1;
  }

  position(node, offset) {
    if (node === this.surface) {
      const b = Math.min(offset, this.blocks.length - 1);
      return offset >= this.blocks.length ? M.endOf(this.blocks, b) : { b, o: 0 };
    }
    const b = this.blockIndexOf(node);
    if (b < 0) return null;
    if (!M.isText(this.blocks[b])) return { b, o: 0 };
    return { b, o: offsetIn(this.surface.children[b], node, offset) };
  }

  selection() {
    const s = document.getSelection();
    if (!s || !s.rangeCount || !this.surface.contains(s.anchorNode)) return null;
    const anchor = this.position(s.anchorNode, s.anchorOffset);
    const focus = this.position(s.focusNode, s.focusOffset);
    if (!anchor || !focus) return null;
    this.lastSelection = { anchor, focus };
    return this.lastSelection;
  }

  domPoint(at) {
    const el = this.surface.children[at.b];
    if (!el) return [this.surface, this.surface.childNodes.length];
    if (!M.isText(this.blocks[at.b])) return [this.surface, at.b];
    return pointAt(el, at.o);
  }

  select(selection) {
    if (!selection) return;
    const clamp = (p) => {
      const b = Math.max(0, Math.min(p.b, this.blocks.length - 1));
      return { b, o: Math.max(0, Math.min(p.o, M.blockLength(this.blocks[b]))) };
    };
    const [an, ao] = this.domPoint(clamp(selection.anchor));
    const [fn, fo] = this.domPoint(clamp(selection.focus));
    if (document.activeElement !== this.surface) this.surface.focus({ preventScroll: true });
    document.getSelection().setBaseAndExtent(an, ao, fn, fo);
    this.lastSelection = { anchor: clamp(selection.anchor), focus: clamp(selection.focus) };
  }

  // The toolbar

  drawToolbar() {
    const button = (text, title, shortcut, action, extra = {}) =>
      h("button", {
        type: "button",
        class: "rt-button",
        text,
        title: shortcut ? `${title} (${shortcut.replace("Control", "Ctrl")})` : title,
        "aria-label": title,
        "aria-keyshortcuts": shortcut || null,
        tabindex: "-1",
        ...extra,
        // Keep the text selected: a click on the toolbar must not move the caret.
        on: { mousedown: (e) => e.preventDefault(), click: () => action() },
      });
    this.styleSelect = h(
      "select",
      { class: "rt-style", "aria-label": `Text style of ${this.label}`, tabindex: "0", on: { change: () => this.style(this.styleSelect.value) } },
      M.STYLES.map(([value, text]) => h("option", { value, text })),
    );
    this.markButtons = MARK_BUTTONS.map(([mark, title, text, shortcut]) => [mark, button(text, title, shortcut, () => this.toggleMark(mark), { "aria-pressed": "false", class: `rt-button rt-${mark}` })]);
    this.listButtons = [
      ["bullet", button("• List", "Bulleted list", "Control+Shift+8", () => this.list("bullet"), { "aria-pressed": "false" })],
      ["number", button("1. List", "Numbered list", "Control+Shift+7", () => this.list("number"), { "aria-pressed": "false" })],
    ];
    const items = [
      this.styleSelect,
      ...this.markButtons.map(([, b]) => b),
      button("Link", "Link", "Control+K", () => this.link()),
      ...this.listButtons.map(([, b]) => b),
      button("Image", "Insert image", null, () => this.image()),
      button("↶", "Undo", "Control+Z", () => this.undo()),
      button("↷", "Redo", "Control+Shift+Z", () => this.redo()),
    ];
    const bar = h("div", { class: "rt-toolbar", role: "toolbar", "aria-label": `Formatting of ${this.label}`, "aria-controls": this.surface.id }, items);
    // One stop in the tab order; arrow keys move along the toolbar (the ARIA toolbar pattern).
    bar.addEventListener("keydown", (e) => {
      if (e.key === "Escape") return this.handled(e, () => this.select(this.lastSelection || { anchor: { b: 0, o: 0 }, focus: { b: 0, o: 0 } }));
      if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return;
      if (e.target === this.styleSelect && (e.key === "Home" || e.key === "End")) return;
      e.preventDefault();
      const i = items.indexOf(e.target);
      const next = e.key === "Home" ? 0 : e.key === "End" ? items.length - 1 : (i + (e.key === "ArrowRight" ? 1 : -1) + items.length) % items.length;
      items.forEach((item, j) => item.setAttribute("tabindex", j === next ? "0" : "-1"));
      items[next].focus();
    });
    return bar;
  }

  updateToolbar() {
    if (!this.toolbar) return;
    const sel = this.lastSelection;
    if (!sel || !this.blocks.length) return;
    const { from, to } = M.ordered(sel);
    const block = this.blocks[Math.min(from.b, this.blocks.length - 1)];
    if (!block) return;
    const style = M.isText(block) ? block.style || "normal" : "normal";
    if (![...this.styleSelect.options].some((o) => o.value === style)) this.styleSelect.append(h("option", { value: style, text: style }));
    this.styleSelect.value = style;
    const collapsedMarks = this.pending || (M.isText(block) ? M.marksAt(block, from.o) : []);
    for (const [mark, button] of this.markButtons) {
      const on = M.collapsed(sel) ? collapsedMarks.includes(mark) : M.rangeHas(this.blocks, from, to, mark);
      button.setAttribute("aria-pressed", String(on));
    }
    for (const [kind, button] of this.listButtons) button.setAttribute("aria-pressed", String(block.listItem === kind));
  }

  // An object block (an image, or a type this editor does not edit), shown in the text.
  objectView(block) {
    const type = block?._type || "unknown";
    if (type === "image" && typeof block.asset?._ref === "string") {
      const figure = h("figure", { class: "rt-image" }, h("span", { class: "muted", text: "Image" }));
      this.imageFor(block.asset._ref).then((asset) => {
        if (!asset) return;
        const img = h("img", { src: imageUrl(asset, 320, 200), alt: block.alt || asset.alt || "", loading: "lazy", width: "320" });
        figure.replaceChildren(img, h("figcaption", { class: "muted", text: `Image: ${assetName(asset)}` }));
      });
      return [figure, this.removeButton(block, "image")];
    }
    return [h("p", { class: "muted", text: `${type} block, not editable here (kept as stored)` }), this.removeButton(block, `${type} block`)];
  }

  removeButton(block, what) {
    if (this.readOnly) return null;
    return h("button", {
      type: "button",
      class: "small",
      text: `Remove ${what}`,
      on: { click: () => this.removeBlock(this.blocks.indexOf(block)) },
    });
  }

  async imageFor(id) {
    if (this.assets.has(id)) return this.assets.get(id);
    try {
      const asset = await data(get(`/api/assets/${seg(id)}`));
      this.assets.set(id, asset);
      return asset;
    } catch {
      return null;
    }
  }
}

const samePoint = (a, b) => a && b && a.b === b.b && a.o === b.o;
const sameSelection = (a, b) => Boolean(a && b && samePoint(a.anchor, b.anchor) && samePoint(a.focus, b.focus));

// The link dialog: an address, or a document of this instance. Resolves to
// `{ def, text }`, "remove", or null.
async function askLink(current, ctx, empty) {
  const urlId = uid("rt-url");
  const url = h("input", { id: urlId, type: "text", inputmode: "url", autocomplete: "url", placeholder: "An address, or /a/path on this site", value: current?._type === "link" ? current.href || "" : "" });
  const types = (ctx?.documentTypes || []).map((s) => s.name);
  const target = types.length ? referenceEditor({ name: "link-target", to: types }, { label: "Or a document", ctx }) : null;
  if (target && current?.reference?._ref) target.set(current.reference);
  const body = h("div", { class: "rt-link-dialog" }, h("div", { class: "field" }, h("label", { for: urlId, text: "Address" }), url), target?.el);
  const buttons = [{ label: "Cancel", value: null }];
  if (current) buttons.push({ label: "Remove link", value: "remove", class: "danger" });
  buttons.push({ label: "Apply", value: "apply", class: "primary" });
  for (;;) {
    const choice = await dialog(current ? "Edit link" : "Add link", body, buttons);
    if (choice !== "apply") return choice;
    const ref = target?.get();
    if (ref?._ref) {
      const text = empty ? await documentTitleOf(ref._ref, ctx) : "";
      return { def: { _type: "internalLink", reference: { _type: "reference", _ref: ref._ref } }, text };
    }
    const href = url.value.trim();
    if (safeHref(href)) return { def: { _type: "link", href }, text: href };
    notify(href ? "Links go to http(s), mailto, or a path on this site." : "Give an address or choose a document.", "error");
  }
}

async function documentTitleOf(id, ctx) {
  try {
    const doc = await data(get(`/api/documents/${seg(id)}`));
    const schema = ctx.schema(doc.type);
    return (schema && documentTitle(doc, schema)) || id;
  } catch {
    return id;
  }
}
