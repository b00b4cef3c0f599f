// Never lose work on the edit page (issue 30, point 4), beside the `beforeunload` warning and
// the conflict dialog of js/pages/document.js:
//
// - Autosave: two seconds after the last input, an existing document the caller may update is
//   saved through the editor's own `saveDraft()`, guarded by the revision the form was loaded
//   at. Never while another action runs, a dialog is open or another save is out (the
//   assistant's included), never a form a field of which cannot be read (invalid JSON: it waits
//   for the next input), never a new document (created by an explicit Save; until then the
//   local copy covers it). A conflict (409) stops autosaving and opens the conflict dialog: the
//   input stays, nothing is overwritten. A refused save shows its issues, and is not tried
//   again until the input changes.
// - Recovery: on every change (at most every 500 ms) the form's value is kept in this browser's
//   localStorage with the revision it was typed on, under the organization, type, id (or
//   `new`) and locale; removed once the form equals the saved draft again. Opening the page
//   with such a copy that differs from the draft offers to restore it or to discard it.

import { ApiError } from "./api.js";
import { h, uid, banner, notify, relativeTime, formatDate } from "./dom.js";

// Quiet time after the last input before an autosave.
const DELAY = 2000;
// How often a blocked autosave looks again (the quiet time restarts once it is free).
const RETRY = 250;
// At most one local copy written per this many milliseconds.
const THROTTLE = 500;
// Larger copies are not kept: localStorage holds about 5 MB per origin, for every tab.
const MAX_LOCAL = 2 * 1024 * 1024;
const PREFIX = "cms.unsaved.";
// Autosave is on unless the person turned it off in this browser (some prefer to save
// themselves); the switch sits beside the save status.
const PREFERENCE = "cms.autosave";
const autosaveOn = () => localStorage.getItem(PREFERENCE) !== "off";

export class DraftsKeeper {
  // `editor`: the Editor of js/pages/document.js (its doc, form, dirtiness, busy, run,
  // saveDraft, conflict, showIssues, messages, ctx, schema, locale).
  constructor(editor) {
    this.editor = editor;
    // The quiet status in the action bar: "Saving…", "All changes saved", "Autosave paused: …".
    this.status = h("span", { class: "autosave-status muted", role: "status" });
    const box = h("input", { type: "checkbox", id: uid("autosave"), checked: autosaveOn(), on: { change: () => this.switched(box.checked) } });
    this.toggle = editor.editable ? h("span", { class: "autosave-toggle muted" }, box, " ", h("label", { for: box.id, text: "Autosave" })) : null;
    // The offer to restore a copy found on opening; filled by `start()`.
    this.notice = h("div", { class: "recovery-notice", role: "region", "aria-label": "Unsaved changes found", hidden: true });
    this.timer = null;
    this.quietSince = 0;
    this.inputLocale = undefined;
    // Why autosave stopped (a conflict), until a save or a reload puts a known copy in the form.
    this.paused = false;
    // The form content the server refused last: not sent again as it is.
    this.refused = null;
    this.writeTimer = null;
    this.lastWrite = 0;
    // The key this page wrote its copy under (the id, the locale may change).
    this.writtenKey = null;
    // A copy found on opening, waiting for the person to restore or discard it: it is not
    // overwritten meanwhile.
    this.offer = editor.editable ? readEntry(this.key(), editor.ctx) : null;
    this.offerKey = this.offer ? this.key() : null;
  }

  // localStorage key of the form as it is now: cms.unsaved.<org>.<type>.<id|new>.<locale|->.
  key() {
    const e = this.editor;
    return `${PREFIX}${e.ctx.organization?.id || "none"}.${e.schema.name}.${e.id || "new"}.${e.locale || "-"}`;
  }

  // After the first load: listens to the form and offers a copy left by an earlier visit.
  start(formEl) {
    formEl.addEventListener("input", () => this.touched());
    formEl.addEventListener("change", () => this.touched());
    // Closing or leaving the tab writes the copy still waiting for its throttle.
    window.addEventListener("pagehide", () => this.flushWrite());
    this.showOffer();
  }

  // ---------------------------------------------------------------------------------------
  // Autosave

  get autosaves() {
    const e = this.editor;
    return Boolean(e.doc) && e.editable && !this.paused && autosaveOn();
  }

