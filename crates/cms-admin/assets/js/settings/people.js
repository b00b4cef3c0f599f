// People: your own account (profile, password, sessions, deleting it, and for an instance super
// admin the sign-up policy), the organization (its settings, creating another, deleting it),
// and its members and invitations.

import { get, post, patch, del, data, seg, ApiError } from "../api.js";
import { h, render, field, banner, notify, confirm, setFieldError, emptyState, focusButton } from "../dom.js";
import { onSubmit, checkbox, table, part, when, describe, showRefusal } from "../pages/settings.js";
import { twoFactorPart } from "./two-factor.js";

// ---------------------------------------------------------------------------------------
// Account

export async function account(body, ctx) {
  const sessions = await sessionsPart();
  const twoFactor = await twoFactorPart(ctx);
  // A member sent here to set up two-factor sign-in sees that part first.
  const parts = ctx.session?.twoFactorEnrolmentRequired
    ? [twoFactor, profileForm(ctx), passwordPart(ctx, sessions.refresh), sessions.section]
    : [profileForm(ctx), passwordPart(ctx, sessions.refresh), twoFactor, sessions.section];
  if (ctx.user.role === "super_admin") parts.push(await signUpPolicy());
  parts.push(deleteAccount());
  render(body, parts);
}

function profileForm(ctx) {
  const name = h("input", { name: "name", type: "text", required: true, autocomplete: "name", value: ctx.user.name || "" });
  const email = h("input", { name: "email", type: "email", required: true, autocomplete: "email", value: ctx.user.email || "" });
  const form = h(
    "form",
    { class: "stack" },
    field("Name", name, { required: true }),
    field("E-mail", email, { required: true, hint: "A new address must be confirmed from the link sent to it." }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Save profile" })),
  );
  onSubmit(form, async () => {
    const change = {};
    if (name.value !== ctx.user.name) change.name = name.value;
    if (email.value !== ctx.user.email) change.email = email.value;
    if (!Object.keys(change).length) return notify("Nothing changed.");
    const user = await data(patch("/api/user", change));
    Object.assign(ctx.user, user);
    // The top bar names the person signed in.
    const link = document.querySelector("#topbar .user");
    if (link) link.textContent = user.name || user.email;
    notify("Your profile is saved.", "success");
  });
  return part("Profile", form);
}

// Changing the password needs the current one; the other sessions end with it unless the box
// is cleared (then `changed()` redraws the list). Who forgot theirs is sent a reset link instead.
function passwordPart(ctx, changed) {
  const current = h("input", { name: "currentPassword", type: "password", required: true, autocomplete: "current-password" });
  const next = h("input", { name: "newPassword", type: "password", required: true, minlength: 8, maxlength: 128, autocomplete: "new-password" });
  const others = checkbox("Sign out my other sessions", { name: "revokeOtherSessions", checked: true, hint: "Every other browser and device where you are signed in." });
  const form = h(
    "form",
    { class: "stack" },
    field("Current password", current, { required: true }),
    field("New password", next, { required: true, hint: "8 to 128 characters." }),
    others.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Change password" })),
  );
  onSubmit(form, async () => {
    const result = await data(
      post("/api/user/change-password", {
        currentPassword: current.value,
        newPassword: next.value,
        revokeOtherSessions: others.input.checked,
      }),
    );
    form.reset();
    others.input.checked = true;
    const ended = result.revokedSessions;
    notify(ended ? `Your password is changed; ${ended} other ${ended === 1 ? "session was" : "sessions were"} signed out.` : "Your password is changed.", "success");
    await changed();
  });
  const send = h("button", {
    type: "button",
    text: "Send me a password reset link",
    on: {
      click: async () => {
        send.disabled = true;
        try {
          await post("/api/user/request-password-reset", { email: ctx.user.email });
          notify(`A link to choose a new password is on its way to ${ctx.user.email}.`, "success");
        } catch (error) {
          notify(describe(error), "error");
        } finally {
          send.disabled = false;
        }
      },
    },
  });
  return part("Password", form, h("p", { class: "muted", text: "Forgot it? We can e-mail you a link to choose a new one." }), h("div", { class: "actions" }, send));
}

// Where the account is signed in, this browser marked; each can be signed out from here.
async function sessionsPart() {
  const holder = h("div", { class: "sessions" });
  const section = part("Sessions", holder);
  const draw = async () => {
    let sessions;
    try {
      sessions = await data(get("/api/user/sessions"));
    } catch (error) {
      render(holder);
      banner(holder, describe(error), "error");
      return;
    }
    const rows = sessions.map((s) =>
      h(
        "tr",
        { dataset: { session: s.id } },
        h("td", {}, h("span", { text: s.userAgent || "Unknown browser" }), s.current ? h("span", { class: "badge", text: "This session" }) : null),
        h("td", { text: s.ipAddress || "—" }),
        h("td", {}, when(s.createdAt)),
        h("td", {}, when(s.lastSeenAt)),
        h("td", {}, h("button", { type: "button", text: "Sign out", "aria-label": `Sign out ${s.current ? "this session" : `the session of ${s.userAgent || "an unknown browser"}`}`, on: { click: () => signOut(s) } })),
      ),
    );
    render(holder, table(["Browser", "Address", "Signed in", "Last renewed", ""], rows, { caption: "Your sessions", empty: "No session is open." }));
  };
  const signOut = async (session) => {
    if (session.current && !(await confirm("Sign out here?", "This is the session you are using: you will be taken to the sign-in page.", { confirmLabel: "Sign out" }))) return;
    try {
      await del(`/api/user/sessions/${seg(session.id)}`);
    } catch (error) {
      notify(describe(error), "error");
      return;
    }
    if (session.current) return location.assign("/admin/sign-in");
    notify("That session is signed out.", "success");
    await draw();
  };
  await draw();
  return { section, refresh: draw };
}

const FIRST_ADMIN = [
  ["open", "The first person to sign up"],
  ["claimCode", "Whoever has the claim code from the server log"],
  ["allowlist", "One of the allowed e-mail addresses"],
  ["none", "Nobody: provisioned from the command line"],
];

async function signUpPolicy() {
  let policy;
  try {
    policy = await data(get("/api/instance-settings"));
  } catch (error) {
    const box = h("div");
    showRefusal(box, error);
    return part("Sign-up on this instance", box);
  }
  const inviteOnly = checkbox("Invitation only", { name: "inviteOnly", checked: policy.inviteOnly, hint: "Sign-up is refused unless the address holds a pending invitation." });
  const verify = checkbox("Require e-mail verification", { name: "requireEmailVerification", checked: policy.requireEmailVerification, hint: "Sign-in waits until the address is confirmed." });
  const firstAdmin = h("select", { name: "firstAdmin" }, FIRST_ADMIN.map(([value, text]) => h("option", { value, text, selected: policy.firstAdmin === value })));
  const emails = h("textarea", { name: "firstAdminEmails", rows: 3, value: (policy.firstAdminEmails || []).join("\n") });
  const emailsField = field("Allowed first-admin addresses", emails, { hint: "One address a line." });
  const showEmails = () => (emailsField.hidden = firstAdmin.value !== "allowlist");
  firstAdmin.addEventListener("change", showEmails);
  showEmails();
  const form = h(
    "form",
    { class: "stack" },
    inviteOnly.el,
    verify.el,
    field("First administrator", firstAdmin, { hint: "Who may claim the instance while it has no administrator." }),
    emailsField,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Save sign-up policy" })),
  );
  onSubmit(form, async () => {
    const change = { inviteOnly: inviteOnly.input.checked, requireEmailVerification: verify.input.checked, firstAdmin: firstAdmin.value };
    if (firstAdmin.value === "allowlist") change.firstAdminEmails = emails.value.split(/\s+/).filter(Boolean);
    await patch("/api/instance-settings", change);
    notify("The sign-up policy is saved.", "success");
  });
  return part("Sign-up on this instance", h("p", { class: "muted", text: "Instance-wide: only instance super admins see this." }), form);
}

function deleteAccount() {
  const password = h("input", { name: "password", type: "password", required: true, autocomplete: "current-password" });
  const form = h(
    "form",
    { class: "stack danger-zone" },
    h("p", { text: "Deleting your account removes you from every organization. It cannot be undone." }),
    field("Your password", password, { required: true }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "danger", text: "Delete my account" })),
  );
  onSubmit(form, async () => {
    if (!(await confirm("Delete your account?", "You will be signed out and your account is gone for good.", { confirmLabel: "Delete my account", danger: true }))) return;
    await del("/api/user", { password: password.value });
    location.assign("/admin/sign-in");
  });
  return part("Delete account", form);
}

