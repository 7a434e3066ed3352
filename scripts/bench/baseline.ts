// The bare baseline the throughput targets are ratios to: the least a Bun HTTP server can do per request with a
// small JSON answer (the same body shape as GET /health). Prints its URL on the first line.
// It can also answer a given body (PUT /same, then GET /same): a route's own answer served bare, to show what the
// size of that answer costs by itself.
// The body is kept as bytes: some answers (images, content) are binary. `x-same-headers` (JSON) names headers the
// answer carries too (a 402's PAYMENT-REQUIRED): the same bytes, headers included.
let same = { body: new Uint8Array(0), status: 200, type: 'application/json', headers: {} as Record<string, string> }
const answerSame = () =>
  new Response(same.status === 304 ? null : same.body, {
    status: same.status,
    headers: { 'content-type': same.type, ...same.headers },
  })
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  routes: {
    '/same': {
      GET: answerSame,
      POST: answerSame,
      PUT: async (request) => {
        same = {
          body: new Uint8Array(await request.arrayBuffer()),
          status: Number(request.headers.get('x-status') ?? 200),
          type: request.headers.get('content-type') ?? 'application/json',
          headers: JSON.parse(request.headers.get('x-same-headers') ?? '{}'),
        }
        return new Response(null, { status: 204 })
      },
    },
  },
  fetch: () => Response.json({ status: 'ok', uptime_s: 1 }),
})
console.log(`http://127.0.0.1:${server.port}`)
