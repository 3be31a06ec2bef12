/** REFUNDS_URL: an absolute http(s) URL, returned without trailing slashes. Throws saying why a value is refused. */
export function httpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('must be an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http:// or https:// URL');
  return raw.replace(/\/+$/, '');
}
