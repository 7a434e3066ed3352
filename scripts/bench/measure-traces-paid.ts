// Tracing on vs off for the paid request (issue 41): two servers built from the tree on one local chain (anvil with
// the EIP-3009 token, local settlement), one sending its spans to an OTLP/HTTP sink on loopback (otlp-sink.ts), the
// other with traces off; a paid request (the 402, sign, pay, settle, prove, record, the 200) timed 30 times on each,
// alternated one by one, each its own entry and buyer. The medians and the spans the sink received.
//
//   npx bun scripts/bench/measure-traces-paid.ts [--count 30]
import { join } from 'node:path'
import type { TestServer } from '../../dev/server.ts'
import { builtTestServers } from './built-server.ts'
import { b64, createEntry, createFeed, newWallet } from '../../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment } from '../../dev/chain.ts'

const at = process.argv.indexOf('--count')
const COUNT = at > 0 ? Number(process.argv[at + 1]) : 30
const PRICE = 10_000n

const startTestServer = await builtTestServers()

const port = 43_000 + Math.floor(Math.random() * 1000)
const sink = Bun.spawn([process.execPath, join(import.meta.dir, 'otlp-sink.ts'), String(port)], { stdout: 'pipe', stderr: 'pipe' })
const chain = await startChain()
const servers: TestServer[] = []
try {
  const common = { ...chain.env, TRELLIS_RATE_LIMIT: 'off', TRELLIS_LOG: 'warn' }
  const off = await startTestServer(common)
  const on = await startTestServer({ ...common, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'bench' })
  servers.push(off, on)
  const times = new Map<string, number[]>([
    ['off', []],
    ['on', []],
  ])
  for (let i = 0; i < COUNT; i++) {
    for (const [name, server] of [
      ['off', off],
      ['on', on],
    ] as const) {
      const creator = newWallet()
      const feed = await createFeed(server.url, creator)
      const entry = await createEntry(server.url, creator, feed.id, {
        content_base64: b64('paid'),
        is_free: false,
        price: { amount: String(PRICE) },
      })
      const url = `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`
      const buyer = await chain.newFundedBuyer(PRICE)
      const started = performance.now()
      const challenge = await fetch(url)
      await challenge.arrayBuffer()
      const header = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))
      const paid = await fetch(url, { headers: { 'x-payment': header } })
      if (challenge.status !== 402 || paid.status !== 200) throw new Error(`${name}: ${challenge.status} then ${paid.status}`)
      await paid.arrayBuffer()
      times.get(name)!.push(performance.now() - started)
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  for (const [name, values] of times)
    console.log(`paid request, traces ${name}: median ${median(values).toFixed(1)} ms of ${values.length}`)
} finally {
  for (const server of servers) await server.dispose()
  await chain.stop()
  sink.kill('SIGTERM')
  const said = await new Response(sink.stdout).text()
  console.log(`the sink: ${said.trim().split('\n').pop()}`)
}
