// A real OpenID provider for the single sign-on tests: panva/oidc-provider
// with its own development login page (devInteractions).
//
// Started by the Rust tests as `node tests/oidc/provider.mjs` (after
// `npm ci --prefix tests/oidc`), configured by environment variables:
//   OIDC_PORT            port to bind on 127.0.0.1 (0 or unset = a free port)
//   OIDC_CLIENT_ID       the one confidential client's id      (default "cms")
//   OIDC_CLIENT_SECRET   its secret                             (default "cms-secret")
//   OIDC_REDIRECT_URIS   its redirect URIs, comma separated     (required)
//
// Once listening it prints exactly one line to stdout,
//   {"issuer":"http://127.0.0.1:PORT"}
// and everything else goes to stderr. It exits when its stdin closes (the
// test holds stdin as a pipe) and on SIGTERM / SIGINT.
//
// Accounts: any login (and any password) is accepted on the login page at
// /interaction/<uid>. The account's claims are
//   sub            = the login exactly as typed (oidc-provider keys the
//                    session, grant and code on it, so it cannot be altered)
//   email          = the login as typed
//   email_verified = false when the login starts with "unverified", else true
//   name           = the part of the login before "@"
// and they are put in the ID token itself (conformIdTokenClaims: false).
// Consent is granted automatically for the configured client, so a sign-in is
// authorize -> login page -> POST login -> redirect_uri?code=...
// The login page's "[ Cancel ]" link, GET /interaction/<uid>/abort, ends the
// flow with error=access_denied at the redirect URI.
// Its cookies are named op_session, op_interaction and op_interaction_resume
// (each with a .sig twin), apart from the CMS's on the same host.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { format } from 'node:util';

const log = (...args) => process.stderr.write(`[oidc-provider] ${format(...args)}\n`);
// oidc-provider's own warnings go through console.*: keep stdout for the
// single JSON line.
console.log = (...args) => log(...args);
console.info = (...args) => log(...args);
console.warn = (...args) => log(...args);
// Imported only now, after the redirection above: oidc-provider prints
// notices at import time (e.g. that it prefers Node.js 22 to this Node.js 20).
const { default: Provider } = await import('oidc-provider');

const exit = (code) => () => process.exit(code);
process.on('SIGTERM', exit(0));
process.on('SIGINT', exit(0));
process.stdin.on('end', exit(0));
process.stdin.on('close', exit(0));
process.stdin.on('error', exit(0));
process.stdin.resume();

const port = Number.parseInt(process.env.OIDC_PORT || '0', 10);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  log('OIDC_PORT must be a port number, got %j', process.env.OIDC_PORT);
  process.exit(2);
}
const clientId = process.env.OIDC_CLIENT_ID || 'cms';
const clientSecret = process.env.OIDC_CLIENT_SECRET || 'cms-secret';
const redirectUris = (process.env.OIDC_REDIRECT_URIS || '')
  .split(',')
  .map((uri) => uri.trim())
  .filter(Boolean);
if (redirectUris.length === 0) {
  log('OIDC_REDIRECT_URIS must name at least one redirect URI');
  process.exit(2);
}

// A fresh RS256 signing key per run.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: randomBytes(8).toString('hex'),
  use: 'sig',
  alg: 'RS256',
};

function account(login) {
  // The session's accountId is the submitted login verbatim, and
  // oidc-provider checks that the account, grant and code all carry the
  // same accountId, so the login itself is the stable `sub`.
  const accountId = login;
  return {
    accountId,
    async claims() {
      return {
        sub: accountId,
        email: login,
        email_verified: !login.toLowerCase().startsWith('unverified'),
        name: login.split('@')[0],
      };
    },
  };
}

const server = createServer();
server.on('error', (error) => {
  log('server error: %s', error.stack || error);
  process.exit(1);
});

server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;

  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    }],
    jwks: { keys: [signingKey] },
    responseTypes: ['code'],
    scopes: ['openid', 'email', 'profile'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    // Claims of the granted scopes go in the ID token, not only /me.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
    },
    cookies: {
      // Browsers share cookies between ports of one host, and the CMS under
      // test runs on 127.0.0.1 too: names of our own keep the two apart.
      names: {
        session: 'op_session',
        interaction: 'op_interaction',
        resume: 'op_interaction_resume',
      },
      // Plain http on loopback: the cookies are not marked Secure unless the
      // request is https, which it never is here.
      keys: [randomBytes(32).toString('hex')],
    },
    findAccount: async (_ctx, id) => (typeof id === 'string' && id !== '' ? account(id) : undefined),
    // Auto-consent: the configured client gets openid email profile without
    // a separate consent page.
    async loadExistingGrant(ctx) {
      const { client, session, result } = ctx.oidc;
      const grantId = result?.consent?.grantId || session.grantIdFor(client.clientId);
      if (grantId) {
        const existing = await ctx.oidc.provider.Grant.find(grantId);
        if (existing) return existing;
      }
      const grant = new ctx.oidc.provider.Grant({
        clientId: client.clientId,
        accountId: ctx.oidc.account.accountId,
      });
      grant.addOIDCScope('openid email profile');
      grant.addOIDCClaims(['email', 'email_verified', 'name']);
      await grant.save();
      return grant;
    },
    renderError(ctx, out, error) {
      log('error page: %j (%s)', out, error?.message);
      ctx.type = 'html';
      ctx.body = `<!DOCTYPE html><html><head><title>oops! something went wrong</title></head>`
        + `<body><h1>oops! something went wrong</h1><pre id="error">${
          Object.entries(out).map(([k, v]) => `${k}: ${String(v).replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`)}`).join('\n')
        }</pre></body></html>`;
    },
  });

  provider.on('server_error', (_ctx, error) => log('server_error: %s', error.stack || error));
  provider.on('authorization.error', (_ctx, error) => log('authorization.error: %s', error.message));
  provider.on('grant.error', (_ctx, error) => log('grant.error: %s', error.message));

  // The development pages @import a web font from the internet; this machine
  // and its browser tests talk to loopback only. Drop the import, and tell
  // the browser to load nothing from anywhere else. (No form-action: the
  // login form's redirects lead on to the CMS's redirect URI.)
  provider.use(async (ctx, next) => {
    await next();
    if (typeof ctx.body === 'string' && ctx.response.is('html')) {
      ctx.body = ctx.body.replace(/^\s*@import url\(https?:[^)]*\);\s*$/gm, '');
      ctx.set('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
    }
  });

  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