  // The person turned autosave on or off: remembered in this browser; turned on with unsaved
  // input, it saves after the usual quiet time.
  switched(on) {
    localStorage.setItem(PREFERENCE, on ? "on" : "off");
    if (!on) {
      clearTimeout(this.timer);
      this.timer = null;
      return this.say("");
    }
    if (this.editor.dirty) this.touched();
  }

  touched() {
    this.quietSince = Date.now();
    this.inputLocale = this.editor.locale;
    if (this.autosaves) this.arm(DELAY);
  }

  arm(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  // Something else is under way: a button's action (its dialogs included), another save (the
  // assistant's), a dialog (a confirmation, the history's restore), leaving the page.
  blocked() {
    const e = this.editor;
    return e.busy || e.saving > 0 || e.leaving || Boolean(document.querySelector("dialog[open]"));
  }

  tick() {
    this.timer = null;
    const e = this.editor;
    if (!this.autosaves) return;
    if (this.blocked()) {
      this.quietSince = Date.now();
      return this.arm(RETRY);
    }
    const wait = this.quietSince + DELAY - Date.now();
    if (wait > 0) return this.arm(wait);
    // Typed in another locale than the form shows now: the switch discarded it.
    if (e.locale !== this.inputLocale || !e.dirty) return;
    const snapshot = e.snapshot();
    if (snapshot === null) return this.say("Autosave paused: a field cannot be read yet");
    if (snapshot === this.refused) return;
    e.run(() => this.save(snapshot));
  }

  async save(snapshot) {
    const e = this.editor;
    this.say("Saving…");
    try {
      await e.saveDraft({ keepInput: true });
      this.refused = null;
      this.say(e.dirty ? "" : "All changes saved");
    } catch (error) {
      if (!(error instanceof ApiError)) {
        // Anything but the form's own error (a FormError, shown at its field) is a fault.
        if (!Array.isArray(error?.issues)) throw error;
        this.refused = snapshot;
        this.say("Autosave paused: a field cannot be read yet");
        return;
      }
      if (error.status === 409 && error.currentRevision != null) {
        // Someone else saved: never written over without the person's word.
        this.conflicted();
        await e.conflict(error, () => e.saveFromButton());
        return;
      }
      this.refused = snapshot;
      if (error.issues.length) {
        // As a manual save shows them, without taking the focus from where the person types.
        e.form.clearIssues();
        banner(e.messages, `${error.message.replace(/\.$/, "")}. Fix the fields marked below.`);
        e.showIssues(error.issues, "error");
        this.say("Autosave paused: fix the marked fields");
      } else {
        banner(e.messages, error.message);
        this.say(`Autosave paused: ${error.message}`);
      }
    }
  }

  say(text) {
    this.status.textContent = text;
  }

  // A save (this one or the person's) met a newer revision: no more autosaves until the
  // conflict is resolved (the dialog's Reload or Overwrite loads a copy the server has).
  conflicted() {
    this.paused = true;
    clearTimeout(this.timer);
    this.say("Autosave paused: someone else changed this document");
  }

  // The form now holds a copy the server has (loaded, saved, reloaded after a conflict):
  // autosave resumes.
  loaded() {
    this.paused = false;
    this.refused = null;
    if (this.status.textContent.startsWith("Autosave paused")) this.say("");
    // Another locale (or the new document saved under its id): the offer was for another key.
    if (this.offer && this.offerKey !== this.key()) this.closeOffer();
  }

  // ---------------------------------------------------------------------------------------
  // The local copy

  // The form changed (input, a patch by the assistant, a load): keep a copy while it differs
  // from the saved draft, drop it once it is the same again.
  changed() {
    const e = this.editor;
    if (!e.editable || this.offer) return;
    if (e.dirty) {
      if (this.status.textContent === "All changes saved") this.say("");
      if (!this.writeTimer) this.writeTimer = setTimeout(() => this.write(), Math.max(0, this.lastWrite + THROTTLE - Date.now()));
      return;
    }
    clearTimeout(this.writeTimer);
    this.writeTimer = null;
    // Nothing left to save: a note about the last attempt no longer applies (a conflict still
    // does: the document is newer than the form).
    if (!this.paused && this.status.textContent.startsWith("Autosave paused")) this.say("");
    // Only what this page wrote: a copy found on opening waits for the person's choice.
    remove(this.writtenKey);
    this.writtenKey = null;
  }

  write() {
    clearTimeout(this.writeTimer);
    this.writeTimer = null;
    const e = this.editor;
    if (this.offer || !e.editable || !e.dirty) return;
    let value;
    try {
      value = e.form.value();
    } catch {
      // A field cannot be read (invalid JSON): the copy before it stays.
      return;
    }
    this.lastWrite = Date.now();
    const entry = { value, revision: e.doc?._meta?.revision ?? null, savedAt: new Date().toISOString(), user: e.ctx.user?.id || null };
    const text = JSON.stringify(entry);
    if (text.length > MAX_LOCAL) return;
    const key = this.key();
    try {
      localStorage.setItem(key, text);
    } catch {
      // Storage full or refused (a private window): the beforeunload warning remains.
      return;
    }
    // Written under another key before (the locale switched, the new document got its id).
    if (this.writtenKey && this.writtenKey !== key) remove(this.writtenKey);
    this.writtenKey = key;
  }

  flushWrite() {
    if (this.writeTimer) this.write();
  }

  // "Unsaved changes from 5 minutes ago were found": Restore or Discard. Nothing is offered
  // when the copy equals the draft loaded (it was saved after all).
  showOffer() {
    const e = this.editor;
    const entry = this.offer;
    if (!entry) return;
    if (JSON.stringify(entry.value) === e.baseline) {
      remove(this.offerKey);
      this.offer = null;
      return;
    }
    const loaded = e.doc?._meta?.revision;
    const older = e.doc && entry.revision != null && loaded != null && entry.revision < loaded;
    const ago = relativeTime(entry.savedAt);
    const when = h("time", { datetime: entry.savedAt, title: formatDate(entry.savedAt), text: ago === "just now" ? "a moment ago" : ago });
    this.notice.replaceChildren(
      h("p", {}, "Unsaved changes from ", when, " were found in this browser."),
      older ? h("p", { class: "recovery-older", text: `The document changed since: they were typed on revision ${entry.revision}, it is at revision ${loaded} now. Restored and saved, they replace the newer copy.` }) : null,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "primary", text: "Restore", on: { click: () => this.restore() } }),
        h("button", { type: "button", text: "Discard", on: { click: () => this.discard() } }),
      ),
    );
    this.notice.classList.toggle("warn", Boolean(older));
    this.notice.hidden = false;
  }

  // The copy goes into the form, unsaved: the person looks, then saves (or types on).
  restore() {
    const e = this.editor;
    const entry = this.offer;
    this.closeOffer();
    if (!entry) return;
    e.form.setValue(entry.value);
    e.markDirty();
    this.write();
    notify("Restored: the changes are in the form, not saved yet.", "success");
    e.formEl.querySelector("input:not([type=hidden]), textarea, select")?.focus();
  }

  discard() {
    remove(this.offerKey);
    this.closeOffer();
    // The form may hold input typed while the offer waited: it is kept from now on.
    this.changed();
    this.editor.main.focus();
  }

  closeOffer() {
    this.offer = null;
    this.offerKey = null;
    this.notice.hidden = true;
    this.notice.replaceChildren();
  }
}

// The copy stored under `key`, when it is this person's and readable.
function readEntry(key, ctx) {
  try {
    const entry = JSON.parse(localStorage.getItem(key) || "null");
    if (!entry || typeof entry !== "object" || !entry.value || typeof entry.value !== "object") return null;
    if (entry.user && ctx.user?.id && entry.user !== ctx.user.id) return null;
    return entry;
  } catch {
    return null;
  }
}

function remove(key) {
  if (!key) return;
  try {
    localStorage.removeItem(key);
  } catch {
    // Storage refused: nothing was kept either.
  }
}

// Signing out leaves no unsaved text of this person behind in a shared browser.
export function forgetUnsaved() {
  try {
    for (let i = localStorage.length - 1; i >= 0; i -= 1) {
      const key = localStorage.key(i);
      if (key?.startsWith(PREFIX)) localStorage.removeItem(key);
    }
  } catch {
    // Storage refused: nothing was kept either.
  }
}
