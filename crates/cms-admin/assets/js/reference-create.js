// "Create new …" of a reference field: a dialog with the required fields of the target type
// (the form of js/fields.js, so each field is edited as on its own page), which creates the
// document through the API and resolves to it; null when cancelled. The dialog stays open on
// a refusal, with the API's message at the field it names.

import { post, data } from "./api.js";
import { h, uid } from "./dom.js";
import { labelOf, titleField } from "./field-markup.js";

export async function createReferenced(ctx, type, typed) {
  // Imported here, not at the top: fields.js imports the reference editor, which imports this.
  const { createFields, FormError, parsePath } = await import("./fields.js");
  const schema = ctx.schema(type);
  const name = titleField(schema);
  // What a new document needs; the title field too, so it can be found and chosen again.
  const wanted = (schema.fields || []).filter((f) => f.required || f.name === name);
  const fields = createFields(wanted, { ctx });
  if (name && typed) fields.set({ [name]: typed });
  const titleId = uid("dlg");
  const banner = h("p", { class: "field-error", role: "alert", hidden: true });
  const cancel = h("button", { type: "button", text: "Cancel" });
  const create = h("button", { type: "submit", class: "primary", text: `Create ${schema.title || type}` });
  const form = h("form", { class: "stack", novalidate: true }, banner, fields.el, h("div", { class: "dialog-actions" }, cancel, create));
  const el = h("dialog", { class: "dialog", "aria-labelledby": titleId }, h("h2", { id: titleId, text: `New ${schema.title || type}` }), form);
  document.body.append(el);

  return new Promise((resolve) => {
    let result = null;
    const say = (message) => {
      banner.textContent = message || "";
      banner.hidden = !message;
    };
    cancel.addEventListener("click", () => el.close());
    el.addEventListener("close", () => {
      el.remove();
      resolve(result);
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      say(null);
      let value;
      try {
        value = fields.get();
      } catch (error) {
        if (!(error instanceof FormError)) throw error;
        return say(error.message);
      }
      // A draft may lack a required value (only publishing checks it), but a document made
      // to be chosen here needs what it cannot be found or shown without.
      const missing = wanted.find((f) => f.required && value[f.name] === undefined);
      if (missing) {
        say(`${labelOf(missing)} is required.`);
        return fields.editors.get(missing.name)?.el.querySelector("input, textarea, select")?.focus();
      }
      create.disabled = true;
      try {
        result = await data(post("/api/documents", { type, data: value }));
        el.close();
      } catch (error) {
        // The API's messages name the field (issue 32 point 3); focus goes to it when it is
        // on this form.
        const issue = error.issues?.[0];
        const wrapper = issue ? fields.locate(parsePath(issue.path)) : null;
        say(issue?.message || error.message);
        (wrapper?.querySelector("input, textarea, select") || fields.el.querySelector("input, textarea, select"))?.focus();
      } finally {
        create.disabled = false;
      }
    });
    el.showModal();
    fields.el.querySelector("input, textarea, select")?.focus();
  });
}
