// A pass holder coming back (issue 37): the p50 latency and the throughput of a holder's repeat read of a paid entry
// (1 KiB), signed with the wallet headers and with a SIGN-IN-WITH-X proof, and of the pass's 402, each against a bare
// Bun.serve answering the same bytes in the same run (baseline.ts). On anvil with the EIP-3009 token: the pass is
// really bought. Every signed read spends a nonce and every proof one challenge, all made before the clock starts.
//
//   npx bun scripts/bench/measure-pass-holder.ts [--requests N]
import { createSIWxPayload, encodeSIWxHeader } from '@x402/extensions/sign-in-with-x'
import { startTestServer } from '../../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet } from '../../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment } from '../../dev/chain.ts'
import { startBaseline } from './processes.ts'

const at = process.argv.indexOf('--requests')
const REQUESTS = at > 0 ? Number(process.argv[at + 1]) : 2000
const CONCURRENCY = 32
const BODY = 'p'.repeat(1023) + '\n'

type Prepared = { url: string; init: RequestInit }
interface Figures {
  p50_ms: number
  p99_ms: number
  rps: number
}

/** Sends each request once: `concurrency` at a time; the latency of each, and the requests per second of them all. */
async function fire(requests: Prepared[], concurrency: number, expect: number): Promise<Figures> {
  const times: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!
        const t = performance.now()
        const answer = await fetch(r.url, r.init)
        await answer.arrayBuffer()
        if (answer.status !== expect) throw new Error(`${r.url} answered ${answer.status}, not ${expect}`)
        times.push(performance.now() - t)
      }
    }),
  )
  const elapsed = performance.now() - started
  times.sort((a, b) => a - b)
  const at = (q: number) => Number(times[Math.floor(q * (times.length - 1))]!.toFixed(3))
  return { p50_ms: at(0.5), p99_ms: at(0.99), rps: Math.round((times.length / elapsed) * 1000) }
}

/** Latency one request at a time (the p50 a client sees), then throughput with `CONCURRENCY` in flight. */
async function measure(name: string, make: (n: number) => Promise<Prepared[]>, expect: number) {
  const alone = await fire(await make(REQUESTS / 2), 1, expect)
  const loaded = await fire(await make(REQUESTS), CONCURRENCY, expect)
  return { name, p50_ms: alone.p50_ms, p99_ms: alone.p99_ms, rps: loaded.rps }
}

const chain = await startChain()
const server = await startTestServer({ ...chain.env, TRELLIS_RATE_LIMIT: 'off' })
const bare = await startBaseline()
try {
  const creator = newWallet()
  const feedId = (await createFeed(server.url, creator, { name: 'bench pass' })).id
  const entry = await createEntry(server.url, creator, feedId, {
    content_base64: b64(BODY),
    mime_type: 'text/plain',
    is_free: false,
    price: { amount: '10000', currency: 'USDC' },
  })
  const price = { amount: '50000', currency: 'USDC' }
  await call(server.url, 'PUT', `/v1/feeds/${feedId}/pass`, { wallet: creator, body: { price, duration_s: 86_400 } })
  const holder = await chain.newFundedBuyer(1_000_000n)
  const passUrl = `${server.url}/v1/feeds/${feedId}/pass/purchases`
  const header = encodePaymentHeader(await v1Payment(holder, { to: creator.address, value: 50_000n }))
  const bought = await fetch(passUrl, { method: 'POST', headers: { 'x-payment': header } })
  if (bought.status !== 201) throw new Error(`buying the pass answered ${bought.status}`)
  const content = `${server.url}/v1/feeds/${feedId}/entries/${entry.id}/content`
  const put = await fetch(`${bare.url}/same`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: BODY })
  if (put.status !== 204) throw new Error('the baseline took no body')

  const many = (n: number, one: () => Promise<Prepared> | Prepared) => Promise.all(Array.from({ length: n }, one))
  const signed = async (): Promise<Prepared> => ({ url: content, init: { headers: await authHeaders(server.url, holder) } })
  const proof = async (): Promise<Prepared> => {
    const challenge = await fetch(content)
    const required = JSON.parse(Buffer.from(challenge.headers.get('payment-required')!, 'base64').toString())
    const info = { ...required.extensions['sign-in-with-x'].info, chainId: required.accepts[0].network, type: 'eip191' as const }
    const signedIn = encodeSIWxHeader(await createSIWxPayload(info, holder, content))
    return { url: content, init: { headers: { 'sign-in-with-x': signedIn } } }
  }
  const rows = [
    await measure('bare Bun.serve, the same 1 KiB', (n) => many(n, () => ({ url: `${bare.url}/same`, init: {} })), 200),
    await measure('holder, signed headers', (n) => many(n, signed), 200),
    await measure('holder, SIGN-IN-WITH-X', (n) => many(n, proof), 200),
    await measure(
      'bare Bun.serve, the 402 body',
      async (n) => {
        const answer = await fetch(passUrl, { method: 'POST' })
        const body = await answer.text()
        await fetch(`${bare.url}/same`, { method: 'PUT', headers: { 'x-status': '402', 'content-type': 'application/json' }, body })
        return many(n, () => ({ url: `${bare.url}/same`, init: { method: 'POST' } }))
      },
      402,
    ),
    await measure('the pass 402 (POST, no payment)', (n) => many(n, () => ({ url: passUrl, init: { method: 'POST' } })), 402),
  ]
  const base = (i: number) => rows[i < 3 ? 0 : 3]!
  for (const [i, row] of rows.entries()) {
    const ratio = (row.rps / base(i).rps).toFixed(2)
    console.log(`${row.name.padEnd(36)} p50 ${row.p50_ms.toFixed(3)} ms  p99 ${row.p99_ms.toFixed(3)} ms  ${row.rps} req/s  ratio ${ratio}`)
  }
} finally {
  await bare.stop()
  await server.dispose()
  await chain.stop()
}
