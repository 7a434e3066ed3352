// The webhook sender against endpoints that never answer, more of them than Bun's fetch limit (256 requests in flight
// per process): its attempts leave room for the server's own requests, such as the chain's RPC, which would otherwise
// wait out a hanging attempt each (a settlement's receipt wait then runs out: 503 to a buyer who paid). The sender runs
// on a stand-in for the records (one due delivery per endpoint, every claim granted).
import { expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { MAX_IN_FLIGHT, webhookService } from '../src/domain/webhooks.ts'
import type { Records } from '../src/store/stores.ts'

const ENDPOINTS = 300

const title = `${ENDPOINTS} endpoints that never answer: at most ${MAX_IN_FLIGHT} attempts in flight; the server's own requests answered`
test(title, async () => {
  // Accepts connections and says nothing (not even the TLS handshake): each attempt waits for its timeout (5 s).
  let hanging = 0
  let most = 0
  const silent = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data() {},
      open() {
        most = Math.max(most, ++hanging)
      },
      close() {
        hanging--
      },
    },
  })
  const rpc = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json({ jsonrpc: '2.0', id: 1, result: '0x1' }) })
  const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => ({
    id: `endpoint-${i}`,
    wallet_id: 'w',
    url: `https://127.0.0.1:${silent.port}/hang/${i}`,
    description: null,
    events: ['sale.recorded'],
    is_active: true,
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    created_at: 0,
    updated_at: 0,
  }))
  const tried = new Set<string>()
  const due = async (now: number, limit: number, busy: string[], failing: boolean) =>
    failing
      ? []
      : endpoints
          .filter((e) => !tried.has(e.id) && !busy.includes(e.id))
          .slice(0, limit)
          .map((e) => {
            tried.add(e.id)
            return { id: `delivery-${e.id}`, endpoint_id: e.id, payload: '{}', attempts: 0, created_at: now, endpoint_failures: 0 }
          })
  const tx = { webhooks: { claim: async () => true, retryAt: async () => {}, endpointFailed: async () => {}, giveUpOld: async () => 0 } }
  const records = {
    read: { webhooks: { due, byId: async (id: string) => endpoints.find((e) => e.id === id) } },
    transact: async (work: (t: typeof tx) => Promise<unknown>) => work(tx),
  } as unknown as Records
  const sender = webhookService({ records, network: 'base-sepolia', allowPrivate: true, log: () => {} })
  try {
    const started = [await sender.deliverDue()]
    await Bun.sleep(2_200) // the first attempts are slow now: the sender starts others in their place
    started.push(await sender.deliverDue())
    await Bun.sleep(300)
    expect(hanging).toBeGreaterThanOrEqual(Math.min(ENDPOINTS, MAX_IN_FLIGHT) - 8) // the attempts are under way
    const asked = performance.now()
    const answer = await fetch(`http://127.0.0.1:${rpc.port}/`, { method: 'POST', body: '{}' })
    expect(answer.status).toBe(200)
    expect(performance.now() - asked).toBeLessThan(1_000) // before the bound: until a hanging attempt's timeout
    expect(started[0]! + started[1]!).toBeLessThanOrEqual(MAX_IN_FLIGHT)
    expect(most).toBeLessThanOrEqual(MAX_IN_FLIGHT)
    expect(MAX_IN_FLIGHT).toBeLessThanOrEqual((Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) || 256) - 64)
  } finally {
    await Bun.sleep(5_500) // the attempts end at their timeout
    silent.stop(true)
    rpc.stop(true)
  }
}, 30_000)
