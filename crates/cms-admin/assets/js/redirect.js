// Where the admin may send the browser after signing in: only a path of this instance, the
// rule the server applies too (`cms_core::redirect::same_origin_path`). A single leading `/`
// (not `//` or `/\`, which browsers read as another host), hence no scheme, and no control
// character, whitespace or backslash anywhere: browsers drop tabs and newlines from a URL
// before reading it (`/\t/evil.example` is `//evil.example`) and read `\` as `/`.

// Where a missing or refused target falls back to.
export const FALLBACK = "/admin";

// `value` when it is a path of this instance, otherwise null.
export function sameOriginPath(value) {
  if (typeof value !== "string" || !value.startsWith("/")) return null;
  if (value[1] === "/" || value[1] === "\\") return null;
  // \s is JavaScript's whitespace (Unicode's, U+2028 and no-break spaces included); the
  // control ranges are C0, DEL and C1.
  if (/[\s\u0000-\u001f\u007f-\u009f\\]/.test(value)) return null;
  return value;
}
