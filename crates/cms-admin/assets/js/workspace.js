// The document open in the editor, shared between the edit page and the assistant panel
// (the workspace protocol of CONTRACT.md section 8). The edit page opens it; the assistant
// reads it, sends it with each turn, and applies `content_patch_fields` and
// `content_save_draft` through it, so edits land in the form the person sees.
//
// An open document is an object:
//   collection: string                 the document type
//   id: string                         its id
//   revision(): number                 `_meta.revision` of the copy in the form
//   data(): object                     the form's current (unsaved) data
//   patch(fields): void                merges top-level fields into the form, unsaved
//   saveDraft({ expectedRevision }): Promise<object>   saves the form; resolves to the saved
//                                      document, rejects with the ApiError of a failure

let current = null;
const listeners = new Set();

export function openDocument(doc) {
  current = doc;
  listeners.forEach((fn) => fn(current));
}

export function closeDocument(doc) {
  if (current === doc) {
    current = null;
    listeners.forEach((fn) => fn(current));
  }
}

export function openedDocument() {
  return current;
}

// Calls `fn(doc | null)` whenever the open document changes; returns the unsubscribe.
export function onDocumentChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
