// The edit page of one document (`id` = `new` for one not created yet): the form generated
// from its schema, the actions the caller may take (save, publish, unpublish, delete,
// schedule, plugin actions), revision conflicts resolved by the person, and the history.

import { get, post, put, del, data, seg, query, ApiError } from "../api.js";
import { h, render, banner, notify, dialog, confirm, setTitle, formatDate, timeAgo, failed, ready, field } from "../dom.js";
import { createForm, documentTitle, focusField, FormError, toLocalInput } from "../fields.js";
import { createHistory, stable } from "../history.js";
import { openDocument } from "../workspace.js";
import { mayDo } from "../shell.js";
import { localesFor } from "../locale.js";
import { DocumentLocales } from "../document-locale.js";
import { Presence } from "../presence.js";
import { DocumentViews } from "../document-views.js";
import { DraftsKeeper } from "../drafts-keeper.js";
import { addCommands } from "../palette.js";

export async function mount(main, ctx) {
  const type = ctx.params.type;
  const schema = ctx.schema(type);
  if (!schema || schema.type !== "document") return failed(main, new Error(`There is no document type ${type}.`));
  const isNew = ctx.params.id === "new";
  let doc = null;
  let schedule = null;
  let locales = null;
  try {
    // A localized type opens in the locale the editor works in (js/locale.js).
    locales = await localesFor(schema, ctx);
    if (!isNew) {
      [doc, schedule] = await Promise.all([
        data(get(`/api/documents/${seg(ctx.params.id)}${query({ locale: locales?.current })}`)),
        mayDo(ctx, schema, "publish") ? data(get(`/api/documents/${seg(ctx.params.id)}/schedule`)).catch(() => null) : null,
      ]);
    }
  } catch (error) {
    return failed(main, error.status === 404 ? new Error("This document does not exist, or you may not see it.") : error);
  }
  new Editor(main, ctx, schema, doc, schedule, locales).draw();
}

class Editor {
  constructor(main, ctx, schema, doc, schedule, locales) {
    this.main = main;
    this.ctx = ctx;
    this.schema = schema;
    this.doc = doc;
    this.schedule = schedule;
    this.may = (op) => mayDo(ctx, schema, op);
    this.editable = doc ? this.may("update") : this.may("create");
    this.form = createForm(schema, ctx, { readOnly: !this.editable });
    this.baseline = "";
    this.busy = false;
    // Several locales to edit in: the switcher, fallback notes, the side-by-side view.
    this.l10n = locales ? new DocumentLocales(locales, this) : null;
    // Who else has the document open, and whether they saved (js/presence.js).
    this.presence = new Presence(this);
    // Saves in flight (the assistant's too): autosave waits for them.
    this.saving = 0;
    // Autosave and the copy kept in this browser (js/drafts-keeper.js).
    this.keeper = new DraftsKeeper(this);
  }

  get id() {
    return this.doc?.id || null;
  }

  // The locale the form reads and writes; undefined (the default) for a type in one locale.
  get locale() {
    return this.l10n?.current;
  }

  // The API path of the document, read in the form's locale.
  docPath(id = this.doc.id) {
    return `/api/documents/${seg(id)}${query({ locale: this.locale })}`;
  }

  // `doc` as the form shows it: publish, unpublish and restore answer in the default locale,
  // so a form in another locale reads the document again in its own.
  async inLocale(doc) {
    if (!this.l10n || !doc || doc._meta?.locale === this.locale) return doc;
    return data(get(this.docPath(doc.id)));
  }

  // Reads the document again in the form's locale (after a locale switch).
  async reload() {
    try {
      this.load(await data(get(this.docPath())));
      this.drawActions();
    } catch (error) {
      banner(this.messages, error.message);
    }
  }

