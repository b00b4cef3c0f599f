// The pages of the signed-out: sign-in, sign-up (the first account claims the instance, with
// the claim code when that policy is on), forgotten and new passwords, and accepting an
// invitation (signing in or creating the invited account first).

import { get, post, ApiError, seg } from "../api.js";
import { h, render, field, banner, setTitle, ready } from "../dom.js";
import { sameOriginPath, FALLBACK } from "../redirect.js";

export async function mount(main, { params }) {
  const session = await get("/api/auth/get-session").catch(() => null);
  // Only a path of this instance is a place to go back to (never another origin).
  const back = sameOriginPath(new URLSearchParams(location.search).get("redirect"));
  switch (params.page) {
    case "sign-in":
      if (session) return location.replace(back || FALLBACK);
      if (await setupRequired()) return signUp(main, back, true);
      return signIn(main, back);
    case "sign-up":
      if (session) return location.replace(back || FALLBACK);
      return signUp(main, back, await setupRequired());
    case "forgot-password":
      return forgotPassword(main);
    case "reset-password":
      return resetPassword(main);
    case "accept-invitation":
      return acceptInvitation(main, params.id, session);
    default:
      throw new Error(`unknown page ${params.page}`);
  }
}

// Whether the instance has no account yet: then nobody can sign in, and the first page is
// the one that creates the administrator. A failed look-up keeps the usual sign-in.
async function setupRequired() {
  const answer = await get("/api/auth/setup").catch(() => null);
  return answer?.data?.setupRequired === true;
}

function card(title, ...children) {
  setTitle(title);
  return h("section", { class: "auth-card" }, h("h1", { text: title }), children);
}

function input(name, type, attrs = {}) {
  return h("input", { name, type, autocomplete: attrs.autocomplete, required: attrs.required ?? true, ...attrs });
}

// A form whose submit runs `action(values)`; errors show in a banner at its top, and the
// submit button is disabled while the request runs.
function form(fields, submitLabel, action) {
  const submit = h("button", { type: "submit", class: "primary", text: submitLabel });
  const el = h("form", { class: "stack", novalidate: false }, fields, h("div", { class: "actions" }, submit));
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    banner(el, null);
    submit.disabled = true;
    try {
      await action(Object.fromEntries(new FormData(el).entries()), el);
    } catch (error) {
      banner(el, describe(error));
    } finally {
      submit.disabled = false;
    }
  });
  return el;
}

function describe(error) {
  if (!(error instanceof ApiError)) return error.message;
  if (error.issues.length) return error.issues.map((i) => `${i.path || "body"}: ${i.message}`).join("; ");
  if (error.status === 429) return "Too many attempts. Wait a moment and try again.";
  return error.message;
}

// What a refused single sign-on says, by the code the server sends back (`?sso=`): never text
// from the URL itself.
const SSO_REFUSALS = {
  denied: "The sign-in was cancelled at your identity provider.",
  state: "The sign-in could not be verified, or took too long. Please start again.",
  code: "Your identity provider did not confirm the sign-in. It may have expired: please start again.",
  unverified: "Your identity provider did not confirm that your e-mail address is verified.",
  domain: "There is no account for your e-mail address, and its domain may not sign up here. Ask for an invitation.",
  unavailable: "Your identity provider cannot be reached right now. Try again later.",
};

async function signIn(main, back) {
  // A single sign-on that needs the second factor comes back with its challenge in the
  // fragment, which no server sees.
  const challenge = new URLSearchParams(location.hash.slice(1)).get("two-factor");
  if (challenge) {
    history.replaceState(null, "", location.pathname + location.search);
    return secondFactor(main, back, challenge);
  }
  const el = form(
    [
      field("E-mail", input("email", "email", { autocomplete: "username" })),
      field("Password", input("password", "password", { autocomplete: "current-password" })),
    ],
    "Sign in",
    async (values) => {
      let answer;
      try {
        answer = await post("/api/auth/sign-in/email", { email: values.email, password: values.password });
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) throw new Error("The e-mail or password is wrong.");
        throw error;
      }
      if (answer?.twoFactorRequired) return secondFactor(main, back, answer.challenge);
      location.assign(back || FALLBACK);
    },
  );
  const refusal = SSO_REFUSALS[new URLSearchParams(location.search).get("sso")];
  if (refusal) banner(el, refusal);
  const providers = await get("/api/auth/oidc/providers")
    .then((answer) => answer.data)
    .catch(() => []);
  const redirect = back ? `?redirect=${encodeURIComponent(back)}` : "";
  const sso = providers.length
    ? h(
        "div",
        { class: "sso stack" },
        h("p", { class: "muted", text: "Or sign in with" }),
        providers.map((p) => h("a", { class: "button sso-provider", href: `${p.startUrl}${redirect}`, text: `Sign in with ${p.name}` })),
      )
    : null;
  render(
    main,
    card(
      "Sign in",
      el,
      sso,
      h(
        "p",
        { class: "muted" },
        h("a", { href: "/admin/forgot-password", text: "Forgot your password?" }),
        " · ",
        h("a", { href: `/admin/sign-up${back ? `?redirect=${encodeURIComponent(back)}` : ""}`, text: "Create an account" }),
      ),
    ),
  );
  main.querySelector("input")?.focus();
  ready(main);
}