// ---------------------------------------------------------------------------------------
// Organization

export async function organization(body, ctx) {
  const parts = [];
  if (ctx.organization) {
    const org = await data(get(`/api/organizations/${seg(ctx.organization.id)}`));
    const locales = await data(get("/api/locales"));
    parts.push(organizationForm(org, locales, ctx, () => organization(body, ctx)));
  }
  parts.push(organizationList(ctx), createOrganization(ctx));
  if (ctx.organization && mayDelete(ctx)) parts.push(deleteOrganization(ctx));
  render(body, parts);
}

// The organization's locales (CONTRACT.md section 17), offered where there is a choice: the
// instance has several locales, or the organization narrowed them already. Empty keeps every
// locale of the instance; the API refuses tags it does not offer and leaving the default out.
function localesField(org, locales, editable) {
  if (!org.locales && !(locales?.available?.length > 1)) return null;
  const input = h("input", { name: "locales", type: "text", value: (org.locales || []).join(", "), readOnly: !editable, placeholder: "every locale" });
  const hint = `The locales this organization writes in, comma-separated, ${locales.default} among them; empty for every locale of the instance.`;
  return { input, el: field("Locales", input, { hint }) };
}

function organizationForm(org, locales, ctx, redraw) {
  const editable = ctx.can("org.settings");
  const localeChoice = localesField(org, locales, editable);
  const name = h("input", { name: "name", type: "text", required: true, value: org.name, readOnly: !editable });
  const slug = h("input", { name: "slug", type: "text", required: true, pattern: "[a-z0-9-]+", value: org.slug, readOnly: !editable });
  const metadata = h("textarea", { name: "metadata", rows: 5, class: "code", value: JSON.stringify(org.metadata ?? {}, null, 2), readOnly: !editable });
  const parent = org.parentId ? ctx.organizations.find((o) => o.id === org.parentId) : null;
  const twoFactor = checkbox("Require two-factor sign-in", {
    name: "requireTwoFactor",
    checked: org.requireTwoFactor === true,
    disabled: !editable,
    hint: "Members can do nothing here until they turn on two-factor sign-in. Turn it on for your own account first.",
  });
  const form = h(
    "form",
    { class: "stack" },
    org.parentId ? h("p", { class: "muted", text: `A child organization of ${parent ? parent.name : org.parentId}.` }) : null,
    field("Organization name", name, { required: true }),
    field("Slug", slug, { required: true, hint: "Lowercase letters, digits and dashes." }),
    field("Metadata", metadata, { hint: "A JSON object of your own." }),
    localeChoice?.el,
    twoFactor.el,
    editable
      ? h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Save organization" }))
      : h("p", { class: "muted", text: "Your role may not change these settings." }),
  );
  onSubmit(form, async () => {
    let meta;
    try {
      meta = JSON.parse(metadata.value || "{}");
    } catch {
      return setFieldError(metadata.closest(".field"), "This is not valid JSON.");
    }
    if (!meta || typeof meta !== "object" || Array.isArray(meta)) return setFieldError(metadata.closest(".field"), "Metadata must be a JSON object.");
    try {
      const body = { name: name.value, slug: slug.value, metadata: meta, requireTwoFactor: twoFactor.input.checked };
      if (localeChoice) {
        const tags = localeChoice.input.value.split(",").map((t) => t.trim()).filter(Boolean);
        body.locales = tags.length ? tags : null;
      }
      const saved = await data(patch(`/api/organizations/${seg(org.id)}`, body));
      Object.assign(ctx.organization, saved);
      const option = document.querySelector(`#org-switcher option[value="${CSS.escape(org.id)}"]`);
      if (option) option.textContent = saved.name;
      notify("The organization is saved.", "success");
      await redraw();
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) return setFieldError(slug.closest(".field"), error.message || "That slug is taken.");
      throw error;
    }
  });
  return part("Settings", form);
}

