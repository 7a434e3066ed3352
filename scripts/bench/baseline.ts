// The bare baseline the throughput targets are ratios to: the least a Bun HTTP server can do per request with a
// small JSON answer (the same body shape as GET /health). Prints its URL on the first line.
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => Response.json({ status: 'ok', uptime_s: 1 }),
})
console.log(`http://127.0.0.1:${server.port}`)
