// The markup every field editor shares: labels and names, the labelled control and the group
// with their error lines, the constraint hint, and the change event editors announce.

import { h, uid } from "./dom.js";

export const labelOf = (f) => f.title || humanize(f.name);

export function humanize(name) {
  const words = String(name || "").replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// The field a document is known by in lists and pickers: `title` or `name`, else the first
// string field.
export function titleField(schema) {
  const strings = (schema?.fields || []).filter((f) => f.type === "string");
  return (strings.find((f) => f.name === "title" || f.name === "name") || strings[0])?.name || null;
}

export function documentTitle(doc, schema) {
  const name = titleField(schema);
  const value = name ? (doc?.draftData?.[name] ?? doc?.publishedData?.[name]) : null;
  return typeof value === "string" && value.trim() ? value : `Untitled ${schema?.title || doc?.type || ""}`.trim();
}

// Shows a message at a field wrapper: `error` (publish refused) or `warning` (draft saved but
// would not publish). No message clears it.
export function showMessage(wrapper, message, kind = "error") {
  const line = wrapper.querySelector(":scope > .field-error");
  if (line) {
    line.textContent = message || "";
    line.hidden = !message;
    line.classList.toggle("warning", kind === "warning");
  }
  wrapper.classList.toggle("invalid", Boolean(message) && kind === "error");
  wrapper.classList.toggle("warned", Boolean(message) && kind === "warning");
  const control = wrapper.querySelector(":scope > input, :scope > select, :scope > textarea");
  if (control) control.toggleAttribute("aria-invalid", Boolean(message) && kind === "error");
}

export function changed(el) {
  el.dispatchEvent(new Event("change", { bubbles: true }));
}

// A labelled control in the admin's field markup, with the error line `showMessage` uses.
export function wrap(label, control, { hint, required, className } = {}) {
  if (!control.id) control.id = uid("fld");
  const error = h("p", { class: "field-error", id: `${control.id}-error`, hidden: true, role: "alert" });
  const hintEl = hint ? h("p", { class: "hint", id: `${control.id}-hint`, text: hint }) : null;
  control.setAttribute("aria-describedby", [hintEl?.id, error.id].filter(Boolean).join(" "));
  // The asterisk is for the eye; screen readers hear "required" from the control itself.
  if (required) control.setAttribute("aria-required", "true");
  return h(
    "div",
    { class: `field ${className || ""}`.trim() },
    h("label", { for: control.id }, label, required ? h("span", { class: "required", "aria-hidden": "true", text: " *" }) : null),
    control,
    hintEl,
    error,
  );
}

// A group of controls (objects, arrays, assets, blocks) with a legend and an error line.
export function group(label, { hint, required, className } = {}, ...children) {
  return h(
    "fieldset",
    { class: `group ${className || ""}`.trim() },
    // A group has no aria-required: its legend says it in words for screen readers.
    h("legend", {}, label, required ? [h("span", { class: "required", "aria-hidden": "true", text: " *" }), h("span", { class: "visually-hidden", text: " (required)" })] : null),
    hint ? h("p", { class: "hint", text: hint }) : null,
    h("p", { class: "field-error", hidden: true, role: "alert" }),
    ...children,
  );
}

export function constraintHint(f) {
  const parts = [];
  if (f.minLength != null && f.maxLength != null) parts.push(`${f.minLength} to ${f.maxLength} characters`);
  else if (f.minLength != null) parts.push(`At least ${f.minLength} characters`);
  else if (f.maxLength != null) parts.push(`At most ${f.maxLength} characters`);
  if (f.min != null && f.max != null) parts.push(`From ${f.min} to ${f.max}`);
  else if (f.min != null) parts.push(`At least ${f.min}`);
  else if (f.max != null) parts.push(`At most ${f.max}`);
  if (f.integer) parts.push("A whole number");
  if (f.pattern) parts.push(`Pattern: ${f.pattern}`);
  if (f.minItems != null) parts.push(`At least ${f.minItems} items`);
  if (f.maxItems != null) parts.push(`At most ${f.maxItems} items`);
  return parts.join(" · ") || undefined;
}

export function common(f, options) {
  return { hint: constraintHint(f), required: f.required };
}