function organizationList(ctx) {
  const rows = ctx.organizations.map((o) =>
    h(
      "tr",
      {},
      h("td", {}, o.name, o.id === ctx.organization?.id ? h("span", { class: "badge", text: "active" }) : null),
      h("td", { text: o.slug }),
      h("td", { text: o.role || "instance admin" }),
      h("td", { text: o.parentId ? ctx.organizations.find((p) => p.id === o.parentId)?.name || "another organization" : "—" }),
      h("td", {}, o.id === ctx.organization?.id ? null : h("button", { type: "button", text: `Switch to ${o.name}`, on: { click: () => switchTo(o.id) } })),
    ),
  );
  return part("Your organizations", table(["Name", "Slug", "Your role", "Parent", ""], rows, { empty: "You belong to no organization yet." }));
}

async function switchTo(id) {
  try {
    await post("/api/organizations/switch", { organizationId: id });
    location.assign("/admin/settings/organization");
  } catch (error) {
    notify(describe(error), "error");
  }
}

// A child needs a parent that is itself top-level and where the caller is owner or admin.
function mayParent(ctx) {
  const org = ctx.organization;
  return org && !org.parentId && (ctx.isInstanceAdmin || org.role === "owner" || org.role === "admin");
}

function createOrganization(ctx) {
  const name = h("input", { name: "name", type: "text", required: true });
  const slug = h("input", { name: "slug", type: "text", required: true, pattern: "[a-z0-9-]+" });
  name.addEventListener("input", () => {
    if (!slug.dataset.touched) slug.value = name.value.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  });
  slug.addEventListener("input", () => (slug.dataset.touched = "1"));
  const child = mayParent(ctx) ? checkbox(`Make it a child of ${ctx.organization.name}`, { name: "parentId", hint: "The parent may read its children's content." }) : null;
  const form = h(
    "form",
    { class: "stack" },
    field("New organization name", name, { required: true }),
    field("New organization slug", slug, { required: true, hint: "Lowercase letters, digits and dashes." }),
    child?.el,
    h("div", { class: "actions" }, h("button", { type: "submit", text: "Create organization" })),
  );
  onSubmit(form, async () => {
    const body = { name: name.value, slug: slug.value };
    if (child?.input.checked) body.parentId = ctx.organization.id;
    try {
      const created = await data(post("/api/organizations", body));
      ctx.organizations.push(created);
      document.getElementById("org-switcher")?.append(h("option", { value: created.id, text: created.name }));
      notify(`${created.name} is created. You are its owner.`, "success");
      form.reset();
      delete slug.dataset.touched;
      document.getElementById("part-your-organizations")?.closest("section")?.replaceWith(organizationList(ctx));
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) return setFieldError(slug.closest(".field"), error.message || "That slug is taken.");
      throw error;
    }
  });
  return part("Create an organization", form);
}

