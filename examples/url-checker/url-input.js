// Is what a person typed a web address? bloomgate's canonicalizeUrl follows
// Safe Browsing, which makes a URL of nearly any text ("not a url" becomes
// http://not%20a%20url/), as a filter of URL expressions must. A page that asks
// a person for a link says "not a URL" first, for what no one would call one.

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const EXPLICIT = /^[a-z][a-z0-9+.-]*:\/\//i;
const HOST_PORT = /^[^:/?#@]+:\d*(?:[/?#]|$)/; // example.com:8080/… reads like a scheme but is not one
const LABEL = /^[a-z0-9_-]+$/; // WHATWG hostnames are lower case, IDNs already xn--
const WEB = new Set(['http:', 'https:', 'ftp:']);

/**
 * What to check for `text`: `{ url }`, the text with http:// put in front when
 * it names no scheme (the library reads "localhost:3000" as a scheme otherwise),
 * or `{ notUrl }`, why it is not a web address. Without a scheme
 * ("example.com/login") http:// is assumed, and the host must then look like
 * one: a dotted name, a dotted IPv4 address, [an IPv6 address] or localhost.
 * With http://, https:// or ftp:// anything a browser would open counts
 * (credentials, one-label and numeric hosts: phishing links use them all).
 * @param {string} text
 * @returns {{ url: string } | { notUrl: string }}
 */
export function readUrl(text) {
  const typed = String(text).trim();
  const notUrl = whyNot(typed);
  if (notUrl !== null) return { notUrl };
  return { url: hasScheme(typed) ? typed : `http://${typed}` };
}

/** Whether `typed` starts with a scheme: "x://", "http:", or "x:" not followed by a port. */
function hasScheme(typed) {
  const scheme = SCHEME.exec(typed);
  if (!scheme) return false;
  if (EXPLICIT.test(typed) || WEB.has(`${scheme[1].toLowerCase()}:`)) return true;
  return !HOST_PORT.test(typed);
}

/** Why the trimmed `typed` is not a web address, or null. */
function whyNot(typed) {
  if (!typed) return 'nothing was entered';
  if (/\s/.test(typed)) return 'a URL has no spaces';
  const explicit = hasScheme(typed);
  if (!explicit && /^[^/?#]*@/.test(typed)) return 'that looks like an email address';
  let url;
  try {
    url = new URL(explicit ? typed : `http://${typed}`);
  } catch {
    return 'it cannot be read as a web address';
  }
  if (!WEB.has(url.protocol)) return `"${typed.slice(0, url.protocol.length)}" is not a web address`;
  const host = url.hostname;
  if (!host) return 'it names no host';
  if (host.startsWith('[')) return null; // an IPv6 literal, which URL() has checked
  if (explicit) return null;
  if (host === 'localhost') return null;
  const labels = host.replace(/\.$/, '').split('.');
  if (labels.length === 4 && labels.every((label) => /^\d+$/.test(label))) {
    // URL() turns "12345" into 0.0.48.57: without a scheme, an address must be typed as one.
    return typed.toLowerCase().includes(host) ? null : 'it is not a host name or an address';
  }
  if (labels.length < 2) return 'it has no domain, as in example.com';
  if (!labels.every((label) => LABEL.test(label))) return 'its host name is malformed';
  return null;
}