  draw() {
    const { main, schema } = this;
    this.heading = h("h1");
    this.meta = h("p", { class: "document-meta" });
    this.dirtyNote = h("span", { class: "dirty-note", role: "status" });
    this.actions = h("div", { class: "actions document-actions" });
    this.scheduleBox = h("div", { class: "schedule" });
    this.messages = h("div", { class: "document-messages" });
    const back = schema.singleton ? null : h("a", { href: `/admin/documents/${seg(schema.name)}`, class: "back", text: `← ${schema.title || schema.name}` });
    const formEl = h("form", { class: "document-editor", novalidate: true, on: { submit: (e) => (e.preventDefault(), this.saveFromButton()) } }, this.form.el);
    this.formEl = formEl;
    formEl.addEventListener("input", () => this.markDirty());
    formEl.addEventListener("change", () => this.markDirty());
    this.history = this.doc ? this.historyPanel() : null;
    const readOnlyNote = this.editable ? null : h("p", { class: "muted read-only-note", text: "You may read this document but not change it." });
    // The status and the actions stay in sight however long the form is; history sits beside
    // the form where the window is wide enough (documents.css), under it where it is not.
    const actionBar = h("div", { class: "action-bar" }, h("div", { class: "document-status" }, this.meta, this.dirtyNote, this.keeper.status, this.keeper.toggle), this.presence.el, this.actions);
    this.side = h("aside", { class: "document-side", "aria-label": "History" }, this.history?.el);
    const body = h("div", { class: "document-body" }, h("div", { class: "document-main" }, this.l10n?.bar(), this.presence.notice, this.keeper.notice, this.messages, this.scheduleBox, formEl), this.side);
    render(main, back, this.heading, actionBar, readOnlyNote, body);
    // Edit, Preview and API views of a saved document (js/document-views.js).
    this.views = new DocumentViews(this);
    this.views.mount(body, this.side);
    this.load(this.doc);
    this.drawActions();
    this.drawSchedule();
    this.enableActions();
    this.bindKeys();
    this.share();
    this.presence.start();
    this.keeper.start(formEl);
    // Save and Publish in the command palette while they would do something (js/palette.js).
    addCommands(() => this.commands());
    ready(main);
  }

  // Puts a document (or, new, nothing) into the form and the header.
  load(doc) {
    this.doc = doc;
    this.form.clearIssues();
    this.form.setValue(doc?.draftData || {});
    this.baseline = this.snapshot();
    this.unpublished = hasUnpublishedChanges(doc);
    this.drawHeader();
    this.markDirty();
    this.l10n?.loaded(doc);
    // Every save, publish, restore and reload passes here: the preview and API view follow.
    this.views?.loaded(doc);
    this.keeper?.loaded();
    if (doc) this.readUnpublished(doc);
  }

  // After an autosave: the saved document behind the form, and the form as the person has it
  // (what they typed while it was sent stays, still unsaved). `sent` is the form's JSON saved.
  adopt(doc, sent) {
    this.doc = doc;
    this.baseline = sent;
    this.drawHeader();
    this.markDirty();
    this.l10n?.loaded(doc);
    this.views?.loaded(doc);
    this.keeper.loaded();
    this.readUnpublished(doc);
  }

  // The palette's commands for this page: the actions that would do something now.
  commands() {
    const { save, publish } = this.buttons || {};
    const ready = (button) => button && !button.disabled && !this.busy;
    return [
      ready(save) ? { label: "Save draft", run: () => this.run(() => this.saveFromButton()) } : null,
      ready(publish) ? { label: "Publish", run: () => this.run(() => this.publish()) } : null,
    ].filter(Boolean);
  }

  snapshot() {
    try {
      return JSON.stringify(this.form.value());
    } catch {
      return null;
    }
  }

  get dirty() {
    return this.snapshot() !== this.baseline;
  }

  markDirty() {
    const dirty = this.editable && this.dirty;
    this.dirtyNote.textContent = dirty ? "Unsaved changes" : "";
    this.main.classList.toggle("unsaved", dirty);
    this.enableActions();
    this.keeper?.changed();
  }

  // Whether the saved draft differs from the published copy (or nothing is published): what
  // Publish would change. In one locale of a localized type the other locales count too, so
  // the draft is compared in every locale (`locale=*`), read once per load.
  async readUnpublished(doc) {
    this.unpublished = hasUnpublishedChanges(doc);
    if (!this.l10n || !doc?.publishedData) return;
    try {
      const all = await data(get(`/api/documents/${seg(doc.id)}${query({ locale: "*" })}`));
      if (this.doc?.id === all?.id) this.unpublished = hasUnpublishedChanges(all);
    } catch {
      // Unknown: leave Publish on rather than hide a change.
      this.unpublished = true;
    }
    this.enableActions();
  }

