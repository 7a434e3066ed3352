// Hot reads answer with JSON text made once per database version (see readMemo): no object is serialised or
// checked against its schema per request. The route's `response` schema still documents the body.
export const jsonResponse = (body: string, headers: Record<string, string> = {}) =>
  new Response(body, { headers: { 'content-type': 'application/json', ...headers } })
