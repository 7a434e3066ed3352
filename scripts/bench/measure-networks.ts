// Selling on several networks (issue 40): the 402 challenge of a paid entry's content from a server selling on three
// networks, against one selling on one, each against a bare Bun.serve answering its own 402's bytes (the JSON body
// and the PAYMENT-REQUIRED header, which grows with each network offered), in the same run (wrk -t2 -c50, rounds
// alternated); then a paid request on each of two local chains (anvil with the
// EIP-3009 token, one server selling on both): the median of 30, each from the 402 to the 200.
//
//   npx bun scripts/bench/measure-networks.ts [--seconds 3] [--rounds 3]
//
// The servers are the executable built from the tree (dist/trellis-test, made first), as the main bench runs its own.
import type { TestServer } from '../../dev/server.ts'
import { builtTestServers } from './built-server.ts'
import { b64, createEntry, createFeed, newWallet } from '../../dev/api.ts'
import { encodePaymentHeader, sellingOn, startChain } from '../../dev/chain.ts'
import { startBaseline } from './processes.ts'
import { ensureWrk, wrk } from './wrk.ts'

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const startTestServer = await builtTestServers()
const SECONDS = arg('seconds', 3)
const ROUNDS = arg('rounds', 3)
const PRICE = 10_000n

/** A paid entry on `server`: its content URL. */
async function paidContent(server: TestServer) {
  const creator = newWallet()
  const feed = await createFeed(server.url, creator, { name: 'bench networks' })
  const entry = await createEntry(server.url, creator, feed.id, {
    content_base64: b64('paid'),
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
  })
  return { creator, url: `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content` }
}

async function challenges() {
  ensureWrk((line) => console.error(line))
  const quiet = { TRELLIS_RATE_LIMIT: 'off', TRELLIS_LOG: 'warn', TRELLIS_RPC_URL: 'http://127.0.0.1:9' }
  const one = await startTestServer(quiet)
  const three = await startTestServer({ ...quiet, TRELLIS_NETWORKS: 'base-sepolia,polygon-amoy,arbitrum-sepolia' })
  const bareServers: Record<number, Awaited<ReturnType<typeof startBaseline>>> = { 1: await startBaseline(), 3: await startBaseline() }
  try {
    const [oneUrl, threeUrl] = [(await paidContent(one)).url, (await paidContent(three)).url]
    const bareOf = async (url: string, networks: number) => {
      const answer = await fetch(url)
      const body = await answer.text()
      if (answer.status !== 402 || JSON.parse(body).accepts.length !== networks) throw new Error(`the 402 offers not ${networks}`)
      const headers = JSON.stringify({ 'payment-required': answer.headers.get('payment-required') })
      const put = await fetch(`${bareServers[networks]!.url}/same`, {
        method: 'PUT',
        headers: { 'x-status': '402', 'content-type': 'application/json', 'x-same-headers': headers },
        body,
      })
      if (put.status !== 204) throw new Error('the baseline took no body')
      return `${bareServers[networks]!.url}/same`
    }
    const targets = [
      ['bare Bun.serve, the one-network 402 bytes', await bareOf(oneUrl, 1)],
      ['402, one network', oneUrl],
      ['bare Bun.serve, the three-network 402 bytes', await bareOf(threeUrl, 3)],
      ['402, three networks', threeUrl],
    ] as const
    const rps = new Map<string, number[]>(targets.map(([name]) => [name, []]))
    for (let round = 0; round < ROUNDS; round++) for (const [name, url] of targets) rps.get(name)!.push((await wrk(url, SECONDS)).rps)
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    for (const [at, [name]] of targets.entries()) {
      const m = median(rps.get(name)!)
      const bareRps = median(rps.get(targets[at - (at % 2)]![0])!)
      console.log(`${name}: ${m} req/s (median of ${ROUNDS}), ${(m / bareRps).toFixed(2)} of its bare; rounds ${rps.get(name)!.join(', ')}`)
    }
  } finally {
    await Promise.all([one.dispose(), three.dispose(), bareServers[1]!.stop(), bareServers[3]!.stop()])
  }
}

async function paidPerNetwork() {
  const [a, b] = await Promise.all([startChain(), startChain({ network: 'polygon-amoy' })])
  const server = await startTestServer({ ...sellingOn(a, b), TRELLIS_RATE_LIMIT: 'off', TRELLIS_LOG: 'warn' })
  try {
    for (const chain of [a, b]) {
      const network = chain.network
      const times: number[] = []
      for (let i = 0; i < 30; i++) {
        const { creator, url } = await paidContent(server)
        const buyer = await chain.newFundedBuyer(PRICE)
        const started = performance.now()
        const challenge = await fetch(url)
        if (challenge.status !== 402) throw new Error(`no 402: ${challenge.status}`)
        await challenge.arrayBuffer()
        const header = encodePaymentHeader(await chain.payment(buyer, { to: creator.address, value: PRICE }))
        const paid = await fetch(url, { headers: { 'x-payment': header } })
        if (paid.status !== 200) throw new Error(`${network}: paid request answered ${paid.status}`)
        await paid.arrayBuffer()
        times.push(performance.now() - started)
      }
      times.sort((x, y) => x - y)
      console.log(`paid request on ${network}: median ${times[15]!.toFixed(1)} ms of 30 (402, sign, pay, settle, 200)`)
    }
  } finally {
    await server.dispose()
    await Promise.all([a.stop(), b.stop()])
  }
}

await challenges()
await paidPerNetwork()
