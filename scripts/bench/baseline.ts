// The bare baseline the throughput targets are ratios to: the least a Bun HTTP server can do per request with a
// small JSON answer (the same body shape as GET /health). Prints its URL on the first line.
// It can also answer a given body (PUT /same, then GET /same): a route's own answer served bare, to show what the
// size of that answer costs by itself.
let same = { body: '', status: 200, type: 'application/json' }
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  routes: {
    '/same': {
      GET: () => new Response(same.body, { status: same.status, headers: { 'content-type': same.type } }),
      PUT: async (request) => {
        same = { body: await request.text(), status: Number(request.headers.get('x-status') ?? 200), type: request.headers.get('content-type') ?? 'application/json' }
        return new Response(null, { status: 204 })
      },
    },
  },
  fetch: () => Response.json({ status: 'ok', uptime_s: 1 }),
})
console.log(`http://127.0.0.1:${server.port}`)
