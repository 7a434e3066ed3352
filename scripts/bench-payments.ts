// Payment latency on a local anvil chain, as medians over N runs, with a free GET of the same size on the same
// server as the baseline: a paid GET (402 challenge, then the paid retry), the same for a seller with 5 webhook
// endpoints (delivered to an HTTPS receiver here), and verify / settle alone.
//
//   bun scripts/bench-payments.ts [runs=30]
import { createWalletClient, http, publicActions } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { x402Facilitator } from '@x402/core/facilitator'
import { toFacilitatorEvmSigner } from '@x402/evm'
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator'
import { startChain, v1Payment, encodePaymentHeader } from '../dev/chain.ts'
import { startTestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'

const runs = Number(process.argv[2] ?? 30)
const PRICE = 10_000n
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (ms: number) => `${ms.toFixed(2)} ms`

const CERT = `${import.meta.dir}/../test/helpers/webhook-test.cert.pem`
const chain = await startChain()
// The receiver is on this host: the test hook lets the server reach loopback, and it trusts the receiver's certificate.
const server = await startTestServer({ ...chain.env, TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1', NODE_EXTRA_CA_CERTS: CERT })
const heard: number[] = []
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  tls: { cert: Bun.file(CERT), key: Bun.file(`${import.meta.dir}/../test/helpers/webhook-test.key.pem`) },
  fetch: () => (heard.push(performance.now()), new Response('ok')),
})
try {
  const creator = newWallet()
  const feed = await createFeed(server.url, creator)
  const hooked = newWallet()
  const hookedFeed = await createFeed(server.url, hooked)
  for (let i = 0; i < 5; i++) {
    const registered = await call(server.url, 'POST', '/v1/webhooks', {
      wallet: hooked,
      body: { url: `https://127.0.0.1:${receiver.port}/sales/${i}`, events: ['sale.recorded'] },
    })
    if (registered.status !== 201) throw new Error(`webhook registration: ${registered.status} ${registered.text}`)
  }
  const free = await createEntry(server.url, creator, feed.id, { content_base64: b64('x'.repeat(64)) })
  const buyer = await chain.newFundedBuyer(PRICE * BigInt(runs * 3))

  /** A paid GET of a new entry of `owner`'s feed: the 402, then the paid retry; its time, and when its 200 came. */
  async function buy(owner: typeof creator, feedId: string): Promise<{ ms: number; at: number }> {
    const entry = await createEntry(server.url, owner, feedId, {
      content_base64: b64('y'.repeat(64)),
      is_free: false,
      price: { amount: String(PRICE) },
    })
    const url = `${server.url}/v1/feeds/${feedId}/entries/${entry.id}/content`
    const t = performance.now()
    const challenge = await fetch(url)
    if (challenge.status !== 402) throw new Error(`expected 402, got ${challenge.status}`)
    const { accepts } = await challenge.json()
    const header = encodePaymentHeader(await v1Payment(buyer, { to: accepts[0].payTo, value: BigInt(accepts[0].maxAmountRequired) }))
    const paid = await fetch(url, { headers: { 'x-payment': header } })
    if (paid.status !== 200) throw new Error(`expected 200, got ${paid.status}: ${await paid.text()}`)
    await paid.arrayBuffer()
    const at = performance.now()
    return { ms: at - t, at }
  }

  const freeTimes: number[] = []
  const paidTimes: number[] = []
  const hookedTimes: number[] = []
  const deliveredAfter: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await (await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${free.id}/content`)).arrayBuffer()
    freeTimes.push(performance.now() - t)
    paidTimes.push((await buy(creator, feed.id)).ms)
    const before = heard.length
    const sale = await buy(hooked, hookedFeed.id)
    hookedTimes.push(sale.ms)
    while (heard.length < before + 5) await Bun.sleep(5) // all five told before the next sale
    deliveredAfter.push(heard[before + 4]! - sale.at)
  }

  // verify and settle alone, with the same engine the server uses in local mode (another relayer account).
  const account = privateKeyToAccount(chain.relayer.privateKey)
  const wallet = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) }).extend(publicActions)
  const facilitator = registerExactEvmScheme(new x402Facilitator(), {
    signer: toFacilitatorEvmSigner({ ...wallet, address: account.address } as never),
    networks: 'eip155:84532',
  })
  const verifyTimes: number[] = []
  const settleTimes: number[] = []
  for (let i = 0; i < runs; i++) {
    const payTo = newWallet().address
    const payment = await v1Payment(buyer, { to: payTo, value: PRICE })
    const requirements = {
      scheme: 'exact',
      network: 'base-sepolia',
      maxAmountRequired: String(PRICE),
      resource: 'http://127.0.0.1/x',
      description: '',
      mimeType: 'text/plain',
      payTo,
      maxTimeoutSeconds: 300,
      asset: chain.usdc,
      extra: { name: 'USDC', version: '2' },
    }
    let t = performance.now()
    const verified = await facilitator.verify(payment as never, requirements as never)
    verifyTimes.push(performance.now() - t)
    if (!verified.isValid) throw new Error(`verify: ${verified.invalidReason}`)
    t = performance.now()
    const settled = await facilitator.settle(payment as never, requirements as never)
    settleTimes.push(performance.now() - t)
    if (!settled.success) throw new Error(`settle: ${settled.errorReason}`)
  }

  const base = median(freeTimes)
  console.log(`runs: ${runs} (anvil automine, loopback)`)
  console.log(`free GET (baseline)          median ${fmt(base)}`)
  console.log(`paid GET (402 → paid 200)    median ${fmt(median(paidTimes))}  (${(median(paidTimes) / base).toFixed(1)}× baseline)`)
  console.log(
    `paid GET, seller with 5 webhooks median ${fmt(median(hookedTimes))}  ` +
      `(${(median(hookedTimes) / median(paidTimes)).toFixed(2)}× the paid GET without)`,
  )
  console.log(`5 webhooks delivered after the 200 median ${fmt(median(deliveredAfter))} (the sender runs each second)`)
  console.log(`verify alone                 median ${fmt(median(verifyTimes))}`)
  console.log(`settle alone                 median ${fmt(median(settleTimes))}`)
} finally {
  receiver.stop(true)
  await server.dispose()
  await chain.stop()
}
