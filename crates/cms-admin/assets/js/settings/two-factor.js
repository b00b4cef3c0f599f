// Two-factor sign-in on the Account page: set it up with an authenticator app (the QR code the
// server draws, or the key typed by hand), confirm with a first code, see the recovery codes
// once; turn it off with the password. A member of an organization that requires it lands
// here first, and goes on once it is on.

import { get, post, data } from "../api.js";
import { h, render, field, notify } from "../dom.js";
import { onSubmit, part, describe } from "../pages/settings.js";

export async function twoFactorPart(ctx) {
  const holder = h("div", { class: "two-factor" });
  const section = part("Two-factor sign-in", holder);
  const required = ctx.session?.twoFactorEnrolmentRequired === true;

  const draw = async () => {
    const status = await data(get("/api/user/two-factor"));
    if (status.enabled) drawOn(status);
    else drawOff();
  };

  function drawOff() {
    render(
      holder,
      required
        ? h("p", { class: "banner warn", role: "alert", text: "This organization requires two-factor sign-in. Set it up to go on." })
        : null,
      h("p", { text: "Signing in will ask for a code from an authenticator app on your phone as well as your password." }),
      h("div", { class: "actions" }, h("button", { type: "button", class: "primary", text: "Set up two-factor sign-in", on: { click: enrol } })),
    );
  }

  async function enrol() {
    let enrolment;
    try {
      enrolment = await data(post("/api/user/two-factor/enroll", {}));
    } catch (error) {
      notify(describe(error), "error");
      return;
    }
    const code = h("input", { name: "code", type: "text", inputmode: "numeric", autocomplete: "one-time-code", pattern: "[0-9 ]{6,7}", maxlength: 7, required: true });
    const form = h(
      "form",
      { class: "stack" },
      h("p", { text: "Scan this QR code with your authenticator app, or type the key into it, then enter the six-digit code the app shows." }),
      h("img", { class: "qr-code", src: `data:image/svg+xml;base64,${btoa(enrolment.qrCodeSvg)}`, alt: "QR code to add this account to an authenticator app", width: 200, height: 200 }),
      h("p", {}, "Key: ", h("code", { class: "secret-key", text: enrolment.secret })),
      field("Code from the app", code, { required: true }),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "submit", class: "primary", text: "Turn on" }),
        h("button", { type: "button", text: "Cancel", on: { click: () => draw() } }),
      ),
    );
    onSubmit(form, async () => {
      const confirmed = await data(post("/api/user/two-factor/confirm", { code: code.value.replace(/\s/g, "") }));
      showRecoveryCodes(confirmed.recoveryCodes);
    });
    render(holder, form);
    code.focus();
  }

  function showRecoveryCodes(codes) {
    const done = h("button", {
      type: "button",
      class: "primary",
      text: "I have saved them",
      // The organization's pages open once the requirement is met.
      on: { click: () => (required ? location.assign("/admin") : draw()) },
    });
    render(
      holder,
      h("p", { class: "banner success", role: "status", text: "Two-factor sign-in is on." }),
      h("p", { text: "Keep these recovery codes somewhere safe: each one signs you in once in place of a code, should you lose your phone. They are shown only now." }),
      h("ul", { class: "recovery-codes", "aria-label": "Recovery codes" }, codes.map((c) => h("li", {}, h("code", { text: c })))),
      h("div", { class: "actions" }, done),
    );
    done.focus();
  }

  function drawOn(status) {
    const password = h("input", { name: "currentPassword", type: "password", required: true, autocomplete: "current-password" });
    const form = h(
      "form",
      { class: "stack" },
      field("Current password", password, { required: true }),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "danger", text: "Turn off two-factor sign-in" })),
    );
    onSubmit(form, async () => {
      await post("/api/user/two-factor/disable", { currentPassword: password.value });
      notify("Two-factor sign-in is off.", "success");
      await draw();
    });
    const left = status.recoveryCodesLeft;
    render(
      holder,
      h("p", { class: "two-factor-on", text: `Two-factor sign-in is on. ${left} recovery ${left === 1 ? "code" : "codes"} left.` }),
      form,
    );
  }

  await draw();
  return section;
}
