// An HTTPS webhook receiver on 127.0.0.1 (its certificate trusted through NODE_EXTRA_CA_CERTS): each path answers as
// `answer` says, given how often this delivery id came before; every request is kept.
export const WEBHOOK_CERT = `${import.meta.dir}/webhook-test.cert.pem`
const KEY = `${import.meta.dir}/webhook-test.key.pem`
/** TLS for a listener of the tests that the server reaches over https (a webhook receiver, a WebSub subscriber). */
export const webhookTls = () => ({ cert: Bun.file(WEBHOOK_CERT), key: Bun.file(KEY) })

/**
 * An endpoint that never answers: it accepts connections and says nothing (not even the TLS handshake), so each
 * attempt waits for its timeout. `hanging`: the connections open now; `most`: the most open at once.
 */
export function silentReceiver() {
  const count = { hanging: 0, most: 0 }
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data() {},
      open() {
        count.most = Math.max(count.most, ++count.hanging)
      },
      close() {
        count.hanging--
      },
    },
  })
  return {
    count,
    url: (path: string) => `https://127.0.0.1:${listener.port}${path}`,
    stop: () => listener.stop(true),
  }
}

/** A port of 127.0.0.1 nothing listens on (free a moment ago). */
export function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

export interface Received {
  path: string
  headers: Record<string, string>
  body: string
}

export function receiver(answer: (path: string, seen: number) => number, port = 0) {
  const received: Received[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    tls: webhookTls(),
    async fetch(request) {
      const path = new URL(request.url).pathname
      const entry = {
        path,
        headers: Object.fromEntries(request.headers as unknown as Iterable<[string, string]>),
        body: await request.text(),
      }
      const seen = received.filter((r) => r.path === path && r.headers['webhook-id'] === entry.headers['webhook-id']).length
      received.push(entry)
      return new Response('ok', { status: answer(path, seen) })
    },
  })
  return { received, url: (path: string) => `https://127.0.0.1:${server.port}${path}`, port: server.port, stop: () => server.stop(true) }
}