  // Save and Publish only when they would change something: Save with unsaved input, Publish
  // with that or with a saved draft the published copy does not have yet. A new document
  // can always be saved or published. Nothing while an action runs.
  enableActions() {
    const { save, publish } = this.buttons || {};
    const fresh = !this.doc;
    const dirty = this.editable && this.dirty;
    if (save) {
      save.disabled = this.busy || !(fresh || dirty);
      save.title = save.disabled && !this.busy ? "No unsaved changes" : "";
    }
    if (publish) {
      publish.disabled = this.busy || !(fresh || dirty || this.unpublished);
      publish.title = publish.disabled && !this.busy ? "Nothing to publish: the published copy is the saved draft" : "";
    }
  }

  drawHeader() {
    const { doc, schema } = this;
    const title = doc ? documentTitle(doc, schema) : `New ${schema.title || schema.name}`;
    this.heading.textContent = title;
    setTitle(title);
    if (!doc) return render(this.meta, h("span", { class: "badge draft", text: "Not saved yet" }));
    render(
      this.meta,
      statusBadge(doc),
      // The history numbers versions; this counts draft writes (docs/DECISIONS.md).
      h("span", { title: "The draft revision: it counts changes to the draft. History numbers versions: every draft save, publish and restore.", text: ` Revision ${doc._meta?.revision ?? "?"}` }),
      doc.updatedAt ? h("span", { class: "muted" }, " · Updated ", timeAgo(doc.updatedAt)) : null,
      doc.publishedAt ? h("span", { class: "muted" }, " · Published ", timeAgo(doc.publishedAt)) : null,
    );
  }

  drawActions() {
    const { doc, schema } = this;
    const button = (text, onClick, cls) => h("button", { type: "button", class: cls || "", text, on: { click: () => this.run(onClick) } });
    const published = Boolean(doc?.publishedData);
    this.buttons = {
      save: this.editable ? button("Save draft", () => this.saveFromButton(), "primary") : null,
      publish: this.may("publish") && (doc || this.editable) ? button("Publish", () => this.publish(), this.editable ? "" : "primary") : null,
    };
    render(
      this.actions,
      this.buttons.save,
      this.buttons.publish,
      published && this.may("unpublish") ? button("Unpublish", () => this.unpublish()) : null,
      doc && !schema.singleton && this.may("delete") ? button("Delete", () => this.remove(), "danger") : null,
      doc && schema.previewUrl && this.may("update") ? this.previewButton() : null,
      doc ? this.pluginActions() : null,
    );
    // New buttons start enabled: Save and Publish only when they would change something.
    this.enableActions();
  }

  // One action at a time: a second click while saving would race the revision.
  async run(action) {
    if (this.busy) return;
    this.busy = true;
    this.actions.querySelectorAll("button").forEach((b) => (b.disabled = true));
    try {
      await action();
    } catch (error) {
      if (!(error instanceof FormError) && !(error instanceof ApiError)) {
        console.error(error);
        banner(this.messages, error.message);
      }
    } finally {
      this.busy = false;
      this.actions.querySelectorAll("button").forEach((b) => (b.disabled = false));
      this.enableActions();
    }
  }

  // The form's data, or its own errors (invalid JSON) shown at their fields.
  formData() {
    this.form.clearIssues();
    banner(this.messages, null);
    try {
      return this.form.value();
    } catch (error) {
      if (error instanceof FormError) this.showIssues(error.issues, "error");
      throw error;
    }
  }

