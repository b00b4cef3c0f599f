// The HTTP API, as the admin calls it: same origin, the session cookie, JSON in and out.
// Every failure becomes an ApiError carrying what the API said (status, message, issues,
// currentRevision), so pages can show it next to the field or action it concerns.

export class ApiError extends Error {
  constructor(status, body) {
    super(messageOf(status, body));
    this.status = status;
    this.body = body;
    // SPEC.md's handler-layer envelope: { success: false, error, message?, issues? }.
    this.issues = Array.isArray(body?.issues) ? body.issues : [];
    this.currentRevision = body?.currentRevision ?? null;
  }
}

function messageOf(status, body) {
  if (body && typeof body === "object") {
    if (typeof body.message === "string" && body.message) return body.message;
    if (typeof body.error === "string" && body.error) return body.error;
  }
  if (status === 0) return "The server could not be reached.";
  return `The request failed (${status}).`;
}

// `{ a: 1, b: undefined, c: "" }` -> "?a=1": empty values are left out.
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) value.forEach((v) => search.append(key, v));
    else search.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

// One request. `body` is sent as JSON unless it is FormData (uploads). Resolves to the parsed
// body (the whole envelope), or null for an empty one; rejects with ApiError.
export async function request(method, path, body, { signal, headers } = {}) {
  const init = { method, credentials: "same-origin", signal, headers: { accept: "application/json", ...headers } };
  if (body instanceof FormData) {
    init.body = body;
  } else if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, null);
  }
  const text = await response.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { message: text.slice(0, 200) };
    }
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

export const get = (path, options) => request("GET", path, undefined, options);
export const post = (path, body, options) => request("POST", path, body ?? {}, options);
export const patch = (path, body, options) => request("PATCH", path, body, options);
export const put = (path, body, options) => request("PUT", path, body, options);
export const del = (path, body, options) => request("DELETE", path, body, options);

// The `data` of a success envelope.
export async function data(promise) {
  const body = await promise;
  return body?.data;
}

// A path segment, escaped.
export const seg = (value) => encodeURIComponent(String(value));
