// A round-robin load balancer for tests and for trying a cluster on one machine: each request goes to the next
// instance in turn, with X-Forwarded-For carrying the client's address (a client's own X-Forwarded-For is kept as
// it is: this balancer stands at the edge of a test network, whose clients name themselves so). Instances are asked
// by `targets()` at each request, so a test can kill one and take it out. Bodies stream both ways.
export interface Balancer {
  url: string
  stop(): void
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']

export function startBalancer(targets: () => string[], port = 0): Balancer {
  let turn = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    idleTimeout: 120,
    async fetch(request, server) {
      const live = targets()
      if (live.length === 0) return new Response('no instance', { status: 502 })
      const target = new URL(live[turn++ % live.length]!)
      const url = new URL(request.url)
      url.protocol = target.protocol
      url.host = target.host
      const headers = new Headers(request.headers)
      for (const name of HOP_BY_HOP) headers.delete(name)
      if (!headers.has('x-forwarded-for')) headers.set('x-forwarded-for', server.requestIP(request)?.address ?? 'unknown')
      try {
        const answer = await fetch(url, { method: request.method, headers, body: request.body, redirect: 'manual', decompress: false })
        const out = new Headers(answer.headers)
        for (const name of HOP_BY_HOP) out.delete(name)
        return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: out })
      } catch {
        return new Response('instance unreachable', { status: 502 })
      }
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

if (import.meta.main) {
  // bun dev/balancer.ts <port> <instance url>…
  const [port, ...urls] = process.argv.slice(2)
  if (!port || urls.length === 0) {
    console.error('usage: bun dev/balancer.ts <port> <instance url> [<instance url> …]')
    process.exit(1)
  }
  const balancer = startBalancer(() => urls, Number(port))
  console.log(`balancing ${urls.join(', ')} at ${balancer.url}`)
}
