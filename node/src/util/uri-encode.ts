/**
 * RFC 3986 percent-encoding as SigV4 canonical requests and S3 paths need
 * it: everything but unreserved characters encoded (encodeURIComponent
 * leaves `!'()*` alone), `/` kept when asked (paths).
 */
export function uriEncode(s: string, keepSlash: boolean): string {
  let out = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  if (keepSlash) out = out.replace(/%2F/g, '/');
  return out;
}
