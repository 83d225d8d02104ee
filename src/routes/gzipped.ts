// Files the install gzipped (vendor/, Data modules): sent as they are to a client that takes gzip, decompressed on
// the way to one that does not.

/** Whether the client takes gzip (`Accept-Encoding`, a `q=0` refusal respected). */
const acceptsGzip = (acceptEncoding: string | undefined) =>
  (acceptEncoding ?? '')
    .split(',')
    .map((part) =>
      part
        .trim()
        .toLowerCase()
        .split(/\s*;\s*/),
    )
    .some(([coding, q]) => (coding === 'gzip' || coding === '*') && !/^q=0(\.0*)?$/.test(q ?? ''));

/** A response of `gzipped` bytes with `headers`, encoded as the request's `Accept-Encoding` allows. */
export function gzippedResponse(
  gzipped: ArrayBuffer,
  acceptEncoding: string | undefined,
  headers: Record<string, string>,
): Response {
  const varying = { ...headers, Vary: 'Accept-Encoding' };
  if (acceptsGzip(acceptEncoding)) {
    return new Response(gzipped, { headers: { ...varying, 'Content-Encoding': 'gzip' }, encodeBody: 'manual' });
  }
  return new Response(new Blob([gzipped]).stream().pipeThrough(new DecompressionStream('gzip')), { headers: varying });
}