function mayDelete(ctx) {
  return ctx.user.role === "super_admin" || ctx.organization.role === "owner";
}

// Typing the slug is the confirmation: deleting takes every document, asset, key and role.
function deleteOrganization(ctx) {
  const org = ctx.organization;
  const typed = h("input", { name: "confirmSlug", type: "text", autocomplete: "off" });
  const button = h("button", { type: "submit", class: "danger", text: "Delete organization", disabled: true });
  typed.addEventListener("input", () => (button.disabled = typed.value !== org.slug));
  const form = h(
    "form",
    { class: "stack danger-zone" },
    h("p", { text: `Deleting ${org.name} deletes its documents, assets, API keys and roles. It cannot be undone.` }),
    field(`Type ${org.slug} to confirm`, typed),
    h("div", { class: "actions" }, button),
  );
  onSubmit(form, async () => {
    if (typed.value !== org.slug) return;
    await del(`/api/organizations/${seg(org.id)}`);
    location.assign("/admin");
  });
  return part("Delete organization", form);
}

// ---------------------------------------------------------------------------------------
// Members and invitations

// `sent`: the answer to an invitation just made, whose link is shown once above the list.
export async function members(body, ctx, sent = null) {
  const mayInvite = ctx.can("member.invite");
  const [people, roles, invitations] = await Promise.all([
    data(get("/api/organizations/members")),
    // Without the role list the page still shows members; the role selects offer less.
    data(get("/api/roles")).catch((error) => {
      notify(`The roles could not be loaded: ${describe(error)}`, "error");
      return [];
    }),
    mayInvite ? data(get("/api/organizations/invitations")) : Promise.resolve(null),
  ]);
  const redraw = (justSent = null) => members(body, ctx, justSent).catch((error) => notify(describe(error), "error"));
  const roleNames = assignable(roles, ctx);
  render(
    body,
    part("Members", memberTable(people, roles, roleNames, ctx, redraw)),
    mayInvite ? part("Invitations", sent ? invitationLink(sent, ctx) : null, invitationTable(invitations, redraw), inviteForm(roleNames, ctx, redraw)) : null,
    // Without a mail transport an invitation reaches nobody by itself: the admin may hand over
    // its link, or create the account with a password right away.
    mayInvite && !ctx.mailDelivers ? part("Create a member", createMemberForm(roleNames, redraw)) : null,
  );
}

