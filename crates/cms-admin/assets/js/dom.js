// Small DOM helpers shared by every page. Text always goes in as text (textContent, attribute
// values): no module builds HTML from strings, so stored content can never run as markup.

// h("button", { class: "primary", on: { click } }, "Save") -> <button class="primary">Save</button>
// attrs: `class`, `text`, `on` (event listeners), `dataset`, boolean attributes as true/false,
// anything else set as an attribute (null/undefined/false skip it). Children may be nodes,
// strings, numbers, arrays of those, or null/false (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "on") {
      for (const [event, handler] of Object.entries(value)) el.addEventListener(event, handler);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "text") {
      el.textContent = String(value);
    } else if (key === "value" && "value" in el) {
      el.value = value;
    } else if (key === "checked" || key === "selected" || key === "disabled" || key === "hidden" || key === "multiple" || key === "required" || key === "readOnly") {
      el[key] = Boolean(value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

// Replaces the children of `el`.
export function render(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let counter = 0;
// A unique id for label/input pairs.
export function uid(prefix = "f") {
  counter += 1;
  return `${prefix}-${counter}`;
}

// A labelled control: <div class="field"><label for>…</label>{control}<p class="hint">…</p>
// <p class="field-error" role="alert"></p></div>. The control gets an id if it has none.
export function field(label, control, { hint, required } = {}) {
  if (!control.id) control.id = uid();
  const error = h("p", { class: "field-error", id: `${control.id}-error`, hidden: true });
  const hintEl = hint ? h("p", { class: "hint", id: `${control.id}-hint`, text: hint }) : null;
  const described = [hintEl?.id, error.id].filter(Boolean).join(" ");
  control.setAttribute("aria-describedby", described);
  return h(
    "div",
    { class: "field", dataset: { field: control.name || "" } },
    h("label", { for: control.id }, label, required ? h("span", { class: "required", "aria-hidden": "true", text: " *" }) : null),
    control,
    hintEl,
    error,
  );
}

// Shows (or with no message, clears) the error line of a field made by `field()`.
export function setFieldError(fieldEl, message) {
  const error = fieldEl.querySelector(":scope > .field-error");
  const control = fieldEl.querySelector(":scope > input, :scope > select, :scope > textarea");
  if (error) {
    error.textContent = message || "";
    error.hidden = !message;
  }
  if (control) control.toggleAttribute("aria-invalid", Boolean(message));
  fieldEl.classList.toggle("invalid", Boolean(message));
}

// A transient message at the top of the page, read out by screen readers.
export function notify(message, kind = "info") {
  let region = document.getElementById("notices");
  if (!region) {
    region = h("div", { id: "notices", class: "notices", role: "status", "aria-live": "polite" });
    document.body.append(region);
  }
  const note = h("div", { class: `notice ${kind}` }, h("span", { text: message }));
  const close = h("button", { type: "button", class: "link", "aria-label": "Dismiss", text: "×", on: { click: () => note.remove() } });
  note.append(close);
  region.append(note);
  if (kind !== "error") setTimeout(() => note.remove(), 5000);
  return note;
}

// A banner inside `container` (form errors): replaced on each call, cleared with no message.
export function banner(container, message, kind = "error") {
  let el = container.querySelector(":scope > .banner");
  if (!message) {
    el?.remove();
    return null;
  }
  if (!el) {
    el = h("div", { class: "banner", role: "alert" });
    container.prepend(el);
  }
  el.className = `banner ${kind}`;
  el.textContent = message;
  return el;
}

// A modal <dialog> with a title, body nodes and buttons; resolves to the value of the button
// pressed (Escape resolves to null). `buttons`: [{ label, value, class }].
export function dialog(title, body, buttons) {
  return new Promise((resolve) => {
    const titleId = uid("dlg");
    const el = h(
      "dialog",
      { class: "dialog", "aria-labelledby": titleId },
      h("h2", { id: titleId, text: title }),
      h("div", { class: "dialog-body" }, body),
      h(
        "div",
        { class: "dialog-actions" },
        buttons.map((b) =>
          h("button", {
            type: "button",
            class: b.class || "",
            text: b.label,
            dataset: { value: String(b.value) },
            on: {
              click: () => {
                el.close();
                resolve(b.value);
              },
            },
          }),
        ),
      ),
    );
    el.addEventListener("cancel", () => resolve(null));
    const opener = document.activeElement;
    el.addEventListener("close", () => {
      el.remove();
      refocus(opener);
    });
    document.body.append(el);
    el.showModal();
  });
}

// Gives the focus back to `el` (what had it before a modal dialog), if it is still on the page.
// Chromium's own return of the focus when a modal dialog closes leaves the element active but
// deaf to the keyboard (typing after "Cancel" went nowhere), so it is handed over again.
export function refocus(el) {
  if (!(el instanceof HTMLElement) || !el.isConnected || el === document.body) return;
  el.blur();
  el.focus();
}

// A yes/no question; resolves to true when confirmed.
export async function confirm(title, message, { confirmLabel = "Confirm", danger = false } = {}) {
  const answer = await dialog(title, h("p", { text: message }), [
    { label: "Cancel", value: false },
    { label: confirmLabel, value: true, class: danger ? "danger" : "primary" },
  ]);
  return answer === true;
}

export function setTitle(text) {
  document.title = `${text} · CMS`;
}

// "2026-11-24T07:10:00Z" -> a short local date and time. Absolute: for what needs the exact
// moment (schedules, notices); lists and headers show `timeAgo` instead.
export function formatDate(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;

// "just now", "3 minutes ago", "yesterday", "in 2 days", "on 4 March": how far `iso` is from
// `now`, as a person says it. Hours while it is the same day (or less than six hours apart
// across midnight), calendar days within a week, then the date itself.
export function relativeTime(iso, now = new Date()) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const diff = date.getTime() - now.getTime();
  const away = Math.abs(diff);
  if (away < 45 * 1000) return "just now";
  if (away < 45 * MINUTE) return relative.format(Math.round(diff / MINUTE), "minute");
  const days = Math.round((startOfDay(date) - startOfDay(now)) / (24 * HOUR));
  if (days === 0 || away < 6 * HOUR) return relative.format(Math.round(diff / HOUR), "hour");
  if (Math.abs(days) < 7) return relative.format(days, "day");
  const sameYear = date.getFullYear() === now.getFullYear();
  return `on ${date.toLocaleDateString(undefined, { day: "numeric", month: "long", year: sameYear ? undefined : "numeric" })}`;
}

// Local midnight of `date`, in milliseconds (days are counted on the calendar, not in 24 h).
function startOfDay(date) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
}

// <time datetime="…" title="24 Nov 2026, 07:10">3 minutes ago</time>: the relative time,
// with the exact moment on hover and for assistive technology that reads the title.
export function timeAgo(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return h("time", { datetime: date.toISOString(), title: formatDate(iso), text: relativeTime(iso) });
}

export function formatBytes(n) {
  if (typeof n !== "number") return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

// Calls `fn` at most once per `ms` of quiet (search boxes).
export function debounce(fn, ms = 250) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

// An empty list that says what to do: `text`, then the actions that fill it (buttons, links;
// null ones skipped).
export function emptyState(text, ...actions) {
  const shown = actions.flat().filter(Boolean);
  return h("div", { class: "empty-state" }, h("p", { text }), shown.length ? h("div", { class: "actions" }, shown) : null);
}

// A button that takes the person to the form below that fills an empty list: it focuses the
// control `find()` returns.
export function focusButton(text, find) {
  return h("button", {
    type: "button",
    text,
    on: {
      click: () => {
        const control = find();
        control?.scrollIntoView({ block: "center" });
        control?.focus();
      },
    },
  });
}

// A page that failed to load: the message in place of its content.
export function failed(main, error) {
  render(main, h("div", { class: "banner error", role: "alert", text: error?.message || String(error) }));
}

// Marks the page as drawn and usable: tests and the page-speed benchmark wait for it.
// `readyAt` is the time since navigation started, in milliseconds.
export function ready(main) {
  if (main.dataset.ready !== "true") main.dataset.readyAt = String(Math.round(performance.now()));
  main.dataset.ready = "true";
}
