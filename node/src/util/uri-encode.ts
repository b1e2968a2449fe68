/**
 * RFC 3986 percent-encoding as SigV4 canonical requests and S3 paths need
 * it: everything but unreserved characters encoded (encodeURIComponent
 * leaves `!'()*` alone), `/` kept when asked (paths).
 */
const UNRESERVED = /^[A-Za-z0-9\-._~]*$/;
const UNRESERVED_OR_SLASH = /^[A-Za-z0-9\-._~/]*$/;

export function uriEncode(s: string, keepSlash: boolean): string {
  // Most keys and paths need nothing encoded: one test instead of encoding and two replaces.
  if ((keepSlash ? UNRESERVED_OR_SLASH : UNRESERVED).test(s)) return s;
  let out = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  if (keepSlash) out = out.replace(/%2F/g, '/');
  return out;
}