// The accept link of the invitation just made. It holds the invitation's secret, which the
// API returns in this one answer and never lists again, so it is shown now or never.
function invitationLink(sent, ctx) {
  const id = "invitation-link";
  const input = h("input", { id, type: "text", readonly: true, value: sent.acceptUrl, class: "invitation-link-url", on: { focus: () => input.select() } });
  const copy = h("button", {
    type: "button",
    class: "primary",
    text: "Copy invitation link",
    on: {
      click: async () => {
        try {
          // Only in a secure context (https or localhost); elsewhere the field is the way.
          await navigator.clipboard.writeText(sent.acceptUrl);
          notify("The invitation link is copied.", "success");
        } catch {
          input.focus();
          input.select();
          notify("Copying is not allowed here: the link is selected, copy it with your keyboard.", "info");
        }
      },
    },
  });
  const how = ctx.mailDelivers
    ? `It was also e-mailed to ${sent.email}.`
    : `E-mail is not set up on this instance, so nothing was sent: give this link to ${sent.email} yourself.`;
  return h(
    "div",
    { class: "invitation-link", role: "status" },
    h("p", {}, h("strong", { text: `Invitation for ${sent.email} (${sent.role})` })),
    h("p", { text: `${how} The link is shown only now: it is never listed again.` }),
    h("label", { for: id, text: "Invitation link" }),
    h("div", { class: "inline-field" }, input, copy),
  );
}