// The second step of a sign-in with two-factor on: a code from the authenticator app, or one of
// the recovery codes.
function secondFactor(main, back, challenge) {
  let recovery = false;
  const code = input("code", "text", { autocomplete: "one-time-code", inputmode: "numeric", spellcheck: "false" });
  const label = h("label", { for: "two-factor-code", text: "Code from your authenticator app" });
  code.id = "two-factor-code";
  const el = form([h("div", { class: "field" }, label, code)], "Verify", async (values) => {
    const body = recovery ? { challenge, recoveryCode: values.code } : { challenge, code: values.code.replace(/\s/g, "") };
    try {
      await post("/api/auth/two-factor", body);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw new Error(error.message ? capitalise(error.message) + "." : "The code is wrong.");
      throw error;
    }
    location.assign(back || FALLBACK);
  });
  const toggle = h("button", {
    type: "button",
    class: "link",
    text: "Use a recovery code instead",
    on: {
      click: () => {
        recovery = !recovery;
        label.textContent = recovery ? "Recovery code" : "Code from your authenticator app";
        code.setAttribute("inputmode", recovery ? "text" : "numeric");
        toggle.textContent = recovery ? "Use a code from the app instead" : "Use a recovery code instead";
        code.value = "";
        code.focus();
      },
    },
  });
  render(
    main,
    card(
      "Two-factor sign-in",
      h("p", { class: "muted", text: "Enter the six-digit code your authenticator app shows for this account." }),
      el,
      h("p", { class: "muted" }, toggle, " · ", h("a", { href: "/admin/sign-in", text: "Start again" })),
    ),
  );
  code.focus();
  ready(main);
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// The account fields and, folded away, the first-admin claim code (sent as the
// x-cms-bootstrap-code header, never in the URL).
// `invitation` (the accept page's): its address fills the e-mail field, and its secret goes
// with the sign-up, which then joins the invitation's organization.
function signUpForm(onDone, invitation = null) {
  const code = input("claimCode", "text", { required: false, autocomplete: "off", spellcheck: "false" });
  return form(
    [
      field("Name", input("name", "text", { autocomplete: "name" })),
      field("E-mail", input("email", "email", { autocomplete: "email", value: invitation?.email })),
      field("Password", input("password", "password", { autocomplete: "new-password", minlength: 8, maxlength: 128 }), {
        hint: "8 to 128 characters.",
      }),
      h(
        "details",
        { class: "claim-code" },
        h("summary", { text: "I have a claim code" }),
        field("Claim code", code, { hint: "Printed in the server log at start, when the instance asks for one to create its first account." }),
      ),
    ],
    "Create account",
    async (values) => {
      const headers = values.claimCode ? { "x-cms-bootstrap-code": values.claimCode.trim() } : {};
      let result;
      try {
        const body = { name: values.name, email: values.email, password: values.password };
        if (invitation) body.invitationToken = invitation.token;
        result = await post("/api/auth/sign-up/email", body, { headers });
      } catch (error) {
        if (error instanceof ApiError && error.status === 422) throw new Error("An account with this e-mail already exists. Sign in instead.");
        throw error;
      }
      await onDone(result);
    },
  );
}

// `first`: the instance has no account yet, so this one becomes its administrator.
function signUp(main, back, first = false) {
  const holder = h("div");
  const el = signUpForm(async (result) => {
    if (!result.token) {
      render(holder, h("p", { class: "banner info", role: "status", text: `We sent a link to ${result.user.email}. Follow it to verify your address, then sign in.` }));
      return;
    }
    location.assign(back || FALLBACK);
  });
  render(holder, el);
  render(
    main,
    first
      ? card(
          "Create the first account",
          h("p", { text: "Welcome. This instance has no account yet: the one you create now becomes its administrator and owns the organization \u201cDefault\u201d. You can invite others from Settings afterwards." }),
          holder,
        )
      : card(
          "Create an account",
          h("p", { class: "muted", text: "The first account becomes the instance's administrator. Later accounts need an invitation unless the instance allows open sign-up." }),
          holder,
          h("p", { class: "muted" }, "Already have an account? ", h("a", { href: "/admin/sign-in", text: "Sign in" })),
        ),
  );
  main.querySelector("input")?.focus();
  ready(main);
}

function forgotPassword(main) {
  const holder = h("div");
  render(
    holder,
    form([field("E-mail", input("email", "email", { autocomplete: "email" }))], "Send reset link", async (values) => {
      await post("/api/user/request-password-reset", { email: values.email });
      render(holder, h("p", { class: "banner info", role: "status", text: "If an account uses this address, a link to choose a new password is on its way." }));
    }),
  );
  render(main, card("Forgot password", holder, h("p", { class: "muted" }, h("a", { href: "/admin/sign-in", text: "Back to sign-in" }))));
  main.querySelector("input")?.focus();
  ready(main);
}

function resetPassword(main) {
  const token = new URLSearchParams(location.search).get("token");
  const holder = h("div");
  if (!token) {
    render(holder, h("p", { class: "banner error", role: "alert", text: "This link has no reset token. Ask for a new link." }));
  } else {
    render(
      holder,
      form(
        [
          field("New password", input("password", "password", { autocomplete: "new-password", minlength: 8, maxlength: 128 }), { hint: "8 to 128 characters." }),
          field("Repeat it", input("repeat", "password", { autocomplete: "new-password" })),
        ],
        "Set password",
        async (values) => {
          if (values.password !== values.repeat) throw new Error("The two passwords differ.");
          try {
            await post("/api/user/reset-password", { token, newPassword: values.password });
          } catch (error) {
            if (error instanceof ApiError && error.status === 400 && !error.issues.length) throw new Error("This link has expired or was already used. Ask for a new one.");
            throw error;
          }
          render(holder, h("p", { class: "banner info", role: "status" }, "Your password is set. ", h("a", { href: "/admin/sign-in", text: "Sign in" })));
        },
      ),
    );
  }
  render(main, card("Choose a new password", holder, h("p", { class: "muted" }, h("a", { href: "/admin/forgot-password", text: "Ask for a new link" }))));
  main.querySelector("input")?.focus();
  ready(main);
}

// The page an invitation's `acceptUrl` opens (`?token=<secret>`): it looks the invitation up
// by its secret, then signed in, one button joins (sending the secret, which proves the
// mailbox); signed out, sign in, or create the invited account with the secret, which joins
// at once. The older `/admin/accept-invitation/{id}` links carry no secret: they are accepted
// by an account whose address is verified.
async function acceptInvitation(main, id, session) {
  const token = new URLSearchParams(location.search).get("token");
  let invitation = null;
  if (token) {
    const found = await get(`/api/organizations/invitations/preview?token=${encodeURIComponent(token)}`).catch(() => null);
    if (!found?.data) {
      render(main, card("Invitation", h("p", { class: "banner error", role: "alert", text: "This invitation link is not valid any more: it was used or cancelled, or it has expired. Ask for a new one." })));
      ready(main);
      return;
    }
    invitation = { ...found.data, token };
    id = invitation.id;
  }
  const here = token ? `/admin/accept-invitation?token=${encodeURIComponent(token)}` : `/admin/accept-invitation/${seg(id)}`;
  const what = invitation ? invitationSummary(invitation) : null;
  if (session) {
    const status = h("div");
    const accept = h("button", {
      type: "button",
      class: "primary",
      text: "Accept invitation",
      on: {
        click: async () => {
          accept.disabled = true;
          try {
            await post(`/api/organizations/invitations/${seg(id)}/accept`, token ? { token } : {});
            location.assign("/admin");
          } catch (error) {
            banner(status, invitationRefusal(error));
            accept.disabled = false;
          }
        },
      },
    });
    render(main, card("Invitation", what, h("p", { text: `You are signed in as ${session.user.email}.` }), status, h("div", { class: "actions" }, accept)));
    ready(main);
    return;
  }
  const el = signUpForm(async (result) => {
    if (!result.token) {
      render(main, card("Invitation", h("p", { class: "banner info", role: "status", text: `We sent a link to ${result.user.email}. Follow it, then sign in to join.` })));
      return;
    }
    location.assign("/admin");
  }, invitation);
  render(
    main,
    card(
      "You are invited",
      what,
      h("p", {}, "Have an account already? ", h("a", { href: `/admin/sign-in?redirect=${encodeURIComponent(here)}`, text: "Sign in to accept" }), "."),
      h("h2", { text: "Or create your account" }),
      el,
    ),
  );
  ready(main);
}

// Who invites, to which organization, with which role, and for which address.
function invitationSummary(invitation) {
  const who = invitation.inviterName ? `${invitation.inviterName} invited you` : "You are invited";
  return h(
    "div",
    { class: "invitation-summary" },
    h("p", { text: `${who} to join ${invitation.organizationName} as ${invitation.role}.` }),
    h(
      "dl",
      { class: "facts" },
      h("dt", { text: "Organization" }),
      h("dd", { text: invitation.organizationName }),
      h("dt", { text: "Role" }),
      h("dd", { text: invitation.role }),
      h("dt", { text: "Invited by" }),
      h("dd", { text: invitation.inviterName || "a member who has left" }),
      h("dt", { text: "For" }),
      h("dd", { text: invitation.email }),
    ),
  );
}

// Why accepting failed, in words for the person who tried.
function invitationRefusal(error) {
  if (!(error instanceof ApiError)) return describe(error);
  if (error.status === 404) return "This invitation was not found: it may have been cancelled.";
  if (error.status === 403 && !error.body?.message) {
    return "Open the link from the invitation e-mail to accept it, or verify your e-mail address first.";
  }
  return describe(error);
}
