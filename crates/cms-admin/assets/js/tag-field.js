// The editor of a list of plain strings (`tags` of the demo post): chips, each with a remove
// button, and one input. Enter or a comma adds what was typed, Backspace in the empty input
// removes the last chip. The stored value is the same array of strings as the generic array
// editor's (js/fields.js), which still edits every other array.

import { h } from "./dom.js";
import { changed, constraintHint, wrap } from "./field-markup.js";

// Whether `f` is an array of plain strings: one member, a string with no list of options.
export function isTagList(f) {
  return f.type === "array" && f.of?.length === 1 && f.of[0].type === "string" && !f.of[0].options?.length;
}

export function tagEditor(f, options) {
  const noun = tagNoun(options.label);
  const input = h("input", { type: "text", name: f.name, autocomplete: "off", hidden: options.readOnly });
  const chips = h("ul", { class: "chips", "aria-label": options.label });
  const hints = [constraintHint(f), options.readOnly ? null : "Enter or a comma adds; Backspace in the empty box removes the last."].filter(Boolean);
  const el = wrap(options.label, input, { required: f.required, hint: hints.join(" · "), className: "tags" });
  input.before(chips);
  let tags = [];

  const draw = () => {
    chips.replaceChildren(
      ...tags.map((tag, i) =>
        h(
          "li",
          { class: "chip" },
          h("span", { class: "chip-text", text: tag }),
          options.readOnly ? null : h("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${noun} ${tag}`, text: "×", on: { click: () => remove(i) } }),
        ),
      ),
    );
  };
  // Adds each comma-separated part of `text` not already there; true when one was added.
  const add = (text) => {
    const fresh = String(text)
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t && !tags.includes(t));
    if (!fresh.length) return false;
    tags = [...tags, ...new Set(fresh)];
    draw();
    changed(el);
    return true;
  };
  const remove = (index) => {
    const gone = tags[index];
    tags = tags.filter((_, i) => i !== index);
    draw();
    changed(el);
    // The focus stays in the field: on the next chip's button, or the input.
    const buttons = chips.querySelectorAll(".chip-remove");
    (buttons[Math.min(index, buttons.length - 1)] || input).focus();
    return gone;
  };

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === ",") {
      // Enter never submits the document's form from here.
      event.preventDefault();
      if (add(input.value)) input.value = "";
    } else if (event.key === "Backspace" && input.value === "" && tags.length) {
      event.preventDefault();
      tags = tags.slice(0, -1);
      draw();
      changed(el);
    }
  });
  // A pasted "a, b, c" becomes chips at once; what follows the last comma stays typed.
  input.addEventListener("input", () => {
    if (!input.value.includes(",")) return;
    const parts = input.value.split(",");
    const rest = parts.pop();
    add(parts.join(","));
    input.value = rest.trimStart();
  });
  // Text left in the box when leaving it is a tag too.
  input.addEventListener("blur", () => {
    if (add(input.value)) input.value = "";
  });

  return {
    el,
    // Typed but not yet added text counts, so nothing typed is lost on save.
    get() {
      const pending = input.value.trim();
      const all = pending && !tags.includes(pending) ? [...tags, pending] : tags;
      return all.length ? [...all] : undefined;
    },
    set(v) {
      tags = Array.isArray(v) ? v.filter((t) => typeof t === "string") : [];
      input.value = "";
      draw();
    },
    // An issue of one item (`tags[2]`) is shown at the field: its message names the item.
    locate: () => el,
  };
}

// "Tags" -> "tag": the word a remove button names its chip with.
function tagNoun(label) {
  const word = String(label || "item").trim().toLowerCase();
  return word.endsWith("s") ? word.slice(0, -1) : word;
}