// An account with a password the admin chooses and hands over, for instances whose e-mail
// reaches nobody. The server holds it to the invitation rules (the same role ceiling).
function createMemberForm(roleNames, redraw) {
  const name = h("input", { name: "name", type: "text", required: true, autocomplete: "off" });
  const email = h("input", { name: "email", type: "email", required: true, autocomplete: "off" });
  const password = h("input", { name: "password", type: "password", required: true, minlength: 8, maxlength: 128, autocomplete: "new-password" });
  const role = h("select", { name: "role", required: true }, roleNames.map((n) => h("option", { value: n, text: n, selected: n === "editor" })));
  const form = h(
    "form",
    { class: "stack create-member-form" },
    h("p", { text: "E-mail is not set up on this instance, so invitations reach nobody by themselves. Create the account here and give the person their password yourself." }),
    field("Member name", name, { required: true }),
    field("Member e-mail", email, { required: true, hint: "If this address has an account already, invite it instead." }),
    field("Member password", password, { required: true, hint: "8 to 128 characters." }),
    field("Member role", role, { required: true }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Create member with password" })),
  );
  onSubmit(form, async () => {
    const created = await data(post("/api/organizations/members", { name: name.value, email: email.value, password: password.value, role: role.value }));
    notify(`${created.name || created.email} is a member now and can sign in with that password.`, "success");
    await redraw();
  });
  return form;
}

// The roles the caller may give (CONTRACT.md section 13, "No one grants more than they
// hold"): every capability of the role is the caller's, and `owner` only by an owner. The
// server decides each request the same way; this only keeps the page from offering refusals.
// The built-in `public` role stands for anonymous readers, never for a person: never offered.
function assignable(roles, ctx) {
  return roles
    .filter((r) => !(r.isBuiltIn && r.name === "public"))
    .filter((r) => (r.name !== "owner" || ctx.role === "owner") && holdsAll(r, ctx))
    .map((r) => r.name);
}

function holdsAll(role, ctx) {
  return (role?.capabilities || []).every((c) => ctx.can(c));
}

// Whether the caller may change this member's role at all: nobody changes their own role but
// an owner stepping down; only an owner changes an owner's; and nobody moves someone whose
// role holds more than the caller does.
function mayChangeRoleOf(member, roles, ctx) {
  if (!ctx.can("member.changeRole")) return false;
  if (member.role === "owner") return ctx.role === "owner";
  if (member.userId === ctx.user.id) return false;
  return holdsAll(roles.find((r) => r.name === member.role), ctx);
}

function memberTable(people, roles, roleNames, ctx, redraw) {
  const status = h("div", { class: "member-status" });
  const rows = people.map((m) => memberRow(m, roles, roleNames, ctx, status, redraw));
  // Alone in the organization: the way to the invitation form below.
  const alone =
    people.length === 1 && ctx.can("member.invite")
      ? emptyState("You are the only member so far. Invite the people you work with.", focusButton("Invite people", () => document.querySelector(".invite-form input[name=email]")))
      : null;
  return [status, table(["Name", "E-mail", "Role", "Joined", ""], rows, { caption: "Members", empty: "No members." }), alone];
}

function memberRow(member, roles, roleNames, ctx, status, redraw) {
  const me = member.userId === ctx.user.id;
  const label = `Role of ${member.name || member.email}`;
  let roleCell = member.role;
  if (mayChangeRoleOf(member, roles, ctx)) {
    const names = roleNames.includes(member.role) ? roleNames : [member.role, ...roleNames];
    const select = h("select", { name: "role", class: "member-role" }, names.map((n) => h("option", { value: n, text: n, selected: n === member.role })));
    const change = h("button", { type: "button", class: "change-role", "aria-label": `Change the role of ${member.name || member.email}`, text: "Change role", on: { click: () => changeRole(member, select, status, redraw) } });
    roleCell = h("div", { class: "inline-field" }, h("label", { for: select.id || (select.id = `role-${member.userId}`), class: "visually-hidden", text: label }), select, change);
  }
  const remove =
    !me && ctx.can("member.remove")
      ? h("button", { type: "button", class: "link danger-text", "aria-label": `Remove ${member.name || member.email}`, text: "Remove", on: { click: () => removeMember(member, status, redraw) } })
      : null;
  return h(
    "tr",
    { dataset: { user: member.userId, email: member.email } },
    h("td", {}, member.name || "—", me ? h("span", { class: "badge", text: "you" }) : null),
    h("td", { text: member.email }),
    h("td", {}, roleCell),
    h("td", {}, when(member.createdAt)),
    h("td", {}, remove),
  );
}

async function changeRole(member, select, status, redraw) {
  banner(status, null);
  if (select.value === member.role) return;
  try {
    await patch("/api/organizations/members", { userId: member.userId, role: select.value });
    notify(`${member.name || member.email} is now ${select.value}.`, "success");
    await redraw();
  } catch (error) {
    select.value = member.role;
    banner(status, describe(error));
  }
}

async function removeMember(member, status, redraw) {
  banner(status, null);
  const who = member.name || member.email;
  if (!(await confirm(`Remove ${who}?`, `${who} loses access to this organization at once.`, { confirmLabel: "Remove", danger: true }))) return;
  try {
    await del("/api/organizations/members", { userId: member.userId });
    notify(`${who} is removed.`, "success");
    await redraw();
  } catch (error) {
    banner(status, describe(error));
  }
}

function invitationTable(invitations, redraw) {
  const status = h("div", { class: "invitation-status" });
  const rows = invitations.map((inv) =>
    h(
      "tr",
      { dataset: { invitation: inv.id, email: inv.email } },
      h("td", { text: inv.email }),
      h("td", { text: inv.role }),
      h("td", {}, h("span", { class: `badge ${inv.status}`, text: inv.status })),
      h("td", {}, when(inv.expiresAt)),
      h(
        "td",
        {},
        inv.status === "pending"
          ? h("button", { type: "button", class: "link", "aria-label": `Cancel the invitation of ${inv.email}`, text: "Cancel invitation", on: { click: () => cancelInvitation(inv, status, redraw) } })
          : null,
      ),
    ),
  );
  return [status, table(["E-mail", "Role", "Status", "Expires", ""], rows, { caption: "Invitations", empty: "No pending invitations." })];
}

async function cancelInvitation(inv, status, redraw) {
  banner(status, null);
  if (!(await confirm("Cancel the invitation?", `The link sent to ${inv.email} stops working.`, { confirmLabel: "Cancel invitation", danger: true }))) return;
  try {
    await del("/api/organizations/invitations", { id: inv.id });
    notify(`The invitation of ${inv.email} is cancelled.`, "success");
    await redraw();
  } catch (error) {
    banner(status, describe(error));
  }
}

function inviteForm(roleNames, ctx, redraw) {
  // Only the roles the caller may give (owner only by an owner).
  const offered = roleNames;
  const email = h("input", { name: "email", type: "email", required: true, autocomplete: "off" });
  const role = h("select", { name: "role", required: true }, offered.map((n) => h("option", { value: n, text: n, selected: n === "editor" })));
  const form = h(
    "form",
    { class: "stack invite-form" },
    h("h3", { text: "Invite someone" }),
    field("Invite e-mail", email, { required: true, hint: "They get a link to join, valid for 7 days." }),
    field("Invite as", role, { required: true }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", text: "Send invitation" })),
  );
  onSubmit(form, async () => {
    const sent = await data(post("/api/organizations/invitations", { email: email.value, role: role.value }));
    notify(ctx.mailDelivers ? `An invitation is on its way to ${sent.email}.` : `The invitation for ${sent.email} is ready: copy its link below.`, "success");
    await redraw(sent);
  });
  return form;
}
