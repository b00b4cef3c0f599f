// The edit page of a localized document type in several locales (CONTRACT.md section 17): the
// switcher that reloads the form in another locale (saves then write that locale only, the
// others are kept), the note at each field served from a fallback locale, and the side-by-side
// view that shows, beside each localized field, its value in a second locale, read-only.

import { get, data, seg, query } from "./api.js";
import { h, render, confirm, notify, uid } from "./dom.js";
import { parsePath } from "./fields.js";
import { asText } from "./history.js";
import { localizedPaths, missingText, valueAt, withoutFallbacks } from "./locale.js";

export class DocumentLocales {
  // `locales`: js/locale.js Locales; `editor`: the Editor of js/pages/document.js (its form,
  // document, dirtiness, and `reload()` which reads the document again in `current`).
  constructor(locales, editor) {
    this.locales = locales;
    this.editor = editor;
    this.fallbacks = {};
    this.loadedDraft = {};
    // The locale shown beside the fields; null while the side-by-side view is off.
    this.reference = null;
  }

  get current() {
    return this.locales.current;
  }

  // The bar above the form: the locale edited, and the side-by-side view.
  bar() {
    const { select, field } = this.locales.select({ label: "Locale", onChange: (tag) => this.switchTo(tag) });
    this.localeSelect = select;
    this.toggle = h("input", { type: "checkbox", id: uid("cmp"), name: "compareLocales", on: { change: () => this.compare() } });
    this.referenceSelect = h("select", { name: "referenceLocale", id: uid("ref"), disabled: true, on: { change: () => this.compare() } });
    this.fillReferenceOptions();
    return h(
      "div",
      { class: "toolbar locale-bar", role: "group", "aria-label": "Locales" },
      field,
      h("div", { class: "field checkbox" }, this.toggle, h("label", { for: this.toggle.id, text: "Side by side" })),
      h("div", { class: "field locale-field" }, h("label", { for: this.referenceSelect.id, text: "Reference locale" }), this.referenceSelect),
    );
  }

  // The reference choices: every locale but the one edited. The reference kept if it still
  // differs from it, else the default locale (or, editing the default, the first other).
  fillReferenceOptions() {
    const { locales } = this;
    const others = locales.available.filter((tag) => tag !== locales.current);
    const keep = [this.referenceSelect.value, locales.default].find((tag) => others.includes(tag)) || others[0];
    render(this.referenceSelect, others.map((tag) => h("option", { value: tag, text: locales.label(tag), selected: tag === keep })));
    this.referenceSelect.value = keep;
    if (this.reference) this.reference = keep;
  }

  // Reloads the form in `tag`. Unsaved changes belong to the locale they were typed in: the
  // editor confirms dropping them first.
  async switchTo(tag) {
    const editor = this.editor;
    if (tag === this.current) return;
    if (editor.editable && editor.dirty) {
      const ok = await confirm("Switch locale?", `The form has changes not saved in ${this.current}. Switching to ${tag} discards them.`, { confirmLabel: "Discard and switch", danger: true });
      if (!ok) {
        this.localeSelect.value = this.current;
        return;
      }
    }
    this.locales.choose(tag);
    this.fillReferenceOptions();
    if (editor.doc) await editor.reload();
    else this.loaded(null);
  }

  // The form now shows `doc` (or, new, nothing) in the current locale: notes at the fields
  // served from another locale, and the reference values again.
  loaded(doc) {
    const form = this.editor.form;
    this.fallbacks = doc?._meta?.fallbackLocales || {};
    this.loadedDraft = doc?.draftData || {};
    form.el.querySelectorAll(".locale-note").forEach((note) => note.remove());
    for (const [path, served] of Object.entries(this.fallbacks)) {
      const wrapper = form.locate(path);
      if (!wrapper) continue;
      const note = h("p", { class: "hint locale-note", text: missingText(this.current, served) });
      const error = wrapper.querySelector(":scope > .field-error");
      if (error) error.before(note);
      else wrapper.append(note);
    }
    this.showReference();
  }

  // The data a save sends: the form's, without the fallback values the editor left alone.
  outgoing(formData) {
    return withoutFallbacks(formData, this.loadedDraft, this.fallbacks, parsePath);
  }

  async compare() {
    const on = this.toggle.checked;
    this.referenceSelect.disabled = !on;
    this.reference = on ? this.referenceSelect.value : null;
    this.editor.formEl.classList.toggle("comparing", on);
    await this.showReference();
  }

  // Fills the place beside each localized field with its value in the reference locale, as
  // saved in the draft (read again, so it is current), or empties them when the view is off.
  async showReference() {
    const { editor, reference, locales } = this;
    const slots = [...editor.form.el.querySelectorAll(".locale-reference")];
    if (!reference) {
      slots.forEach((slot) => {
        slot.hidden = true;
        slot.replaceChildren();
      });
      return;
    }
    let doc = null;
    if (editor.doc) {
      try {
        doc = await data(get(`/api/documents/${seg(editor.doc.id)}${query({ locale: reference })}`));
      } catch (error) {
        notify(`The ${reference} values could not be read: ${error.message}`, "error");
        return;
      }
      // A later switch or toggle superseded this read.
      if (this.reference !== reference) return;
    }
    const heading = () => h("p", { class: "locale-reference-label", text: locales.label(reference) });
    const empty = doc ? "No value" : "Not saved yet";
    slots.forEach((slot) => {
      slot.hidden = false;
      render(slot, heading(), h("p", { class: "muted", text: empty }));
    });
    if (!doc) return;
    let formValue;
    try {
      formValue = editor.form.value();
    } catch {
      formValue = editor.doc.draftData || {};
    }
    const paths = new Set([...localizedPaths(editor.schema.fields, formValue, editor.ctx), ...localizedPaths(editor.schema.fields, doc.draftData, editor.ctx)]);
    for (const path of paths) {
      const slot = editor.form.locate(path)?.parentElement?.querySelector(":scope > .locale-reference");
      const value = valueAt(doc.draftData, parsePath(path));
      if (!slot || value === undefined) continue;
      const served = doc._meta?.fallbackLocales?.[path];
      render(slot, heading(), h("pre", { class: "locale-reference-value", text: asText(value) }), served ? h("p", { class: "hint locale-reference-note", text: missingText(reference, served) }) : null);
    }
  }
}