  // Saves the form as a draft. Rejects with the ApiError of a refusal (conflicts included:
  // callers decide how to resolve them). In a locale, only that locale's values are written
  // (the API keeps the others').
  // `keepInput` (autosave): the form keeps what was typed while the save was out.
  async saveDraft({ expectedRevision, keepInput = false } = {}) {
    const form = this.formData();
    const body = this.l10n ? this.l10n.outgoing(form) : form;
    const locale = this.locale;
    let saved;
    let validation = null;
    this.saving += 1;
    try {
      ({ saved, validation } = await this.write(body, locale, expectedRevision));
    } finally {
      this.saving -= 1;
    }
    const wasNew = !this.doc;
    if (keepInput && !wasNew) this.adopt(saved, JSON.stringify(form));
    else this.load(saved);
    if (validation && !validation.isValid) this.showIssues(validation.errors, "warning");
    if (wasNew) {
      this.history = this.historyPanel();
      this.side.append(this.history.el);
      this.share();
      this.presence.start();
    } else {
      this.history?.refresh();
    }
    this.drawActions();
    return saved;
  }

  // The request of a draft save: creates the document, or updates it at a revision.
  async write(body, locale, expectedRevision) {
    let saved;
    let validation = null;
    if (!this.doc) {
      const res = await post("/api/documents", { type: this.schema.name, data: body, locale });
      saved = res.data;
      validation = res.validation;
      const path = `/admin/documents/${seg(this.schema.name)}/${seg(saved.id)}`;
      history.replaceState(null, "", this.l10n ? this.l10n.locales.href(path) : path);
    } else {
      const res = await put(`/api/documents/${seg(this.doc.id)}`, { data: body, expectedRevision: expectedRevision ?? this.doc._meta?.revision, locale });
      saved = res.data;
      validation = res.validation || null;
    }
    return { saved, validation };
  }

  async saveFromButton() {
    if (!this.editable) return;
    try {
      await this.saveDraft();
      notify(this.messages.querySelector(".banner") ? "Draft saved, with warnings." : "Draft saved.", "success");
    } catch (error) {
      await this.refused(error, () => this.saveFromButton());
    }
  }

