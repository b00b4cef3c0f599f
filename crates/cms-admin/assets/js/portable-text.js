// Portable Text shared by the rich-text editor's modules: keys, spans and safe links. The rule
// they follow: the admin never drops a key it does not understand.

// Keys made in this page: what was stored keeps its keys, what the editor made may be tidied.
const made = new Set();

export function newKey() {
  const key = crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(36), "");
  made.add(key);
  return key;
}

export const madeHere = (key) => made.has(key);

// A span carries text; anything else among the children (an inline object) does not.
export const isSpan = (child) =>
  child !== null && typeof child === "object" && typeof child.text === "string" && (child._type === "span" || child._type === undefined);

export const childrenOf = (block) => (Array.isArray(block?.children) ? block.children : []);

// Links only to the web, mail or this site: a stored `javascript:` href, or a protocol-relative
// `//host` one, must not become clickable.
export const safeHref = (href) => (typeof href === "string" && /^(https?:|mailto:|\/(?![/\\])|#)/i.test(href.trim()) ? href : null);