  // What a refused save or publish shows: issues at their fields (the first focused), a
  // conflict dialog for 409, the message otherwise. `retry(expectedRevision)` overwrites.
  async refused(error, retry) {
    if (error instanceof FormError) {
      focusField(this.form.locateFirst(error.issues));
      return;
    }
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 409 && error.currentRevision != null) return this.conflict(error, retry);
    if (error.issues.length) {
      this.form.clearIssues();
      banner(this.messages, `${error.message.replace(/\.$/, "")}. Fix the fields marked below.`);
      focusField(this.showIssues(error.issues, "error"));
      return;
    }
    banner(this.messages, error.message);
    notify(error.message, "error");
  }

  // Shows issues at their fields; returns the first field that got one.
  showIssues(issues, kind) {
    const { first, unplaced } = this.form.showIssues(issues, kind);
    const count = (issues || []).length;
    if (kind === "warning" && count) {
      banner(this.messages, `Saved as a draft. ${count} problem${count === 1 ? "" : "s"} must be fixed before publishing.`, "warn");
    }
    // Messages name their field by its title (or the item and part of it): no path needed.
    if (unplaced.length) notify(unplaced.map((i) => i.message).join("; "), kind === "error" ? "error" : "info");
    return first;
  }

  // Someone else changed the document since this copy was loaded. Nothing is lost silently:
  // the person chooses to take their copy or to write this form over it.
  async conflict(error, retry) {
    this.keeper?.conflicted();
    const choice = await dialog(
      "Someone else changed this document",
      h(
        "div",
        {},
        h("p", { text: `It is now at revision ${error.currentRevision}; this form was loaded at revision ${this.doc?._meta?.revision}.` }),
        h("p", { text: "Reload to discard your changes and see the current copy, or Overwrite to save your form over it." }),
      ),
      [
        { label: "Cancel", value: "cancel" },
        { label: "Reload", value: "reload" },
        { label: "Overwrite", value: "overwrite", class: "danger" },
      ],
    );
    if (choice === "reload") {
      try {
        this.load(await data(get(this.docPath())));
        this.drawActions();
        this.history?.refresh();
        notify("Reloaded the current copy.", "success");
      } catch (e) {
        banner(this.messages, e.message);
      }
    } else if (choice === "overwrite") {
      this.doc = { ...this.doc, _meta: { ...this.doc._meta, revision: error.currentRevision } };
      await retry(error.currentRevision);
    }
  }

  // Publishing saves unsaved changes first: what is published is what the person sees.
  // `overwrite`: after a conflict, save this form over the other copy even when unchanged.
  async publish(overwrite = false) {
    this.form.clearIssues();
    banner(this.messages, null);
    try {
      if (!this.doc || (this.editable && (this.dirty || overwrite))) await this.saveDraft();
      const published = await data(post(`/api/documents/${seg(this.doc.id)}/publish`, { expectedRevision: this.doc._meta?.revision }));
      this.load(await this.inLocale(published));
      this.drawActions();
      this.history?.refresh();
      notify("Published.", "success");
    } catch (error) {
      await this.refused(error, () => this.publish(true));
    }
  }

  async unpublish() {
    try {
      const doc = await this.inLocale(await data(del(`/api/documents/${seg(this.doc.id)}/publish`, { expectedRevision: this.doc._meta?.revision })));
      // The form may hold unsaved work: keep it, only the header and actions change.
      const unsaved = this.dirty;
      const form = unsaved ? this.form.value() : null;
      this.load(doc);
      if (unsaved) {
        this.form.setValue(form);
        this.markDirty();
      }
      this.drawActions();
      notify("Unpublished: the document is a draft only.", "success");
    } catch (error) {
      await this.refused(error, () => this.unpublish());
    }
  }

  async remove() {
    const title = documentTitle(this.doc, this.schema);
    if (!(await confirm("Delete this document?", `“${title}” and its history will be deleted. This cannot be undone.`, { confirmLabel: "Delete", danger: true }))) return;
    try {
      await del(`/api/documents/${seg(this.doc.id)}`);
      this.baseline = this.snapshot();
      this.leaving = true;
      notify("Deleted.", "success");
      location.assign(`/admin/documents/${seg(this.schema.name)}`);
    } catch (error) {
      banner(this.messages, error.message);
    }
  }

  drawSchedule() {
    const box = this.scheduleBox;
    if (!this.doc || !this.may("publish")) return render(box);
    const pending = this.schedule && this.schedule.status !== "cancelled" ? this.schedule : null;
    if (pending) {
      return render(
        box,
        h(
          "div",
          { class: "banner info schedule-pending" },
          h("span", { text: `Scheduled to ${pending.action} on ${formatDate(pending.runAt)}. ` }),
          h("button", { type: "button", text: "Cancel schedule", on: { click: () => this.cancelSchedule() } }),
        ),
      );
    }
    const action = h("select", { name: "scheduleAction" }, h("option", { value: "publish", text: "Publish" }), this.may("unpublish") ? h("option", { value: "unpublish", text: "Unpublish" }) : null);
    const when = h("input", { type: "datetime-local", name: "scheduleAt", min: toLocalInput(new Date().toISOString()) });
    const submit = h("button", {
      type: "button",
      text: "Schedule",
      on: { click: () => this.createSchedule(action.value, when.value) },
    });
    render(box, h("details", { class: "schedule-form" }, h("summary", { text: "Schedule publish or unpublish" }), h("div", { class: "schedule-row" }, field("Scheduled action", action), field("Run at", when, { hint: "Your local time" }), submit)));
  }

  async createSchedule(action, local) {
    const at = new Date(local);
    if (!local || Number.isNaN(at.getTime())) return notify("Choose a date and time.", "error");
    try {
      this.schedule = await data(post(`/api/documents/${seg(this.doc.id)}/schedule`, { action, runAt: at.toISOString() }));
      notify(`Scheduled to ${action} on ${formatDate(this.schedule.runAt)}.`, "success");
      this.drawSchedule();
    } catch (error) {
      notify(error.message, "error");
    }
  }

  async cancelSchedule() {
    try {
      await del(`/api/documents/${seg(this.doc.id)}/schedule`);
      this.schedule = null;
      notify("Schedule cancelled.", "success");
      this.drawSchedule();
    } catch (error) {
      notify(error.message, "error");
    }
  }

  historyPanel() {
    return createHistory({
      documentId: this.doc.id,
      schema: this.schema,
      schemaOf: (type) => this.ctx.schema(type),
      current: () => this.doc,
      dirty: () => this.editable && this.dirty,
      canRestore: this.editable,
      onRestored: async (doc) => {
        this.load(await this.inLocale(doc));
        this.drawActions();
      },
      // Versions hold every locale: they are compared with the draft in every locale too.
      compareDraft: this.l10n ? async () => (await data(get(`/api/documents/${seg(this.doc.id)}${query({ locale: "*" })}`)))?.draftData : null,
      onConflict: (error) => this.conflict(error, () => notify("Choose the version again to restore it.", "info")),
    });
  }

  // "Open preview" (CONTRACT.md section 15): a new preview link for the saved draft, opened
  // in a new tab on the type's frontend. Not through `run`: the tab must open in the click
  // itself (browsers block a window opened later), and opening one blocks no other action.
  previewButton() {
    return h("button", { type: "button", text: "Open preview", on: { click: () => this.openPreview() } });
  }

  async openPreview() {
    const tab = window.open("", "_blank");
    try {
      const link = await data(post(`/api/documents/${seg(this.doc.id)}/preview`));
      if (!tab) {
        notify("The preview could not open a new tab: allow pop-ups for this site.", "error");
        return;
      }
      // The frontend gets no handle on this page.
      tab.opener = null;
      tab.location.href = link.url;
    } catch (error) {
      tab?.close();
      banner(this.messages, error.message);
    }
  }

  // Plugin document actions: a button each, mounting the plugin's element in a dialog with
  // the current document.
  pluginActions() {
    const actions = (this.ctx.plugins || []).flatMap((p) => (p.documentActions || []).map((a) => ({ pluginId: p.id, ...a })));
    return actions
      .filter((a) => !Array.isArray(a.appliesTo) || a.appliesTo.includes(this.schema.name))
      .map((a) => h("button", { type: "button", text: a.title, dataset: { action: `${a.pluginId}.${a.id}` }, on: { click: () => this.openAction(a) } }));
  }

  async openAction(action) {
    try {
      await import(action.component.module);
      await customElements.whenDefined(action.component.element);
    } catch (error) {
      return notify(`${action.title} could not be loaded: ${error.message}`, "error");
    }
    const el = document.createElement(action.component.element);
    el.document = this.doc;
    el.schema = this.schema;
    await dialog(action.title, el, [{ label: "Close", value: null }]);
  }

  bindKeys() {
    document.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
        event.preventDefault();
        if (this.editable) this.run(() => this.saveFromButton());
      }
    });
    window.addEventListener("beforeunload", (event) => {
      if (!this.leaving && this.editable && this.dirty) {
        event.preventDefault();
        event.returnValue = "";
      }
    });
  }

  // The open document, for the assistant panel (js/workspace.js).
  share() {
    if (!this.doc) return;
    const editor = this;
    openDocument({
      collection: this.schema.name,
      id: this.doc.id,
      revision: () => editor.doc?._meta?.revision ?? null,
      data: () => {
        try {
          return editor.form.value();
        } catch {
          return editor.doc?.draftData || {};
        }
      },
      patch(fields) {
        const current = this.data();
        editor.form.setValue({ ...current, ...(fields || {}) });
        editor.markDirty();
      },
      saveDraft: ({ expectedRevision } = {}) => editor.saveDraft({ expectedRevision }),
    });
  }
}

export function statusBadge(doc) {
  if (!doc.publishedData) return h("span", { class: "badge draft", text: "Draft" });
  if (hasUnpublishedChanges(doc)) return h("span", { class: "badge changed", text: "Published, with unpublished changes" });
  return h("span", { class: "badge published", text: "Published" });
}

// Whether `doc` has a saved draft that is not what is published: never published, or its
// draft differs from the published copy (compared as canonical JSON, key order aside).
export function hasUnpublishedChanges(doc) {
  if (!doc) return false;
  if (!doc.publishedData) return true;
  return stable(doc.draftData || {}) !== stable(doc.publishedData);
}
